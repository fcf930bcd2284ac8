"""What makes a translation unusable, found before a reader ever sees it.

`check_entry(key, value, glossary)` lists the defects of one table entry; an
empty list means the translation may be shown. The same function gates the
translate stage and the `translations check` command, so a string the check
rejects is never on a page.

Defects: placeholders missing, added, duplicated or mangled; unbalanced
emphasis or link brackets; a glossary term rendered wrongly or a class or
function name not kept as written; the English copied unchanged; anything
that could put markup or script into the page (translated text is untrusted).
"""

from __future__ import annotations

import functools
import re
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

    @property
    def pattern(self) -> re.Pattern[str]:
        """The term in English prose: any case, plural, `-`/space variants."""
        words = [re.escape(w) for w in re.split(r"[-\s]+", self.en)]
        body = r"[-\s]?".join(words)
        return re.compile(rf"(?<![A-Za-z]){body}(?:s|es)?(?![A-Za-z])", re.I)


def load_glossary(path: Path | str) -> tuple[Term, ...]:
    """The terms of `translations/<lang>/glossary.json`; none if it is missing.

    The file maps an English term to {"render": …, "forbidden": […], "note": …}.
    Raises TableError (file:line) for anything else.
    """
    path = Path(path)
    if not path.exists():
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


def check_entry(key: str, value: str, glossary: tuple[Term, ...] = ()) -> list[str]:
    """The defects of translating `key` as `value`; [] when it may be shown."""
    return list(_checked(key, value, tuple(glossary)))


# A build asks about the same entry several times (the page, its figure words,
# its notebook, in each language); the answer depends only on the arguments.
@functools.lru_cache(maxsize=4096)
def _checked(key: str, value: str, glossary: tuple[Term, ...]) -> tuple[str, ...]:
    return tuple(_problems(key, value, glossary))


def _problems(key: str, value: str, glossary: tuple[Term, ...]) -> list[str]:
    problems = _size_problems(key, value)
    if problems:  # too big to read further: say only that
        return problems
    problems = _character_problems(value)
    problems += _placeholder_problems(key, value)
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
    depth = deepest = 0
    for m in re.finditer(rf"\\.|[{re.escape(opener + closer)}]", text, re.S):
        if m.group(0) == opener:
            depth += 1
            deepest = max(deepest, depth)
        elif m.group(0) == closer:
            depth = max(depth - 1, 0)
    return deepest


def _character_problems(value: str) -> list[str]:
    """Control characters and bidirectional controls, each named once."""
    found = dict.fromkeys(m.group(0) for m in _FORBIDDEN_CHAR.finditer(value))
    return [
        f"the control character U+{ord(c):04X} is not allowed in a translation"
        + (" (it changes the direction of the text)" if c >= "\u2000" else "")
        for c in found
    ]


def _placeholder_problems(key: str, value: str) -> list[str]:
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
    return problems


def _injection_problems(bare_value: str) -> list[str]:
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
    for link in re.findall(r"\]\(_\^_\d+_\^_\)", key):
        if link not in value:
            problems.append(f"link {link!r} is broken: keep ']' and '(' together")
    if _images(bare_value) > _images(bare_key):
        problems.append(
            "'![' makes a link an image (its text would be lost): write '[' as "
            "the English does"
        )
    for marker, odd in _emphasis_parity(bare_key).items():
        if not odd and _emphasis_parity(bare_value)[marker]:
            problems.append(f"unbalanced emphasis: an odd number of {marker!r}")
    return problems


def _images(text: str) -> int:
    """How many `![` (an image's start) there are, not counting `\\![`."""
    return len(re.findall(r"(?<!\\)!\[", re.sub(r"\\\\", "", text)))


def _brackets_balanced(text: str) -> bool:
    depth = 0
    for char in re.sub(r"\\.", "", text):
        depth += {"[": 1, "]": -1}.get(char, 0)
        if depth < 0:
            return False
    return depth == 0


def _emphasis_parity(text: str) -> dict[str, bool]:
    """Whether each emphasis marker occurs an odd number of times."""
    text = re.sub(r"\\.", "", text)
    text = re.sub(r"(?m)^\s*[*+-]\s+", "", text)  # bullet list markers
    text = re.sub(r"\s\*+\s", " ", text)  # `a * b` is not emphasis
    text = re.sub(r"(?<=[A-Za-z0-9])_+(?=[A-Za-z0-9])", "", text)  # snake_case
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
