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

import re
import string
import unicodedata
from collections import Counter

from literate.figure_check import attribute_problems, figure_problems
from literate.glossary import Term
from literate.markdown_check import structure_problems
from literate.spans import PLACEHOLDER_RE, extract

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
    return _problems(key, value, glossary)


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
    problems += structure_problems(key, value, bare_key, bare_value)
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
        # A plural (LayerNorms) may be the name itself in a language without
        # plurals (LayerNorm の位置).
        singular = name[:-1] if name.endswith("s") and name[0].isupper() else name
        if name not in bare_value and singular not in bare_value:
            problems.append(f"the name {name!r} must stay as written in the English")
    return problems


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
