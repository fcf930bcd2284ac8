"""Import labml's translation cache (`translate_cache/**/<stem>.<lang>.json`).

labml (annotated_deep_learning_paper_implementations) keeps one flat JSON
object per source and language, next to its sources' tree: the source
`labml_nn/transformers/mha.py` has `translate_cache/transformers/mha.ja.json`.
Each key is a section's prose rendered to HTML, with its math, inline code and
images replaced by `_^_N_^_` inside `<span translate=no>`; link targets stay
as `href`s. The title and the summary are plain text. Long docstrings are
sometimes split, one key per top-level block (a heading, a paragraph, a list).

`import_tables` maps each labml entry onto our key for the same source (the
section's Markdown with our placeholders, see `literate.spans`) and converts
its value from HTML back to Markdown with our placeholders:

1. Pairing: both keys are reduced to a skeleton, their words with one marker
   for each formula, code span or image, markup and link targets left out.
   Equal skeletons pair; a key with no partner is matched block by block
   against labml's split keys.
2. Converting: labml's placeholders are renumbered to ours by their order in
   the pair's skeleton, `<a href>` gets our placeholder for the same target,
   `<strong>`/`<em>`/`<code>` become `**`/`*`/backticks, headings, lists and
   paragraphs become Markdown blocks.
3. Classifying: a value converted as it was is *mapped*; one that needed a
   mechanical fix is *repaired* (the fix named); one that cannot be converted,
   whose block structure differs from labml's own English, or that
   `check_entry` rejects is *refused* with the reason and stays untranslated;
   a key with no labml entry is *no entry*.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from literate.translations.labml_convert import (
    MARK,
    ConvertError,
    Labml,
    Ours,
    blocks,
    convert,
    pieces,
    read_labml,
    read_ours,
)

# A labml table's name: `<stem>.<lang>.json`.
TABLE_SUFFIX = ".{lang}.json"


def labml_table(folder: Path, source: str, base: str, lang: str) -> Path:
    """Where labml keeps `source`'s table for `lang`: the path below `base`,
    `.py` replaced by `.<lang>.json`, under `folder`."""
    path = PurePosixPath(source)
    if base and path.is_relative_to(base):
        path = path.relative_to(base)
    return folder / path.with_suffix(TABLE_SUFFIX.format(lang=lang))


# --- pairing and importing one table ---------------------------------------------


@dataclass(frozen=True)
class LabmlEntry:
    key: str
    value: str
    line: int
    read: Labml


@dataclass(frozen=True)
class Result:
    """What became of one of our keys."""

    key: str
    status: str  # "mapped" | "repaired" | "refused" | "no entry" | "kept"
    value: str = ""  # the converted translation (mapped or repaired)
    detail: str = ""  # the repairs, or why it was refused
    line: int = 0  # the labml entry's line (0: none)


STATUSES = ("mapped", "repaired", "refused", "no entry", "kept")


def read_entries(path: Path, folder: Path) -> list[LabmlEntry]:
    """A labml table's entries with lines; TableError (file:line) if it is
    not a flat JSON object of strings."""
    from literate.tables import TableError, parse_object, read_text

    text = read_text(path, root=folder)
    entries = []
    for entry in parse_object(text, path):
        if not isinstance(entry.value, str):
            raise TableError(
                path, entry.line, 1,
                f"key {_short(entry.key)}: expected a string value, "
                f"found {type(entry.value).__name__}",
            )  # fmt: skip
        read = read_labml(entry.key)
        entries.append(LabmlEntry(entry.key, entry.value, entry.line, read))
    return entries


def _short(text: str) -> str:
    from literate.tables import short

    return short(text)


def pair(ours: Ours, index: dict) -> list[tuple[Ours, LabmlEntry]] | None:
    """The labml entries that translate our key: the whole key's, else one
    per run of blocks; None when some block has none."""
    if ours.skeleton in index:
        return [(ours, _best(ours, index[ours.skeleton]))]
    parts = blocks(ours.template.text)
    found, i = [], 0
    while i < len(parts):
        for j in range(len(parts), i, -1):
            piece = pieces("\n\n".join(parts[i:j]), ours.template)
            if piece.skeleton in index:
                found.append((piece, _best(piece, index[piece.skeleton])))
                break
            if j == i + 1 and not any(w != MARK for w in piece.skeleton):
                found.append((piece, None))  # only HTML or links: kept as is
                break
        else:
            return None
        i = j
    return found if any(entry for _, entry in found) else None


def _best(ours: Ours, entries: list[LabmlEntry]) -> LabmlEntry:
    """Of labml's keys with our key's words, the one with its blocks (the
    title `Transformers` and the heading `# Transformers` read alike)."""
    want = structure(ours.text)
    return next((e for e in entries if e.read.structure == want), entries[0])


def structure(text: str) -> tuple[str, ...]:
    """Our Markdown's blocks as `_Converter.structure` names labml's."""
    out = []
    for block in blocks(text):
        heading = re.match(r" {0,3}(#{1,6})[ \t]", block)
        items = re.findall(r"(?m)^([*+-]|\d{1,9}[.)])[ \t]", block)
        if heading:
            out.append(f"h{len(heading.group(1))}")
        elif items and re.match(r"([*+-]|\d{1,9}[.)])[ \t]", block):
            kind = "ul" if items[0] in "*+-" else "ol"
            out.append(f"{kind}:{len(items)}")
        else:
            out.append("p")
    return tuple(out)


def import_key(ours: Ours, index: dict, problems) -> Result:
    """Our key's translation from labml's entries (`index`: skeleton ->
    entry), classified; `problems(key, value)` is the check's verdict."""
    key = ours.template.text
    parts = pair(ours, index)
    if parts is None:
        return Result(key, "no entry")
    values, repairs, line = [], [], 0
    for piece, entry in parts:
        if entry is None:
            values.append(piece.text)
            continue
        line = line or entry.line
        try:
            converted = convert(piece, entry.read, entry.value)
        except ConvertError as error:
            return Result(key, "refused", detail=str(error), line=entry.line)
        values.append(converted.markdown)
        repairs += [r for r in converted.repairs if r not in repairs]
    value = "\n\n".join(values)
    found = problems(key, value)
    if found:
        more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
        return Result(key, "refused", detail=found[0] + more, line=line)
    status = "repaired" if repairs else "mapped"
    return Result(key, status, value, "; ".join(repairs), line)


def source_texts(root: Path, source: str) -> dict[str, Ours]:
    """Our keys of a source's title, summary and sections, read for pairing."""
    from literate.parse import parse
    from literate.textfile import inside, read_utf8

    page = parse(read_utf8(inside(root, source, source), source), source)
    texts = [page.title, page.summary, *(s.docs for s in page.sections)]
    read = (read_ours(text) for text in texts if text.strip())
    return {ours.template.text: ours for ours in read}


@dataclass(frozen=True)
class Imported:
    """One table's import: the table to write and what became of each key."""

    table: dict[str, str]
    results: tuple[Result, ...]
    unused: int  # labml entries (translated) that no key took


def import_table(
    current: list[str],
    texts: dict[str, Ours],
    entries: list[LabmlEntry],
    existing: dict[str, str],
    problems,
    overwrite: bool = False,
) -> Imported:
    """The table for `current` keys, `existing` (kept, stale keys too)
    updated from labml's `entries`; pure."""
    index: dict[tuple[str, ...], list[LabmlEntry]] = {}
    for entry in entries:
        if entry.value.strip():
            index.setdefault(entry.read.skeleton, []).append(entry)
    table = dict(existing)
    results = []
    used: set[int] = set()
    for key in current:
        table.setdefault(key, "")
        ours = texts.get(key)
        result = Result(key, "no entry") if ours is None else import_key(
            ours, index, problems
        )  # fmt: skip
        if ours is not None:
            used |= {id(e) for _, e in (pair(ours, index) or []) if e}
        if table[key].strip() and not overwrite:
            result = Result(key, "kept", detail=result.status, line=result.line)
        elif result.status in ("mapped", "repaired"):
            table[key] = result.value
        results.append(result)
    unused = sum(1 for e in entries if e.value.strip() and id(e) not in used)
    return Imported(table, tuple(results), unused)


def import_command(
    root: Path,
    sources: tuple[str, ...],
    langs: list[str],
    folder: Path,
    base: str,
    overwrite: bool,
    entry_problems,
) -> int:
    """`translations import-labml`: import, write, report; the exit status.

    `entry_problems(entry, lang, glossary, keys)` is `check`'s verdict on one
    entry. Each table is written atomically once it is complete; a labml
    table or one of ours that cannot be read is named with its line and
    leaves that table untouched.
    """
    from literate.glossary import load_glossary
    from literate.keys import (
        glossary_path,
        relative,
        source_keys,
        table_path,
    )  # fmt: skip
    from literate.tables import (
        TableError,
        dumps_table,
        duplicates,
        read_table,
        save_table,
    )  # fmt: skip

    failed = False
    keys, texts = {}, {}
    for source in sources:
        try:
            keys[source] = source_keys(root, source)
            texts[source] = source_texts(root, source)
        except (OSError, ValueError) as error:
            print(f"{source}: cannot read its sections: {error}")
            failed = True
    for lang in langs:
        try:
            glossary = load_glossary(glossary_path(root, lang))
        except TableError as error:
            print(error.relative_to(root) + " (nothing imported)")
            failed = True
            continue
        totals = dict.fromkeys(STATUSES, 0)
        translated = total = comments = 0
        for source, known in keys.items():
            ours = table_path(root, lang, source)
            name = relative(ours, root)
            theirs = labml_table(folder, source, base, lang)
            try:
                _, old = read_table(ours)
                if duplicates(old):
                    raise TableError(
                        ours, duplicates(old)[0].line, 1,
                        f"key {_short(duplicates(old)[0].key)}: duplicate key; "
                        "remove one of the two first",
                    )  # fmt: skip
                entries = read_entries(theirs, folder) if theirs.is_file() else []
            except TableError as error:
                print(error.relative_to(root) + f" ({name} not written)")
                failed = True
                continue
            problems = _verdict(entry_problems, lang, glossary, known)
            # labml translates no code comments: they are keys, left empty.
            wanted = [k for k in known.all if k not in known.comment_only]
            done = import_table(
                wanted, texts[source], entries,
                {e.key: e.value for e in old}, problems, overwrite,
            )  # fmt: skip
            for comment in known.comment_only:
                done.table.setdefault(comment, "")
            where = relative(theirs, root)
            for result in done.results:
                if result.status in ("repaired", "refused"):
                    at = f"{where}:{result.line}" if result.line else where
                    print(f"{at}: key {_short(result.key)}: {result.status}: "
                          f"{result.detail}")  # fmt: skip
            counts = Counter(r.status for r in done.results)
            for status in STATUSES:
                totals[status] += counts[status]
            before = dumps_table({e.key: e.value for e in old}) if old else None
            written = before != dumps_table(done.table)
            if written:
                save_table(ours, done.table)
            done_keys = sum(1 for k in wanted if done.table[k].strip())
            translated += done_keys
            total += len(wanted)
            comments += len(known.comment_only)
            found = f"{len(entries)} labml entries, {done.unused} unused"
            print(
                f"{name}: {len(wanted)} keys, {done_keys} translated: "
                + ", ".join(f"{counts[s]} {s}" for s in STATUSES)
                + f"; {found if theirs.is_file() else 'no labml table ' + where}; "
                + ("written" if written else "unchanged")
            )
        share = f" ({100 * translated / total:.1f} %)" if total else ""
        print(
            f"{lang}: {len(keys)} sources, {total} keys, {translated} "
            f"translated{share}: " + ", ".join(f"{totals[s]} {s}" for s in STATUSES)
            + (f"; and {comments} code comments, which labml does not translate"
               if comments else "")
        )  # fmt: skip
    return 1 if failed else 0


def _verdict(entry_problems, lang, glossary, keys):
    """`check`'s problems with `value` as the translation of `key`."""
    from literate.tables import Entry

    return lambda key, value: entry_problems(Entry(key, value, 0), lang, glossary, keys)
