"""A section's Markdown normalised, and the translation key made from it.

    normalize(md)  soft line breaks folded, paragraphs one blank line apart
    key(md)        extract(normalize(md)).text, the string a table is keyed by

Re-wrapping a comment in the source does not change its key; a line that
starts a block (list item, heading, quote, table row, fence, admonition)
never folds onto the line above. `%symbols` lines are for the page's script,
not the reader: they are in no key.
"""

from __future__ import annotations

import bisect
import itertools
import re

from literate.spans import extract, find_spans

# Lines that start a block of their own: they never fold onto the line above.
_BLOCK_START = re.compile(
    r"[ ]{0,3}(?:"
    r"[-*+][ \t]|[-*+]$"  # bullet list item
    r"|\d{1,9}[.)](?:[ \t]|$)"  # ordered list item
    r"|#{1,6}(?:[ \t]|$)"  # ATX heading
    r"|>"  # block quote
    r"|\|"  # table row
    r"|`{3,}|~{3,}"  # code fence
    r"|\$\$"  # display math on its own line
    r"|(?:[-*_=][ \t]*){3,}$"  # thematic break or setext underline
    r"|<"  # HTML block
    r"|!!!|\?\?\?"  # an admonition or a collapsible block, its body indented
    r")"
)
# Lines after which nothing folds: headings, rules, table rows, an empty
# quote line (a paragraph break inside a quote), hard breaks.
_NO_CONTINUATION = re.compile(
    r"[ ]{0,3}(?:#{1,6}(?:[ \t]|$)|\||(?:[-*_=][ \t]*){3,}$|(?:>[ ]?)+$)|.*\\$"
    r"|[ ]{0,3}(?:!!!|\?\?\?)"
)


# `%symbols Q=query d_k=d_k`: binds the symbols of the page's equations to
# names in its code (each highlights the other); the reader never sees it.
SYMBOLS_LINE = re.compile(r"[ ]{0,3}%symbols(?:[ \t][^\n]*)?")


def symbols(markdown: str) -> tuple[str, tuple[tuple[str, str], ...]]:
    """The markdown without its `%symbols` lines, and their (TeX, name) pairs.

    `d_k=d_k`: the symbol is written as in the equations, without `$`; a
    pair that is not `tex=name` is ignored.
    """
    if "%symbols" not in markdown:
        return markdown, ()
    kept, pairs = [], []
    for line in markdown.split("\n"):
        if SYMBOLS_LINE.fullmatch(line):
            for pair in line.split()[1:]:
                tex, _, name = pair.partition("=")
                if tex and name.isidentifier():
                    pairs.append((tex, name))
        else:
            kept.append(line)
    return "\n".join(kept), tuple(pairs)


def starts_block(line: str) -> bool:
    """Does `line` start a block (list item, heading, quote, fence, …)?

    Such a line never folds onto the line above it.
    """
    return _BLOCK_START.match(line) is not None


def normalize(markdown: str) -> str:
    """Fold soft line breaks into one space; keep paragraphs one blank apart.

    Fenced code, display math that starts a line and indented code keep their
    lines as they are; so does every line that starts a block (list item,
    heading, quote, table row, fence). Re-wrapping a comment therefore does
    not change its normalised text.
    """
    text = markdown.replace("\r\n", "\n").replace("\r", "\n")
    lines = text.split("\n")
    verbatim = _verbatim_lines(text)
    out: list[str] = []
    # The paragraph being folded, in pieces: joined only when it is done, so
    # a paragraph of many lines costs linear time, not quadratic.
    pieces: list[str] = []
    foldable = False  # may the next line fold onto the paragraph?
    plain = False  # has the paragraph a character no rule or quote line has?
    blank = False  # was there a blank line since out[-1]?
    after_blank = True  # the current line follows a blank line (or the start)

    def close() -> None:
        if pieces:
            out.append(" ".join(pieces))
            pieces.clear()

    for number, line in enumerate(lines):
        if number in verbatim:
            close()
            if blank and out:
                out.append("")
            out.append(line if verbatim[number] else line.rstrip())
            foldable = blank = False
            after_blank = False
            continue
        if SYMBOLS_LINE.fullmatch(line):
            continue  # for the page's script, not the reader: not in the key
        if not line.strip():
            blank = after_blank = True
            foldable = False
            continue
        stripped = line.rstrip()
        quoted = _quote_continuation(pieces[0], stripped) if foldable else None
        if foldable and not blank and quoted is not None:
            pieces.append(quoted)
        elif foldable and not blank and not starts_block(line):
            pieces.append(stripped.strip())
        elif after_blank and line.startswith("    ") and not _in_list(out, pieces):
            close()
            if blank and out:
                out.append("")
            out.append(stripped)  # indented code: kept, never folded
            blank = foldable = after_blank = False
            continue
        else:
            close()
            if blank and out:
                out.append("")
            pieces.append(stripped)
            plain = False
        plain = plain or not set(pieces[-1]) <= _RULE_CHARS
        foldable = _continues(pieces, plain)
        blank = after_blank = False
    close()
    return "\n".join(out)


# The only characters of a paragraph that a rule or a bare quote line is made of.
_RULE_CHARS = frozenset("-*_=> \t")


def _continues(pieces: list[str], plain: bool) -> bool:
    """May the next line fold onto the paragraph made of `pieces`?

    A heading or table row is recognised by its start, which a fold never
    changes (a paragraph that starts as one is never folded onto); a rule,
    an empty quote line and a hard break by the whole text or its end.
    """
    if len(pieces) == 1 or not plain:
        return not _NO_CONTINUATION.match(" ".join(pieces))
    return not pieces[-1].endswith("\\")


def _verbatim_lines(text: str) -> dict[int, bool]:
    """Lines inside fenced code or line-leading display math, never folded.

    The value says whether the line is kept byte for byte (fenced code) or
    only loses its trailing whitespace (display math).
    """
    verbatim: dict[int, bool] = {}
    newlines = [m.start() for m in re.finditer("\n", text)]
    previous_end = 0  # end of the last such span: the text before it is read
    for start, end, kind in find_spans(text):
        if kind not in ("code_block", "display_math"):
            continue
        first = bisect.bisect_left(newlines, start)  # the line `start` is on
        line_start = newlines[first - 1] + 1 if first else 0
        inside_line = previous_end > line_start or text[line_start:start].strip()
        previous_end = end
        if inside_line:
            continue  # display math inside a line of prose: it folds
        last = bisect.bisect_left(newlines, end)
        for number in range(first, last + 1):
            verbatim[number] = kind == "code_block"
    return verbatim


_QUOTE = re.compile(r"[ ]{0,3}((?:>[ ]?)+)")


def _quote_continuation(previous: str, line: str) -> str | None:
    """The text of `line` if it continues the quoted paragraph `previous`.

    `> a` then `> b` is one paragraph "a b" inside the quote, so the second
    line folds, without its `>`, unless its text starts a block of its own.
    """
    before, now = _QUOTE.match(previous), _QUOTE.match(line)
    if not (before and now) or before.group(1).count(">") != now.group(1).count(">"):
        return None
    text = line[now.end() :]
    if not text.strip() or starts_block(text):
        return None
    return text.strip()


def _in_list(out: list[str], pieces: list[str]) -> bool:
    """Is the last paragraph written a list item (so indentation nests)?"""
    for line in itertools.chain(pieces[:1], reversed(out)):
        if not line.strip():
            continue
        return re.match(r"\s*(?:[-*+]|\d{1,9}[.)])(?:[ \t]|$)", line) is not None
    return False


def key(markdown: str) -> str:
    """The translation key of a section's markdown."""
    return extract(normalize(markdown)).text
