"""Read a project file safely; say what is wrong with it, by line and byte.

Sources, translation tables and glossaries are read through `read_utf8`, so:

- a stray Latin-1 byte or a table saved as UTF-16 gives one line naming the
  file, the line and the byte offset (`NotUTF8`) instead of Python's
  `UnicodeDecodeError`;
- a path that leads out of the project (`../x.py`, an absolute path, a
  symlink to a file or folder elsewhere) is refused before anything is read,
  and the refusal quotes nothing of what is there (`OutsideProject`);
- anything but a regular file (a FIFO that would block, `/dev/zero` that
  never ends, a folder) and a file over `MAX_BYTES` are refused before they
  are read (`NotReadable`);
- a leading UTF-8 byte-order mark is accepted and dropped (Python itself
  accepts one at the start of a source).

Each of these is a `FileRefused` (a ValueError) whose `str` is one line.
"""

from __future__ import annotations

import codecs
import fnmatch
import os
import stat
from pathlib import Path, PurePosixPath

# No source, table or glossary of a real project comes near this; a file over
# it is refused before it is read, so that it cannot fill memory.
MAX_BYTES = 8 * 1024 * 1024


class FileRefused(ValueError):
    """A file that cannot be used, with a one-line message naming it."""

    def __init__(self, name: str, message: str, line: int = 0, column: int = 0):
        self.name = name
        self.line = line  # 0: the file as a whole, no line in particular
        self.column = column
        self.message = message
        super().__init__(f"{name}:{line}: {message}" if line else f"{name}: {message}")


class OutsideProject(FileRefused):
    """A path (or the target of a symlink on it) outside the project root."""


class NotReadable(FileRefused):
    """Not a regular file, too large, or unreadable (permissions, vanished)."""


class NotUTF8(FileRefused):
    """A file holds bytes that are not UTF-8."""

    def __init__(self, name: str, data: bytes, error: UnicodeDecodeError):
        self.offset = error.start
        line = data.count(b"\n", 0, error.start) + 1
        # 1-based, in bytes: the line cannot be decoded, so it has no characters
        column = error.start - (data.rfind(b"\n", 0, error.start) + 1) + 1
        if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
            self.detail = "it starts with a UTF-16 byte-order mark; save it as UTF-8"
        else:
            self.detail = (
                f"byte 0x{data[error.start]:02x} ({error.reason}); save it as UTF-8"
            )
        message = f"not UTF-8 (byte offset {self.offset}): {self.detail}"
        super().__init__(name, message, line, column)


def inside(root: Path | str, path: Path | str, name: str | None = None) -> Path:
    """`path` resolved (symlinks followed), if it lies inside `root`.

    A relative `path` is taken from `root`. Raises OutsideProject naming
    `name` (default: `path` as given) otherwise; the message never says what
    the outside target is or holds.
    """
    root = Path(root).resolve()
    given = Path(path)
    resolved = (root / given).resolve()
    if not resolved.is_relative_to(root):
        raise OutsideProject(
            name or str(path),
            "leads outside the project (a path or a symlink to elsewhere): "
            "only files inside the project are read",
        )
    return resolved


def read_bytes(path: Path | str, name: str | None = None, limit: int = MAX_BYTES):
    """The bytes of a regular file of at most `limit` bytes; NotReadable else.

    The type and size are checked before the file is opened, so a FIFO never
    blocks and `/dev/zero` is never read; a file that grows while it is read
    is still cut off at `limit` + 1 bytes and refused.
    """
    name = name or str(path)
    try:
        info = os.stat(path)
    except OSError as error:
        raise NotReadable(name, f"cannot be read: {error.strerror}") from None
    if not stat.S_ISREG(info.st_mode):
        kind = "a folder" if stat.S_ISDIR(info.st_mode) else "not a regular file"
        raise NotReadable(name, f"{kind}: expected a regular file")
    if info.st_size > limit:
        raise NotReadable(name, _too_large(info.st_size, limit))
    try:
        with open(path, "rb") as file:
            data = file.read(limit + 1)
    except OSError as error:
        raise NotReadable(name, f"cannot be read: {error.strerror}") from None
    if len(data) > limit:
        raise NotReadable(name, _too_large(len(data), limit))
    return data


def _too_large(size: int, limit: int) -> str:
    return f"{size} bytes, more than the {limit} bytes a file may have here"


def read_utf8(path: Path | str, name: str | None = None, limit: int = MAX_BYTES):
    """The text of `path`; raises a FileRefused naming `name` (default: path).

    Like `Path.read_text(encoding="utf-8")` otherwise: universal newlines. A
    leading byte-order mark is dropped.
    """
    data = read_bytes(path, name, limit)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise NotUTF8(name or str(path), data, error) from None
    text = text.removeprefix("\ufeff")
    return text.replace("\r\n", "\n").replace("\r", "\n")


def project_glob(root: Path | str, pattern: str) -> list[str]:
    """The paths under `root` that the relative glob `pattern` names, sorted.

    Like `glob.glob(pattern, root_dir=root, recursive=True)` (`*`, `?`,
    `[...]` within a name, `**` for any number of folders, hidden names only
    when the pattern's part starts with `.`), except that a folder is entered
    only if it resolves inside `root`: a symlinked folder leading elsewhere
    raises OutsideProject naming it before anything under it is listed (glob
    would walk all of its target first: a link to `/usr` takes minutes).
    A folder reached twice through links inside the project is walked once.
    """
    root = Path(root).resolve()
    inside(root, pattern)  # `../*.py`, `/usr/**`: refused before any listing
    found: dict[str, None] = {}
    walked: set[tuple[Path | None, int]] = set()  # (folder, parts left)

    def enter(folder: Path, name: str) -> Path | None:
        """`folder` resolved if it is a folder to look into, else None."""
        if not folder.is_dir():
            return None
        return inside(root, folder, name)

    def names(folder: Path, part: str) -> list[str]:
        try:
            entries = sorted(os.listdir(folder))
        except OSError:
            return []
        hidden = part.startswith(".")
        return [n for n in entries if hidden or not n.startswith(".")]

    def walk(folder: Path, rel: str, parts: tuple[str, ...]) -> None:
        if not parts:
            if rel:
                found[rel] = None
            return
        part, rest = parts[0], parts[1:]
        if part == "**":
            real = enter(folder, rel or ".")
            if (real, len(parts)) in walked:
                return
            walk(folder, rel, rest)  # no folder at all
            if real is None:
                return
            walked.add((real, len(parts)))
            for name in names(folder, ""):
                sub = f"{rel}/{name}" if rel else name
                if enter(folder / name, sub) is not None:
                    walk(folder / name, sub, parts)
                elif not rest:
                    found[sub] = None
            return
        if not any(c in part for c in "*?["):
            candidates = [part] if os.path.lexists(folder / part) else []
        else:
            candidates = fnmatch.filter(names(folder, part), part)
        for name in candidates:
            sub = f"{rel}/{name}" if rel else name
            if not rest or enter(folder / name, sub) is not None:
                walk(folder / name, sub, rest)

    walk(root, "", PurePosixPath(pattern).parts)
    if pattern.endswith("/"):  # as glob: folders only
        return sorted(p for p in found if (root / p).is_dir())
    return sorted(found)
