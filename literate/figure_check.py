"""What a figure draws or an attribute holds: stricter than prose.

A title, summary, alt text or figure word reaches an attribute or the page
head, where a quote or markup would end it (`attribute_problems`); what a
figure draws goes through matplotlib's mathtext (`figure_problems`) and its
fonts (`glyph_problems`).
"""

from __future__ import annotations

import functools
import logging
import re

from literate.languages import FONTS

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

    The fonts are the build's (`literate.languages.FONTS`; DejaVu Sans for a
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
