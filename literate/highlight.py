"""Code to HTML with Pygments: the code column, and code blocks in prose.

The code column is lexed as one text (every section's lines at their own line
numbers, prose lines left blank), so a line is highlighted in the context of
the lines around it, then cut back into lines. Names defined in the same
source link to the section that defines them; names it imports from another
page of the site (`from mha import KVCache`) link to their definition there.
A keyword argument (`split=val`, `def f(train=True)`) is never a link.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Mapping

from pygments import lex
from pygments.lexers import PythonLexer, TextLexer, get_lexer_by_name
from pygments.token import (
    STANDARD_TYPES,
    Comment,
    Keyword,
    Name,
    Operator,
    Text,
    Token,
)
from pygments.util import ClassNotFound

from literate.comments import section_comments
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
    sections: Iterable[Section],
    names: Mapping[str, str],
    external: Mapping[str, str] | None = None,
) -> dict[int, str]:
    """{line number: HTML of that code line} for every code line of `sections`.

    `names` maps a dotted name (`MultiHeadAttention.forward`) to the anchor of
    the section that defines it; `external` maps a name the code imports
    (and its dotted members) to a link to another page (`mha.html#KVCache`).
    """
    external = dict(external or {})
    scope: dict[int, str] = {}
    rows: dict[int, str] = {}
    for section in sections:
        for line in section.code:
            rows[line.number] = line.text
            scope[line.number] = section.symbol
    links = {name: f"#{anchor}" for name, anchor in names.items()}
    for name, href in external.items():
        links.setdefault(name, href)  # the page's own definition comes first
    key = (tuple(rows.items()), tuple(scope.items()), tuple(sorted(links.items())))
    if key not in _COLUMNS:
        if len(_COLUMNS) >= _COLUMNS_KEPT:
            del _COLUMNS[next(iter(_COLUMNS))]
        _COLUMNS[key] = _highlight(rows, scope, links) if rows else {}
    return dict(_COLUMNS[key])


def with_translated_comments(
    code: Mapping[int, str],
    sections: Iterable[Section],
    comments: Iterable[tuple[int, str]],
) -> dict[int, str]:
    """`code` (from `highlight_sections`) with the prose comments of a
    translated page shown in its language.

    `comments` are (line, comment as shown) pairs (`Page.comments`). Each
    English comment becomes two spans in one: the translation, with the
    English as its tooltip, and the English itself (`lang="en"`, hidden by
    the stylesheet until the reader asks for the originals, left out of
    the search index).
    """
    english = {c.number: c.token for c in section_comments(sections)}
    code = dict(code)
    for number, shown in comments:
        token = english.get(number)
        if token is None or number not in code:
            continue
        original = _span(Comment.Single, token)
        at = code[number].rfind(original)
        if at < 0:
            continue
        title = html.escape(token, quote=True)
        both = (
            '<span class="c1 lit-comment">'
            f'<span class="lit-comment-tr" title="{title}">'
            f"{html.escape(shown, quote=False)}</span>"
            '<span class="lit-comment-en" lang="en" data-search-exclude>'
            f"{html.escape(token, quote=False)}</span></span>"
        )
        code[number] = code[number][:at] + both + code[number][at + len(original) :]
    return code


def _highlight(
    rows: dict[int, str], scope: dict[int, str], links: Mapping[str, str]
) -> dict[int, str]:
    text = "\n".join(rows.get(n, "") for n in range(1, max(rows) + 1)) + "\n"
    out: dict[int, list[str]] = {n: [] for n in rows}
    number = 1
    context = _Context(links)
    tokens = list(lex(text, _PYTHON))
    for index, (ttype, value) in enumerate(tokens):
        pieces = value.split("\n")
        for i, piece in enumerate(pieces):
            if i:
                number += 1
            if piece and number in out:
                link = ""
                if not _is_keyword_argument(tokens, index):
                    link = context.target(ttype, piece, scope.get(number, ""))
                part = _span(ttype, piece)
                if link:
                    part = f'<a class="lit-ref" href="{html.escape(link)}">{part}</a>'
                out[number].append(part)
        context.advance(ttype, value)
    return {n: "".join(parts) for n, parts in out.items()}


def _is_keyword_argument(tokens: list, index: int) -> bool:
    """A name right before a lone `=` inside brackets: `f(split=val)`,
    `def f(train=True)`, never the definition of that name."""
    for k in range(index + 1, len(tokens)):  # no slice: a copy per token is O(n²)
        ttype, value = tokens[k]
        if ttype in _PLAIN or not value.strip():
            if "\n" in value:
                break  # `x\n= 1` is not Python anyway
            continue
        return ttype in Operator and value == "="
    return False


# `from mha import KVCache, MultiHeadAttention as MHA`, parenthesised or not.
_FROM_IMPORT = re.compile(
    r"^[ \t]*from[ \t]+(\.*[\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n#]*)", re.M
)
_IMPORTED = re.compile(r"(\w+)(?:\s+as\s+(\w+))?")


def imported_names(sections: Iterable[Section]) -> dict[str, tuple[str, str]]:
    """{local name: (module as written, name in it)} of the `from … import`
    lines of the code: `from .mha import KVCache` gives `KVCache: (.mha, KVCache)`."""
    code = "\n".join(line.text for s in sections for line in s.code)
    found: dict[str, tuple[str, str]] = {}
    for match in _FROM_IMPORT.finditer(code):
        module, names = match.group(1), match.group(2).strip("()")
        for name in _IMPORTED.finditer(names):
            found[name.group(2) or name.group(1)] = (module, name.group(1))
    return found


class _Context:
    """Remembers the last two significant tokens to resolve a name's link."""

    def __init__(self, names: Mapping[str, str]):
        self.names = names
        self.previous: list[tuple] = [(Token, ""), (Token, "")]
        self.owner = ""  # dotted name before a `.`, when it names a definition

    def advance(self, ttype, value: str) -> None:
        if ttype in _PLAIN or not value.strip():
            return
        self.previous = [self.previous[1], (ttype, value)]

    def target(self, ttype, name: str, symbol: str) -> str:
        """The href a name token links to, or ""."""
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


def module_name(source: str) -> str:
    """The dotted module a source path is: `pkg/sub/__init__.py` -> `pkg.sub`."""
    parts = source.removesuffix(".py").split("/")
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def cross_page_links(
    source: str,
    sections: Iterable[Section],
    pages: Mapping[str, tuple[Mapping[str, str], str]],
) -> dict[str, str]:
    """Links for the names this page imports from another page of the site.

    `pages` maps each other page's source path to (its dotted names -> their
    anchors, the href of that page from this one). `from mha import KVCache`
    gives `KVCache` and its members (`KVCache.update`) links there; an
    import is found by its module's name, absolute (`labml_nn.transformers.
    mha`, also with the site's top folder left out) or relative (`.mha`).
    """
    by_module: dict[str, tuple[Mapping[str, str], str]] = {}
    for path, page in pages.items():
        if path != source:
            name = module_name(path)
            by_module.setdefault(name, page)
            by_module.setdefault(name.split(".", 1)[-1], page)
    here = module_name(source).split(".")
    package = here if source.endswith("__init__.py") else here[:-1]
    links: dict[str, str] = {}
    for local, (module, name) in imported_names(sections).items():
        dots = len(module) - len(module.lstrip("."))
        if dots:
            base = package[: len(package) - dots + 1] if dots <= len(package) else []
            module = ".".join([*base, module[dots:]]).strip(".")
        if module not in by_module:
            continue
        anchors, href = by_module[module]
        for defined, anchor in anchors.items():
            if defined == name or defined.startswith(f"{name}."):
                links[local + defined[len(name) :]] = f"{href}#{anchor}"
    return links
