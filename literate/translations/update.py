"""Bring a table up to date with the English keys of its source.

Pure: entries and current keys in, the new table and what changed out. Every
current key is present afterwards (new ones empty, i.e. untranslated); every
translation already written is kept. A key whose English is gone is stale: it
is reported with the most similar current key still untranslated, so a person
can carry the old translation over. Stale keys with no translation carry
nothing and are dropped; `prune` drops the translated ones too.
"""

from __future__ import annotations

from dataclasses import dataclass

from literate.translate import most_similar
from literate.translations.tables import Entry


@dataclass(frozen=True)
class StaleKey:
    """A translated key whose English no longer exists."""

    key: str
    line: int  # line of the key in the table file
    suggestion: str | None  # the most similar untranslated current key
    ratio: float  # difflib similarity of the two, 0 without a suggestion


@dataclass(frozen=True)
class Update:
    table: dict[str, str]
    added: int  # current keys that were missing
    stale: tuple[StaleKey, ...]  # translated stale keys (kept unless pruned)
    dropped: int  # stale keys removed


def update_table(
    entries: list[Entry], current: list[str], prune: bool = False
) -> Update:
    """The table for `current` keys, given a file's `entries` (unique keys)."""
    old = {entry.key: entry.value for entry in entries}
    table = {k: old.get(k, "") for k in current}
    open_keys = [k for k in current if not table[k].strip()]
    stale = []
    dropped = 0
    for entry in entries:
        if entry.key in table:
            continue
        if not entry.value.strip():
            dropped += 1
            continue
        match = most_similar(entry.key, open_keys)
        stale.append(
            StaleKey(entry.key, entry.line, *(match if match else (None, 0.0)))
        )
        if prune:
            dropped += 1
        else:
            table[entry.key] = entry.value
    added = sum(1 for k in current if k not in old)
    return Update(table, added, tuple(stale), dropped)
