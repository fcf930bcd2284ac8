"""Where translations live and which English keys the sources have today.

    translations/<lang>/glossary.json      the language's fixed terms
    translations/<lang>/<source stem>.json one table per literate source

Languages are the folders under `translations/`; the sources are those the
site's mkdocs.yml gives the `literate` plugin, or else the two tutorial files
at the repository root.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from literate.spans import key

SOURCES = ("mha.py", "train.py")
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
    """`plugins: - literate: sources:` from the site config, else SOURCES."""
    path = root / config
    if not path.is_file():
        return SOURCES
    settings = yaml.load(path.read_text(encoding="utf-8"), _IgnoreTagsLoader)
    for plugin in (settings or {}).get("plugins") or []:
        if isinstance(plugin, dict) and isinstance(plugin.get("literate"), dict):
            sources = plugin["literate"].get("sources")
            if isinstance(sources, list) and all(isinstance(s, str) for s in sources):
                return tuple(sources)
    return SOURCES


class _IgnoreTagsLoader(yaml.SafeLoader):
    """Reads mkdocs.yml without resolving its tags (`!ENV`, `!!python/name`)."""


_IgnoreTagsLoader.add_multi_constructor("!", lambda loader, suffix, node: None)
_IgnoreTagsLoader.add_multi_constructor(
    "tag:yaml.org,2002:python/", lambda loader, suffix, node: None
)


def table_path(root: Path, lang: str, source: str) -> Path:
    """`translations/<lang>/<source stem>.json` for a source path like `mha.py`."""
    return root / TRANSLATIONS / lang / f"{Path(source).stem}.json"


def glossary_path(root: Path, lang: str) -> Path:
    return root / TRANSLATIONS / lang / GLOSSARY


def table_files(root: Path, lang: str) -> list[Path]:
    """Every table of a language (all its JSON files but the glossary)."""
    folder = root / TRANSLATIONS / lang
    return sorted(p for p in folder.glob("*.json") if p.name != GLOSSARY)


def current_keys(root: Path, source: str) -> list[str]:
    """The keys of a source's title, summary and sections with prose, once each.

    Raises FileNotFoundError naming the source when it does not exist.
    """
    from literate.parse import parse  # the renderer's parser, imported late

    path = root / source
    if not path.is_file():
        raise FileNotFoundError(f"{source}: source file not found under {root}")
    page = parse(path.read_text(encoding="utf-8"), source)
    texts = [page.title, page.summary] + [section.docs for section in page.sections]
    return list(dict.fromkeys(key(text) for text in texts if text.strip()))


def relative(path: Path, root: Path) -> str:
    """`path` as written in messages: relative to the root when inside it."""
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)
