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
import functools
import heapq
import itertools
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import replace

from literate.check import check_entry, comment_problems
from literate.comments import CodeComment, section_comments
from literate.glossary import Term
from literate.model import Page, Section
from literate.normalize import key, normalize
from literate.spans import extract, fill

# difflib ratio above which an old key counts as an earlier version of a new
# one (the ratio `difflib.get_close_matches` uses by default).
SIMILARITY = 0.6
# Old keys looked at per table, and exact ratios computed per new key: a table
# of thousands of stale keys costs the build what one of 256 does.
MAX_CANDIDATES = 256
EXACT = 4


def translate_page(
    page: Page,
    lang: str,
    table: Mapping[str, str],
    glossary: tuple[Term, ...] = (),
    *,
    shown: Mapping[str, str] | None = None,
    known: Iterable[str] = (),
) -> Page:
    """`page` in `lang`: each section translated, untranslated or stale.

    The title and summary are translated too when the table has them (they
    have no mark: an untranslated title simply stays English), and so are the
    prose comments of the code column (`Page.comments`; an untranslated one
    stays English, unmarked, as code does).

    `shown`: the entries of `table` already checked (a `Translation`'s),
    used as they are; without it each entry a page uses is checked here.
    `known`: the source's other current keys (its figures' words), which
    are not stale.
    """
    comments = section_comments(page.sections)
    current = {key(s.docs) for s in page.sections}
    current |= {key(page.title), key(page.summary), *known}
    current |= {comment.text for comment in comments}
    orphans = [k for k, v in table.items() if k not in current and v.strip()]
    if shown is None:
        shown = _Checked(table, glossary)
    sections = tuple(
        _translate_section(section, shown, orphans) for section in page.sections
    )
    return replace(
        page,
        title=_translate_text(page.title, shown) or page.title,
        summary=_translate_text(page.summary, shown) or page.summary,
        sections=sections,
        lang=lang,
        comments=tuple(
            (comment.number, _as_comment(comment, value))
            for comment in comments
            if (value := _comment_value(comment, shown, table, glossary))
        ),
    )


class _Checked(Mapping):
    """A table seen through the check: an entry is there if it passes."""

    def __init__(self, table: Mapping[str, str], glossary: tuple[Term, ...]):
        self.table, self.glossary = table, glossary

    def __getitem__(self, text_key: str) -> str:
        value = self.table[text_key]
        if not value.strip() or check_entry(text_key, value, self.glossary):
            raise KeyError(text_key)
        return value

    def __iter__(self):
        return iter(self.table)

    def __len__(self) -> int:
        return len(self.table)


def _comment_value(comment: CodeComment, shown, table, glossary) -> str:
    """The translation of a code comment that may be shown, or ""."""
    if not isinstance(shown, _Checked):
        return shown.get(comment.text, "").strip()
    value = table.get(comment.text, "").strip()
    return "" if comment_problems(comment.text, value, glossary) else value


def _as_comment(comment: CodeComment, value: str) -> str:
    """The comment as shown: the `#` and its spaces as written, then `value`."""
    marker = comment.token[: len(comment.token) - len(comment.token.lstrip("# "))]
    return marker + value


def _translate_text(english: str, shown: Mapping[str, str]) -> str | None:
    """The translation of `english` with its spans filled, or None."""
    if not english.strip():
        return None
    value = shown.get(key(english), "")
    if not value.strip():
        return None
    return fill(value, extract(normalize(english)).spans)


def _translate_section(
    section: Section, shown: Mapping[str, str], orphans: list[str]
) -> Section:
    if not section.docs.strip():
        return section  # no prose: nothing to translate
    english = section.docs
    docs = _translate_text(english, shown)
    if docs is not None:
        return replace(section, docs=docs, english=english, state="translated")
    state = "stale" if most_similar(key(english), orphans) else "untranslated"
    return replace(section, english=english, state=state)


def most_similar(target: str, candidates: Iterable[str]) -> tuple[str, float] | None:
    """The candidate most like `target` above SIMILARITY, with its ratio.

    Bounded, whatever a table holds: only the first MAX_CANDIDATES candidates
    are looked at; each is bounded by the length ratio (`real_quick_ratio`,
    free) and by the characters the two share (`quick_ratio`, computed from
    letter counts made once per candidate), and the exact ratio, which costs
    the product of the lengths, is computed for the EXACT best bounds only.
    """
    pool = _counts(tuple(itertools.islice(candidates, MAX_CANDIDATES)))
    wanted = Counter(target)
    size = len(target)
    bounds = []
    for candidate, counts in pool:
        total = size + len(candidate)
        if not total or 2 * min(size, len(candidate)) / total < SIMILARITY:
            continue
        bound = 2 * (counts & wanted).total() / total
        if bound >= SIMILARITY:
            bounds.append((bound, candidate))
    matcher = difflib.SequenceMatcher(autojunk=False)
    matcher.set_seq2(target)
    best: tuple[str, float] | None = None
    for bound, candidate in heapq.nlargest(EXACT, bounds):
        if best is not None and bound <= best[1]:
            break
        matcher.set_seq1(candidate)
        ratio = matcher.ratio()
        if ratio >= SIMILARITY and (best is None or ratio > best[1]):
            best = (candidate, ratio)
    return best


@functools.lru_cache(maxsize=64)
def _counts(candidates: tuple[str, ...]) -> tuple[tuple[str, Counter], ...]:
    """Each candidate with its letter counts (a page asks once per section)."""
    return tuple((c, Counter(c)) for c in candidates)
