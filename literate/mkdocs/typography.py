"""Line breaks a browser gets wrong, set right in a page's HTML.

The plugin passes every page's body through `keep_together` (any language)
and, for a language whose headings break between phrases, `break_points`:

- a short word with a hyphen (pre-LN, post-LN, one-hot, top-k, GPT-2,
  1.2e-07) is one unit, a `lit-nobr` span: a browser may otherwise end a
  line after its hyphen ("pre-" | "LN");
- in Japanese headings and the list of sections, a long compound (katakana
  and kanji) may break only between its words: `<wbr>` where one of the
  site's terms
  (its glossary's) starts or ends inside it (マルチ<wbr>ヘッド<wbr>
  アテンション). `word-break: auto-phrase` (literate.css) keeps a phrase
  whole, but one wider than the heading's box it breaks anywhere
  (マルチヘッドア|テンション).

- inline code is an inline block (literate.css), which moves to the next
  line whole when it does not fit; a browser may break on either side of
  it, though, even before a "，" or after a "（". A code span and the
  opening mark before it and the closing marks after it (one and two at
  most) are one `lit-nobr` unit, so no line starts with the "，" or ends
  with the "（" (the rule of Chinese and Japanese type); the code in such a
  unit is at most its block's width less 3 em (literate.css), so the unit
  still fits a line.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_TAG = re.compile(r"(<[^>]*>)")
# Inside these a text's characters are code, math or script: left alone.
_KEEP_OUT = {
    "code", "pre", "script", "style", "kbd", "samp", "math", "svg", "textarea",
    "select", "option", "title",
}  # fmt: skip
_VOID = {"br", "hr", "img", "input", "wbr", "meta", "link", "source", "col"}
HYPHENATED = re.compile(
    r"(?<![\w.\-/])(?=[A-Za-z0-9.\-]{3,16}(?![\w\-/]))"
    r"[A-Za-z0-9.]*[A-Za-z0-9](?:-[A-Za-z0-9][A-Za-z0-9.]*)+(?<!\.)"
)
# A compound: a run of katakana and kanji (スケール化ドット積アテンション).
COMPOUND = re.compile("[\u30a1-\u30fa\u30fc\u3400-\u4dbf\u4e00-\u9fff\u3005]{4,}")
# What breaks between phrases: the headings and the list of sections.
_PHRASED = re.compile(
    r'(<(h[1-6])\b[^>]*>)(.*?)(</\2>)|(<nav class="lit-contents"[^>]*>)(.*?)(</nav>)',
    re.S,
)


OPENING = "（「『【《〈〔"
CLOSING = "、。，．：；！？）」』】》〉〕"
# Inline code (in a link or not) with the marks that must stay beside it: one
# opening mark and two closing ones at most (the 3 em literate.css leaves).
_GLUED = re.compile(
    f"([{OPENING}]?)"
    r"(<a\b[^>]*><code>[^<]*</code></a>|(?<!<pre>)<code>[^<]*</code>)"
    f"([{CLOSING}]{{0,2}})"
)


def keep_together(html: str) -> str:
    """`html` with each short hyphenated word of its text in a nowrap span,
    and each inline code span with the punctuation marks beside it."""
    html = _GLUED.sub(_glue, html)
    return _in_text(html, lambda text: HYPHENATED.sub(_nobr, text))


def _glue(found: re.Match) -> str:
    opening, code, closing = found.groups()
    if not (opening or closing):
        return found.group()
    return f'<span class="lit-nobr">{opening}{code}{closing}</span>'


def _nobr(found: re.Match) -> str:
    return f'<span class="lit-nobr">{found.group()}</span>'


def break_points(html: str, terms: Iterable[str]) -> str:
    """`html` with `<wbr>` between the words of each compound (katakana and
    kanji) of its headings and list of sections: where a term of `terms` (of
    three characters or more) starts or ends strictly inside it, leaving at
    least two characters on each side."""
    words = sorted({t for t in terms if len(t) >= 3})

    def mark(text: str) -> str:
        return COMPOUND.sub(lambda run: _with_breaks(run.group(), words), text)

    def phrased(found: re.Match) -> str:
        if found.group(1):
            return found.group(1) + _in_text(found.group(3), mark) + found.group(4)
        return found.group(5) + _in_text(found.group(6), mark) + found.group(7)

    return _PHRASED.sub(phrased, html)


def _with_breaks(run: str, words: list[str]) -> str:
    cuts = set()
    for word in words:
        if word == run:
            continue
        start = run.find(word)
        while start >= 0:
            cuts.update((start, start + len(word)))
            start = run.find(word, start + 1)
    cuts = sorted(c for c in cuts if 2 <= c <= len(run) - 2)
    if not cuts:
        return run
    pieces = [run[a:b] for a, b in zip([0, *cuts], [*cuts, len(run)], strict=True)]
    return "<wbr>".join(pieces)


def _in_text(html: str, change) -> str:
    """`html` with `change` applied to its text outside code, math, scripts
    and tags."""
    pieces = _TAG.split(html)
    inside: list[bool] = []  # per open element: whether text in it is kept out
    for i, piece in enumerate(pieces):
        if i % 2:
            _follow(piece, inside)
        elif piece and not any(inside):
            pieces[i] = change(piece)
    return "".join(pieces)


def _follow(tag: str, inside: list[bool]) -> None:
    """Keep `inside` in step with the element `tag` opens or closes."""
    name = re.match(r"</?\s*([A-Za-z][\w-]*)", tag)
    if name is None:
        return  # a comment or a declaration
    element = name.group(1).lower()
    if tag.startswith("</"):
        if inside:
            inside.pop()
        return
    if element in _VOID or tag.endswith("/>"):
        return
    classes = re.search(r'\bclass="([^"]*)"', tag)
    math = classes is not None and "katex" in classes.group(1).split()
    inside.append(element in _KEEP_OUT or math)
