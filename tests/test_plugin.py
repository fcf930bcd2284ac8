"""The mkdocs plugin's plain functions, and this site's i18n/search hooks.

No site is built here (test_site.py and test_wheel.py build sites): these
are the names, paths, links and indexes the plugin computes.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT
from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File, Files

from literate.mkdocs import i18n_search, reload, site
from literate.parse import parse
from literate.sources import find_sources, page_path

EN, JA = site.Language("en", True), site.Language("ja", False)


def test_pages_are_named_with_the_language_suffix_i18n_expects():
    targets = site.page_targets(["mha.py", "train.py"], (EN, JA), "status.md", "")
    assert targets == {
        "mha.md": site.Target("mha.py", EN, "mha"),
        "mha.ja.md": site.Target("mha.py", JA, "mha"),
        "train.md": site.Target("train.py", EN, "train"),
        "train.ja.md": site.Target("train.py", JA, "train"),
        "status.md": site.Target("", EN),
    }


def test_a_page_path_follows_the_source_path_from_the_base():
    assert page_path("mha.py") == "mha"
    assert page_path("pkg/__init__.py") == "pkg/index"
    assert page_path("pkg/sub/mod.py") == "pkg/sub/mod"
    assert page_path("labml_nn/transformers/xl/__init__.py", "labml_nn") == (
        "transformers/xl/index"
    )
    targets = site.page_targets(["p/__init__.py", "p/m.py"], (EN, JA), "", "p")
    assert sorted(targets) == ["index.ja.md", "index.md", "m.ja.md", "m.md"]


def test_a_language_index_holds_its_own_pages_located_from_its_folder():
    entries = [
        {"location": "mha.html#a", "title": "Attention", "text": "soft\u200bmax"},
        {"location": "ja/mha.html#a", "title": "注意", "text": "注意\u200b機構"},
    ]
    splits = {"separator": "[\\s\\u200b]+"}
    whole = {"separator": "[\\s\\-]+"}
    ja = json.loads(i18n_search.language_index(entries, JA, whole))
    assert ja["docs"] == [
        {"location": "mha.html#a", "title": "注意", "text": "注意機構"}
    ]
    assert ja["config"] == whole
    en = json.loads(i18n_search.language_index(entries, EN, splits))
    assert [d["location"] for d in en["docs"]] == ["mha.html#a", "ja/mha.html#a"]
    assert en["docs"][0]["text"] == "soft\u200bmax"  # kept: the separator splits


def test_a_translated_page_searches_from_its_language_folder():
    app = {"base": "..", "features": [], "search": "../assets/w.js"}
    page = (
        '<html><script id="__config" type="application/json">'
        f"{json.dumps(app)}</script></html>"
    )
    found = re.search(
        r"application/json\">(.*)</script>",
        i18n_search.point_search_at(page, "ja/", "x"),
    )
    assert json.loads(found.group(1)) == dict(app, base="../ja/")
    with pytest.raises(PluginError, match="ja/mha.html"):
        i18n_search.point_search_at("<html></html>", "ja/", "ja/mha.html")


def test_a_fresh_pipeline_runs_the_edited_code():
    reload.load_pipeline(fresh=False)
    # The re-import replaces modules that other tests' imports still hold
    # (an exception class imported before would no longer match): put the
    # originals back afterwards.
    saved = {n: m for n, m in sys.modules.items() if n.startswith("literate.")}
    try:
        before = sys.modules["literate.parse"]
        module = reload.load_pipeline(fresh=True)
        after = sys.modules["literate.parse"]
        assert after is not before
        assert module.parse is after.parse
    finally:
        sys.modules.update(saved)
        for name, module in saved.items():  # and the package's attributes
            parent, _, child = name.rpartition(".")
            setattr(sys.modules[parent], child, module)


def test_the_katex_stylesheet_goes_at_the_end_of_the_head():
    html = "<html><head><title>t</title></head><body></body></html>"
    linked = site.link_stylesheet(html, "../assets/katex/katex.min.css")
    assert linked.index('href="../assets/katex/katex.min.css"') < linked.index(
        "</head>"
    )
    assert site.link_stylesheet("<p>no head</p>", "x.css") == "<p>no head</p>"


# --- links between generated pages ------------------------------------------------

SOURCES = ["p/__init__.py", "p/mha.py", "p/xl/__init__.py"]


def tree_targets():
    return site.page_targets(SOURCES, (EN,), "", "p")


def docs_files(config_dir: str, *uris: str) -> Files:
    return Files([File(uri, config_dir, "site", False) for uri in uris])


def test_broken_relative_links_are_reported_by_file_and_line(tmp_path, caplog):
    targets = tree_targets()
    text = (
        '"""# Index\n\nSee [MHA](mha.html), [XL](xl/index.html#top),\n'
        '[gone](missing.html) and [web](https://example.org/x.html).\n"""\n'
        "# And [up](../nowhere.html), [self](#a), [folder](xl/).\nx = 1\n"
    )
    pages = {"index.md": parse(text, "p/__init__.py")}
    files = docs_files(str(tmp_path), "index.md", "mha.md", "xl/index.md")
    with caplog.at_level(logging.WARNING, logger="mkdocs.plugins.literate"):
        assert site.check_links(targets, pages, files) == 2
    messages = [r.getMessage() for r in caplog.records]
    assert messages[0].startswith("p/__init__.py:4: link to 'missing.html'")
    assert messages[1].startswith("p/__init__.py:6: link to '../nowhere.html'")


def test_links_between_pages_follow_directory_urls():
    targets = tree_targets()
    mha = targets["mha.md"]
    body = (
        '<a href="xl/index.html#top">x</a> <a href="index.html">i</a> '
        '<a href="https://e.org/a.html">e</a> <a href="other.html">o</a>'
    )
    assert site.resolve_links(body, mha, targets, False) == body
    assert site.resolve_links(body, mha, targets, True) == (
        '<a href="../xl/#top">x</a> <a href="..">i</a> '
        '<a href="https://e.org/a.html">e</a> <a href="other.html">o</a>'
    )


# --- a real tree: labml's transformers, copied in ----------------------------


@pytest.mark.slow
def test_labml_transformers_build_as_a_tree_and_report_their_broken_links(tmp_path):
    labml_nn = pytest.importorskip("labml_nn")
    # A copy: a symlink to it would lead out of the project, and be refused.
    shutil.copytree(
        Path(labml_nn.__file__).parent,
        tmp_path / "labml_nn",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    (tmp_path / "node_modules").symlink_to(ROOT / "node_modules")
    (tmp_path / "docs").mkdir()
    (tmp_path / "mkdocs.yml").write_text(
        "site_name: t\nuse_directory_urls: false\nplugins:\n  - literate:\n"
        "      sources: [labml_nn/transformers/**/*.py]\n      base: labml_nn\n"
        "      run_examples: false\n",
        encoding="utf-8",
    )
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    command = [sys.executable, "-m", "mkdocs", "build", "-d", "out"]
    done = subprocess.run(
        command, cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    out = tmp_path / "out" / "transformers"
    for page in ("index.html", "mha.html", "xl/index.html", "xl/relative_mha.html"):
        assert "lit-page" in (out / page).read_text(encoding="utf-8"), page
    # labml's relative_mha.py links `mha.html` from xl/, where there is none.
    broken = re.findall(r"WARNING +- +(\S+:\d+): link to '([^']*)'", done.stderr)
    assert ("labml_nn/transformers/xl/relative_mha.py:48", "mha.html") in broken
    index = (out / "index.html").read_text(encoding="utf-8")
    assert 'href="xl/index.html"' in index  # a link that resolves is kept
    # No nav in mkdocs.yml: mkdocs' own follows the tree, in file order,
    # each page titled from its front matter.
    mha = (out / "mha.html").read_text(encoding="utf-8")
    assert "<title>Multi-Headed Attention (MHA) - t</title>" in mha
    assert 'rel="prev" href="label_smoothing_loss.html"' in mha
    assert 'rel="next" href="models.html"' in mha
    strict = subprocess.run(
        [*command, "--strict"], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert strict.returncode != 0


def test_the_source_link_follows_the_option_or_the_copy_in_the_site():
    page = type("Page", (), {"url": "pkg/mod.html"})()
    url = "https://example.org/blob/main/{path}"
    assert site.source_url(url, "pkg/mod.py", page) == (
        "https://example.org/blob/main/pkg/mod.py"
    )
    assert site.source_url("", "pkg/mod.py", page) == "../source/pkg/mod.py"


def test_sources_are_files_folders_or_globs_each_once(tmp_path):
    for name in ("a.py", "pkg/__init__.py", "pkg/m.py", "pkg/sub/n.py", "pkg/x.txt"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x = 1\n", encoding="utf-8")
    assert find_sources(tmp_path, ["a.py", "pkg", "pkg/*.py"]) == [
        "a.py",
        "pkg/__init__.py",
        "pkg/m.py",
        "pkg/sub/n.py",
    ]
    assert find_sources(tmp_path, ["pkg/**/*.py"])[-1] == "pkg/sub/n.py"
    with pytest.raises(FileNotFoundError, match="'nope/\\*\\*/\\*.py': no such source"):
        find_sources(tmp_path, ["a.py", "nope/**/*.py"])


@pytest.mark.parametrize(
    ("old", "new", "value"),
    [
        ("katex", "katex_dist", "node_modules/katex/dist"),
        ("packages", "cache_key_packages", "[torch]"),
        ("timeout", "examples_timeout", "60"),
    ],
)
def test_a_renamed_option_stops_the_build_naming_the_new_one(tmp_path, old, new, value):
    (tmp_path / "a.py").write_text('"""# A"""\nx = 1\n', encoding="utf-8")
    (tmp_path / "docs").mkdir()
    (tmp_path / "mkdocs.yml").write_text(
        "site_name: t\nplugins:\n  - literate:\n      sources: [a.py]\n"
        f"      {old}: {value}\n",
        encoding="utf-8",
    )
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "-d", "out"],
        cwd=tmp_path, env=env, capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode != 0
    line = next(row for row in done.stderr.splitlines() if "renamed" in row)
    assert f"'{old}'" in line and f"`{new}:" in line, line
    assert not (tmp_path / "out").exists()
