"""Where translations live and which English keys the sources have today.

    translations/<lang>/glossary.json         the language's fixed terms
    translations/<lang>/<source path>.json    one table per literate source:
                                              mha.py -> mha.json,
                                              pkg/__init__.py -> pkg/__init__.json

Languages are the folders under `translations/`; the sources are those the
site's mkdocs.yml gives the `literate` plugin (files, folders or globs).
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath

import yaml

from literate.spans import key
from literate.textfile import read_utf8

TRANSLATIONS = "translations"
GLOSSARY = "glossary.json"


def languages(root: Path) -> list[str]:
    """The language folders under `translations/`, sorted."""
    folder = root / TRANSLATIONS
    if not folder.is_dir():
        return []
    return sorted(
        p.name for p in folder.iterdir() if p.is_dir() and not p.name.startswith(".")
    )


def site_sources(root: Path, config: str = "mkdocs.yml") -> tuple[str, ...]:
    """`plugins: - literate: sources:` from the site config, expanded.

    Raises FileNotFoundError when the config lists none, or a pattern
    matches no file.
    """
    from literate.pipeline import find_sources

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


def current_keys(root: Path, source: str) -> list[str]:
    """The keys of a source's title, summary, sections with prose, figures' alt
    texts and the `tr("...")` words its examples reach (see `literate.words`),
    once each.

    Raises FileNotFoundError naming the source when it does not exist.
    """
    from literate.parse import parse  # the renderer's parser, imported late

    path = root / source
    if not path.is_file():
        raise FileNotFoundError(f"{source}: source file not found under {root}")
    page = parse(read_utf8(path, source), source)
    texts = [page.title, page.summary] + [section.docs for section in page.sections]
    keys = [key(text) for text in texts if text.strip()]
    return list(dict.fromkeys(keys + figure_keys(root, page)))


def figure_keys(root: Path, page) -> list[str]:
    """The alt texts of a parsed page's examples, and the `tr` words they reach."""
    from literate.cache_key import example_words
    from literate.directives import page_examples

    keys: list[str] = []
    for example in page_examples(page):
        if example.notebook_only:
            continue
        keys += [example.alt] if example.alt else []
        keys += example_words(root.resolve(), page.source, example.expr)
    return list(dict.fromkeys(keys))


def relative(path: Path, root: Path) -> str:
    """`path` as written in messages: relative to the root when inside it."""
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)
