"""`python -m literate translations update|status|check`: keep the tables right.

    update [LANG] [--prune]  add missing English keys (empty = untranslated),
                             keep every translation, report stale keys with
                             the most similar current key; --prune drops them
    status                   translated / total, stale, failing per page
    check [LANG]             the CI gate: every defect as file:line and key
    import-labml [LANG] --from DIR [--base DIR] [--overwrite]
                             write labml's translate_cache tables into ours,
                             per source: mapped, repaired, refused, no entry

Each command prints one line per file saying what it did and exits 1 on any
error. Paths in messages are relative to --root (default: the current folder).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from literate.check import check_entry, entry_problems
from literate.figure_check import glyph_problems, missing_fonts
from literate.glossary import Term, load_glossary
from literate.keys import (
    LANGUAGE,
    TRANSLATIONS,
    SourceKeys,
    current_keys,
    glossary_path,
    languages,
    other_folders,
    relative,
    site_options,
    site_sources,
    source_keys,
    table_files,
    table_path,
)
from literate.model import SourceError
from literate.sources import find_sources
from literate.status import status_markdown
from literate.tables import (
    TableError,
    dumps_table,
    duplicates,
    read_table,
    save_table,
    short,
)
from literate.textfile import FileRefused, inside
from literate.translations.update import MAX_STALE, update_table


def run(root: Path, args: argparse.Namespace) -> int:
    """Run the parsed command; the exit status is 0 when nothing went wrong."""
    if getattr(args, "lang", None) and not LANGUAGE.fullmatch(args.lang):
        print(
            f"LANG {ascii(args.lang)}: expected a language code such as ja, zh, pt-BR"
        )
        return 2
    if args.lang == "en":
        print("LANG 'en': English is the source language, it has no table")
        return 2
    return args.run_command(root, args)


def add_commands(parser: argparse.ArgumentParser) -> None:
    """The `update`, `status` and `check` commands, under `parser`."""
    commands = parser.add_subparsers(required=True, metavar="COMMAND")
    update = commands.add_parser("update", help="add new keys, report stale ones")
    update.add_argument("lang", nargs="?", help="only this language (created)")
    update.add_argument("--prune", action="store_true", help="remove stale keys")
    status = commands.add_parser("status", help="translated / total per page")
    check = commands.add_parser("check", help="find broken translations (CI)")
    check.add_argument("lang", nargs="?", help="only this language")
    labml = commands.add_parser(
        "import-labml", help="import labml's translate_cache tables"
    )
    labml.add_argument("lang", nargs="?", help="only this language (created)")
    labml.add_argument(
        "--from",
        dest="labml",
        required=True,
        type=Path,
        metavar="DIR",
        help="labml's translate_cache folder (<path>.<lang>.json per source), "
        "relative to --root",
    )
    labml.add_argument(
        "--base",
        help="the sources' folder that labml's paths start below (default: "
        "the literate plugin's `base` in mkdocs.yml)",
    )
    labml.add_argument(
        "--overwrite", action="store_true", help="replace translations we have"
    )
    for command in (update, status, labml):
        command.add_argument(
            "--source",
            action="append",
            dest="sources",
            metavar="PATH",
            help="a literate source, folder or glob (repeatable; default: "
            "the sources in mkdocs.yml)",
        )
    update.set_defaults(run_command=run_update)
    status.set_defaults(run_command=run_status, lang=None)
    check.set_defaults(run_command=run_check)
    labml.set_defaults(run_command=run_import_labml)


def _sources(root: Path, args: argparse.Namespace) -> tuple[str, ...]:
    """--source patterns expanded, else the site's; FileNotFoundError if none."""

    if args.sources:
        return tuple(find_sources(root, args.sources))
    return site_sources(root)


def _sources_and_langs(root: Path, args: argparse.Namespace, command: str):
    """The sources and languages `command` works on; None (said why) if none."""
    try:
        sources = _sources(root, args)
    except (FileNotFoundError, ValueError) as error:  # ValueError: FileRefused
        print(f"{command}: {error}")
        return None
    langs = [args.lang] if args.lang else languages(root)
    if not langs:
        print(f"{TRANSLATIONS}/: no language folders; run `{command} LANG` to add one")
        return None
    return sources, langs


def run_update(root: Path, args: argparse.Namespace) -> int:
    found = _sources_and_langs(root, args, "update")
    if found is None:
        return 1
    sources, langs = found
    failed = False
    keys = {}
    for source in sources:
        try:
            keys[source] = current_keys(root, source)
        except (OSError, ValueError, SourceError) as error:
            print(f"{source}: cannot read its sections: {error}")
            failed = True
    for lang in langs:
        for source, current in keys.items():
            failed |= not _update_file(
                root, table_path(root, lang, source), current, args.prune
            )
    return 1 if failed else 0


def _update_file(root: Path, path: Path, current: list[str], prune: bool) -> bool:
    """Update one table; print what happened; False on error (file untouched)."""
    name = relative(path, root)
    try:
        inside(root, path.absolute(), name)  # a symlinked folder: not written
        before, entries = read_table(path)
    except FileRefused as error:
        print(f"{error} (not updated)")
        return False
    except TableError as error:
        print(error.relative_to(root) + " (not updated)")
        return False
    repeated = duplicates(entries)
    for entry in repeated:
        print(f"{name}:{entry.line}: key {short(entry.key)}: duplicate key")
    if repeated:
        print(f"{name}: not updated: remove the duplicate keys first")
        return False
    result = update_table(entries, current, prune=prune)
    for stale in result.stale:
        where = f"{name}:{stale.line}: stale key {short(stale.key)}"
        if prune:
            print(f"{where}: removed")
        elif not stale.compared:
            continue  # counted below
        elif stale.suggestion is None:
            print(f"{where}: no similar current key")
        else:
            print(
                f"{where}: most similar current key (ratio {stale.ratio:.2f}): "
                f"{short(stale.suggestion)}"
            )
    unsought = sum(1 for stale in result.stale if not stale.compared)
    if unsought and not prune:
        print(
            f"{name}: {unsought} more stale keys, not compared with the current "
            f"ones (only the first {MAX_STALE} are)"
        )
    written = before != dumps_table(result.table)
    if written:
        save_table(path, result.table)
    translated = sum(1 for k in current if result.table[k].strip())
    kept = 0 if prune else len(result.stale)
    print(
        f"{name}: {len(current)} keys, {translated} translated, "
        f"{result.added} added, {kept} stale kept, {result.dropped} removed; "
        + ("written" if written else "unchanged")
    )
    return True


def run_import_labml(root: Path, args: argparse.Namespace) -> int:
    from literate.translations.labml import import_command

    folder = root / args.labml  # relative to --root, as --source is
    if not folder.is_dir():
        print(f"--from {ascii(str(args.labml))}: not a folder (expected labml's "
              "translate_cache folder)")  # fmt: skip
        return 2
    found = _sources_and_langs(root, args, "import-labml")
    if found is None:
        return 1
    sources, langs = found
    base = args.base if args.base is not None else site_options(root).get("base")
    return import_command(
        root, sources, langs, folder, str(base or ""), args.overwrite,
        _entry_problems,
    )  # fmt: skip


def run_status(root: Path, args: argparse.Namespace) -> int:
    try:
        print(status_markdown(root, _sources(root, args)), end="")
    except (OSError, ValueError, SourceError) as error:
        print(f"status: {error}")
        return 1
    return 0


def run_check(root: Path, args: argparse.Namespace) -> int:
    keys, failed = _site_keys(root)
    for name in other_folders(root):
        failed = True
        print(f"{TRANSLATIONS}/{ascii(name)}: not a language folder (expected a "
              "language code such as ja, zh, pt-BR; English has none): "
              "rename or remove it")  # fmt: skip
    langs = [args.lang] if args.lang else languages(root)
    if not langs and keys is not None:
        print(f"{TRANSLATIONS}/: no language folders, but mkdocs.yml names "
              "sources: run `python -m literate translations update LANG`")  # fmt: skip
        return 1
    if not langs:
        print(f"{TRANSLATIONS}/: no language folders, nothing to check")
    for lang in langs:
        if not (root / TRANSLATIONS / lang).is_dir():
            print(f"{TRANSLATIONS}/{lang}: no such language folder")
            failed = True
            continue
        path = glossary_path(root, lang)
        try:
            glossary = load_glossary(path)
            found = f"{len(glossary)} terms" if path.exists() else "none, no terms"
            print(f"{relative(path, root)}: {found}")
        except TableError as error:
            print(error.relative_to(root))
            failed, glossary = True, ()
        if keys and any(k.words for k in keys.values()) and missing_fonts(lang):
            print(
                f"{TRANSLATIONS}/{lang}: figure words' glyphs not checked: "
                f"{', '.join(missing_fonts(lang))} not installed here"
            )
        sources = {table_path(root, lang, s): s for s in keys or {}}
        for path in table_files(root, lang):
            source = sources.get(path)
            known = None if keys is None else keys.get(source, _NO_KEYS)
            failed |= _check_file(root, path, lang, glossary, known) > 0
    return 1 if failed else 0


_NO_KEYS = SourceKeys((), (), (), ())  # a table whose source is not the site's


def _site_keys(root: Path) -> tuple[dict[str, SourceKeys | None] | None, bool]:
    """Each site source's keys (None for a source that cannot be read, said
    so), and whether one could not; (None, False) without a site config."""
    if site_options(root).get("sources") is None:
        return None, False
    try:
        sources = site_sources(root)
    except (FileNotFoundError, ValueError) as error:  # ValueError: FileRefused
        print(f"mkdocs.yml: {error}")
        return {}, True
    keys: dict[str, SourceKeys | None] = {}
    failed = False
    for source in sources:
        try:
            keys[source] = source_keys(root, source)
        except (OSError, ValueError, SourceError) as error:
            print(f"{source}: cannot read its sections: {error}")
            keys[source], failed = None, True
    return keys, failed


def _check_file(
    root: Path,
    path: Path,
    lang: str,
    glossary: tuple[Term, ...],
    keys: SourceKeys | None,
) -> int:
    """Check one table; print its errors and a summary; return the error count.

    With its source's `keys`, also the entries that are not prose (see
    `_entry_problems`) and the number of stale keys.
    """
    name = relative(path, root)
    try:
        text, entries = read_table(path)
    except TableError as error:
        print(error.relative_to(root))
        print(f"{name}: 1 error")
        return 1
    errors = [
        f"{name}:{entry.line}: key {short(entry.key)}: duplicate key"
        for entry in duplicates(entries)
    ]
    for entry in entries:
        if entry.value.strip():
            errors += [
                f"{name}:{entry.line}: key {short(entry.key)}: {problem}"
                for problem in _entry_problems(entry, lang, glossary, keys)
            ]
    errors += _stale_errors(name, lang, entries, keys)
    if not errors:
        errors += _format_errors(name, text, entries)
    for error in errors:
        print(error)
    translated = sum(1 for entry in entries if entry.value.strip())
    print(
        f"{name}: {len(entries)} keys, {translated} translated, "
        f"{len(errors)} error{'' if len(errors) == 1 else 's'}"
    )
    return len(errors)


def _entry_problems(entry, lang: str, glossary, keys: SourceKeys | None) -> list[str]:
    """`entry_problems` when the entry's source is known (else `check_entry`),
    and for a figure word its glyphs in the language's figure fonts."""
    if keys is None:
        return check_entry(entry.key, entry.value, glossary)
    problems = entry_problems(entry.key, entry.value, keys, glossary)
    if entry.key in keys.words and not missing_fonts(lang):
        problems += glyph_problems(entry.value, lang)
    return problems


def _stale_errors(name: str, lang: str, entries, keys: SourceKeys | None) -> list[str]:
    """One error if the table keeps more stale keys than it may: each costs
    the build a comparison with every untranslated section."""
    if keys is None:
        return []
    current = set(keys.all)
    stale = sum(1 for entry in entries if entry.key not in current)
    most = max(MAX_STALE, len(current))
    if stale <= most:
        return []
    return [
        f"{name}: {stale} stale keys (English that is gone), more than the {most} "
        f"a table may keep: carry over what you need, then run `python -m "
        f"literate translations update {lang} --prune`"
    ]


def _format_errors(name: str, text: str, entries) -> list[str]:
    """The file must be byte for byte what `update` would write."""
    canonical = dumps_table({entry.key: entry.value for entry in entries})
    if text == canonical:
        return []
    have, want = text.split("\n"), canonical.split("\n")
    line = next(
        (i + 1 for i, (a, b) in enumerate(zip(have, want, strict=False)) if a != b),
        min(len(have), len(want)),
    )
    near = next((e for e in reversed(entries) if e.line <= line), None)
    what = f"key {short(near.key)}: " if near else ""
    return [
        f"{name}:{line}: {what}not in canonical form (sorted keys, two-space "
        "indent, UTF-8 without \\u escapes, final newline): run "
        "`python -m literate translations update`"
    ]
