"""Where translations live and which English keys the sources have today.

    translations/<lang>/glossary.json         the language's fixed terms
    translations/<lang>/<source path>.json    one table per literate source:
                                              mha.py -> mha.json,
                                              pkg/__init__.py -> pkg/__init__.json

Languages are the folders under `translations/` whose names are language
codes (`ja`, `zh`, `pt-BR`; not `en`, the sources' own): any other folder is
refused by `translations check` and never taken for a language. The sources
are those the site's mkdocs.yml gives the `literate` plugin (files, folders or
globs).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import yaml

from literate.cache_key import reach
from literate.comments import section_comments
from literate.directives import page_examples
from literate.normalize import key
from literate.parse import parse
from literate.sources import find_sources
from literate.textfile import inside, read_utf8

TRANSLATIONS = "translations"
GLOSSARY = "glossary.json"
SOURCE_LANGUAGE = "en"
# A BCP 47 tag, roughly: a language and optional subtags (region, script).
LANGUAGE = re.compile(r"[a-z]{2,3}(?:-[A-Za-z0-9]{2,8})*")


def is_language(name: str) -> bool:
    """Whether `name` may be a translation's language (a code, not English)."""
    return bool(LANGUAGE.fullmatch(name)) and name != SOURCE_LANGUAGE


def languages(root: Path) -> list[str]:
    """The language folders under `translations/`, sorted: only those whose
    names are language codes (see `other_folders` for the rest)."""
    return sorted(name for name in _folders(root) if is_language(name))


def other_folders(root: Path) -> list[str]:
    """The folders under `translations/` that are not languages, sorted."""
    return sorted(name for name in _folders(root) if not is_language(name))


def _folders(root: Path) -> list[str]:
    folder = root / TRANSLATIONS
    if not folder.is_dir():
        return []
    return [p.name for p in folder.iterdir() if p.is_dir()]


def site_sources(root: Path, config: str = "mkdocs.yml") -> tuple[str, ...]:
    """`plugins: - literate: sources:` from the site config, expanded.

    Raises FileNotFoundError when the config lists none, or a pattern
    matches no file.
    """
    patterns = site_options(root, config).get("sources")
    if not (isinstance(patterns, list) and all(isinstance(s, str) for s in patterns)):
        raise FileNotFoundError(
            f"{config}: no `plugins: - literate: sources:` list under {root}; "
            "name the sources with --source"
        )
    return tuple(find_sources(root, patterns))


def site_options(root: Path, config: str = "mkdocs.yml") -> dict:
    """The `literate` plugin's options in the site config ({} if none)."""
    path = root / config
    if not path.is_file():
        return {}
    settings = yaml.load(path.read_text(encoding="utf-8"), _IgnoreTagsLoader)
    for plugin in (settings or {}).get("plugins") or []:
        if isinstance(plugin, dict) and isinstance(plugin.get("literate"), dict):
            return plugin["literate"]
    return {}


class _IgnoreTagsLoader(yaml.SafeLoader):
    """Reads mkdocs.yml without resolving its tags (`!ENV`, `!!python/name`)."""


_IgnoreTagsLoader.add_multi_constructor("!", lambda loader, suffix, node: None)
_IgnoreTagsLoader.add_multi_constructor(
    "tag:yaml.org,2002:python/", lambda loader, suffix, node: None
)


def table_path(root: Path, lang: str, source: str) -> Path:
    """`translations/<lang>/<source path>.json`: `mha.py` -> `ja/mha.json`."""
    return root / TRANSLATIONS / lang / PurePosixPath(source).with_suffix(".json")


def glossary_path(root: Path, lang: str) -> Path:
    return root / TRANSLATIONS / lang / GLOSSARY


def table_files(root: Path, lang: str) -> list[Path]:
    """Every table of a language (all its JSON files but the glossary)."""
    folder = root / TRANSLATIONS / lang
    glossary = folder / GLOSSARY
    return sorted(p for p in folder.rglob("*.json") if p != glossary)


@dataclass(frozen=True)
class SourceKeys:
    """A source's keys, by where their translations go."""

    head: tuple[str, ...]  # the title and summary: the page head
    prose: tuple[str, ...]  # the sections' prose
    alts: tuple[str, ...]  # the figures' alt texts: an attribute
    words: tuple[str, ...]  # the `tr` words its examples reach: drawn, printed
    comments: tuple[str, ...] = ()  # the code column's prose comments

    @property
    def all(self) -> list[str]:
        """Every key once, in this order (what `update` writes)."""
        keys = self.head + self.prose + self.alts + self.words + self.comments
        return list(dict.fromkeys(keys))

    @functools.cached_property
    def comment_only(self) -> frozenset[str]:
        """The comments' keys that are not also another kind of key."""
        others = set(self.head + self.prose + self.alts + self.words)
        return frozenset(k for k in self.comments if k not in others)


def source_keys(root: Path, source: str) -> SourceKeys:
    """The keys of a source's title, summary, sections with prose, figures'
    alt texts, the `tr("...")` words its examples reach and the prose
    comments of its code column (`literate.comments`).

    Raises FileNotFoundError naming the source when it does not exist, and
    FileRefused (a ValueError) when it is not a file inside the project.
    """
    path = inside(root, source, source)
    if not path.is_file():
        raise FileNotFoundError(f"{source}: source file not found under {root}")
    page = parse(read_utf8(path, source), source)
    return keys_of(page, example_reaches(root, page))


def keys_of(page, reaches: dict) -> SourceKeys:
    """The keys of a parsed page whose examples reach what `reaches` says
    (see `example_reaches`)."""
    head = [key(text) for text in (page.title, page.summary) if text.strip()]
    prose = [key(s.docs) for s in page.sections if s.docs.strip()]
    examples = [e for e in page_examples(page) if not e.notebook_only]
    alts = [e.alt for e in examples if e.alt]
    words = [w for e in examples for w in reaches[e.line].words]
    comments = [c.text for c in section_comments(page.sections)]
    return SourceKeys(
        *(tuple(dict.fromkeys(k)) for k in (head, prose, alts, words, comments))
    )


def example_reaches(root: Path, page) -> dict:
    """{line: what the example there reaches} (`cache_key.reach`), for each
    example of a parsed page that the build runs."""
    return {
        e.line: reach(root.resolve(), page.source, e.expr)
        for e in page_examples(page)
        if not e.notebook_only
    }


def current_keys(root: Path, source: str) -> list[str]:
    """The keys of a source (see `source_keys`), once each.

    Raises FileNotFoundError naming the source when it does not exist.
    """
    return source_keys(root, source).all


def relative(path: Path, root: Path) -> str:
    """`path` as written in messages: relative to the root when inside it."""
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)
