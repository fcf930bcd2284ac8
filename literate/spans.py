"""Which spans of prose a translator must not touch.

This is the one place that decides what is math, inline code, a link target or
raw HTML in a section's markdown. The translation keys (`literate.normalize.
key`) and the renderer both call `extract`, so math is detected in exactly one
way everywhere.

    extract(md)    Template: md with every untouchable span replaced by _^_N_^_
    fill(t, spans) the inverse: fill(extract(m).text, extract(m).spans) == m
    find_spans(md) (start, end, kind) of each span, left to right

Math rules, so that an ordinary `$` in a comment is not math: `$…$` opens on a
`$` followed by neither whitespace nor a plain price such as `$5` or `$3.50`,
and closes on a `$` preceded by no whitespace and followed by no digit (or,
as labml writes it, on the next `$` of its line after a space when a TeX
command lies between: `$f(x) \\otimes g $`); `\\$` is a literal dollar;
`$$…$$` is display math and may span lines. So is an environment KaTeX
typesets as a display, written bare as labml's sources do (`\\begin{align} …
\\end{align}`, also `equation`, `gather`, `aligned`, …).
"""

from __future__ import annotations

import bisect
import re
import string
from dataclasses import dataclass

# `_^_3_^_`: the placeholder for span number 3 of a template.
PLACEHOLDER_RE = re.compile(r"_\^_(\d+)_\^_")
# Text that a placeholder right after it would complete into another one.
_PLACEHOLDER_HEAD = re.compile(r"_\^_\d+$")

_PUNCT = frozenset(string.punctuation)

# A fence opens a code block: up to three spaces, then ``` or ~~~ (3 or more).
_FENCE_OPEN = re.compile(r"[ ]{0,3}(`{3,}|~{3,})([^\n]*)")
# `[label]: target` at the start of a line defines a reference link.
_REF_DEF = re.compile(r"[ ]{0,3}\[[^\]\n]+\]:[ \t]*(<[^>\n]*>|\S+)")
# `<https://…>`, `<mailto:…>`: an autolink, any URI scheme (CommonMark's rule).
_AUTOLINK = re.compile(r"<[A-Za-z][A-Za-z0-9+.-]{1,31}:[^\s<>]*>")
# A bare web address in running text.
_BARE_URL = re.compile(r"(?:https?|ftp)://[^\s<>\"'`]+", re.IGNORECASE)
# `$5`, `$3.50`, `$1,000`: a price, not the start of math.
_PRICE = re.compile(r"\$\d+(?:[.,]\d+)*(?=\s|$|[,;:!?)\]'\"]|\.(?!\d))")
# `\begin{align}`: an environment KaTeX sets as a display, bare in prose;
# it closes at the first `\end` of the same name.
ENVIRONMENT = re.compile(
    r"\\begin\{((?:align|alignat|equation|gather)\*?|aligned|alignedat|gathered"
    r"|split)\}"
)


@dataclass(frozen=True)
class Span:
    """A piece of prose that stays as it is in every language."""

    # "math" | "display_math" | "code" | "code_block" | "url" | "html", or
    # "literal": placeholder-like text typed in the prose itself (`_^_N_^_`,
    # or `_^_N` right before a span), kept as plain text
    kind: str
    text: str  # exact source text: "$d_k$", "$$…$$", "`x`", "https://…", "<br>"


@dataclass(frozen=True)
class Template:
    """Markdown with each untouchable span replaced by `_^_i_^_`."""

    text: str
    spans: tuple[Span, ...]  # spans[i] is what _^_i_^_ stands for


def placeholder(index: int) -> str:
    """The placeholder text for span number `index`."""
    return f"_^_{index}_^_"


def extract(markdown: str) -> Template:
    """Replace math, code, link targets and raw HTML by numbered placeholders.

    Spans are numbered in order of appearance, one number per occurrence. A
    placeholder typed in the prose itself becomes a "literal" span, so every
    placeholder of a template is one of its own and `fill` restores the text.
    """
    parts: list[str] = []
    spans: list[Span] = []
    last = 0
    for start, end, kind in find_spans(markdown):
        head = _PLACEHOLDER_HEAD.search(markdown, last, start)
        if head:  # `_^_1` + `_^_0_^_` would read as `_^_1_^_`: keep it literal
            parts.append(markdown[last : head.start()])
            parts.append(placeholder(len(spans)))
            spans.append(Span("literal", head.group(0)))
            last = head.end()
        parts.append(markdown[last:start])
        parts.append(placeholder(len(spans)))
        spans.append(Span(kind, markdown[start:end]))
        last = end
    parts.append(markdown[last:])
    return Template("".join(parts), tuple(spans))


# Between two code spans a translation puts side by side (`_^_0_^__^_1_^_`):
# "`a``b`" would read as one span with backticks in it. A word joiner keeps
# them two spans and shows nothing. `extract` never makes such a pair.
CODE_JOINER = "\u2060"


def fill(text: str, spans: tuple[Span, ...]) -> str:
    """Put each span back in place of its placeholder (in any order).

    Two code spans side by side are kept apart by `CODE_JOINER`.
    """
    parts: list[str] = []
    last = 0
    for match in PLACEHOLDER_RE.finditer(text):
        index = int(match.group(1))
        if index >= len(spans):
            raise ValueError(
                f"placeholder {match.group(0)} at character {match.start()}: "
                f"expected an index below {len(spans)} (the number of spans)"
            )
        parts.append(text[last : match.start()])
        span = spans[index].text
        if match.start() == last and parts[-2:-1] and parts[-2].endswith("`"):
            if span.startswith("`"):
                parts.append(CODE_JOINER)
        parts.append(span)
        last = match.end()
    parts.append(text[last:])
    return "".join(parts)


# --- span scanner -----------------------------------------------------------
#
# The scan runs in O(n log n) on any text, however hostile: every "where does
# this span close?" question is answered from indexes built once per text (the
# positions of blank lines, of closing `$`, of backtick runs by length, of
# parentheses by depth) instead of by scanning forward from each opener. A
# translation is untrusted input, and one that made the scan re-read the text
# from every `$` would stall every build.

# The characters a span can start at (and every line start, for fences and
# reference definitions); the scan jumps from one to the next.
_INTERESTING = re.compile(r"(?m)^|[_\\`$\]<hHfF]")
# A tag. No `<` outside quotes (CommonMark's rule too), so trying it at each
# `<` of `<a <a <a …` reads up to the next `<`, not to the end of the text.
_TAG = re.compile(
    r"</?[A-Za-z][A-Za-z0-9-]*"
    r"(?:\s+[^\s\"'<>/=]+"
    r"(?:\s*=\s*(?:\"[^\"]*\"|'[^']*'|[^\s\"'=<>`]+))?)*"
    r"\s*/?>"
)
# `\x` is one unit of a link target, then its parentheses.
_PAREN_TOKEN = re.compile(r"\\.|[()]", re.DOTALL)


def find_spans(text: str) -> list[tuple[int, int, str]]:
    """(start, end, kind) of every untouchable span, left to right.

    One pass, so a `$` inside inline code is code and a `<` inside math is
    math: whatever opens first owns the characters up to its end.
    """
    return _Scan(text).spans()


class _Scan:
    """One text and the indexes that answer where each kind of span closes."""

    def __init__(self, text: str):
        self.text = text
        self._built: set[str] = set()

    def spans(self) -> list[tuple[int, int, str]]:
        text, found = self.text, []
        i, n = 0, len(self.text)
        while i < n:
            candidate = _INTERESTING.search(text, i)
            if candidate is None or candidate.start() == n:
                break
            i = candidate.start()
            hit = self.span_at(i)
            if hit is None:
                i += 1
            elif hit[2] == "":  # literal characters: skip them as a unit
                i = hit[1]
            else:
                found.append(hit)
                i = hit[1]
        return found

    def span_at(self, i: int) -> tuple[int, int, str] | None:
        """The span starting at `i`, ("" kind for characters to skip) or None."""
        text = self.text
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
        if c == "\\" and (env := ENVIRONMENT.match(text, i)):
            return self.environment_span(i, env.group(1))
        if c == "`":
            return self.code_span(i)
        if c == "$":
            return self.math_span(i)
        if c == "]" and text.startswith("](", i):
            end = self.link_target_end(i + 2)
            if end is not None and end > i + 2:
                return (i + 2, end, "url")
            return None
        if c == "<":
            m = _AUTOLINK.match(text, i)
            if m:
                return (i, m.end(), "url")
            end = self.html_end(i)
            return None if end is None else (i, end, "html")
        if c in "hHfF" and (i == 0 or not text[i - 1].isalnum()):
            m = _BARE_URL.match(text, i)
            if m:
                return (i, i + _trimmed_length(m.group(0)), "url")
        return None

    # --- indexes, each built on first use -------------------------------------

    def _build(self, name: str) -> None:
        if name in self._built:
            return
        self._built.add(name)
        text = self.text
        if name == "blank":
            # A blank line: a newline, spaces or tabs, a newline. Starts and
            # ends both increase, so the first blank line from `start` is
            # the one to compare with any `end`.
            self.blank_starts, self.blank_ends = [], []
            for m in re.finditer(r"\n(?=([ \t]*)\n)", text):
                self.blank_starts.append(m.start())
                self.blank_ends.append(m.end() + len(m.group(1)) + 1)
        elif name == "dollar":
            self.closers = [
                m.start()
                for m in re.finditer(r"\$", text)
                if _closes_math(text, m.start())
            ]
            self.display_closers = [m.start() for m in re.finditer(r"(?=\$\$)", text)]
        elif name == "environment":
            self.env_ends: dict[str, list[int]] = {}
            for m in re.finditer(r"\\end\{([^{}\n]*)\}", text):
                self.env_ends.setdefault(m.group(1), []).append(m.end())
        elif name == "backtick":
            self.runs: dict[int, list[int]] = {}
            for m in re.finditer(r"`+", text):
                self.runs.setdefault(len(m.group(0)), []).append(m.start())
        elif name == "paren":
            # Depth before each unescaped parenthesis, counted from the text's
            # start; a link target closes at the first `)` at its own depth.
            self.paren_at, self.depth_before = [], []
            self.closing_at_depth: dict[int, list[int]] = {}
            depth = 0
            for m in _PAREN_TOKEN.finditer(text):
                c = m.group(0)
                if c == "(":
                    self.paren_at.append(m.start())
                    self.depth_before.append(depth)
                    depth += 1
                elif c == ")":
                    self.paren_at.append(m.start())
                    self.depth_before.append(depth)
                    self.closing_at_depth.setdefault(depth, []).append(m.start())
                    depth -= 1
            self.paren_depth_end = depth
        elif name == "html":
            self.comment_ends = [m.start() for m in re.finditer(r"(?=-->)", text)]
            self.pi_ends = [m.start() for m in re.finditer(r"(?=\?>)", text)]
            self.gts = [m.start() for m in re.finditer(">", text)]
            self.newlines = [m.start() for m in re.finditer("\n", text)]

    def blank_between(self, start: int, end: int) -> bool:
        """Is there a blank line inside text[start:end]?"""
        self._build("blank")
        k = bisect.bisect_left(self.blank_starts, start)
        return k < len(self.blank_starts) and self.blank_ends[k] <= end

    def first_blank_end(self, start: int) -> int:
        """Where the first blank line at or after `start` ends (or past the text)."""
        self._build("blank")
        k = bisect.bisect_left(self.blank_starts, start)
        return self.blank_ends[k] if k < len(self.blank_ends) else len(self.text) + 1

    # --- spans --------------------------------------------------------------

    def code_span(self, i: int) -> tuple[int, int, str]:
        """Inline code: a run of N backticks closed by the next run of exactly N."""
        self._build("backtick")
        run = _run_length(self.text, i, "`")
        starts = self.runs.get(run, [])
        k = bisect.bisect_left(starts, i + run)
        if k == len(starts) or self.blank_between(i, starts[k]):
            return (i, i + run, "")  # no closer: literal backticks
        return (i, starts[k] + run, "code")

    def environment_span(self, i: int, name: str) -> tuple[int, int, str] | None:
        """`\\begin{name}` up to its `\\end{name}`: display math; None if unclosed."""
        self._build("environment")
        ends = self.env_ends.get(name, [])
        k = bisect.bisect_right(ends, i)
        return None if k == len(ends) else (i, ends[k], "display_math")

    def math_span(self, i: int) -> tuple[int, int, str] | None:
        """Display math `$$…$$` or inline math `$…$` starting at `i`."""
        text = self.text
        self._build("dollar")
        if text.startswith("$$", i):
            k = bisect.bisect_left(self.display_closers, i + 2)
            if k == len(self.display_closers):
                return (i, i + 2, "")
            return (i, self.display_closers[k] + 2, "display_math")
        nxt = text[i + 1 : i + 2]
        if not nxt or nxt.isspace() or (_PRICE.match(text, i) and not _is_tex(text, i)):
            return None
        spaced = _spaced_close(text, i)
        if spaced is not None:
            return (i, spaced + 1, "math")
        k = bisect.bisect_right(self.closers, i)
        if k == len(self.closers) or self.blank_between(i, self.closers[k]):
            return None
        return (i, self.closers[k] + 1, "math")

    def link_target_end(self, pos: int) -> int | None:
        """Index of the `)` closing a link target that starts at `pos`."""
        text = self.text
        j = pos
        if text.startswith("<", j):
            self._build("html")
            k = bisect.bisect_left(self.gts, j)
            if k == len(self.gts):
                return None
            close = self.gts[k]
            n = bisect.bisect_left(self.newlines, j)
            if n < len(self.newlines) and self.newlines[n] < close:
                return None
            j = close + 1
        self._build("paren")
        # `j` follows `(` or `>`, never an escaping `\`: the escapes counted
        # from the text's start pair the same characters as from `j`.
        k = bisect.bisect_left(self.paren_at, j)
        depth = self.depth_before[k] if k < len(self.paren_at) else self.paren_depth_end
        closers = self.closing_at_depth.get(depth, [])
        m = bisect.bisect_left(closers, j)
        if m == len(closers) or closers[m] >= self.first_blank_end(pos) - 1:
            return None
        return closers[m]

    def html_end(self, i: int) -> int | None:
        """End of a comment, declaration, processing instruction or tag at `i`."""
        text = self.text
        self._build("html")
        if text.startswith("<!--", i):
            return _first_at_or_after(self.comment_ends, i + 4, 3)
        if text.startswith("<!", i) and re.match(r"[A-Za-z\[]", text[i + 2 : i + 3]):
            return _first_at_or_after(self.gts, i + 3, 1)
        if text.startswith("<?", i):
            end = _first_at_or_after(self.pi_ends, i + 2, 2)
            if end is not None:
                return end
        m = _TAG.match(text, i)
        return m.end() if m else None


def _first_at_or_after(positions: list[int], start: int, length: int) -> int | None:
    """The end of the first occurrence (of `length` chars) at or after `start`."""
    k = bisect.bisect_left(positions, start)
    return positions[k] + length if k < len(positions) else None


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


def _is_tex(text: str, i: int) -> bool:
    """A price-like `$0, 1, \\ldots$` is math after all: the next `$` on its
    line closes it and what lies between has TeX in it (`\\`, `^`, `_`, `{`), an
    operator (`$2 * i$`, `$0 < d < D$`) or only a number (`$14,728,266$`)."""
    j = text.find("$", i + 1)
    if j < 0 or "\n" in text[i:j] or not _closes_math(text, j):
        return False
    inner = text[i + 1 : j]
    return any(c in inner for c in "\\^_{*+<>=") or not inner.strip("0123456789,.")


def _spaced_close(text: str, i: int) -> int | None:
    """The `$` of `$f(x) \\otimes g $`, closing with a space before it, as
    labml's sources write: the next `$` on the line, with a space before it,
    no letter or digit after it, and a TeX command between (`\\` and a
    letter); else None."""
    j = text.find("$", i + 1)
    if j < 0 or "\n" in text[i:j] or not text[j - 1].isspace():
        return None
    if text[j + 1 : j + 2].isalnum() or not re.search(r"\\[A-Za-z]", text[i:j]):
        return None
    return j


def _closes_math(text: str, j: int) -> bool:
    """A `$` closes inline math: no space before, no digit after, not `\\$`."""
    if j == 0:
        return False  # nothing before it could open
    before = text[j - 1]
    after = text[j + 1 : j + 2]
    if before.isspace() or after.isdigit():
        return False
    backslashes = 0
    while j - 1 - backslashes >= 0 and text[j - 1 - backslashes] == "\\":
        backslashes += 1
    return backslashes % 2 == 0


def _trimmed_length(url: str) -> int:
    """Length of a URL without sentence punctuation after it; a `)` that
    closes a `(` stays."""
    end = len(url)
    opened, closed = url.count("("), url.count(")")
    while end and url[end - 1] in ".,;:!?'\")]":
        if url[end - 1] == ")":
            if opened >= closed:
                break
            closed -= 1
        end -= 1
    return end


def _run_length(text: str, i: int, char: str) -> int:
    j = i
    while j < len(text) and text[j] == char:
        j += 1
    return j - i
