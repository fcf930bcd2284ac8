"""A language's glossary: the fixed rendering of each English term.

`translations/<lang>/glossary.json` maps an English term to how that language
writes it, what it must never be written as, and a note for translators; the
check (`literate.check`) holds every table entry to it, and the search keeps
its terms whole.
"""

from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass
from pathlib import Path

from literate.tables import TableError, parse_object, read_text, short


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
