"""Code comments that are prose: translation keys, shown translated in the code.

A trailing or own-line `#` comment in the code column is one of

    pragma  an instruction to a tool: `# fmt: skip`, `# noqa`, `# isort: skip`
    code    text that is Python (`# x = self.proj(x)`, `# z / T`)
    shape   a note without a phrase in it: `# [B, S, D]`, `# W^Q`,
            `# name -> [S, S] tensor`, `# head 1`
    prose   text with a phrase: two words in a row (`# each row sums to 1`,
            `# a random dL/dp`), a capital variable before a word
            (`# H blocks [Dk, D]`) or a word before a number (`# head 0,
            [D, Dk]`, `# sequence 1: ...`): words a reader of another
            language reads in theirs (ヘッド 0)

A word is `a`, `I` or letters (`[A-Z]?[a-z]{2,}`, `'s` and hyphens allowed:
`page's`, `k-th`); what lies inside `[...]`, `{...}`, quotes or backticks does not
count. Only
prose comments are keys; the source file, the notebook and `--help` keep
their English, and the translate stage swaps them in the page's code column.
"""

from __future__ import annotations

import ast
import functools
import re
import unicodedata
from dataclasses import dataclass

from pygments import lex
from pygments.lexers import PythonLexer
from pygments.token import Comment

_LEXER = PythonLexer(stripnl=False, ensurenl=True)
_PRAGMA = re.compile(
    r"(?:fmt|isort|type|pragma|pylint|mypy|pyright|ruff)\s*:|noqa\b|%symbols\b"
)
_BRACKETS = re.compile(r'\[[^\[\]]*\]|\{[^{}]*\}|`[^`]*`|"[^"]*"')
_WORD = re.compile(r"(?:a|I|[A-Z]?[a-z]{2,}(?:-[a-z]+)*(?:'s)?|[a-z]+(?:-[a-z]+)+)")
_NUMBER = re.compile(r"\d+")
_VARIABLE = re.compile(r"[A-Z]")
_EDGE = "()[]{},:;.!?\"'"


@dataclass(frozen=True)
class CodeComment:
    """A prose comment of the code column: its line and its text after `#`."""

    number: int  # source line
    token: str  # the comment as written, `#` included: what Pygments lexes
    text: str  # the words after `#` and its spaces: the table's key


def classify(text: str) -> str:
    """ "prose", "shape", "code" or "pragma" for a comment's text after `#`."""
    text = text.strip()
    if not text or _PRAGMA.match(text):
        return "pragma"
    if _is_code(text):
        return "code"
    tokens = [t.strip(_EDGE) for t in _BRACKETS.sub(" , ", text).split()]
    for first, second in zip(tokens, tokens[1:], strict=False):
        if not first or not second:
            continue
        word = _WORD.fullmatch(first)
        if word and (_WORD.fullmatch(second) or _NUMBER.fullmatch(second)):
            return "prose"
        if _VARIABLE.fullmatch(first) and re.fullmatch(r"[a-z]{3,}", second):
            return "prose"
    return "shape"


def _is_code(text: str) -> bool:
    """Python beyond a bare expression of names (`small is neither`, `[B, S]`
    parse too): a statement, a call, an attribute (`# x = f(x)`, `# a.b`)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return False
    if any(not isinstance(node, ast.Expr) for node in tree.body):
        return True
    return any(isinstance(n, (ast.Call, ast.Attribute)) for n in ast.walk(tree))


def comments_of(rows: dict[int, str]) -> tuple[CodeComment, ...]:
    """The prose comments of a code column, {line number: text} in, in order."""
    return tuple(
        c for c in _comments(tuple(sorted(rows.items()))) if classify(c.text) == "prose"
    )


def section_comments(sections) -> tuple[CodeComment, ...]:
    """The prose comments of the code lines of `sections` (a page's)."""
    rows = {line.number: line.text for s in sections for line in s.code}
    return comments_of(rows)


def every_comment(sections) -> tuple[CodeComment, ...]:
    """Every `#` comment of the code lines of `sections`, prose or not."""
    rows = {line.number: line.text for s in sections for line in s.code}
    return _comments(tuple(sorted(rows.items())))


@functools.lru_cache(maxsize=32)
def _comments(rows: tuple[tuple[int, str], ...]) -> tuple[CodeComment, ...]:
    if not rows:
        return ()
    by_number = dict(rows)
    text = "\n".join(by_number.get(n, "") for n in range(1, max(by_number) + 1))
    found = []
    number = 1
    for ttype, value in lex(text + "\n", _LEXER):
        if ttype in Comment.Single and number in by_number:
            found.append(CodeComment(number, value, value.lstrip("#").strip()))
        number += value.count("\n")
    return tuple(found)


def width(text: str) -> int:
    """Columns `text` takes in a monospace font (wide East Asian glyphs: 2)."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)
