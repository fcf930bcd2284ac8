"""One source in one language: its table read, and every entry checked, once.

The pipeline makes a `Translation` for each (source, language) a build asks
for and hands it to every stage that needs it: execute (the `tr` words the
examples draw, their alt texts), translate (prose, title, summary, code
comments) and the notebook (the words its first cell gives `tr`). No stage
reads the table again or checks an entry again.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from literate.check import entry_problems
from literate.glossary import Term
from literate.keys import SourceKeys
from literate.tables import load_table


@dataclass(frozen=True)
class Translation:
    """A source's table in one language, checked by what each key is."""

    lang: str
    keys: SourceKeys  # the source's keys today, by kind
    table: Mapping[str, str]  # every entry as written (stale ones too)
    shown: Mapping[str, str]  # the translated entries that pass their checks
    glossary: tuple[Term, ...] = ()

    def words(self, wanted) -> dict[str, str]:
        """The shown translations of the `wanted` keys (an example's words)."""
        return {w: self.shown[w] for w in wanted if w in self.shown}


def load_translation(
    path: Path, lang: str, keys: SourceKeys, glossary: tuple[Term, ...] = ()
) -> Translation:
    """The table at `path` ({} when there is none), each translated entry
    checked once by `entry_problems`; what fails is never shown (the page
    shows its English)."""
    table = load_table(path) if path.exists() else {}
    shown = {
        k: v
        for k, v in table.items()
        if v.strip() and not entry_problems(k, v, keys, glossary)
    }
    return Translation(lang, keys, table, shown, glossary)
