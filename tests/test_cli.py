"""`literate render` shows the page the site shows: examples run, translations
checked against the glossary; `--root` and the default root."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import KATEX_DIST

from literate.__main__ import default_root, main

SOURCE = '''"""# Softmax"""

# The weights are $w = e^s / \\sum e^s$ and the softmax is run here.
x = sum([1, 2, 3])
#| x * 2

# A second softmax section.
y = 1
'''


def project(root: Path, value_one: str, value_two: str) -> Path:
    """A project with one source, a KaTeX install and a Japanese table."""
    (root / "demo.py").write_text(SOURCE, encoding="utf-8")
    (root / "node_modules" / "katex").mkdir(parents=True)
    (root / "node_modules" / "katex" / "dist").symlink_to(KATEX_DIST)
    (root / "mkdocs.yml").write_text(
        "plugins:\n  - literate:\n      sources: [demo.py]\n", encoding="utf-8"
    )
    ja = root / "translations" / "ja"
    ja.mkdir(parents=True)
    glossary = {"softmax": {"render": "ソフトマックス", "forbidden": ["柔らか最大"]}}
    (ja / "glossary.json").write_text(json.dumps(glossary), encoding="utf-8")
    table = {
        "The weights are _^_0_^_ and the softmax is run here.": value_one,
        "A second softmax section.": value_two,
    }
    (ja / "demo.json").write_text(json.dumps(table), encoding="utf-8")
    return root


def test_render_runs_examples_and_checks_translations_with_the_glossary(
    tmp_path, capsys
):
    root = project(
        tmp_path,
        "重みは _^_0_^_ で、ここでソフトマックスを実行する。",
        "二つ目の柔らか最大の節。",  # the glossary forbids this rendering
    )
    args = ["--root", str(root), "render", str(root / "demo.py"), "--lang", "ja"]
    assert main([*args, "--fragment"]) == 0
    page = capsys.readouterr().out
    assert "ここでソフトマックスを実行する" in page  # a translation that passes
    assert "柔らか最大" not in page  # refused, as the site refuses it
    assert "A second softmax section." in page  # shown in English instead
    assert "<math" in page
    output = '<pre><code><span class="lit-line">12</span></code></pre>'
    assert output in page  # the example's output: x * 2
    assert (root / ".cache" / "outputs").is_dir()
    assert main([*args, "--no-examples", "--fragment"]) == 0
    assert output not in capsys.readouterr().out


def test_the_default_root_is_the_folder_of_mkdocs_yml(tmp_path):
    (tmp_path / "mkdocs.yml").write_text("site_name: t\n", encoding="utf-8")
    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    assert default_root(tmp_path / "pkg" / "sub") == tmp_path
    assert default_root(tmp_path.parent) == tmp_path.parent  # none above


def test_root_given_before_or_after_the_command_is_the_project(
    tmp_path, monkeypatch, capsys
):
    # A table that fails the glossary: `check` in the right project says so.
    (tmp_path / "project").mkdir()
    root = project(tmp_path / "project", "柔らか最大 _^_0_^_", "二つ目の節。")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # no mkdocs.yml here or above the default
    for argv in (
        ["--root", str(root), "translations", "check", "ja"],
        ["translations", "--root", str(root), "check", "ja"],
    ):
        assert main(argv) == 1, argv
        assert "translations/ja/demo.json" in capsys.readouterr().out
