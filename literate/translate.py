"""The translate stage: an English Page and a table in, a Page in `lang` out.

Each section is looked up by its key. A translation that passes the check
replaces the prose, with the English spans (math, code, links, HTML) filled
back into its placeholders. Everything else shows the English, marked:

    translated    a current translation that passes `check_entry`
    untranslated  no translation, an empty one, or one the check rejects
    stale         no current translation, but the table holds one for an
                  older English text much like this one
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import replace

from literate.model import Page, Section
from literate.spans import extract, fill, key, normalize
from literate.translations.check import Term, check_entry

# difflib ratio above which an old key counts as an earlier version of a new
# one (the ratio `difflib.get_close_matches` uses by default).
SIMILARITY = 0.6


def translate_page(
    page: Page, lang: str, table: dict[str, str], glossary: tuple[Term, ...] = ()
) -> Page:
    """`page` in `lang`: each section translated, untranslated or stale.

    The title and summary are translated too when the table has them (they
    have no mark: an untranslated title simply stays English).
    """
    current = {key(s.docs) for s in page.sections}
    current |= {key(page.title), key(page.summary)}
    orphans = [k for k, v in table.items() if k not in current and v.strip()]
    sections = tuple(
        _translate_section(section, table, orphans, glossary)
        for section in page.sections
    )
    return replace(
        page,
        title=_translate_text(page.title, table, glossary) or page.title,
        summary=_translate_text(page.summary, table, glossary) or page.summary,
        sections=sections,
        lang=lang,
    )


def _translate_text(english: str, table: dict[str, str], glossary) -> str | None:
    """The checked translation of `english` with its spans filled, or None."""
    if not english.strip():
        return None
    text_key = key(english)
    value = table.get(text_key, "")
    if not value.strip() or check_entry(text_key, value, glossary):
        return None
    return fill(value, extract(normalize(english)).spans)


def _translate_section(
    section: Section,
    table: dict[str, str],
    orphans: list[str],
    glossary: tuple[Term, ...],
) -> Section:
    if not section.docs.strip():
        return section  # no prose: nothing to translate
    english = section.docs
    docs = _translate_text(english, table, glossary)
    if docs is not None:
        return replace(section, docs=docs, english=english, state="translated")
    state = "stale" if most_similar(key(english), orphans) else "untranslated"
    return replace(section, english=english, state=state)


def most_similar(target: str, candidates: Iterable[str]) -> tuple[str, float] | None:
    """The candidate most like `target` above SIMILARITY, with its ratio.

    `quick_ratio` is an upper bound of `ratio` and much cheaper, so the exact
    ratio is computed in decreasing order of the bound, and only while the
    bound can still beat the best ratio found.
    """
    matcher = difflib.SequenceMatcher(autojunk=False)
    matcher.set_seq2(target)
    bounds = []
    for candidate in candidates:
        matcher.set_seq1(candidate)
        if matcher.real_quick_ratio() >= SIMILARITY:
            bounds.append((matcher.quick_ratio(), candidate))
    best: tuple[str, float] | None = None
    for bound, candidate in sorted(bounds, reverse=True):
        if bound < SIMILARITY or (best is not None and bound <= best[1]):
            break
        matcher.set_seq1(candidate)
        ratio = matcher.ratio()
        if ratio >= SIMILARITY and (best is None or ratio > best[1]):
            best = (candidate, ratio)
    return best
