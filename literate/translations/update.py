"""Bring a table up to date with the English keys of its source.

Pure: entries and current keys in, the new table and what changed out. Every
current key is present afterwards (new ones empty, i.e. untranslated); every
translation already written is kept. A key whose English is gone is stale: it
is reported with the most similar current key still untranslated, so a person
can carry the old translation over. Stale keys with no translation carry
nothing and are dropped; `prune` drops the translated ones too.

The search is bounded whatever a table holds: only the first MAX_STALE stale
keys are compared, each with the MAX_CANDIDATES untranslated keys nearest to
it in length (a ratio above SIMILARITY needs lengths within a factor of
about 2.3 anyway).
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

from literate.tables import Entry
from literate.translate import MAX_CANDIDATES, most_similar

# Stale keys a table may keep (`translations check` refuses more, or more
# than the source has keys), and those `update` looks for a suggestion for.
MAX_STALE = 1000


@dataclass(frozen=True)
class StaleKey:
    """A translated key whose English no longer exists."""

    key: str
    line: int  # line of the key in the table file
    suggestion: str | None  # the most similar untranslated current key
    ratio: float  # difflib similarity of the two, 0 without a suggestion
    compared: bool = True  # False past the first MAX_STALE stale keys


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
    open_keys = sorted((k for k in current if not table[k].strip()), key=len)
    lengths = [len(k) for k in open_keys]
    stale = []
    dropped = 0
    for entry in entries:
        if entry.key in table:
            continue
        if not entry.value.strip():
            dropped += 1
            continue
        if len(stale) < MAX_STALE:
            nearest = _nearest(entry.key, open_keys, lengths)
            match = most_similar(entry.key, nearest)
            found = StaleKey(entry.key, entry.line, *(match or (None, 0.0)))
        else:
            found = StaleKey(entry.key, entry.line, None, 0.0, compared=False)
        stale.append(found)
        if prune:
            dropped += 1
        else:
            table[entry.key] = entry.value
    added = sum(1 for k in current if k not in old)
    return Update(table, added, tuple(stale), dropped)


def _nearest(target: str, keys: list[str], lengths: list[int]) -> list[str]:
    """The MAX_CANDIDATES `keys` (sorted by length) nearest `target` in length."""
    middle = bisect.bisect_left(lengths, len(target))
    low, high = middle, middle
    while high - low < MAX_CANDIDATES and (low > 0 or high < len(keys)):
        below = len(target) - lengths[low - 1] if low > 0 else None
        above = lengths[high] - len(target) if high < len(keys) else None
        if above is None or (below is not None and below <= above):
            low -= 1
        else:
            high += 1
    return keys[low:high]
