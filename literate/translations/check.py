"""What makes a translation unusable, found before a reader ever sees it.

`check_entry(key, value, glossary)` lists the defects of one table entry; an
empty list means the translation may be shown. The same function gates the
translate stage and the `translations check` command, so a string the check
rejects is never on a page.

Defects: placeholders missing, added, duplicated or mangled; replacement
fields (`{step}`) other than the English's; unbalanced emphasis or link
brackets; a glossary term rendered wrongly or a class or function name not
kept as written; the English copied unchanged; invisible characters; anything
that could put markup or script into the page (translated text is untrusted).

Entries that reach an attribute or the page head (title, summary, alt texts,
figure words) must also pass `attribute_problems`, and figure words, which
matplotlib draws, `figure_problems` (their math) and `glyph_problems` (the
fonts of the language's figures).
"""

from __future__ import annotations

import functools
import logging
import os
import re
import string
import unicodedata
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from literate.spans import PLACEHOLDER_RE, extract
from literate.translations.tables import TableError, parse_object, read_text, short


@dataclass(frozen=True)
class Term:
    """A glossary entry: an English term and its one accepted rendering."""

    en: str
    render: str  # must appear in a translation whose English has the term
    forbidden: tuple[str, ...] = ()  # renderings that are always wrong
    note: str = ""

    @functools.cached_property
    def pattern(self) -> re.Pattern[str]:
        """The term in English prose: any case, plural, `-`/space variants.

        Compiled once per term (`re`'s own cache holds 512 patterns: a larger
        glossary would recompile every pattern on every use).
        """
        words = [re.escape(w) for w in re.split(r"[-\s]+", self.en)]
        body = r"[-\s]?".join(words)
        return re.compile(rf"(?<![A-Za-z]){body}(?:s|es)?(?![A-Za-z])", re.I)


def load_glossary(path: Path | str) -> tuple[Term, ...]:
    """The terms of `translations/<lang>/glossary.json`; none if it is missing.

    The file maps an English term to {"render": …, "forbidden": […], "note": …}.
    Raises TableError (file:line) for anything else.
    """
    path = Path(path)
    if not os.path.lexists(path):  # a symlink to nothing is refused, not missing
        return ()
    terms = []
    for entry in parse_object(read_text(path), path):
        spec = entry.value
        forbidden = spec.get("forbidden", []) if isinstance(spec, dict) else None
        if (
            not isinstance(spec, dict)
            or not isinstance(spec.get("render"), str)
            or not spec["render"].strip()
            or not isinstance(forbidden, list)
            or not all(isinstance(f, str) and f for f in forbidden)
            or not isinstance(spec.get("note", ""), str)
            or set(spec) - {"render", "forbidden", "note"}
        ):
            raise TableError(
                path,
                entry.line,
                1,
                f"term {short(entry.key)}: expected "
                '{"render": str, "forbidden": [str, …], "note": str}',
            )
        terms.append(
            Term(entry.key, spec["render"], tuple(forbidden), spec.get("note", ""))
        )
    return tuple(terms)


# Anything that looks like a placeholder but is not exactly `_^_N_^_`:
# URL-encoded or full-width carets, full-width underscores, spaces, escapes.
# Possessive runs, and no match starting inside a run of spaces: linear time
# on a value of thousands of spaces.
_CARET = r"(?:\\?\^|＾|%5[eE])"
_UNDERSCORE = r"(?:\\?_|＿)"
_LOOSE_PLACEHOLDER = re.compile(
    rf"(?<!\s){_UNDERSCORE}?\s*+{_CARET}\s*+{_UNDERSCORE}?\s*+[0-9０-９]++"
    rf"\s*+{_UNDERSCORE}?\s*+{_CARET}(?:\s*+{_UNDERSCORE})?"
    rf"|{_UNDERSCORE}\s*+{_CARET}\s*+{_UNDERSCORE}"
)

# Ways translated text could inject markup or script into the page.
_INJECTION = (
    (re.compile(r"<\s*/?\s*script", re.I), "a <script> tag"),
    (re.compile(r"<\s*/?\s*iframe", re.I), "an <iframe> tag"),
    (re.compile(r"<\s*/?\s*style", re.I), "a <style> tag"),
    (re.compile(r"<!--"), "an HTML comment"),
    (re.compile(r"(?<![A-Za-z])on[a-z]+\s*=", re.I), "an event handler attribute"),
    (re.compile(r"(?<![A-Za-z-])style\s*=", re.I), "a style attribute"),
    (
        re.compile(r"(?:java|vb)script\s*(?::|&#0*58;?|&#x0*3a;?|&colon;)", re.I),
        "a script URL",
    ),
    (re.compile(r"data\s*:\s*text/html", re.I), "a data: HTML URL"),
    (re.compile(r"\{\s*:"), "a markdown attribute list"),
)
# Any other tag: the English's own HTML is in placeholders, so none may be added.
_RAW_HTML = re.compile(r"<\s*[A-Za-z!?/]")

# A class or function name: CamelCase with two humps, or snake_case.
_IDENTIFIER = re.compile(
    r"(?<![\w.])(?:[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+|[a-z][a-z0-9]*(?:_[a-z0-9]+)+)"
    r"(?![\w])"
)

_SPAN_NAMES = {
    "math": "math",
    "display_math": "display math",
    "code": "inline code",
    "code_block": "a code block",
    "url": "a link target",
}


# Limits no real translation comes near, checked before anything else reads
# the value, so that a hostile one is refused in time linear in its length.
LENGTH_RATIO = 4  # a value may be 4 times as long as its English ...
LENGTH_MARGIN = 200  # ... plus 200 characters (a short key, a long gloss)
MAX_NESTING = 8  # brackets, parentheses or list/quote markers inside one another
LINES_RATIO = 2  # a value may have twice as many lines as its English ...
LINES_MARGIN = 8  # ... plus 8
# C0 controls but tab and newline, DEL, C1 controls; bidirectional embeddings,
# overrides and isolates, which can make text read other than it is.
_FORBIDDEN_CHAR = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
# Invisible characters besides those: every format character (Unicode
# category Cf: zero-width space and joiners, direction marks, the soft hyphen,
# word joiner, byte-order mark, tag characters ...), and blanks that are
# letters or marks: Hangul fillers, the Braille blank, the combining grapheme
# joiner, variation selectors, line and paragraph separators. No language of
# the site needs one (docs/translating.md); none is allowed.
_INVISIBLE = re.compile(
    "[\u034f\u115f\u1160\u17b4\u17b5\u180b\u180c\u180d\u180f\u2028\u2029"
    "\u2800\u3164\uffa0\ufe00-\ufe0f\U000e0000-\U000e007f\U000e0100-\U000e01ef]"
)
# Direction marks (Cf): they reorder what a reviewer sees, like the controls.
_DIRECTION_MARK = frozenset("\u200e\u200f\u061c")
DIRECTION = " (it changes the direction of the text)"


def check_entry(key: str, value: str, glossary: tuple[Term, ...] = ()) -> list[str]:
    """The defects of translating `key` as `value`; [] when it may be shown."""
    return list(_checked(key, value, _Glossary.of(tuple(glossary))))


class _Glossary:
    """A glossary as a cache key: hashed by identity, not term by term.

    Hashing a tuple of a thousand terms on every call would cost more than
    the check; the same tuple object (a build loads each glossary once) gets
    the same token, and a token keeps its tuple alive, so that no other
    tuple can take its id while the token is in use.
    """

    __slots__ = ("terms",)
    _tokens: dict[int, _Glossary] = {}

    def __init__(self, terms: tuple[Term, ...]):
        self.terms = terms

    @classmethod
    def of(cls, terms: tuple[Term, ...]) -> _Glossary:
        token = cls._tokens.get(id(terms))
        if token is None or token.terms is not terms:
            if len(cls._tokens) >= 64:  # forget the oldest (a new token: a miss)
                del cls._tokens[next(iter(cls._tokens))]
            token = cls._tokens[id(terms)] = cls(terms)
        return token


# A build asks about the same entry several times (the page, its figure words,
# its notebook, in each language); the answer depends only on the arguments.
@functools.lru_cache(maxsize=4096)
def _checked(key: str, value: str, glossary: _Glossary) -> tuple[str, ...]:
    return tuple(_problems(key, value, glossary.terms))


def _problems(key: str, value: str, glossary: tuple[Term, ...]) -> list[str]:
    problems = _size_problems(key, value)
    if problems:  # too big to read further: say only that
        return problems
    problems = _character_problems(value)
    problems += _placeholder_problems(key, value)
    problems += _field_problems(key, value)
    bare_key = PLACEHOLDER_RE.sub("\0", key)
    bare_value = PLACEHOLDER_RE.sub("\0", value)
    problems += _injection_problems(bare_value)
    problems += _added_span_problems(value)
    problems += _structure_problems(key, value, bare_key, bare_value)
    problems += _term_problems(bare_key, bare_value, glossary)
    if value.strip() == key.strip() and len(re.findall(r"[A-Za-z]{2,}", bare_key)) > 2:
        problems.append("the English is copied unchanged: translate it or leave it ''")
    return problems


def _size_problems(key: str, value: str) -> list[str]:
    """A value far longer than its English, or nested deeper than prose is."""
    limit = LENGTH_RATIO * len(key) + LENGTH_MARGIN
    if len(value) > limit:
        return [
            f"the translation is {len(value)} characters long, more than "
            f"{LENGTH_RATIO} × the English ({len(key)}) + {LENGTH_MARGIN} = {limit}"
        ]
    lines, english_lines = value.count("\n") + 1, key.count("\n") + 1
    most = LINES_RATIO * english_lines + LINES_MARGIN
    if lines > most:
        return [
            f"the translation has {lines} lines, more than {LINES_RATIO} × the "
            f"English ({english_lines}) + {LINES_MARGIN} = {most}"
        ]
    problems = []
    for opener, closer in ("[]", "()"):
        depth = _nesting(value, opener, closer)
        if depth > max(MAX_NESTING, _nesting(key, opener, closer)):
            problems.append(
                f"{opener}{closer} nested {depth} deep: at most {MAX_NESTING} "
                "levels of brackets or parentheses are allowed"
            )
    depth = _block_nesting(value)
    if depth > max(MAX_NESTING, _block_nesting(key)):
        problems.append(
            f"{depth} list or quote markers at the start of a line: at most "
            f"{MAX_NESTING} are allowed"
        )
    return problems


# A chain of list-item or quote markers starting a line: `- - 1. > x`.
_BLOCK_MARKERS = re.compile(
    r"(?m)^(?:[ \t]*+(?:[-*+]|\d{1,9}[.)])(?:[ \t]++|$)|[ \t]*+>)+"
)


def _block_nesting(text: str) -> int:
    """The most list or quote markers that open one line (nested blocks)."""
    return max(
        (
            len(re.findall(r"[-*+>]|\d{1,9}[.)]", m.group(0)))
            for m in _BLOCK_MARKERS.finditer(text)
        ),
        default=0,
    )


def _nesting(text: str, opener: str, closer: str) -> int:
    """The deepest nesting of unescaped `opener`…`closer` pairs in `text`."""
    if opener not in text:
        return 0
    depth = deepest = 0
    for m in re.finditer(rf"\\.|[{re.escape(opener + closer)}]", text, re.S):
        if m.group(0) == opener:
            depth += 1
            deepest = max(deepest, depth)
        elif m.group(0) == closer:
            depth = max(depth - 1, 0)
    return deepest


def _character_problems(value: str) -> list[str]:
    """Control, bidirectional and invisible characters, each named once."""
    found = dict.fromkeys(m.group(0) for m in _FORBIDDEN_CHAR.finditer(value))
    problems = [
        f"the control character U+{ord(c):04X} is not allowed in a translation"
        + (DIRECTION if c >= "\u2000" else "")
        for c in found
    ]
    # Most values are printable throughout, without a blank letter or mark:
    # two passes in C say so.
    if _INVISIBLE.search(value) or not _printable(value):
        invisible = dict.fromkeys(c for c in value if c not in found and _invisible(c))
        problems += [
            f"the invisible character U+{ord(c):04X} "
            f"{unicodedata.name(c, '(unnamed)')} is not allowed in a translation"
            + (DIRECTION if c in _DIRECTION_MARK else "")
            for c in invisible
        ]
    return problems


def _printable(value: str) -> bool:
    return value.replace("\n", "").replace("\t", "").isprintable()


def _invisible(char: str) -> bool:
    return bool(_INVISIBLE.match(char)) or unicodedata.category(char) in ("Cf", "Cs")


def _placeholder_problems(key: str, value: str) -> list[str]:
    if "_^_" not in key and not any(c in value for c in _CARETS):
        return []  # no placeholder wanted, and nothing like one
    wanted = Counter(m.group(0) for m in PLACEHOLDER_RE.finditer(key))
    found = Counter(m.group(0) for m in PLACEHOLDER_RE.finditer(value))
    problems = [
        f"placeholder {p} is missing (the English has it)"
        for p in wanted
        if p not in found
    ]
    problems += [
        f"placeholder {p} is not in the English" for p in found if p not in wanted
    ]
    problems += [
        f"placeholder {p} appears {found[p]} times, the English has it "
        f"{wanted[p]} time{'s' if wanted[p] > 1 else ''}"
        for p in found
        if p in wanted and found[p] > wanted[p]
    ]
    for m in _LOOSE_PLACEHOLDER.finditer(PLACEHOLDER_RE.sub("\0", value)):
        problems.append(
            f"mangled placeholder {m.group(0)!r}: write it exactly as _^_N_^_"
        )
    return problems + _touching_problems(key, value)


# Characters that join a span next to them into something else: `` ` `` and
# `$` extend a code span or a formula's delimiter, `\` escapes it.
_JOINING = "`$\\"


def _touching(text: str) -> Counter:
    """(placeholder, side, character) for each joining character touching one."""
    found: Counter = Counter()
    for m in PLACEHOLDER_RE.finditer(text):
        before, after = text[m.start() - 1 : m.start()], text[m.end() : m.end() + 1]
        for side, char in (("before", before), ("after", after)):
            if char and char in _JOINING:
                found[m.group(0), side, char] += 1
    return found


def _touching_problems(key: str, value: str) -> list[str]:
    """A placeholder written right against `` ` ``, `$` or `\\` would not show
    as its span (`$_^_0_^_` opens display math); the English's own are kept."""
    if not any(c in value for c in _JOINING):
        return []
    extra = _touching(value) - _touching(key)
    return [
        f"placeholder {p} has {char!r} right {side} it: the span would not show "
        "as written; put a space between them"
        for p, side, char in extra
    ]


# A placeholder, even a mangled one, has one of these (see _LOOSE_PLACEHOLDER).
_CARETS = ("^", "＾", "%5")
_FORMATTER = string.Formatter()


def _fields(text: str) -> list[tuple[str, str, str]] | str:
    """The replacement fields of `text` as `str.format` reads them (name,
    format spec, conversion), or why it cannot read them."""
    try:
        return [
            (name, spec or "", conversion or "")
            for _, name, spec, conversion in _FORMATTER.parse(text)
            if name is not None
        ]
    except ValueError as error:
        return str(error)


def _field(field: tuple[str, str, str]) -> str:
    name, spec, conversion = field
    return (
        "{"
        + name
        + (f"!{conversion}" if conversion else "")
        + (f":{spec}" if spec else "")
        + "}"
    )


def _field_problems(key: str, value: str) -> list[str]:
    """Replacement fields other than the English's: a figure word is formatted
    (`tr("step {step}").format(step=...)`), so a field of its own could read
    attributes of what the example formats (`{step.__class__}`), pad it to
    gigabytes (`{step:>999999999}`) or stop the example (`{x}`, `{0}`, `{`).

    The value must use each of the English's fields, as the English writes
    it (name, format spec and conversion), and no other; a field may appear
    more than once (the length limit bounds what that can add). An English
    text that `str.format` cannot read is not formatted by anyone, and its
    value is not checked here; a literal brace is written `{{` or `}}`.
    """
    if not any(c in text for text in (key, value) for c in "{}"):
        return []
    english = _fields(key)
    if isinstance(english, str):
        return []
    found = _fields(value)
    if isinstance(found, str):
        return [
            f"a brace that str.format cannot read ({found}): write a literal "
            "'{' or '}' twice, '{{' or '}}'"
        ]
    allowed = set(english)
    by_name = {name: _field((name, spec, conv)) for name, spec, conv in english}
    listed = ", ".join(dict.fromkeys(_field(f) for f in english))
    problems = []
    for field in dict.fromkeys(f for f in found if f not in allowed):
        name, text = field[0], _field(field)
        base = re.split(r"[.\[]", name, maxsplit=1)[0]
        if name in by_name:
            problem = (
                f"has a format spec or conversion the English does not have: "
                f"write {by_name[name]} as the English does"
            )
        elif base in by_name:
            problem = (
                f"reads an attribute or index of {by_name[base]}: write "
                f"{by_name[base]} as the English does"
            )
        elif not listed:
            problem = (
                "is not in the English, which has none: write a literal brace "
                "twice, '{{' or '}}'"
            )
        elif not name or name.isdigit():
            problem = f"is positional: the English's fields are {listed}"
        else:
            problem = f"is not in the English: its fields are {listed}"
        problems.append(f"the replacement field {text} {problem}")
    present = {name for name, _, _ in found}
    problems += [
        f"the replacement field {_field(f)} is missing (the English has it)"
        for f in dict.fromkeys(english)
        if f[0] not in present
    ]
    return problems


def _injection_problems(bare_value: str) -> list[str]:
    if not any(c in bare_value for c in "<=:&"):
        return []  # every pattern needs one of these
    found = [
        (m.start(), name, m.group(0))
        for pattern, name in _INJECTION
        for m in pattern.finditer(bare_value)
    ]
    named = {start for start, _, _ in found}
    found += [
        (m.start(), "raw HTML", m.group(0))
        for m in _RAW_HTML.finditer(bare_value)
        if m.start() not in named
    ]
    return [
        f"{name} is not allowed in a translation: {text!r}"
        for _, name, text in sorted(found)
    ]


def _added_span_problems(value: str) -> list[str]:
    """Math, code or links typed into the value instead of using placeholders.

    (Raw HTML is already reported as injection.)
    """
    return [
        f"{_SPAN_NAMES[span.kind]} {span.text!r} is not in the English: "
        "use the placeholders"
        for span in extract(value).spans
        if span.kind in _SPAN_NAMES and not PLACEHOLDER_RE.fullmatch(span.text)
    ]


def _structure_problems(
    key: str, value: str, bare_key: str, bare_value: str
) -> list[str]:
    problems = []
    if _brackets_balanced(bare_key) and not _brackets_balanced(bare_value):
        problems.append("unbalanced link brackets: every '[' needs its ']'")
    for link in _LINK.findall(key):
        if link not in value:
            problems.append(f"link {link!r} is broken: keep ']' and '(' together")
    if _images(bare_value) > _images(bare_key):
        problems.append(
            "'![' makes a link an image (its text would be lost): write '[' as "
            "the English does"
        )
    translated = _emphasis_parity(bare_value)
    for marker, odd in _emphasis_parity(bare_key).items():
        if not odd and translated[marker]:
            problems.append(f"unbalanced emphasis: an odd number of {marker!r}")
    wanted, found = _headings(bare_key), _headings(bare_value)
    if found != wanted:
        problems.append(
            f"the headings are {found or 'none'}, the English's {wanted or 'none'}: "
            "keep each '#' heading of the English, at its level, and add none "
            "(they make the page's section list)"
        )
    return problems


# An ATX heading line (`## Title`), outside fenced code; its level.
_HEADING = re.compile(r"(?m)^ {0,3}(#{1,6})(?:[ \t]|$)")


def _headings(text: str) -> list[int]:
    """The levels of the Markdown headings of `text`, in order."""
    if "#" not in text:
        return []
    levels, fenced = [], False
    for row in text.split("\n"):
        if row.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        match = None if fenced else _HEADING.match(row)
        if match:
            levels.append(len(match.group(1)))
    return levels


# (Each has a fast path: most values hold none of the characters it reads.)
_LINK = re.compile(r"\]\(_\^_\d+_\^_\)")
_ESCAPED = re.compile(r"\\.")
_BULLET = re.compile(r"(?m)^\s*[*+-]\s+")
_SPACED_STAR = re.compile(r"\s\*+\s")
_SNAKE = re.compile(r"(?<=[A-Za-z0-9])_+(?=[A-Za-z0-9])")
_IMAGE = re.compile(r"(?<!\\)!\[")
_NO_EMPHASIS = {"**": False, "__": False, "*": False, "_": False}


def _images(text: str) -> int:
    """How many `![` (an image's start) there are, not counting `\\![`."""
    if "![" not in text:
        return 0
    return len(_IMAGE.findall(text.replace("\\\\", "")))


def _brackets_balanced(text: str) -> bool:
    if "[" not in text and "]" not in text:
        return True
    depth = 0
    for char in _ESCAPED.sub("", text):
        if char == "[":
            depth += 1
        elif char == "]":
            depth -= 1
            if depth < 0:
                return False
    return depth == 0


def _emphasis_parity(text: str) -> dict[str, bool]:
    """Whether each emphasis marker occurs an odd number of times."""
    if "*" not in text and "_" not in text:
        return dict(_NO_EMPHASIS)
    text = _ESCAPED.sub("", text)
    text = _BULLET.sub("", text)  # bullet list markers
    text = _SPACED_STAR.sub(" ", text)  # `a * b` is not emphasis
    text = _SNAKE.sub("", text)  # snake_case
    strong = {m: text.count(m) for m in ("**", "__")}
    for marker in strong:
        text = text.replace(marker, "")
    parity = {m: n % 2 == 1 for m, n in strong.items()}
    parity |= {m: text.count(m) % 2 == 1 for m in ("*", "_")}
    return parity


def _term_problems(
    bare_key: str, bare_value: str, glossary: tuple[Term, ...]
) -> list[str]:
    problems = []
    folded = bare_value.casefold()
    for term in glossary:
        if term.pattern.search(bare_key) and term.render.casefold() not in folded:
            problems.append(f"glossary: {term.en!r} must be rendered {term.render!r}")
        problems += [
            f"glossary: {bad!r} is wrong for {term.en!r}, write {term.render!r}"
            for bad in term.forbidden
            if bad in bare_value
        ]
    for name in sorted(set(_IDENTIFIER.findall(bare_key))):
        if name not in bare_value:
            problems.append(f"the name {name!r} must stay as written in the English")
    return problems


# --- entries that are not prose: the page head, attributes, figures ---------

# What would end an HTML attribute or start markup where a title, summary,
# alt text or figure word is written: a straight double quote, angle
# brackets and character references (`&quot;`, `&#34;`).
_ATTRIBUTE_UNSAFE = re.compile(r'["<>]|&(?:#[0-9]+;?|#[xX][0-9a-fA-F]+;?|[A-Za-z]\w*;)')


def attribute_problems(key: str, value: str) -> list[str]:
    """The defects of `value` as a title, summary, alt text or figure word.

    These reach an attribute or the page head (`<meta name="description"
    content="…">`, `alt="…"`), where the renderer escapes them; the check
    refuses what escaping would be needed for: `"` always (Japanese and
    Chinese quote with 「」 or “”), `<`, `>` and character references unless
    the English has the same.
    """
    found = dict.fromkeys(m.group(0) for m in _ATTRIBUTE_UNSAFE.finditer(value))
    return [
        f"{text!r} is not allowed in a title, summary, alt text or figure word "
        "(it would end an HTML attribute or start markup): "
        + ("quote with 「」 or “”" if text == '"' else "write it another way")
        for text in found
        if text == '"' or text not in key
    ]


# matplotlib draws a text with an even number of unescaped `$` as mathtext,
# whose parser recurses once per level of `{…}` or `\left…\right`: past
# about 50 levels it overflows the stack, and a long formula takes seconds.
MAX_MATH_DEPTH = 10
MAX_MATH_LENGTH = 100  # characters of math in one figure word
_MATH_TOKEN = re.compile(r"\\(?:left|right)(?![A-Za-z])|\\.|[{}]", re.S)


def figure_problems(key: str, value: str) -> list[str]:
    """The defects of `value` as a figure word that matplotlib draws.

    Its math (a value with an even number of `$`) must be at most
    MAX_MATH_DEPTH levels deep and MAX_MATH_LENGTH characters long, parse
    with matplotlib's own mathtext parser, and have a glyph for every
    character in matplotlib's math font (which draws the whole text of a
    value with math, words included).
    """
    if not _is_math_text(value):
        return []
    math = re.split(r"(?<!\\)\$", value)[1::2]
    depth = max(_math_depth(part) for part in math)
    if depth > MAX_MATH_DEPTH:
        return [
            f"math nested {depth} deep ({{…}} or \\left…\\right): at most "
            f"{MAX_MATH_DEPTH} levels are allowed in a figure"
        ]
    length = sum(len(part) for part in math)
    if length > MAX_MATH_LENGTH:
        return [
            f"{length} characters of math: at most {MAX_MATH_LENGTH} are allowed "
            "in a figure word"
        ]
    return list(_mathtext_problems(value))


def _is_math_text(text: str) -> bool:
    """matplotlib's own rule (`cbook.is_math_text`)."""
    dollars = text.count("$") - text.count(r"\$")
    return dollars > 0 and dollars % 2 == 0


def _math_depth(math: str) -> int:
    depth = deepest = 0
    for m in _MATH_TOKEN.finditer(math):
        token = m.group(0)
        if token in ("{", r"\left"):
            depth += 1
            deepest = max(deepest, depth)
        elif token in ("}", r"\right"):
            depth -= 1
    return deepest


class _GlyphWarnings(logging.Handler):
    """Collects mathtext's 'does not have a glyph for' warnings."""

    def __init__(self):
        super().__init__(logging.WARNING)
        self.missing: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        found = re.search(r"glyph for .*\[U\+([0-9a-fA-F]+)\]", record.getMessage())
        char = chr(int(found.group(1), 16)) if found else None
        if char and char not in self.missing:
            self.missing.append(char)


# The answer for a value is kept: matplotlib caches what a parser parsed, and
# warns about missing glyphs only the first time.
@functools.lru_cache(maxsize=1024)
def _mathtext_problems(value: str) -> tuple[str, ...]:
    from matplotlib.mathtext import MathTextParser

    logger = logging.getLogger("matplotlib.mathtext")
    glyphs = _GlyphWarnings()
    logger.addHandler(glyphs)
    propagate, logger.propagate = logger.propagate, False
    try:
        MathTextParser("path").parse(value)  # a new one: its cache is empty
    except RecursionError:
        return ("matplotlib cannot draw this math: it is nested too deeply",)
    except Exception as error:  # whatever the parser raises, the figure fails
        lines = [line.strip() for line in str(error).split("\n") if line.strip()]
        reason = re.sub(r"^\w+Exception: ", "", lines[-1] if lines else repr(error))
        return (f"matplotlib cannot draw this math: {reason}",)
    finally:
        logger.removeHandler(glyphs)
        logger.propagate = propagate
    if not glyphs.missing:
        return ()
    return (
        f"matplotlib's math font has no glyph for {_listed(glyphs.missing)}: a "
        "figure word with math is drawn in that font throughout; keep the math "
        "and these characters apart",
    )


def _listed(chars: list[str], most: int = 8) -> str:
    """`'ス' (U+30B9), …` for a message, at most `most` of them."""
    named = [f"{c!r} (U+{ord(c):04X})" for c in chars[:most]]
    more = f" and {len(chars) - most} more" if len(chars) > most else ""
    return ", ".join(named) + more


def glyph_problems(value: str, lang: str) -> list[str]:
    """Characters of a figure word that none of `lang`'s figure fonts has.

    The fonts are the build's (`literate.execute.FONTS`; DejaVu Sans for a
    language not listed); one that is not installed here is not asked (see
    `missing_fonts`). Whitespace is not drawn; a value with math is drawn in
    the math font (see `figure_problems`).
    """
    if _is_math_text(value):
        return []
    fonts = [font for font in _fonts(lang).values() if font is not None]
    missing = dict.fromkeys(
        c
        for c in value
        if not c.isspace() and not any(font.get_char_index(ord(c)) for font in fonts)
    )
    if not missing:
        return []
    return [
        f"the fonts of {lang!r} figures ({' and '.join(_fonts(lang))}) have no "
        f"glyph for {_listed(list(missing))}: the figure would show boxes"
    ]


def missing_fonts(lang: str) -> list[str]:
    """The figure fonts of `lang` that are not installed here."""
    return [family for family, font in _fonts(lang).items() if font is None]


@functools.cache
def _fonts(lang: str) -> dict:
    """Each figure font of `lang` (family -> FT2Font), None if not installed."""
    from matplotlib import font_manager

    from literate.execute import FONTS

    fonts = {}
    for family in FONTS.get(lang, ["DejaVu Sans"]):
        try:
            path = font_manager.findfont(
                font_manager.FontProperties(family=family), fallback_to_default=False
            )
        except ValueError:
            fonts[family] = None
        else:
            fonts[family] = font_manager.get_font(path)
    return fonts


# --- comments of the code column -------------------------------------------

# What a comment writes as code, kept as written in its translation: a name in
# backticks, a string in quotes, a shape in brackets (`[B, S, D]`, `[2 x 3, 6]`;
# not a list of words such as `[noun, action]`, which is translated).
_KEPT_IN_COMMENT = re.compile(r'`[^`\n]*`|"[^"\n]*"|\[[^\[\]\n]*\]')
_WORDS_IN_BRACKETS = re.compile(r"\[.*[a-z]{3}.*\]")


def comment_problems(
    key: str, value: str, glossary: tuple[Term, ...] = ()
) -> list[str]:
    """The defects of `value` as the translation of the code comment `key`.

    A comment's translation is plain text in the code column (escaped there,
    never markup) on one line. What the English writes as code (`[B, S, D]`,
    `` `out` ``, `""`) stays as written, as do its class and function names;
    the glossary applies; no control, invisible or direction character, no
    markup the English does not have.
    """
    problems = _size_problems(key, value)
    if problems:
        return problems
    problems = _character_problems(value)
    if "\n" in value or "\t" in value:
        problems.append("a code comment is one line: no line break or tab")
    found = Counter(_KEPT_IN_COMMENT.findall(value))
    for kept, times in Counter(_KEPT_IN_COMMENT.findall(key)).items():
        if found[kept] < times and not _WORDS_IN_BRACKETS.fullmatch(kept):
            problems.append(f"{kept!r} must stay as written in the English")
    for pattern, name in (*_INJECTION, (_RAW_HTML, "raw HTML")):
        problems += [
            f"{name} is not allowed in a translation: {m.group(0)!r}"
            for m in pattern.finditer(value)
            if m.group(0) not in key
        ]
    problems += _term_problems(key, value, glossary)
    if value.strip() == key.strip() and len(re.findall(r"[A-Za-z]{2,}", key)) > 2:
        problems.append("the English is copied unchanged: translate it or leave it ''")
    return problems


def entry_problems(key: str, value: str, keys, glossary: tuple[Term, ...] = ()):
    """The defects of one table entry, by what its key is in its source.

    `keys` is the source's `SourceKeys`. Prose, the title and the summary
    are checked by `check_entry`, a code comment by `comment_problems` (a
    key that is only a comment is not prose); what reaches an attribute
    (title, summary, alt text, figure word) also by `attribute_problems`,
    and what a figure draws (alt texts too: the build drops them alike) by
    `figure_problems`. A key of several kinds passes the checks of each.
    """
    problems = []
    if key in keys.comments:
        problems += comment_problems(key, value, glossary)
    if key not in keys.comment_only:
        problems += check_entry(key, value, glossary)
    word, alt = key in keys.words, key in keys.alts
    if word or alt or key in keys.head:
        problems += attribute_problems(key, value)
    if word or alt:
        problems += figure_problems(key, value)
    return list(dict.fromkeys(problems))
