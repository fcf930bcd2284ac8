"""The renderer's outputs: a text output that is a Markdown table is a table."""

from __future__ import annotations

import dataclasses
import re
from html.parser import HTMLParser
from pathlib import Path

from test_site import browser, in_browser  # noqa: F401 (fixtures)

from literate.model import Output
from literate.outputs import table_rows
from literate.parse import parse
from literate.render import render_page

ROOT = Path(__file__).resolve().parent.parent


def with_outputs(*outputs, lang="en"):
    page = parse("# Table.\nx = 1\n#> show(x)\n", "m.py")
    section = dataclasses.replace(page.sections[0], outputs=outputs)
    return dataclasses.replace(page, sections=(section,), lang=lang)


class Cells(HTMLParser):
    """Each table row of a page as [(tag, class, text), ...]."""

    def __init__(self, html: str):
        super().__init__()
        self.rows: list[list[tuple[str, str, str]]] = []
        self.cell: list | None = None
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        if tag == "tr":
            self.rows.append([])
        elif tag in ("th", "td"):
            self.cell = [tag, dict(attrs).get("class") or "", ""]

    def handle_data(self, data):
        if self.cell is not None:
            self.cell[2] += data

    def handle_endtag(self, tag):
        if tag in ("th", "td"):
            self.rows[-1].append(tuple(self.cell))
            self.cell = None


TABLE = """\
|  d_k | case <b> | max p |
| ---: | -------- | ----- |
|    4 | a \\| b   | 0.431 |
| 1024 | -1e-07   | 1.0 % |
"""


def test_a_markdown_table_output_renders_as_a_table_with_escaped_cells():
    html = render_page(with_outputs(Output(3, "text", text=TABLE)))
    assert "<pre>" not in html.split("lit-output")[1]
    assert "<b>" not in html and "case &lt;b&gt;" in html
    assert Cells(html).rows == [
        [
            ("th", "lit-right", "d_k"),
            ("th", "", "case <b>"),
            ("th", "lit-right", "max p"),
        ],
        [("td", "lit-right", "4"), ("td", "", "a | b"), ("td", "lit-right", "0.431")],
        [
            ("td", "lit-right", "1024"),
            ("td", "", "-1e-07"),
            ("td", "lit-right", "1.0 %"),
        ],
    ]
    # Keyboard-reachable when it scrolls, named in the page's language.
    assert 'tabindex="0" role="region" aria-label="Output table"' in html


def test_a_table_region_is_named_in_the_pages_language():
    html = render_page(with_outputs(Output(3, "text", text=TABLE), lang="zh"))
    assert 'aria-label="输出表格"' in html


def test_text_that_is_not_a_table_stays_a_monospace_block():
    for text in (
        "loss 1.23 | step 4\n",  # a pipe, no rule
        "| a | b |\n| -- |\n| 1 | 2 |\n",  # the rule has too few cells
        "| a | b |\n| 1 | 2 |\n",  # no rule
        "| a | b |\n| -- | -- |\nplain line\n",  # a line without a pipe
        "-----\n-----\n",  # a rule alone is not a table
    ):
        assert table_rows(text) is None, text
        html = render_page(with_outputs(Output(3, "text", text=text)))
        assert "<table" not in html and "<pre><code>" in html


SPEECHES = "ROMEO:\nIs the day\n\nJULIET:\n  So soon\n"


def test_a_blank_line_of_printed_text_keeps_its_line():
    html = render_page(with_outputs(Output(3, "text", text=SPEECHES)))
    output = html[html.index('<div class="lit-output"') :]
    assert '<span class="lit-line">\n</span><span' in output  # not an empty span
    assert output.count('<span class="lit-line"') == 5  # a span a line
    code = output[output.index("<code>") + 6 : output.index("</code>")]
    assert re.sub(r"<[^>]+>", "", code) == SPEECHES.rstrip("\n")  # its text


@in_browser
def test_printed_blank_lines_show_and_copy_as_written(browser, tmp_path):  # noqa: F811
    """In Chromium: the blank line between two speeches takes a line's height,
    and selecting the block gives the text as printed."""
    css = (ROOT / "literate" / "assets" / "literate.css").read_text(encoding="utf-8")
    body = render_page(with_outputs(Output(3, "text", text=SPEECHES)))
    (tmp_path / "page.html").write_text(
        f"<!doctype html><meta charset=utf-8><style>{css}</style>{body}",
        encoding="utf-8",
    )
    page = browser.new_page()
    try:
        page.goto((tmp_path / "page.html").as_uri())
        heights, copied, text = page.evaluate(
            """() => {
              const code = document.querySelector('.lit-output code');
              const range = document.createRange();
              range.selectNodeContents(code);
              getSelection().removeAllRanges();
              getSelection().addRange(range);
              return [[...code.children].map(
                s => s.getBoundingClientRect().height),
                getSelection().toString(), code.textContent];
            }"""
        )
    finally:
        page.close()
    assert min(heights) > 0 and max(heights) == min(heights)
    assert copied == text == SPEECHES.rstrip("\n")
