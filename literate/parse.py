"""Parse a literate Python source into a `Page` of sections.

A section is prose (a docstring, or a run of `#` comment lines) and the code
that follows it, up to the next prose. The rules, in the order they apply:

- `tokenize` finds the comment-only lines and `ast` finds the docstrings, so a
  `#` or `\"\"\"` inside a string is never taken for a comment or a docstring.
- A comment inside brackets (a multi-line call, a list) is part of that
  statement, so it stays in the code column.
- Pragma comments (`# noqa`, `# type:`, `# fmt:`, `# pragma:`, ...) are code.
- A `#|` comment line is a `Directive` of the section it sits in.
- A docstring is prose only when it is alone on its lines; a class or
  function docstring opens a new section whose code starts with the
  `class`/`def` line(s) above it (decorators and multi-line signatures too).
- A docstring always opens its own section. A run of comment lines opens one
  too, unless the current section holds only comment prose so far: then the
  runs, separated by blank lines, become paragraphs of one section.
- The shebang and the PEP 263 encoding line are neither prose nor code.

Blank lines: inside a section's code they stay as code lines (they are part
of how the code reads); at the edges of the code, and between prose and code,
they only separate and are dropped. Between two merged comment runs the first
blank line becomes the empty line between the paragraphs.

`Section.docs_lines[i]` is the source line of line `i` of `Section.docs`, one
for one, so a message about the prose can name its exact line. Lines consumed
without landing in `docs` are all trivial: a docstring's quote-only lines,
empty `#` lines at the edges of a run, blank lines, the shebang/encoding line
and the module docstring's YAML front matter.
"""

from __future__ import annotations

import ast
import io
import logging
import re
import tokenize
import warnings
from dataclasses import dataclass, field, replace
from pathlib import PurePosixPath

import yaml

from literate.anchors import section_anchors
from literate.model import CodeLine, Directive, Page, ParseError, Section
from literate.model import SourceError as SourceError  # where callers import it

PRAGMA_RE = re.compile(
    r"#\s*(noqa\b|type:|fmt:|pragma:|pylint:|mypy:|isort:|ruff:|pyright:"
    r"|flake8[:\s]|nosec\b|yapf:|pyre-)",
    re.IGNORECASE,
)
CODING_RE = re.compile(r"^[ \t\f]*#.*?coding[:=][ \t]*[-\w.]+")
STRING_PREFIX_RE = re.compile(r"^[rRuUbBfF]*")
LOG = logging.getLogger("mkdocs.plugins.literate")
INVALID_ESCAPE_RE = re.compile(r"invalid escape sequence '(\\.)'")


# What each source line is, before lines are grouped into sections.
SKIP, BLANK, COMMENT, DIRECTIVE, DOC, CODE = (
    "skip blank comment directive doc code".split()
)


@dataclass(frozen=True)
class _Doc:
    """A docstring that becomes prose: its lines and, for a class/def, header."""

    first: int  # first source line of the string token
    last: int  # last source line of the string token
    text: str  # the raw text between the quotes
    header: int  # first line of the decorators/`def`/`class` it sits beside; 0
    is_module: bool
    quote: str  # its opening as written: `"""`, `r"""`, `'`, ...


@dataclass(frozen=True)
class _Def:
    """A class or function: its qualified name and where it is."""

    qualname: str
    start: int  # first decorator line, or the `def`/`class` line
    line: int  # the `def`/`class` line
    end: int
    node: ast.AST


@dataclass
class _Builder:
    """A section being assembled while the lines are walked in order."""

    docs: list[str] = field(default_factory=list)
    docs_lines: list[int] = field(default_factory=list)
    code: list[CodeLine] = field(default_factory=list)
    directives: list[Directive] = field(default_factory=list)
    blanks: list[int] = field(default_factory=list)  # pending, not yet placed
    has_docstring: bool = False
    quote: str = ""  # the docstring's opening as written
    owner: int = 0  # first line of the docstring whose header this holds

    def comment_prose_only(self) -> bool:
        return bool(self.docs) and not (
            self.code or self.directives or self.has_docstring or self.owner
        )


def parse(source_text: str, path: str) -> Page:
    """Split `source_text` (the file at repo-relative `path`) into a Page."""
    text = source_text.replace("\r\n", "\n").replace("\r", "\n")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    tree = _ast(text, path)
    tokens = _tokens(text, path)
    defs = _defs(tree)
    docs = _docstrings(tree, defs, tokens, lines)
    kinds = _classify(lines, tokens, docs)
    front, docs = _front_matter(docs, path)
    built = _group(lines, kinds, docs)
    sections = _finish(built, defs, len(lines))
    return Page(
        source=path,
        title=str(front.get("title") or _first_heading(sections) or _name(path)),
        summary=str(front.get("summary") or ""),
        sections=sections,
    )


def _ast(text: str, path: str) -> ast.Module:
    if "\0" in text:
        line = text[: text.index("\0")].count("\n") + 1
        raise ParseError(path, line, "null byte in source; expected text")
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            tree = ast.parse(text, filename=path)
    except SyntaxError as error:
        raise ParseError(
            path, error.lineno or 1, f"syntax error: {error.msg}"
        ) from None
    except (RecursionError, MemoryError):
        # Python's own parser gives up (one expression of ~100,000 terms, say):
        # the source could not be run either.
        raise ParseError(
            path, 1, "nested too deeply for Python's parser; split the expression"
        ) from None
    _report(caught, path, text)
    return tree


def _report(caught: list[warnings.WarningMessage], path: str, text: str) -> None:
    """What compiling the source warned about (an invalid escape sequence
    such as "\\s" in a string, which a later Python refuses), one line each,
    as `path:line: ...`; the page itself is made as usual. At INFO, as mkdocs
    shows Python's own warnings: shown by a build, failing no `--strict` one."""
    for warning in caught:
        message, line = str(warning.message), warning.lineno or 1
        escape = INVALID_ESCAPE_RE.search(message)
        if escape:
            line = _escape_line(text, line, escape.group(1))
            message += '; double the backslash or make the string raw (r"...")'
        LOG.info("%s:%d: %s", path, line, message)


def _escape_line(text: str, line: int, escape: str) -> int:
    """The line of `escape` (`\\d`) in the string that starts at `line`:
    Python before 3.12 names the string's first line (later ones name the
    escape's own, which no string starts at, or which this leaves as it is)."""
    pattern = re.compile(r"(?<!\\)(?:\\\\)*(" + re.escape(escape) + ")")
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.STRING and token.start[0] == line:
                found = pattern.search(token.string)
                if found:
                    return token.start[0] + token.string.count("\n", 0, found.start(1))
    except (tokenize.TokenError, SyntaxError):
        pass
    return line


def _tokens(text: str, path: str) -> list[tokenize.TokenInfo]:
    try:
        return list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError) as error:
        line = error.args[1][0] if len(error.args) > 1 else 1
        raise ParseError(path, line, f"cannot tokenize: {error.args[0]}") from None


def _defs(tree: ast.Module) -> list[_Def]:
    """Every class and function with its dotted name (`Outer.method.inner`)."""
    found: list[_Def] = []

    def visit(node: ast.AST, prefix: str) -> None:
        # Definitions are statements: only statement lists can hold one.
        for child in _statements(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                name = f"{prefix}{child.name}"
                start = min([child.lineno] + [d.lineno for d in child.decorator_list])
                end = child.end_lineno or child.lineno
                found.append(_Def(name, start, child.lineno, end, child))
                visit(child, name + ".")
            else:
                visit(child, prefix)

    visit(tree, "")
    return found


_BLOCKS = ("body", "orelse", "finalbody", "handlers", "cases")


def _statements(node: ast.AST) -> list[ast.AST]:
    """The statements (and `except`/`case` clauses) directly inside `node`."""
    found = []
    for name in _BLOCKS:
        block = getattr(node, name, None)
        if isinstance(block, list):
            found += block
    return found


def _docstrings(
    tree: ast.Module,
    defs: list[_Def],
    tokens: list[tokenize.TokenInfo],
    lines: list[str],
) -> dict[int, _Doc]:
    """The docstrings that are prose, keyed by their first line."""
    strings = {tok.start: tok for tok in tokens if tok.type == tokenize.STRING}
    found: dict[int, _Doc] = {}
    for owner, header in [(tree, 0)] + [(d.node, d.start) for d in defs]:
        body = owner.body
        if not (body and isinstance(body[0], ast.Expr)):
            continue
        value = body[0].value
        if not (isinstance(value, ast.Constant) and isinstance(value.value, str)):
            continue
        start = (value.lineno, _char_col(lines, value.lineno, value.col_offset))
        end = (
            value.end_lineno,
            _char_col(lines, value.end_lineno, value.end_col_offset),
        )
        tok = strings.get(start)
        if tok is None or tok.end != end:
            continue  # implicit concatenation: several tokens, leave it as code
        first, last = tok.start[0], tok.end[0]
        alone = (
            not lines[first - 1][: tok.start[1]].strip()
            and not lines[last - 1][tok.end[1] :].strip()
        )
        if not alone:
            continue
        text, quote = _docstring_text(tok.string)
        found[first] = _Doc(first, last, text, header, owner is tree, quote)
    return found


def _char_col(lines: list[str], lineno: int, byte_col: int | None) -> int | None:
    """ast counts columns in UTF-8 bytes, tokenize in characters: convert."""
    if byte_col is None:
        return None
    return len(lines[lineno - 1].encode()[:byte_col].decode(errors="ignore"))


def _docstring_text(token: str) -> tuple[str, str]:
    """The docstring as written in the source: prefix and quotes removed.

    Escapes are kept, in plain strings as in raw ones: the page shows what
    the author wrote, so `"$\\frac{a}{b}$"` is a fraction, not a form feed
    and `rac`, and each prose line keeps its source line. Returns the text
    and the opening (prefix and quotes), which the notebook writes back.
    """
    prefix = STRING_PREFIX_RE.match(token).end()
    quote = 3 if token[prefix : prefix + 3] in ('"""', "'''") else 1
    return token[prefix + quote : -quote], token[: prefix + quote]


def _classify(
    lines: list[str], tokens: list[tokenize.TokenInfo], docs: dict[int, _Doc]
) -> list[str]:
    """One kind per line (index 0 is line 1)."""
    kinds = [CODE if line.strip() else BLANK for line in lines]
    depth = 0
    for tok in tokens:
        if tok.type == tokenize.OP and tok.string in "([{":
            depth += 1
        elif tok.type == tokenize.OP and tok.string in ")]}":
            depth -= 1
        # Lines inside a multi-line token (a string) are code, blank or not.
        for number in range(tok.start[0] + 1, tok.end[0] + 1):
            if tok.type != tokenize.NEWLINE:
                kinds[number - 1] = CODE
        if tok.type != tokenize.COMMENT or depth > 0:
            continue
        number, column = tok.start
        if lines[number - 1][:column].strip():
            continue  # a trailing comment: it stays with its code
        kinds[number - 1] = _comment_kind(tok.string, number, lines)
    for doc in docs.values():
        # Between a `def`/`class` and its docstring everything is code.
        for number in range(doc.header or doc.first, doc.first):
            if kinds[number - 1] != BLANK:
                kinds[number - 1] = CODE
        for number in range(doc.first, doc.last + 1):
            kinds[number - 1] = DOC
    return kinds


def _comment_kind(comment: str, number: int, lines: list[str]) -> str:
    if number == 1 and comment.startswith("#!"):
        return SKIP
    is_coding = CODING_RE.match(comment)
    if is_coding and (number == 1 or (number == 2 and _skippable(lines[0]))):
        return SKIP
    if comment.startswith("#|"):
        return DIRECTIVE
    if PRAGMA_RE.match(comment):
        return CODE
    return COMMENT


def _skippable(line: str) -> bool:
    """Whether line 1 allows an encoding declaration on line 2 (PEP 263)."""
    stripped = line.strip()
    return not stripped or stripped.startswith("#")


def _front_matter(docs: dict[int, _Doc], path: str) -> tuple[dict, dict[int, _Doc]]:
    """YAML between `---` lines at the top of the module docstring."""
    module = next((doc for doc in docs.values() if doc.is_module), None)
    if module is None:
        return {}, docs
    rows = module.text.split("\n")
    start = next((i for i, row in enumerate(rows) if row.strip()), None)
    if start is None or rows[start].strip() != "---":
        return {}, docs
    close = next(
        (i for i in range(start + 1, len(rows)) if rows[i].strip() in ("---", "...")),
        None,
    )
    if close is None:
        raise ParseError(
            path, module.first + start, "front matter: no closing '---' line"
        )
    try:
        data = yaml.safe_load("\n".join(rows[start + 1 : close])) or {}
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        line = module.first + start + 1 + (mark.line if mark else 0)
        problem = getattr(error, "problem", None) or str(error).split("\n")[0]
        raise ParseError(path, line, f"front matter is not YAML: {problem}") from None
    if not isinstance(data, dict):
        raise ParseError(
            path, module.first + start, "front matter: expected 'key: value' lines"
        )
    # Blank out the front matter so the docstring's line numbers stay the same.
    rest = [""] * (close + 1) + rows[close + 1 :]
    docs = dict(docs)
    docs[module.first] = replace(module, text="\n".join(rest))
    return data, docs


def _group(lines: list[str], kinds: list[str], docs: dict[int, _Doc]) -> list[_Builder]:
    """Walk the lines in order and gather them into sections."""
    headers = {doc.header: doc.first for doc in docs.values() if doc.header}
    built: list[_Builder] = []
    cur: _Builder | None = None

    def open_section() -> _Builder:
        built.append(_Builder())
        return built[-1]

    number = 1
    while number <= len(lines):
        kind = kinds[number - 1]
        if number in headers and (cur is None or cur.owner != headers[number]):
            cur = open_section()
            cur.owner = headers[number]
        if kind == DOC:
            doc = docs[number]
            if cur is None or cur.owner != doc.first:
                cur = open_section()
            cur.has_docstring = True
            cur.quote = doc.quote
            _add_docstring(cur, doc)
            # Blank lines right after a docstring only separate it from the code.
            number = doc.last + 1
            while number <= len(lines) and kinds[number - 1] == BLANK:
                number += 1
            continue
        if kind == COMMENT:
            run_end = number
            while run_end < len(lines) and kinds[run_end] == COMMENT:
                run_end += 1
            if cur is None or not cur.comment_prose_only():
                cur = open_section()
            _add_comments(cur, lines, number, run_end)
            number = run_end + 1
            continue
        if cur is None and kind in (CODE, DIRECTIVE):
            cur = open_section()
        if kind == CODE:
            if cur.code:
                cur.code.extend(CodeLine(n, "") for n in cur.blanks)
            cur.blanks = []
            cur.code.append(CodeLine(number, lines[number - 1]))
        elif kind == DIRECTIVE:
            text = lines[number - 1].strip()[2:].strip()
            cur.directives.append(Directive(number, text))
            cur.blanks = []
        elif kind == BLANK and cur is not None:
            cur.blanks.append(number)
        number += 1
    return built


def _add_docstring(cur: _Builder, doc: _Doc) -> None:
    rows = doc.text.split("\n")
    indent = min(
        (
            len(r.expandtabs()) - len(r.expandtabs().lstrip())
            for r in rows[1:]
            if r.strip()
        ),
        default=0,
    )
    cleaned = [rows[0].strip()] + [r.expandtabs()[indent:].rstrip() for r in rows[1:]]
    _add_prose(cur, cleaned, doc.first)


def _add_comments(cur: _Builder, lines: list[str], first: int, last: int) -> None:
    rows = []
    for number in range(first, last + 1):
        body = lines[number - 1].strip()[1:]
        rows.append((body[1:] if body.startswith(" ") else body).rstrip())
    indent = min((len(r) - len(r.lstrip()) for r in rows if r.strip()), default=0)
    if cur.docs and cur.blanks:
        # A blank line between two comment runs separates their paragraphs.
        cur.docs.append("")
        cur.docs_lines.append(cur.blanks[0])
    cur.blanks = []
    _add_prose(cur, [r[indent:] for r in rows], first)


def _add_prose(cur: _Builder, rows: list[str], first: int) -> None:
    """Append prose rows (row i is source line first+i), trimming blank edges."""
    kept = [i for i, row in enumerate(rows) if row.strip()]
    if not kept:
        return
    for i in range(kept[0], kept[-1] + 1):
        cur.docs.append(rows[i])
        cur.docs_lines.append(first + i)


def _finish(built: list[_Builder], defs: list[_Def], total: int) -> tuple[Section, ...]:
    """Give each gathered section its symbol, anchor and definitions."""
    scope = [""] * (total + 2)
    for d in sorted(defs, key=lambda d: (d.start, -d.end)):
        for number in range(d.start, d.end + 1):
            scope[number] = d.qualname
    by_line = {d.line: d.qualname for d in defs}
    by_start = {d.start: d.qualname for d in defs}
    drafts = []
    for b in built:
        if not (b.docs or b.code or b.directives):
            continue
        # A section is named after a definition only when its code starts with
        # it; a `def` further down belongs to it but is not what it is about.
        starts = by_start.get(b.code[0].number, "") if b.code else ""
        first = min(
            b.docs_lines[:1]
            + [c.number for c in b.code[:1]]
            + [d.number for d in b.directives[:1]]
        )
        drafts.append((b, starts, starts or scope[first]))
    anchors = section_anchors(
        [(b.docs, b.code, starts, symbol) for b, starts, symbol in drafts]
    )
    return tuple(
        Section(
            anchor=anchor,
            docs="\n".join(b.docs),
            docs_lines=tuple(b.docs_lines),
            docstring_quote=b.quote,
            code=tuple(b.code),
            symbol=symbol,
            directives=tuple(b.directives),
            defines=tuple(by_line[c.number] for c in b.code if c.number in by_line),
        )
        for (b, _, symbol), anchor in zip(drafts, anchors, strict=True)
    )


def _first_heading(sections: tuple[Section, ...]) -> str:
    for section in sections:
        fenced = False
        for row in section.docs.split("\n"):
            if row.startswith(("```", "~~~")):
                fenced = not fenced
            match = None if fenced else re.match(r"#{1,6}\s+(.+?)\s*#*\s*$", row)
            if match:
                return match.group(1)
    return ""


def _name(path: str) -> str:
    return PurePosixPath(path).name
