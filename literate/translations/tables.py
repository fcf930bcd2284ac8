"""Translation tables on disk: read them with line numbers, write them canonically.

A table is `translations/<lang>/<source stem>.json`: one flat JSON object,
English key → translation. It is written as UTF-8 without `\\uXXXX` escapes,
keys sorted, two-space indent and a trailing newline, so that a diff shows
exactly the strings that changed. Reading keeps the line of every key, so that
every error can point at `file:line`.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from literate.textfile import FileRefused, read_utf8

_WHITESPACE = " \t\n\r"


class TableError(ValueError):
    """A table file that is not a flat JSON object of strings."""

    def __init__(self, path: Path | str, line: int, column: int, message: str):
        super().__init__(f"{path}:{line}:{column}: {message}")
        self.path = str(path)
        self.line = line
        self.column = column
        self.message = message

    def relative_to(self, root: Path) -> str:
        """The error with its path relative to `root` (when inside it)."""
        path = Path(self.path)
        if path.is_relative_to(root):
            path = path.relative_to(root)
        return f"{path.as_posix()}:{self.line}:{self.column}: {self.message}"


@dataclass(frozen=True)
class Entry:
    """One member of a JSON object, with the line its key is written on."""

    key: str
    value: Any
    line: int


def parse_object(text: str, path: Path | str) -> list[Entry]:
    """The members of a top-level JSON object, in file order, duplicates kept.

    Raises TableError with the parser's line and column on invalid JSON.
    """
    decoder = json.JSONDecoder()
    entries: list[Entry] = []
    try:
        pos = _skip(text, 0)
        _expect(text, pos, "{")
        pos = _skip(text, pos + 1)
        if text.startswith("}", pos):
            return _end(text, pos + 1, entries)
        while True:
            _expect(text, pos, '"')
            key, pos_after = json.decoder.scanstring(text, pos + 1)
            line = text.count("\n", 0, pos) + 1
            pos = _skip(text, pos_after)
            _expect(text, pos, ":")
            value, pos = decoder.raw_decode(text, _skip(text, pos + 1))
            entries.append(Entry(key, value, line))
            pos = _skip(text, pos)
            if text.startswith("}", pos):
                return _end(text, pos + 1, entries)
            _expect(text, pos, ",")
            pos = _skip(text, pos + 1)
    except json.JSONDecodeError as error:
        raise TableError(
            path, error.lineno, error.colno, f"invalid JSON: {error.msg}"
        ) from error


def _skip(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in _WHITESPACE:
        pos += 1
    return pos


def _expect(text: str, pos: int, char: str) -> None:
    if not text.startswith(char, pos):
        found = repr(text[pos]) if pos < len(text) else "end of file"
        raise json.JSONDecodeError(f"expected {char!r}, found {found}", text, pos)


def _end(text: str, pos: int, entries: list[Entry]) -> list[Entry]:
    pos = _skip(text, pos)
    if pos < len(text):
        raise json.JSONDecodeError("extra data after the object", text, pos)
    return entries


def read_text(path: Path | str) -> str:
    """A table's (or glossary's) text; TableError (file:line) if not UTF-8."""
    try:
        return read_utf8(path)
    except FileRefused as error:
        line, column = error.line or 1, error.column or 1
        raise TableError(path, line, column, error.message) from None


def read_entries(path: Path) -> list[Entry]:
    """A table's entries with their lines; a missing file has none.

    Raises TableError when the file is not UTF-8 JSON or a value is not a string.
    """
    if not path.exists():
        return []
    entries = parse_object(read_text(path), path)
    for entry in entries:
        if not isinstance(entry.value, str):
            raise TableError(
                path,
                entry.line,
                1,
                f"key {short(entry.key)}: expected a string value, "
                f"found {type(entry.value).__name__}",
            )
    return entries


def load_table(path: Path | str) -> dict[str, str]:
    """English key → translation; {} when the file does not exist yet.

    Raises TableError for anything `translations check` rejects in the file
    as a whole: not UTF-8, not JSON, a value not a string, a key twice (the
    build would otherwise use one of the two values without a word).
    """
    entries = read_entries(Path(path))
    first_line: dict[str, int] = {}
    for entry in entries:
        if entry.key in first_line:
            raise TableError(
                path,
                entry.line,
                1,
                f"key {short(entry.key)}: duplicate key (first on line "
                f"{first_line[entry.key]}); remove one of the two",
            )
        first_line[entry.key] = entry.line
    return {entry.key: entry.value for entry in entries}


def dumps_table(table: dict[str, Any]) -> str:
    """The canonical text of a table (or glossary)."""
    return json.dumps(table, ensure_ascii=False, sort_keys=True, indent=2) + "\n"


def save_table(path: Path | str, table: dict[str, Any]) -> None:
    """Write `table` canonically and atomically: a temp file renamed over `path`.

    If anything fails before the rename, the old file is left as it was.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", text=True)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(dumps_table(table))
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def short(text: str, width: int = 60) -> str:
    """A key quoted for a message: JSON-escaped, cut to about `width` chars."""
    quoted = json.dumps(text, ensure_ascii=False)
    if len(quoted) <= width:
        return quoted
    return quoted[: width - 2] + '…"'


def duplicates(entries: list[Entry]) -> list[Entry]:
    """Entries whose key already appeared earlier in the same file."""
    seen: set[str] = set()
    repeated = []
    for entry in entries:
        if entry.key in seen:
            repeated.append(entry)
        seen.add(entry.key)
    return repeated
