"""Read a file that must be UTF-8; say where it is not, by line and byte.

Sources and translation tables are read through `read_utf8`, so a stray
Latin-1 byte or a table saved as UTF-16 gives one line naming the file, the
line and the byte offset, instead of Python's `UnicodeDecodeError`.
"""

from __future__ import annotations

import codecs
from pathlib import Path


class NotUTF8(ValueError):
    """A file holds bytes that are not UTF-8."""

    def __init__(self, name: str, data: bytes, error: UnicodeDecodeError):
        self.name = name
        self.offset = error.start
        self.line = data.count(b"\n", 0, error.start) + 1
        # 1-based, in bytes: the line cannot be decoded, so it has no characters
        self.column = error.start - (data.rfind(b"\n", 0, error.start) + 1) + 1
        if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
            self.detail = "it starts with a UTF-16 byte-order mark; save it as UTF-8"
        else:
            self.detail = (
                f"byte 0x{data[error.start]:02x} ({error.reason}); save it as UTF-8"
            )
        self.message = f"not UTF-8 (byte offset {self.offset}): {self.detail}"
        super().__init__(f"{name}:{self.line}: {self.message}")


def read_utf8(path: Path | str, name: str | None = None) -> str:
    """The text of `path`; raises NotUTF8 naming `name` (default: the path).

    Like `Path.read_text(encoding="utf-8")` otherwise: OSError if it cannot
    be read, and universal newlines.
    """
    path = Path(path)
    data = path.read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise NotUTF8(name or str(path), data, error) from None
    return text.replace("\r\n", "\n").replace("\r", "\n")
