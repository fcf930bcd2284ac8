"""Code to HTML with Pygments: the code column, and code blocks in prose.

The code column is lexed as one text (every section's lines at their own line
numbers, prose lines left blank), so a line is highlighted in the context of
the lines around it, then cut back into lines. Names defined in the same
source link to the section that defines them.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Mapping

from pygments import lex
from pygments.lexers import PythonLexer, TextLexer, get_lexer_by_name
from pygments.token import STANDARD_TYPES, Keyword, Name, Operator, Text, Token
from pygments.util import ClassNotFound

from literate.model import Section

_PYTHON = PythonLexer(stripnl=False, ensurenl=True)
_PLAIN = (Text, Text.Whitespace)
_CLASSES: dict = {}
# The last pages' code columns: the languages of one page share their code.
_COLUMNS: dict = {}
_COLUMNS_KEPT = 8


def css_class(ttype) -> str:
    """Pygments' short class for a token type (`k`, `nf`, ...), "" for text."""
    if ttype not in _CLASSES:
        known = ttype
        while known not in STANDARD_TYPES:
            known = known.parent
        _CLASSES[ttype] = STANDARD_TYPES[known]
    return _CLASSES[ttype]


def _span(ttype, text: str) -> str:
    cls = css_class(ttype)
    escaped = html.escape(text, quote=False)
    return f'<span class="{cls}">{escaped}</span>' if cls else escaped


def highlight_sections(
    sections: Iterable[Section], names: Mapping[str, str]
) -> dict[int, str]:
    """{line number: HTML of that code line} for every code line of `sections`.

    `names` maps a dotted name (`MultiHeadAttention.forward`) to the anchor of
    the section that defines it.
    """
    scope: dict[int, str] = {}
    rows: dict[int, str] = {}
    for section in sections:
        for line in section.code:
            rows[line.number] = line.text
            scope[line.number] = section.symbol
    key = (tuple(rows.items()), tuple(scope.items()), tuple(sorted(names.items())))
    if key not in _COLUMNS:
        if len(_COLUMNS) >= _COLUMNS_KEPT:
            del _COLUMNS[next(iter(_COLUMNS))]
        _COLUMNS[key] = _highlight(rows, scope, names) if rows else {}
    return dict(_COLUMNS[key])


def _highlight(
    rows: dict[int, str], scope: dict[int, str], names: Mapping[str, str]
) -> dict[int, str]:
    text = "\n".join(rows.get(n, "") for n in range(1, max(rows) + 1)) + "\n"
    out: dict[int, list[str]] = {n: [] for n in rows}
    number = 1
    context = _Context(names)
    for ttype, value in lex(text, _PYTHON):
        pieces = value.split("\n")
        for i, piece in enumerate(pieces):
            if i:
                number += 1
            if piece and number in out:
                link = context.target(ttype, piece, scope.get(number, ""))
                part = _span(ttype, piece)
                if link:
                    part = f'<a class="lit-ref" href="#{html.escape(link)}">{part}</a>'
                out[number].append(part)
        context.advance(ttype, value)
    return {n: "".join(parts) for n, parts in out.items()}


class _Context:
    """Remembers the last two significant tokens to resolve a name's target."""

    def __init__(self, names: Mapping[str, str]):
        self.names = names
        self.previous: list[tuple] = [(Token, ""), (Token, "")]
        self.owner = ""  # dotted name before a `.`, when it names a definition

    def advance(self, ttype, value: str) -> None:
        if ttype in _PLAIN or not value.strip():
            return
        self.previous = [self.previous[1], (ttype, value)]

    def target(self, ttype, name: str, symbol: str) -> str:
        """The anchor a name token links to, or ""."""
        if ttype not in (Name, Name.Class, Name.Function):
            return ""
        (before_type, before), (last_type, last) = self.previous
        if last_type in Keyword and last in ("def", "class"):
            return ""  # the definition itself
        if last_type in Operator and last == ".":
            return self._attribute(before_type, before, name, symbol)
        return self._lookup(name, symbol, outermost=True)

    def _attribute(self, owner_type, owner: str, name: str, symbol: str) -> str:
        """`self.name`, `cls.name` in a class; `Defined.name` anywhere."""
        if owner in ("self", "cls"):
            return self._lookup(name, symbol, outermost=False)
        if owner_type in Name:
            qualified = self._qualify(owner, symbol)
            if qualified:
                return self.names.get(f"{qualified}.{name}", "")
        return ""

    def _qualify(self, name: str, symbol: str) -> str:
        parts = symbol.split(".") if symbol else []
        for depth in range(len(parts), -1, -1):
            candidate = ".".join(parts[:depth] + [name])
            if candidate in self.names:
                return candidate
        return ""

    def _lookup(self, name: str, symbol: str, *, outermost: bool) -> str:
        """Innermost scope first: `A.f.name`, `A.name`, then `name` itself."""
        parts = symbol.split(".") if symbol else []
        lowest = 0 if outermost else 1
        for depth in range(len(parts), lowest - 1, -1):
            anchor = self.names.get(".".join(parts[:depth] + [name]))
            if anchor:
                return anchor
        return ""


def highlight_block(code: str, language: str) -> str:
    """A fenced code block of prose, highlighted for `language` (text if unknown)."""
    try:
        lexer = get_lexer_by_name(language, stripnl=False) if language else None
    except ClassNotFound:
        lexer = None
    parts = [_span(t, v) for t, v in lex(code, lexer or TextLexer(stripnl=False))]
    body = "".join(parts).rstrip("\n")
    return f'<div class="highlight"><pre><code>{body}</code></pre></div>'
