"""The renderer as someone else installs it: from a wheel, in another folder.

The wheel is built from a copy of this checkout and installed (not editable)
into a temporary folder that comes first on PYTHONPATH; its dependencies are
this environment's. A small site outside the repository, with mkdocs' own
theme, a package tree, math and a Japanese translation, is then made with
the installed `literate` command and `mkdocs build --strict`.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT

pytestmark = pytest.mark.slow

PACKAGE = {
    "pkg/__init__.py": '''"""
---
title: A package of attention
---

# A package of attention

The scores are $s = q \\cdot k / \\sqrt{d}$; the module is [here](mod.html),
its subpackage [there](sub/index.html).
"""
''',
    "pkg/mod.py": r'''"""The module: weights $w = \mathrm{softmax}(s)$.

Back to [the index](index.html).
"""

# Twice a number, $2x$.
def double(x):
    return 2 * x
''',
    "pkg/sub/__init__.py": '"""# A subpackage\n\nUp to [the module](../mod.html)."""\n',
}

MKDOCS = """site_name: installed
use_directory_urls: false
theme: mkdocs
plugins:
  - i18n:
      docs_structure: suffix
      languages:
        - {locale: en, name: English, default: true}
        - {locale: ja, name: 日本語}
  - literate:
      sources: [pkg]
      base: pkg
"""


def run(command: list[str], cwd: Path, env: dict[str, str]) -> str:
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout + done.stderr


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> tuple[Path, dict[str, str]]:
    """The folder the wheel is installed into, and an environment using it."""
    tmp = tmp_path_factory.mktemp("wheel")
    checkout = tmp / "checkout"
    listed = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split("\n")
    for name in filter(None, listed):
        if (ROOT / name).is_file():
            (checkout / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, checkout / name)
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1", PIP_NO_INDEX="1")
    dist = tmp / "dist"
    build = ["wheel", "--no-deps", "--no-build-isolation", "-w", str(dist), "."]
    run(pip + build, checkout, env)
    [wheel] = dist.glob("*.whl")
    target = tmp / "installed"
    run(pip + ["install", "--no-deps", "--target", str(target), str(wheel)], tmp, env)
    env["PYTHONPATH"] = str(target)
    return target, env


def test_the_wheel_carries_the_renderers_assets(installed):
    target, env = installed
    assert (target / "literate" / "katex_render.js").is_file()
    assert (target / "literate" / "assets" / "literate.css").is_file()
    code = "import literate.pipeline as p; print(p.__file__)"
    where = run([sys.executable, "-c", code], ROOT.parent, env)
    assert Path(where.strip()).is_relative_to(target)  # not the checkout


def test_an_installed_renderer_builds_a_package_tree_with_math_and_a_translation(
    installed, tmp_path
):
    target, env = installed
    site = tmp_path / "site"
    for name, text in PACKAGE.items():
        (site / name).parent.mkdir(parents=True, exist_ok=True)
        (site / name).write_text(text, encoding="utf-8")
    (site / "docs").mkdir()
    (site / "mkdocs.yml").write_text(MKDOCS, encoding="utf-8")
    # KaTeX as the site installs it (node_modules beside mkdocs.yml), not
    # beside the package.
    (site / "node_modules").symlink_to(ROOT / "node_modules", target_is_directory=True)

    literate = [str(target / "bin" / "literate")]
    report = run(literate + ["translations", "update", "ja"], site, env)
    assert "translations/ja/pkg/mod.json" in report
    table_file = site / "translations" / "ja" / "pkg" / "mod.json"
    table = json.loads(table_file.read_text(encoding="utf-8"))
    [english] = [k for k in table if k.startswith("Twice")]
    table[english] = "数の二倍、_^_0_^_。"
    table_file.write_text(json.dumps(table, ensure_ascii=False), encoding="utf-8")

    run([sys.executable, "-m", "mkdocs", "build", "--strict", "-d", "out"], site, env)
    out = site / "out"
    pages = {p: (out / p).read_text(encoding="utf-8") for p in PAGES}
    assert (
        "<h1" in pages["index.html"] and "A package of attention" in pages["index.html"]
    )
    assert pages["index.html"].count("<math") == 1
    assert '<a href="mod.html">here</a>' in pages["index.html"]
    assert '<a href="../mod.html">the module</a>' in pages["sub/index.html"]
    assert "数の二倍" in pages["ja/mod.html"] and "<math" in pages["ja/mod.html"]
    assert "数の二倍" not in pages["mod.html"]
    for page, html in pages.items():
        up = "../" * page.count("/")
        assert f'href="{up}assets/literate.css"' in html, page
        assert f'href="{up}assets/katex/katex.min.css"' in html, page
    assert (out / "assets" / "literate.css").is_file()
    assert (out / "assets" / "katex" / "katex.min.css").is_file()


PAGES = ["index.html", "mod.html", "sub/index.html", "ja/mod.html"]


def test_a_broken_link_fails_the_strict_build_naming_file_and_line(installed, tmp_path):
    _, env = installed
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text(
        '"""# Index\n\nSee [gone](missing.html)."""\n', encoding="utf-8"
    )
    (tmp_path / "docs").mkdir()
    (tmp_path / "node_modules").symlink_to(ROOT / "node_modules")
    (tmp_path / "mkdocs.yml").write_text(
        "site_name: t\nplugins:\n  - literate:\n      sources: [pkg/*.py]\n",
        encoding="utf-8",
    )
    command = [sys.executable, "-m", "mkdocs", "build", "--strict", "-d", "out"]
    done = subprocess.run(
        command, cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert done.returncode != 0
    assert "pkg/__init__.py:3: link to 'missing.html'" in done.stderr
