"""Hostile and careless input to the render stages (parse, translate, render).

- names and messages from files anybody can write (a language folder named
  `<img src=x onerror=…>`, a table error) reach the status page as text;
- a translation that adds `## …` headings cannot grow the section list;
- sources and globbed matches that lead out of the root are refused, quoting
  nothing of the target; FIFOs, `/dev/zero` and oversized files are refused
  before they are read; a leading BOM is accepted;
- a source Python's parser cannot nest, and an unclosed `$$` or TeX `$`,
  give one line naming the file and line;
- 16,000 identical sections or headings cost what 2,000 do, times about 8
  (a generous time bound catches the quadratic search that was there).
"""

from __future__ import annotations

import dataclasses
import logging
import os
import re
from html import unescape
from pathlib import Path

import markdown
import pytest
from conftest import ROOT, Tree
from test_hostile_input import within

from literate.check import check_entry
from literate.model import SourceError
from literate.normalize import key
from literate.parse import parse
from literate.pipeline import Pipeline
from literate.render import render_page
from literate.sources import find_sources
from literate.status import cell, status_markdown
from literate.textfile import MAX_BYTES, NotReadable, OutsideProject, read_utf8
from literate.translate import translate_page

PAYLOAD = "<img src=x onerror=alert(document.domain)>"


# --- the status page: every cell is text ----------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        PAYLOAD,
        "a | b",  # would end the cell
        "[x](javascript:alert(1))",
        "![x](https://evil.example/x.png)",
        "`<b>` *em* __strong__ &amp; &#x3C;",
        "line\nbreak | </td></tr></table><script>alert(1)</script>",
    ],
)
def test_a_status_cell_renders_as_the_literal_text(text):
    html = markdown.markdown(
        f"| a | b |\n|---|---|\n| {cell(text)} | x |", extensions=["tables"]
    )
    tree = Tree(html)
    assert [t for t, _ in tree.tags] == ["table", "thead", "tr", "th", "th"] + [
        "tbody",
        "tr",
        "td",
        "td",
    ]
    first = re.search(r"<td>(.*?)</td>", html, re.S).group(1)
    assert unescape(first) == " ".join(text.split())


def test_a_hostile_language_folder_and_table_error_are_escaped(tmp_path):
    (tmp_path / "demo.py").write_text("# Hello.\nx = 1\n", "utf-8")
    folder = tmp_path / "translations" / PAYLOAD
    folder.mkdir(parents=True)
    (folder / "demo.json").write_text('{"<b>x</b>": 1}', "utf-8")  # not a string
    status = status_markdown(tmp_path, ("demo.py",))
    html = markdown.markdown(status, extensions=["tables"])
    tags = {t for t, _ in Tree(html).tags}
    assert tags <= {"table", "thead", "tbody", "tr", "th", "td"}
    assert "<img" not in html and "<b>" not in html


# --- a translation cannot edit the section list ------------------------------------


def test_headings_a_translation_adds_are_not_listed():
    source = "# ## One\n#\n# Text.\nx = 1\n\n# ## Two\n#\n# More.\ny = 2\n"
    page = parse(source, "m.py")
    first, second = page.sections
    added = "## 一\n\n本文。\n\n## 追加\n\n## もう一つ"
    page = dataclasses.replace(
        page,
        lang="ja",
        sections=(
            dataclasses.replace(
                first, docs=added, english=first.docs, state="translated"
            ),
            second,
        ),
    )
    tree = Tree(render_page(page))
    nav = render_page(page).split('<nav class="lit-contents"')[1].split("</nav>")[0]
    assert nav.count("<li>") == 2  # One and Two, as in the English
    assert "追加" not in nav and "もう一つ" not in nav
    assert len(tree.find("h2")) == 4  # the added headings are still text


# --- files: inside the project, regular, bounded ------------------------------------


@pytest.fixture
def project(tmp_path):
    """A project with one source, a folder symlinked to elsewhere under its
    package, and a source symlinked to a file elsewhere."""
    root, outside = tmp_path / "proj", tmp_path / "outside"
    (root / "pkg").mkdir(parents=True)
    outside.mkdir()
    (outside / "secret.py").write_text("# SECRET-CONTENT\nx = 1\n", "utf-8")
    (root / "pkg" / "a.py").write_text("# A.\nx = 1\n", "utf-8")
    (root / "pkg" / "inner.py").symlink_to("a.py")  # inside: fine
    (root / "pkg" / "elsewhere").symlink_to(outside, target_is_directory=True)
    (root / "s.py").symlink_to(outside / "secret.py")
    return root


@pytest.mark.parametrize(
    ("pattern", "named"),
    [
        ("pkg/**/*.py", "pkg/elsewhere"),  # refused before it is listed
        ("s.py", "s.py"),
        ("../outside/secret.py", "../outside/secret.py"),
        ("pkg/elsewhere", "pkg/elsewhere"),
    ],
)
def test_sources_that_lead_outside_are_refused(project, pattern, named):
    with within(5), pytest.raises(OutsideProject) as caught:
        find_sources(project, [pattern])
    message = str(caught.value)
    assert message.startswith(f"{named}: leads outside the project")
    assert "\n" not in message and "SECRET" not in message
    assert str(project.parent) not in message


def test_an_absolute_source_outside_is_refused(project):
    target = project.parent / "outside" / "secret.py"
    with pytest.raises(OutsideProject):
        find_sources(project, [str(target)])
    with pytest.raises(OutsideProject):
        Pipeline(project, run_examples=False).read("s.py")


def test_sources_inside_are_found_through_an_inside_symlink(project):
    assert find_sources(project, ["pkg/a.py", "pkg/inner.py"]) == [
        "pkg/a.py",
        "pkg/inner.py",
    ]


def test_fifo_dev_zero_folder_and_oversized_are_refused_before_reading(tmp_path):
    fifo = tmp_path / "pipe.py"
    os.mkfifo(fifo)
    big = tmp_path / "big.py"
    with open(big, "wb") as file:
        file.truncate(MAX_BYTES + 1)  # sparse: nothing is written
    cases = [
        (fifo, "not a regular file"),
        (Path("/dev/zero"), "not a regular file"),
        (tmp_path, "a folder"),
        (big, f"more than the {MAX_BYTES} bytes"),
        (tmp_path / "gone.py", "cannot be read: No such file"),
    ]
    for path, expected in cases:
        with within(2), pytest.raises(NotReadable) as caught:
            read_utf8(path, "x.py")
        assert str(caught.value).startswith("x.py: ") and expected in str(caught.value)


def test_a_leading_bom_is_accepted_and_its_examples_run(tmp_path):
    (tmp_path / "bom.py").write_bytes(
        "\ufeff# Hello.\n#| print(6 * 7)\nx = 1\n".encode()
    )
    pipeline = Pipeline(tmp_path)
    try:
        page = pipeline.page("bom.py")
    finally:
        pipeline.close()
    assert page.sections[0].docs == "Hello."
    assert [o.text.strip() for o in page.sections[0].outputs] == ["42"]


# --- one line for a source Python cannot parse, and for unclosed math ---------------


def test_an_expression_too_deep_for_python_is_one_line():
    source = "# Big.\nx = " + "+".join(["1"] * 100_000) + "\n"
    with pytest.raises(SourceError) as caught:
        parse(source, "big.py")
    assert str(caught.value) == (
        "big.py:1: nested too deeply for Python's parser; split the expression"
    )


def test_unclosed_math_is_a_warning_naming_the_line(caplog):
    source = (
        '"""Demo.\n\nThe $$x\n\n"""\n\n'
        "# A cost of $5, a $y$ and $\\alpha + 1.\nx = 1\n\n"
        "# Money: $5 and $10, `$\\beta` in code, \\$\\gamma escaped.\ny = 2\n"
    )
    with caplog.at_level(logging.WARNING):
        render_page(parse(source, "m.py"))
    messages = [r.getMessage() for r in caplog.records]
    assert [m.split(":")[:2] for m in messages] == [["m.py", "3"], ["m.py", "7"]]
    assert messages[0].startswith("m.py:3: unclosed $$: the math is shown as raw")
    assert messages[1].startswith("m.py:7: unclosed $: ")


# --- repeats cost linear time -------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize(
    "block", ["# Same.\nx = 1\n", "# ## Same\n#\n# text\nx = 1\n"], ids=["s", "h"]
)
def test_16000_identical_sections_render_in_linear_time(block):
    # Quadratic, this took 80-180 s; linear, about 8 s on a 2-core machine.
    with within(60):
        html = render_page(parse(block * 16_000, "same.py"))
    ids = Tree(html).find("section")
    assert len(ids) == 16_000


def test_thousands_of_stale_keys_cost_a_bounded_build():
    # 92 ms a stale key before (10,000 keys: about 15 minutes for one page).
    page = parse((ROOT / "mha.py").read_text("utf-8"), "mha.py")
    keys = [key(s.docs) for s in page.sections if s.docs.strip()]
    shuffled = {
        " ".join(sorted(keys[i % len(keys)].split())) + f" {i}": "古い訳"
        for i in range(10_000)
    }  # every letter shared with a current key: the costliest to rule out
    edited = {k.replace("the", "a", 2) + " (old)": "古い訳" for k in keys}
    with within(20):
        translate_page(page, "ja", shuffled)
        states = {s.state for s in translate_page(page, "ja", edited).sections}
    assert states == {"stale"}  # every edited key still recognised


@pytest.mark.parametrize(
    ("value", "refused"),
    [
        ("## 一\n\n本文。", False),
        ("## 一\n\n本文。\n\n## 追加", True),  # a heading the English lacks
        ("### 一\n\n本文。", True),  # another level
        ("一\n\n本文。", True),  # the English's heading dropped
        ("## 一\n\n```\n## コード内\n```", False),  # in a fence: not a heading
    ],
)
def test_check_refuses_a_translation_that_changes_the_headings(value, refused):
    problems = check_entry("## One\n\nText of it.", value)
    assert any("the headings are" in p for p in problems) == refused
