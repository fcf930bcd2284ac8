"""TeX to HTML + MathML at build time, with KaTeX run by node.

All the formulas of a page go to ONE node process as a JSON batch
(`katex_render.js`), so a page costs one process start, not one per formula.
Results, errors included, are cached in this process by `(tex, display)`: a
rebuild under `mkdocs serve` renders only the formulas that changed, and
usually starts no process at all.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

SCRIPT = Path(__file__).with_name("katex_render.js")
TIMEOUT_S = 120


@dataclass(frozen=True)
class Rendered:
    """KaTeX's HTML for one formula, or its error message (html is then "")."""

    html: str
    error: str = ""


class KatexUnavailable(RuntimeError):
    """node or the katex package cannot be run."""


_CACHE: dict[tuple[str, bool], Rendered] = {}


def render_formulas(formulas: Iterable[tuple[str, bool]]) -> dict:
    """Render `(tex, display)` pairs; returns {(tex, display): Rendered}.

    A formula KaTeX rejects comes back with `error` set; it is the caller's
    decision whether that fails the build.
    """
    wanted = list(dict.fromkeys(formulas))
    missing = [f for f in wanted if f not in _CACHE]
    if missing:
        for formula, result in zip(missing, _run_katex(missing), strict=True):
            _CACHE[formula] = result
    return {formula: _CACHE[formula] for formula in wanted}


def _run_katex(formulas: list[tuple[str, bool]]) -> list[Rendered]:
    node = shutil.which("node")
    if node is None:
        raise KatexUnavailable("node not found on PATH; install Node.js and `npm ci`")
    try:
        done = subprocess.run(
            [node, str(SCRIPT)],
            input=json.dumps([[tex, display] for tex, display in formulas]),
            capture_output=True,
            text=True,
            encoding="utf-8",
            timeout=TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise KatexUnavailable(f"{SCRIPT.name} ran over {TIMEOUT_S} s") from None
    if done.returncode != 0:
        raise KatexUnavailable(
            f"{SCRIPT.name} exited with {done.returncode}: {done.stderr.strip()}"
            " (is node_modules/katex installed? run `npm ci`)"
        )
    results = json.loads(done.stdout)
    if len(results) != len(formulas):
        raise KatexUnavailable(
            f"{SCRIPT.name} returned {len(results)} results for {len(formulas)}"
        )
    return [Rendered(r.get("html", ""), r.get("error", "")) for r in results]


def clear_cache() -> None:
    """Forget every rendered formula (tests use it to count process starts)."""
    _CACHE.clear()
