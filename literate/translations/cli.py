"""`python -m literate translations update|status|check`: keep the tables right.

    update [LANG] [--prune]  add missing English keys (empty = untranslated),
                             keep every translation, report stale keys with
                             the most similar current key; --prune drops them
    status                   translated / total, stale, failing per page
    check [LANG]             the CI gate: every defect as file:line and key

Each command prints one line per file saying what it did and exits 1 on any
error. Paths in messages are relative to --root (default: the current folder).
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from literate.model import SourceError
from literate.translations.check import Term, check_entry, load_glossary
from literate.translations.layout import (
    current_keys,
    glossary_path,
    languages,
    relative,
    site_sources,
    table_files,
    table_path,
)
from literate.translations.status import status_markdown
from literate.translations.tables import (
    TableError,
    dumps_table,
    duplicates,
    read_entries,
    save_table,
    short,
)
from literate.translations.update import update_table

_LANG = re.compile(r"[a-z]{2,3}(?:-[A-Za-z0-9]{2,8})?")


def main(argv: list[str]) -> int:
    """`literate translations ARGV...`; the exit status is 0 when all went well."""
    from literate.__main__ import main as literate_main

    return literate_main(["translations", *argv])


def run(root: Path, args: argparse.Namespace) -> int:
    """Run the parsed command; the exit status is 0 when nothing went wrong."""
    if getattr(args, "lang", None) and not _LANG.fullmatch(args.lang):
        print(f"LANG {args.lang!r}: expected a language code such as ja, zh, pt-BR")
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
    for command in (update, status):
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


def _sources(root: Path, args: argparse.Namespace) -> tuple[str, ...]:
    """--source patterns expanded, else the site's; FileNotFoundError if none."""
    from literate.pipeline import find_sources

    if args.sources:
        return tuple(find_sources(root, args.sources))
    return site_sources(root)


def run_update(root: Path, args: argparse.Namespace) -> int:
    try:
        sources = _sources(root, args)
    except FileNotFoundError as error:
        print(f"update: {error}")
        return 1
    langs = [args.lang] if args.lang else languages(root)
    if not langs:
        print("translations/: no language folders; run `update LANG` to add one")
        return 1
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
        entries = read_entries(path)
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
        elif stale.suggestion is None:
            print(f"{where}: no similar current key")
        else:
            print(
                f"{where}: most similar current key (ratio {stale.ratio:.2f}): "
                f"{short(stale.suggestion)}"
            )
    before = path.read_text(encoding="utf-8") if path.exists() else None
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


def run_status(root: Path, args: argparse.Namespace) -> int:
    try:
        print(status_markdown(root, _sources(root, args)), end="")
    except (OSError, ValueError, SourceError) as error:
        print(f"status: {error}")
        return 1
    return 0


def run_check(root: Path, args: argparse.Namespace) -> int:
    langs = [args.lang] if args.lang else languages(root)
    if not langs:
        print("translations/: no language folders, nothing to check")
    failed = False
    for lang in langs:
        if not (root / "translations" / lang).is_dir():
            print(f"translations/{lang}: no such language folder")
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
        for path in table_files(root, lang):
            failed |= _check_file(root, path, glossary) > 0
    return 1 if failed else 0


def _check_file(root: Path, path: Path, glossary: tuple[Term, ...]) -> int:
    """Check one table; print its errors and a summary; return the error count."""
    name = relative(path, root)
    try:
        entries = read_entries(path)
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
                for problem in check_entry(entry.key, entry.value, glossary)
            ]
    if not errors:
        errors += _format_errors(name, path, entries)
    for error in errors:
        print(error)
    translated = sum(1 for entry in entries if entry.value.strip())
    print(
        f"{name}: {len(entries)} keys, {translated} translated, "
        f"{len(errors)} error{'' if len(errors) == 1 else 's'}"
    )
    return len(errors)


def _format_errors(name: str, path: Path, entries) -> list[str]:
    """The file must be byte for byte what `update` would write."""
    text = path.read_text(encoding="utf-8")
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


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
