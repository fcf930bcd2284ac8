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
import re
import tempfile
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from literate.textfile import FileRefused, inside, read_utf8

_WHITESPACE = re.compile(r"[ \t\n\r]*")
# Half of a UTF-16 surrogate pair: JSON's `\ud800` decodes to one, which no
# file or terminal can hold (writing it raises UnicodeEncodeError).
_SURROGATE = re.compile("[\ud800-\udfff]")
# The folder that holds the tables; the project is the folder above it.
TRANSLATIONS = "translations"


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

    Raises TableError with the parser's line and column on invalid JSON, and
    at the key's line for a value Python cannot read (nested past the
    recursion limit, a number of thousands of digits) or a string holding
    half of a surrogate pair. Linear in the length of the text.
    """
    decoder = json.JSONDecoder()
    entries: list[Entry] = []
    line, counted = 1, 0  # the line at offset `counted`
    try:
        pos = _skip(text, 0)
        _expect(text, pos, "{")
        pos = _skip(text, pos + 1)
        if text.startswith("}", pos):
            return _end(text, pos + 1, entries)
        while True:
            _expect(text, pos, '"')
            key, pos_after = json.decoder.scanstring(text, pos + 1)
            line, counted = line + text.count("\n", counted, pos), pos
            pos = _skip(text, pos_after)
            _expect(text, pos, ":")
            try:
                value, pos = decoder.raw_decode(text, _skip(text, pos + 1))
            except json.JSONDecodeError:
                raise
            except (RecursionError, ValueError) as error:
                raise TableError(
                    path, line, 1, f"key {short(key)}: {_unreadable(error)}"
                ) from None
            if _has_surrogate(key) or _has_surrogate(value):
                raise TableError(
                    path,
                    line,
                    1,
                    f"key {short(key)}: a \\uD800-\\uDFFF escape that is half of "
                    "a surrogate pair, not a character: write the character itself",
                )
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


def _unreadable(error: Exception) -> str:
    """Why Python's JSON reader gave up on a value that is valid JSON."""
    if isinstance(error, RecursionError):
        return (
            "the value is nested too deeply to be read (arrays or objects "
            "inside one another): expected a string"
        )
    return "the value is a number too long to be read: expected a string"


def _has_surrogate(value: Any) -> bool:
    """Whether a string in `value` (a JSON value, walked without recursion)
    holds a lone surrogate."""
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            if _SURROGATE.search(item):
                return True
        elif isinstance(item, dict):
            pending += [*item.keys(), *item.values()]
        elif isinstance(item, list):
            pending += item
    return False


def _skip(text: str, pos: int) -> int:
    return _WHITESPACE.match(text, pos).end()


def _expect(text: str, pos: int, char: str) -> None:
    if not text.startswith(char, pos):
        found = repr(text[pos]) if pos < len(text) else "end of file"
        raise json.JSONDecodeError(f"expected {char!r}, found {found}", text, pos)


def _end(text: str, pos: int, entries: list[Entry]) -> list[Entry]:
    pos = _skip(text, pos)
    if pos < len(text):
        raise json.JSONDecodeError("extra data after the object", text, pos)
    return entries


def read_text(path: Path | str, root: Path | str | None = None) -> str:
    """A table's (or glossary's) text; TableError (file:line) if it cannot be.

    Refused before anything is read: a path or symlink that leads out of the
    project (`root`; by default the folder holding the path's `translations/`
    folder), anything but a regular file (`/dev/zero`, a FIFO) and a file
    over the size cap; after reading, a file that is not UTF-8.
    """
    try:
        project = root if root is not None else project_of(path)
        if project is not None:
            inside(project, Path(path).absolute(), str(path))
        return read_utf8(path)
    except FileRefused as error:
        line, column = error.line or 1, error.column or 1
        raise TableError(path, line, column, error.message) from None


def project_of(path: Path | str) -> Path | None:
    """The project a table belongs to: the folder holding its `translations/`
    folder (the nearest one), or None for a file outside any."""
    path = Path(path).absolute()
    return next((p.parent for p in path.parents if p.name == TRANSLATIONS), None)


def read_table(path: Path) -> tuple[str | None, list[Entry]]:
    """A table's text and entries with their lines; (None, []) if it is missing.

    Raises TableError when the file cannot be read (see `read_text`), is not
    JSON, or a value is not a string. A symlink whose target is missing is
    refused, not taken for a missing table.
    """
    if not os.path.lexists(path):
        return None, []
    text = read_text(path)
    entries = parse_object(text, path)
    for entry in entries:
        if not isinstance(entry.value, str):
            raise TableError(
                path,
                entry.line,
                1,
                f"key {short(entry.key)}: expected a string value, "
                f"found {type(entry.value).__name__}",
            )
    return text, entries


def read_entries(path: Path) -> list[Entry]:
    """A table's entries with their lines; a missing file has none.

    Raises TableError when the file is not UTF-8 JSON or a value is not a string.
    """
    return read_table(path)[1]


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
    """A key quoted for a message: JSON-escaped, cut to about `width` chars.

    Characters that are invisible or cannot be printed (controls, format
    characters, lone surrogates) are shown as `\\uXXXX` escapes.
    """
    quoted = json.dumps(text[: width + 1], ensure_ascii=False)
    quoted = "".join(
        f"\\u{ord(c):04x}" if unicodedata.category(c) in _UNPRINTABLE else c
        for c in quoted
    )
    if len(quoted) <= width:
        return quoted
    return quoted[: width - 2] + '…"'


# Unicode categories `short` writes as escapes: controls, format characters,
# surrogates, private use, unassigned, line and paragraph separators.
_UNPRINTABLE = {"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"}


def duplicates(entries: list[Entry]) -> list[Entry]:
    """Entries whose key already appeared earlier in the same file."""
    seen: set[str] = set()
    repeated = []
    for entry in entries:
        if entry.key in seen:
            repeated.append(entry)
        seen.add(entry.key)
    return repeated
