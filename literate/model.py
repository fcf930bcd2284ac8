"""The data that flows between the stages: plain, frozen, comparable.

Each stage (parse, translate, render) takes these values and returns new
ones; nothing is mutated in place, so the command line, the mkdocs plugin and
the tests all call the same functions and can compare their results.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

# Where a section's prose came from, once the translate stage has run.
#   source:       the prose is the source's own (English) text;
#   translated:   a current translation replaced it;
#   untranslated: no translation yet, the English is shown and marked;
#   stale:        a translation exists for an older English text, so the
#                 English is shown and marked "translation out of date".
State = Literal["source", "translated", "untranslated", "stale"]


class SourceError(Exception):
    """An error that names the source file and the line it is about."""

    def __init__(self, path: str, line: int, message: str):
        super().__init__(f"{path}:{line}: {message}")
        self.path = path
        self.line = line
        self.message = message


class ParseError(SourceError):
    """The source cannot be split into sections (syntax, docstring, front matter)."""


@dataclass(frozen=True)
class CodeLine:
    """One line of the code column, with its 1-based line number in the source."""

    number: int
    text: str


@dataclass(frozen=True)
class Directive:
    """A `#|` comment line: an instruction to the build, not prose or code.

    `text` is what follows `#|` (stripped), e.g. `print(scaling_table())`; see
    docs/outputs.md.
    """

    number: int
    text: str


@dataclass(frozen=True)
class Output:
    """What running a directive produced, to be shown under the section's code.

    The build makes these (never a translator), so they are trusted: `text` is
    plain text that the renderer escapes; `image` is the file's bytes encoded as
    a `data:` URL (SVG or PNG) with `alt` text for screen readers; a `data`
    output is JSON `text` for the page's scripts, under its `name` (see
    `literate.data`), and shows readers nothing. An image whose `variant` is
    "narrow" is the one before it drawn for narrow windows (`literate.narrow`);
    `text_size` is an image's smallest text as a fraction of its width.
    """

    directive: int  # line of the `#|` directive that asked for it
    kind: Literal["text", "image", "data"]
    text: str = ""
    image: str = ""
    alt: str = ""
    name: str = ""
    variant: Literal["", "narrow"] = ""
    text_size: float = 0.0


@dataclass(frozen=True)
class Section:
    """A paragraph of prose and the code it explains."""

    anchor: str  # stable id, unique in its page: "MultiHeadAttention.forward"
    docs: str  # markdown, comment markers and common indentation removed
    docs_lines: tuple[int, ...]  # source lines the prose came from
    code: tuple[CodeLine, ...]  # comment-only lines are not here
    symbol: str = ""  # enclosing class/function qualname; "" at module level
    directives: tuple[Directive, ...] = ()
    state: State = "source"
    english: str = ""  # the English docs when state != "source"
    # Dotted names of the classes/functions whose `def`/`class` line is in
    # `code`; the renderer links uses of these names to this section.
    defines: tuple[str, ...] = ()
    # A docstring's opening as written (`"""`, `r"""`); "" for comment prose.
    # `docs` is the docstring's source text, so the notebook writes it back
    # between the same quotes.
    docstring_quote: str = ""
    # Filled by the execute stage from `directives`; empty until then.
    outputs: tuple[Output, ...] = ()


@dataclass(frozen=True)
class Page:
    """A whole source file, parsed."""

    source: str  # path relative to the repository root, e.g. "mha.py"
    title: str
    summary: str
    sections: tuple[Section, ...]
    lang: str = "en"
    # The code column's translated comments (see `literate.comments`): the
    # source line and the comment as the page shows it (`# 文字数`), set by
    # the translate stage; the English stays in the code lines themselves.
    comments: tuple[tuple[int, str], ...] = ()
