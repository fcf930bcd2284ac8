"""What the search index reads of a generated page: its text, without markup.

A generated page is mostly markup: a span per highlighted token and KaTeX's
HTML for every formula. The theme's search plugin parses the whole page to
index it, which made it the slowest part of the build; the words it keeps are
the same without that markup. So the plugin hands it this lighter view, then
puts the page back before it is written.
"""

from __future__ import annotations

import re

_KATEX = '<span class="katex"'
_TEX = re.compile(r'<annotation encoding="application/x-tex">(.*?)</annotation>', re.S)
_SPAN_TAG = re.compile(r"<span\b|</span>")
_ANY_SPAN = re.compile(r"</?span\b[^>]*>")
# An example's data for the page's scripts (literate.data): JSON, not words.
_DATA = re.compile(
    r'<script type="application/json" class="lit-data"[^>]*>.*?</script>', re.S
)


def search_view(html: str) -> str:
    """`html` with each typeset formula as its TeX, and no `<span>` tags.

    A `<span>` carries no words of its own, and a formula's TeX (`d_k`,
    `\\mathrm{softmax}`) is what a reader would type to find it. An
    example's data (JSON for the page's scripts) is left out.
    """
    return _ANY_SPAN.sub("", _formulas_as_tex(_DATA.sub("", html)))


def _formulas_as_tex(html: str) -> str:
    parts = []
    start = 0
    while (found := html.find(_KATEX, start)) >= 0:
        parts.append(html[start:found])
        start = _span_end(html, found)
        tex = _TEX.search(html, found, start)
        parts.append(f" {tex.group(1).strip()} " if tex else " ")
    parts.append(html[start:])
    return "".join(parts)


def _span_end(html: str, opening: int) -> int:
    """Index just past the `</span>` that closes the span opened at `opening`."""
    depth = 0
    for tag in _SPAN_TAG.finditer(html, opening):
        depth += 1 if tag.group() == "<span" else -1
        if depth == 0:
            return tag.end()
    raise ValueError(f"unclosed <span> at offset {opening}")
