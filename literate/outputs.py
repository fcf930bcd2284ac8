"""What an example produced, under the code that made it: a table, text,
a figure (with its narrow variant) or data for the page's scripts.

Outputs are the build's (never a translator's), so they are trusted; their
text is escaped all the same.
"""

from __future__ import annotations

import html
import re

from literate.data import script_text
from literate.figures import img_tag, shown_size
from literate.languages import label
from literate.model import Output, Page
from literate.narrow import NARROW_DEFAULT_PX, narrow_below
from literate.prose import RenderError
from literate.sanitize import attr

IMAGE_URLS = ("data:image/svg+xml;base64,", "data:image/png;base64,")


def indent(text: str) -> str:
    """A line's indentation, for the stylesheet: a line too long for the
    column wraps, and its continuation starts a step further in than the
    line itself."""
    spaces = len(text) - len(text.lstrip(" "))
    return f' style="--lit-indent:{spaces}"' if spaces else ""


def output_html(
    page: Page, output: Output, name: str, narrow: Output | None = None
) -> str:
    """What a `#|` directive produced (the build's, trusted): a table, text or
    an image. Text that is a Markdown table is shown as an HTML table. An
    image followed by its `narrow` variant shows that one on narrow windows."""
    line = output.directive
    if output.kind == "text" and (rows := table_rows(output.text)):
        # Focusable: a table wider than a narrow window scrolls on its own.
        name = attr(label(page.lang, "table"))
        return (
            f'<div class="lit-output lit-table" data-directive="{line}"'
            f' tabindex="0" role="region" aria-label="{name}">'
            f"{_table_html(rows)}</div>"
        )
    if output.kind == "text":
        # One span a line, as in the code: a long line wraps (CSS). A blank
        # line holds its newline (and no newline follows it), so that it
        # keeps its height, a copy of the block keeps it (an empty flex item
        # has neither) and the block's text is the text printed.
        rows = output.text.rstrip("\n").split("\n")
        text = "".join(
            ("\n" if i and rows[i - 1] else "")
            + f'<span class="lit-line"{indent(row)}>{_line_text(row)}</span>'
            for i, row in enumerate(rows)
        )
        return (
            f'<div class="lit-output" id="{attr(name)}" data-directive="{line}">'
            f"<pre><code>{text}</code></pre></div>"
        )
    if output.kind == "image" and output.image.startswith(IMAGE_URLS):
        img = img_tag(output.image, output.alt)
        if narrow is not None and narrow.variant == "narrow":
            img = f"<picture>{_narrow_source(page, output, narrow)}{img}</picture>"
        return (
            f'<figure class="lit-output" data-directive="{line}"'
            f' data-text-size="{output.text_size:.4f}">{img}</figure>'
        )
    if output.kind == "data":  # for the page's scripts; readers see nothing
        try:
            body = script_text(output.text)
        except ValueError as err:
            raise RenderError(page.source, line, f"data output: {err}") from None
        return (
            f'<script type="application/json" class="lit-data"'
            f' data-name="{attr(output.name)}" data-directive="{line}">{body}</script>'
        )
    raise RenderError(
        page.source,
        line,
        f"output of kind {output.kind!r}: expected text, data, or an image as a"
        f" data:image/svg+xml or data:image/png base64 URL",
    )


def _line_text(row: str) -> str:
    """A printed line, escaped; a blank one its newline."""
    return html.escape(row) or "\n"


def _narrow_source(page: Page, wide: Output, narrow: Output) -> str:
    """The `<source>` of a figure's narrow variant: taken on a window too
    narrow for the wide figure's smallest text to stay readable
    (`literate.narrow`)."""
    if not narrow.image.startswith(IMAGE_URLS):
        raise RenderError(
            page.source,
            narrow.directive,
            "a narrow variant: expected an image as a data:image/svg+xml or"
            " data:image/png base64 URL",
        )
    below = narrow_below(wide.text_size) or NARROW_DEFAULT_PX
    size = shown_size(narrow.image)
    box = f' width="{size[0]}" height="{size[1]}"' if size else ""
    return (
        f'<source media="(max-width: {below}px)" srcset="{attr(narrow.image)}"'
        f' data-text-size="{narrow.text_size:.4f}"{box}>'
    )


_TABLE_RULE = re.compile(r"\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?")
_CELL_SPLIT = re.compile(r"(?<!\\)\|")
_NUMBER = re.compile(r"[-+−]?(\d[\d,_]*(\.\d*)?|\.\d+)([eE][-+]?\d+)?\s*%?")


def table_rows(text: str) -> list[list[str]] | None:
    """The cells of a Markdown table (header, rule, rows), or None for text.

    A table: every line has a `|`, the second line is the rule (`| --: |`),
    and every line has as many cells as the header. The rule's row is kept,
    as the alignment of each column (`left`, `right`, `center` or "").
    """
    lines = text.strip("\n").split("\n")
    if len(lines) < 2 or not all("|" in line for line in lines):
        return None
    if not _TABLE_RULE.fullmatch(lines[1].strip()):
        return None
    rows = [_cells(line) for line in lines]
    if any(len(row) != len(rows[0]) for row in rows):
        return None
    rows[1] = [_alignment(cell) for cell in rows[1]]
    return rows


def _cells(line: str) -> list[str]:
    line = line.strip()
    line = line[1:] if line.startswith("|") else line
    line = line[:-1] if line.endswith("|") and not line.endswith("\\|") else line
    return [cell.strip().replace("\\|", "|") for cell in _CELL_SPLIT.split(line)]


def _alignment(rule: str) -> str:
    left, right = rule.startswith(":"), rule.endswith(":")
    return {(True, True): "center", (False, True): "right"}.get((left, right), "")


def _table_html(rows: list[list[str]]) -> str:
    """Escaped cells; a column of numbers with no stated alignment is right-aligned."""
    header, rule, body = rows[0], rows[1], rows[2:]
    align = [
        stated
        or ("right" if body and all(_NUMBER.fullmatch(r[i]) for r in body) else "")
        for i, stated in enumerate(rule)
    ]

    def cell(tag: str, text: str, i: int) -> str:
        scope = ' scope="col"' if tag == "th" else ""
        cls = f' class="lit-{align[i]}"' if align[i] else ""
        return f"<{tag}{scope}{cls}>{html.escape(text)}</{tag}>"

    head = "".join(cell("th", text, i) for i, text in enumerate(header))
    rows_html = "".join(
        "<tr>" + "".join(cell("td", text, i) for i, text in enumerate(row)) + "</tr>"
        for row in body
    )
    # A class: the stylesheet draws it, not the theme's prose-table style.
    return (
        f'<table class="lit-grid"><thead><tr>{head}</tr></thead>'
        f"<tbody>{rows_html}</tbody></table>"
    )
