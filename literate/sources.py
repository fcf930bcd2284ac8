"""Which files are a site's literate sources, and where each one's page goes.

`find_sources` expands the plugin's `sources` (files, folders, globs) inside
the project; `page_path` maps a source to its page's path in the site.
"""

from __future__ import annotations

import glob
from pathlib import Path, PurePosixPath

from literate.textfile import inside, project_glob


def find_sources(root: Path, patterns: list[str]) -> list[str]:
    """The sources that `patterns` name under `root`, in order, each once.

    A pattern is a file (`mha.py`), a folder (every `.py` file under it) or
    a glob (`labml_nn/**/*.py`). Raises FileNotFoundError naming a pattern
    that matches nothing, and OutsideProject (a ValueError) naming a pattern,
    or a file it matches, that leads out of `root`: `../x.py`, an absolute
    path, a symlinked file or folder whose target is elsewhere. Nothing of
    the outside target is read or quoted.
    """
    found: dict[str, None] = {}
    for pattern in patterns:
        path = inside(root, pattern)
        if glob.has_magic(pattern):
            matches = project_glob(root, pattern)
        elif path.is_dir():
            matches = sorted(p.relative_to(root).as_posix() for p in path.rglob("*.py"))
        else:
            matches = [pattern] if path.is_file() else []
        matches = [m for m in matches if inside(root, m, m).is_file()]
        if not matches:
            raise FileNotFoundError(f"{pattern!r}: no such source under {root}")
        found.update((PurePosixPath(m).as_posix(), None) for m in matches)
    return list(found)


def page_path(source: str, base: str = "") -> str:
    """A source's page, without extension, relative to the site root.

    The path follows the source's, relative to `base`: `pkg/mod.py` is
    `pkg/mod`, and a package's `pkg/__init__.py` is its `pkg/index`.
    """
    path = PurePosixPath(source)
    if base:
        path = path.relative_to(base)
    if path.name == "__init__.py":
        return (path.parent / "index").as_posix()
    return path.with_suffix("").as_posix()
