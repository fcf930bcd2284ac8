"""What every chapter's report module shares: Markdown tables, and y labels.

The chapters' `*_report.py` modules format and draw what a page shows but
does not teach; the pieces they all need are here, in one place: a table
from rows of cells or from a matrix, and the y label of a figure, which a
short Chinese or Japanese label wants upright rather than on its side.
"""

from __future__ import annotations

import re
import unicodedata

# ## Tables


def markdown_table(header: list[str], rows: list[list[str]], align: str) -> str:
    """A Markdown table, columns padded; `align` holds "l" or "r" per column."""
    columns = zip(header, *rows, strict=True)
    widths = [max(len(cell) for cell in column) for column in columns]

    def line(cells: list[str]) -> str:
        padded = [
            cell.ljust(width) if side == "l" else cell.rjust(width)
            for cell, width, side in zip(cells, widths, align, strict=True)
        ]
        return "| " + " | ".join(padded) + " |"

    end = {"l": "-", "r": ":"}  # `---:` aligns a column to the right
    rule = ["-" * (w - 1) + end[side] for w, side in zip(widths, align, strict=True)]
    return "\n".join([line(header), line(rule), *map(line, rows)])


def matrix_table(
    matrix,
    rows: list[str],
    columns: list[str],
    digits: int = 2,
    corner: str = "",
) -> str:
    """A 2-D tensor as a Markdown table with named rows and columns (and the
    `corner` cell, which can say what the rows are)."""
    cells = [
        [name] + [f"{value:.{digits}f}" for value in row.tolist()]
        for name, row in zip(rows, matrix, strict=True)
    ]
    header = [corner, *columns]
    return markdown_table(header, cells, align="l" + "r" * len(columns))


# ## Y labels
#
# matplotlib turns a y label 90 degrees, which suits a line of Latin letters
# but lays Chinese and Japanese characters on their side. A short label in
# those scripts is drawn upright instead, a character to a line as in
# vertical writing, with the brackets and marks that vertical writing turns
# in their vertical forms; a digit or two, or a short Latin run ("i"), keeps
# a line of its own. Longer labels stay turned: stacked, they would run
# taller than the axes.

UPRIGHT_MAX = 8  # characters, spaces aside: 読む側（クエリ） is 8
VERTICAL = {
    "（": "︵", "）": "︶", "(": "︵", ")": "︶", "「": "﹁", "」": "﹂",
    "、": "︑", "。": "︒", "，": "︐", "：": "︓", "ー": "︱", "—": "︱",
    "…": "︙",
}  # fmt: skip
_PIECE = re.compile(r"[A-Za-z0-9]+|\S")  # a Latin run, or one character


def upright_lines(text: str) -> list[str] | None:
    """The lines of `text` stacked upright, or None if it should stay turned:
    not Chinese or Japanese, longer than UPRIGHT_MAX, or with a Latin run
    longer than two characters."""
    pieces = _PIECE.findall(text)
    if not any(_is_cjk(c) for c in text) or "\n" in text:
        return None
    if sum(len(p) for p in pieces) > UPRIGHT_MAX or max(map(len, pieces)) > 2:
        return None
    return [VERTICAL.get(p, p) for p in pieces]


def _is_cjk(char: str) -> bool:
    """A Han character, a kana or a hangul syllable."""
    name = unicodedata.name(char, "")
    return name.startswith(("CJK UNIFIED", "HIRAGANA", "KATAKANA", "HANGUL"))


def ylabel(ax, text: str, **kwargs) -> None:
    """Set `ax`'s y label to `text` (on the side it is already on), upright
    if it is a short Chinese or Japanese label; `kwargs` go to matplotlib
    (`fontsize=10`). For a colour bar's label, pass `bar.ax`."""
    lines = upright_lines(text)
    if lines is None:
        ax.set_ylabel(text, **kwargs)
        return
    right = ax.yaxis.get_label_position() == "right"
    ax.set_ylabel(
        "\n".join(lines),
        rotation=0,
        rotation_mode="default",
        horizontalalignment="left" if right else "right",
        verticalalignment="center",
        multialignment="center",
        linespacing=1.05,
        **kwargs,
    )
