"""Where translations live and which English keys the sources have today.

    translations/<lang>/glossary.json      the language's fixed terms
    translations/<lang>/<source stem>.json one table per literate source

Languages are the folders under `translations/`; the sources default to the
two tutorial files at the repository root.
"""

from __future__ import annotations

from pathlib import Path

from literate.keys import key

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
