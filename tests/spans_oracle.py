"""The span scanner and `normalize` of commit 946255a: the oracle for the new ones.

`literate.spans` now scans in linear time; on every input the two must find
the same spans (tests/test_hostile_input.py compares them on generated text).
This version re-scans forward from each candidate opener, so it is cubic on
inputs such as `$a ` repeated: call it only on short strings.
"""

from __future__ import annotations

import re
import string

PLACEHOLDER_RE = re.compile(r"_\^_(\d+)_\^_")
_PUNCT = frozenset(string.punctuation)
# A fence opens a code block: up to three spaces, then ``` or ~~~ (3 or more).
_FENCE_OPEN = re.compile(r"[ ]{0,3}(`{3,}|~{3,})([^\n]*)")
# `[label]: target` at the start of a line defines a reference link.
_REF_DEF = re.compile(r"[ ]{0,3}\[[^\]\n]+\]:[ \t]*(<[^>\n]*>|\S+)")
# `<https://…>`, `<mailto:…>`: an autolink, any URI scheme (CommonMark's rule).
_AUTOLINK = re.compile(r"<[A-Za-z][A-Za-z0-9+.-]{1,31}:[^\s<>]*>")
# Raw HTML: comments, declarations, processing instructions and tags.
_HTML = re.compile(
    r"<!--.*?-->"
    r"|<![A-Za-z\[][^>]*>"
    r"|<\?.*?\?>"
    r"|</?[A-Za-z][A-Za-z0-9-]*"
    r"(?:\s+[^\s\"'>/=]+(?:\s*=\s*(?:\"[^\"]*\"|'[^']*'|[^\s\"'=<>`]+))?)*"
    r"\s*/?>",
    re.DOTALL,
)
# A bare web address in running text.
_BARE_URL = re.compile(r"(?:https?|ftp)://[^\s<>\"'`]+", re.IGNORECASE)
# `$5`, `$3.50`, `$1,000`: a price, not the start of math.
_PRICE = re.compile(r"\$\d+(?:[.,]\d+)*(?=\s|$|[,;:!?)\]'\"]|\.(?!\d))")
# A bare display environment (added with the linear scanner's own).
_ENVIRONMENT = re.compile(
    r"\\begin\{((?:align|alignat|equation|gather)\*?|aligned|alignedat|gathered"
    r"|split)\}"
)


# --- span scanner -----------------------------------------------------------


def find_spans(text: str) -> list[tuple[int, int, str]]:
    """(start, end, kind) of every untouchable span, left to right.

    One pass, so a `$` inside inline code is code and a `<` inside math is
    math: whatever opens first owns the characters up to its end.
    """
    found: list[tuple[int, int, str]] = []
    i, n = 0, len(text)
    while i < n:
        hit = _span_at(text, i)
        if hit is None:
            i += 1
        elif hit[2] == "":  # literal characters: skip them as a unit
            i = hit[1]
        else:
            found.append(hit)
            i = hit[1]
    return found


def _span_at(text: str, i: int) -> tuple[int, int, str] | None:
    """The span starting at `i`, ("" kind for characters to skip) or None."""
    c = text[i]
    if i == 0 or text[i - 1] == "\n":
        line_hit = _line_start_span(text, i)
        if line_hit is not None:
            return line_hit
    if c == "_":
        m = PLACEHOLDER_RE.match(text, i)
        return (i, m.end(), "literal") if m else None
    if c == "\\" and i + 1 < len(text) and text[i + 1] in _PUNCT:
        if PLACEHOLDER_RE.match(text, i + 1):
            return None  # `\_^_0_^_`: the placeholder is literal text all the same
        return (i, i + 2, "")
    env = _ENVIRONMENT.match(text, i) if c == "\\" else None
    if env:
        end = text.find(f"\\end{{{env.group(1)}}}", i)
        if end >= 0:
            return (i, end + len(env.group(1)) + 6, "display_math")
    if c == "`":
        return _code_span(text, i)
    if c == "$":
        return _math_span(text, i)
    if c == "]" and text.startswith("](", i):
        end = _link_target_end(text, i + 2)
        if end is not None and end > i + 2:
            return (i + 2, end, "url")
        return None
    if c == "<":
        m = _AUTOLINK.match(text, i)
        if m:
            return (i, m.end(), "url")
        m = _HTML.match(text, i)
        if m:
            return (i, m.end(), "html")
        return None
    if c in "hHfF" and (i == 0 or not text[i - 1].isalnum()):
        m = _BARE_URL.match(text, i)
        if m:
            return (i, i + len(_trim_url(m.group(0))), "url")
    return None


def _line_start_span(text: str, i: int) -> tuple[int, int, str] | None:
    """A fenced code block or a reference-link target starting this line."""
    m = _FENCE_OPEN.match(text, i)
    if m and not (m.group(1)[0] == "`" and "`" in m.group(2)):
        return (i, _fence_end(text, m.end(), m.group(1)), "code_block")
    m = _REF_DEF.match(text, i)
    if m:
        return (m.start(1), m.end(1), "url")
    return None


def _fence_end(text: str, pos: int, fence: str) -> int:
    """End of the closing fence line (exclusive of its newline), or of text."""
    closer = re.compile(
        rf"\n[ ]{{0,3}}{re.escape(fence[0])}{{{len(fence)},}}[ \t]*(?=\n|$)"
    )
    m = closer.search(text, pos)
    return m.end() if m else len(text)


def _code_span(text: str, i: int) -> tuple[int, int, str]:
    """Inline code: a run of N backticks closed by the next run of exactly N."""
    run = _run_length(text, i, "`")
    j = i + run
    while True:
        j = text.find("`", j)
        if j < 0 or _blank_line_between(text, i, j):
            return (i, i + run, "")  # no closer: literal backticks
        closing = _run_length(text, j, "`")
        if closing == run:
            return (i, j + run, "code")
        j += closing


def _math_span(text: str, i: int) -> tuple[int, int, str] | None:
    """Display math `$$…$$` or inline math `$…$` starting at `i`."""
    if text.startswith("$$", i):
        end = text.find("$$", i + 2)
        if end < 0:
            return (i, i + 2, "")
        return (i, end + 2, "display_math")
    nxt = text[i + 1 : i + 2]
    if not nxt or nxt.isspace() or (_PRICE.match(text, i) and not _is_tex(text, i)):
        return None
    nearest = text.find("$", i + 1)
    if (
        nearest > 0
        and "\n" not in text[i:nearest]
        and text[nearest - 1].isspace()
        and not text[nearest + 1 : nearest + 2].isalnum()
        and re.search(r"\\[A-Za-z]", text[i:nearest])
    ):
        return (i, nearest + 1, "math")
    j = i + 1
    while True:
        j = text.find("$", j)
        if j < 0 or _blank_line_between(text, i, j):
            return None
        if _closes_math(text, j):
            return (i, j + 1, "math")
        j += 1


def _is_tex(text: str, i: int) -> bool:
    """A price-like `$0, 1, \\ldots$` is math after all: the next `$` on its
    line closes it and what lies between has TeX in it (`\\`, `^`, `_`, `{`), an
    operator (`$2 * i$`, `$0 < d < D$`) or only a number (`$14,728,266$`)."""
    j = text.find("$", i + 1)
    if j < 0 or "\n" in text[i:j] or not _closes_math(text, j):
        return False
    inner = text[i + 1 : j]
    return any(c in inner for c in "\\^_{*+<>=") or not inner.strip("0123456789,.")


def _closes_math(text: str, j: int) -> bool:
    """A `$` closes inline math: no space before, no digit after, not `\\$`."""
    before = text[j - 1]
    after = text[j + 1 : j + 2]
    if before.isspace() or after.isdigit():
        return False
    backslashes = 0
    while text[j - 1 - backslashes] == "\\":
        backslashes += 1
    return backslashes % 2 == 0


def _link_target_end(text: str, pos: int) -> int | None:
    """Index of the `)` closing a link target that starts at `pos`."""
    depth = 0
    j = pos
    if text.startswith("<", j):
        close = text.find(">", j)
        if close < 0 or "\n" in text[j:close]:
            return None
        j = close + 1
    while j < len(text):
        c = text[j]
        if c == "\\":
            j += 2
            continue
        if c == "\n" and _blank_line_between(text, pos, j + 1):
            return None
        if c == "(":
            depth += 1
        elif c == ")":
            if depth == 0:
                return j
            depth -= 1
        j += 1
    return None


def _trim_url(url: str) -> str:
    """Drop sentence punctuation after a URL; keep `)` that closes a `(`."""
    while url and url[-1] in ".,;:!?'\")]":
        if url[-1] == ")" and url.count("(") >= url.count(")"):
            break
        url = url[:-1]
    return url


def _run_length(text: str, i: int, char: str) -> int:
    j = i
    while j < len(text) and text[j] == char:
        j += 1
    return j - i


def _blank_line_between(text: str, start: int, end: int) -> bool:
    return re.search(r"\n[ \t]*\n", text[start:end]) is not None


# --- normalisation ----------------------------------------------------------

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
    r")"
)
# Lines after which nothing folds: headings, rules, table rows, an empty
# quote line (a paragraph break inside a quote), hard breaks.
_NO_CONTINUATION = re.compile(
    r"[ ]{0,3}(?:#{1,6}(?:[ \t]|$)|\||(?:[-*_=][ \t]*){3,}$|(?:>[ ]?)+$)|.*\\$"
)


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
    foldable = False  # may the next line fold onto out[-1]?
    blank = False  # was there a blank line since out[-1]?
    after_blank = True  # the current line follows a blank line (or the start)
    for number, line in enumerate(lines):
        if number in verbatim:
            if blank and out:
                out.append("")
            out.append(line if verbatim[number] else line.rstrip())
            foldable = blank = False
            after_blank = False
            continue
        if re.fullmatch(r"[ ]{0,3}%symbols(?:[ \t][^\n]*)?", line):
            continue  # a `%symbols` line is for the page's script (added later)
        if not line.strip():
            blank = after_blank = True
            foldable = False
            continue
        stripped = line.rstrip()
        quoted = _quote_continuation(out[-1], stripped) if foldable else None
        if foldable and not blank and quoted is not None:
            out[-1] = out[-1] + " " + quoted
        elif foldable and not blank and not starts_block(line):
            out[-1] = out[-1] + " " + stripped.strip()
        elif after_blank and line.startswith("    ") and not _in_list(out):
            if blank and out:
                out.append("")
            out.append(stripped)  # indented code: kept, never folded
            blank = foldable = after_blank = False
            continue
        else:
            if blank and out:
                out.append("")
            out.append(stripped)
        foldable = not _NO_CONTINUATION.match(out[-1])
        blank = after_blank = False
    return "\n".join(out)


def _verbatim_lines(text: str) -> dict[int, bool]:
    """Lines inside fenced code or line-leading display math, never folded.

    The value says whether the line is kept byte for byte (fenced code) or
    only loses its trailing whitespace (display math).
    """
    verbatim: dict[int, bool] = {}
    for start, end, kind in find_spans(text):
        if kind not in ("code_block", "display_math"):
            continue
        line_start = text.rfind("\n", 0, start) + 1
        if text[line_start:start].strip():
            continue  # display math inside a line of prose: it folds
        first = text.count("\n", 0, start)
        last = text.count("\n", 0, end)
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


def _in_list(out: list[str]) -> bool:
    """Is the last paragraph written a list item (so indentation nests)?"""
    for line in reversed(out):
        if not line.strip():
            continue
        return re.match(r"\s*(?:[-*+]|\d{1,9}[.)])(?:[ \t]|$)", line) is not None
    return False
