"""How far each translation has come: one row per language and page.

translated  current keys with a translation that passes the check
total       current keys of the page: title, prose, figure words, comments
stale       translations kept for English that no longer exists
failing     translations the check rejects (never shown on a page)
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from pathlib import Path

from literate.check import entry_problems
from literate.glossary import load_glossary
from literate.keys import (
    SourceKeys,
    glossary_path,
    languages,
    site_sources,
    source_keys,
    table_path,
)
from literate.languages import label
from literate.tables import TableError, read_entries


@dataclass(frozen=True)
class Row:
    lang: str
    source: str
    translated: int
    total: int
    stale: int
    failing: int
    error: str = ""  # set when the table or glossary could not be read


def status_rows(root: Path, sources: tuple[str, ...]) -> list[Row]:
    """A row per language folder and source, in sorted language order."""
    keys = {source: source_keys(root, source) for source in sources}
    rows = []
    for lang in languages(root):
        for source in sources:
            try:
                glossary = load_glossary(glossary_path(root, lang))
                entries = read_entries(table_path(root, lang, source))
            except TableError as error:
                message = error.relative_to(root)
                total = len(keys[source].all)
                rows.append(Row(lang, source, 0, total, 0, 0, message))
                continue
            rows.append(_row(lang, source, keys[source], entries, glossary))
    return rows


def _row(lang, source, keys: SourceKeys, entries, glossary) -> Row:
    table = {e.key: e.value for e in entries}
    passing = {
        k for k, v in table.items() if v.strip() and _passes(k, v, keys, glossary)
    }
    failing = sum(1 for v in table.values() if v.strip()) - len(passing)
    current = keys.all
    current_set = set(current)
    stale = sum(1 for k, v in table.items() if k not in current_set and v.strip())
    translated = len(passing & current_set)
    return Row(lang, source, translated, len(current), stale, failing)


def _passes(key: str, value: str, keys: SourceKeys, glossary) -> bool:
    """Whether an entry passes the checks of its kind (`entry_problems`)."""
    return not entry_problems(key, value, keys, glossary)


def status_markdown(
    root: Path, sources: tuple[str, ...] | None = None, lang: str = "en"
) -> str:
    """The status as a markdown table, for the terminal and for a site page,
    its headings and percentages as `lang` writes them.

    `sources` defaults to those of the site config (see `site_sources`).
    """
    root = Path(root)
    return status_table(status_rows(root, sources or site_sources(root)), lang)


def status_table(rows: list[Row], lang: str = "en") -> str:
    """`rows` as a markdown table in `lang`: its languages by the names `lang`
    has for them (日本語, not ja), its shares as `lang` writes them (（100%）
    in Japanese, (100 %) in English)."""
    share_of = label(lang, "share")
    names = language_names(lang)
    lines = [f"| {label(lang, 'status_headings')} |", "|---|---|---:|---:|---:|"]
    for row in rows:
        code, source = cell(names.get(row.lang, row.lang)), cell(row.source)
        if row.error:
            lines.append(f"| {code} | {source} | {cell(row.error)} | | |")
            continue
        share = 100 * row.translated / row.total if row.total else 100.0
        lines.append(
            f"| {code} | {source} | {row.translated} / {row.total}"
            f"{share_of.format(n=f'{share:.0f}')} | {row.stale} | {row.failing} |"
        )
    return "\n".join(lines) + "\n"


def language_names(lang: str) -> dict[str, str]:
    """{code: name} as `lang` names languages (`ja 日本語 | zh 中国語`); none
    where it names none (English: the codes stay)."""
    pairs = label(lang, "language_names")
    return dict(p.split(" ", 1) for p in pairs.split(" | ") if " " in p)


# What Markdown would read as markup in a table cell: emphasis, code, links,
# images, HTML entities and the cell separator; each is written escaped.
_MARKDOWN_PUNCTUATION = re.compile(r"([\\`*_{}\[\]()#+!|~])")


def cell(text: str) -> str:
    """`text` as the literal content of a Markdown table cell.

    Folder names, source paths and error messages come from files anybody can
    write (a folder may be named `<img src=x onerror=…>`): line breaks become
    spaces, Markdown punctuation is backslash-escaped, then HTML is escaped
    (after, so that an entity's `#` stays as it is). A cell can neither add
    markup nor end the table.
    """
    text = _MARKDOWN_PUNCTUATION.sub(r"\\\1", " ".join(text.split()))
    return html.escape(text, quote=True)
