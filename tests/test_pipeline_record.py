"""One record per (source, language): read once, checked once, walked once.

A small project with a translated page (prose, a title, a figure word that
an example prints, a code comment) is built the way the site builds it:
the English page, the Japanese page, its HTML and its notebook. Counting
wrappers around the table reader, the entry check and the code walk show
that the build reads the table once, checks each entry once, and walks each
example's code once; the stages that come after take what was found.
"""

from __future__ import annotations

import importlib
import json
import textwrap
from collections import Counter
from pathlib import Path

import pytest


def current(name: str):
    """The module `literate.<name>` as the pipeline will find it now (another
    test may have imported the stages again: patch what is in use)."""
    return importlib.import_module(f"literate.{name}")


SOURCE = textwrap.dedent(
    '''\
    """# Demo

    A page.
    """

    from literate.words import tr

    # Steps, counted.


    def steps() -> None:
        print(tr("step"), 3)  # the word in the page's language


    #| steps()
    '''
)
TABLE = {
    "Demo": "デモ",
    "# Demo\n\nA page.": "# デモ\n\nページ。",
    "Steps, counted.": "数えたステップ。",
    "step": "ステップ",
    "the word in the page's language": "ページの言語での語",
}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "demo.py").write_text(SOURCE, encoding="utf-8")
    folder = tmp_path / "translations" / "ja"
    folder.mkdir(parents=True)
    text = json.dumps(TABLE, ensure_ascii=False, indent=2, sort_keys=True)
    (folder / "demo.json").write_text(text + "\n", encoding="utf-8")
    return tmp_path


def counting(monkeypatch, module, name: str, counts: Counter, by_argument=False):
    """Wrap `module.name` so that each call is counted (by its first argument)."""
    original = getattr(module, name)

    def wrapper(*args, **kwargs):
        counts[args[0] if by_argument else name] += 1
        return original(*args, **kwargs)

    monkeypatch.setattr(module, name, wrapper)


def refused(name: str):
    def fail(*args, **kwargs):
        raise AssertionError(f"{name} called again after the record was made")

    return fail


def test_a_translated_page_reads_checks_and_walks_once(project, monkeypatch):
    reads, checks, walks = Counter(), Counter(), Counter()
    counting(monkeypatch, current("translation"), "load_table", reads)
    counting(monkeypatch, current("translation"), "entry_problems", checks, True)
    counting(monkeypatch, current("cache_key"), "_reach", walks)
    for name in ("check_entry", "comment_problems"):
        monkeypatch.setattr(current("translate"), name, refused(name))

    pipeline = current("pipeline").Pipeline(project)
    english = pipeline.page("demo.py")
    page = pipeline.page("demo.py", "ja")
    body = pipeline.html(page)
    notebook = json.loads(pipeline.notebook(page))
    again = pipeline.page("demo.py", "ja")

    assert reads == {"load_table": 1}
    assert checks == Counter(list(TABLE))  # every entry, once
    assert walks == {"_reach": 1}  # one example, one walk for all it needs
    # ... and what was found reached every stage.
    assert again == page and english.lang == "en"
    assert "ステップ 3" in body and "step 3" not in body
    assert "# ページの言語での語" in body
    first = "".join(notebook["cells"][1]["source"])
    assert '"step": "ステップ"' in first


def test_forgetting_a_source_reads_its_table_again(project, monkeypatch):
    reads = Counter()
    counting(monkeypatch, current("translation"), "load_table", reads)
    pipeline = current("pipeline").Pipeline(project, run_examples=False)
    pipeline.page("demo.py", "ja")
    table = project / "translations" / "ja" / "demo.json"
    edited = dict(TABLE, **{"Steps, counted.": "ステップを数える。"})
    table.write_text(json.dumps(edited, ensure_ascii=False, sort_keys=True))
    assert "数えたステップ" in pipeline.html(pipeline.page("demo.py", "ja"))
    pipeline.forget("demo.py")
    assert "ステップを数える" in pipeline.html(pipeline.page("demo.py", "ja"))
    assert reads == {"load_table": 2}
