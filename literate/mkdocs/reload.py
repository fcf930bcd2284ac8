"""`mkdocs serve` with an edited renderer: the pipeline's code, imported again.

`mkdocs serve` rebuilds in the same process. When a file under `literate/`
has changed since the last build, the plugin forgets the imported stage
modules and imports the pipeline again, so the rebuild runs the edited code.
The mkdocs adapter itself (`literate.mkdocs`) stays loaded: mkdocs holds it.
"""

from __future__ import annotations

import importlib
import sys
import traceback
from pathlib import Path
from types import ModuleType

PACKAGE = Path(__file__).resolve().parent.parent


def code_stamp() -> int:
    """When the pipeline's code last changed: the newest of literate/**.py."""
    return max(path.stat().st_mtime_ns for path in PACKAGE.rglob("*.py"))


def load_pipeline(fresh: bool) -> ModuleType:
    """The `literate.pipeline` module; `fresh` imports it and its stages again."""
    if fresh:
        for name in [n for n in sys.modules if n.startswith("literate.")]:
            if not name.startswith("literate.mkdocs"):
                del sys.modules[name]
    return importlib.import_module("literate.pipeline")


def load_failure(error: Exception) -> str:
    """One line for an error raised while importing the pipeline again:
    `literate/render.py:12: cannot load the renderer: SyntaxError: ...`, the
    line being the error's own (a SyntaxError) or the last one of literate/
    that the traceback passes through."""
    frames = traceback.extract_tb(error.__traceback__)
    where = [(f.filename, f.lineno) for f in frames]
    if isinstance(error, SyntaxError) and error.filename:
        where.append((error.filename, error.lineno))
        detail = error.msg
    else:
        detail = str(error)
    ours = [(Path(f), n) for f, n in where if Path(f).is_relative_to(PACKAGE)]
    file, line = ours[-1] if ours else (PACKAGE / "pipeline.py", 1)
    name = file.relative_to(PACKAGE.parent).as_posix()
    return (
        f"{name}:{line or 1}: cannot load the renderer: "
        f"{type(error).__name__}: {detail}"
    )
