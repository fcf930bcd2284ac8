"""TeX to HTML + MathML at build time, with KaTeX run by node.

A `Katex` keeps one node process (`katex_render.js`) for as long as it lives
and sends it the formulas of each page as one batch, so a site or a corpus of
hundreds of pages costs one process start, not one per page. Results, errors
included, are cached by `(tex, display)`: a rebuild under `mkdocs serve`
renders only the formulas that changed. The pipeline owns one `Katex`; the
module-level `render_formulas` uses a shared default one.

node finds the `katex` package by its own rules, from the working directory
`cwd` (its `node_modules/`) or from `NODE_PATH`; `Katex.for_dist` derives
both from a KaTeX distribution folder such as `node_modules/katex/dist`.
"""

from __future__ import annotations

import json
import os
import re
import select
import shutil
import subprocess
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

SCRIPT = Path(__file__).with_name("katex_render.js")
TIMEOUT_S = 120


@dataclass(frozen=True)
class Rendered:
    """KaTeX's HTML for one formula, or its error message (html is then "")."""

    html: str
    error: str = ""

    @property
    def refused(self) -> tuple[str, ...]:
        """Commands KaTeX would not run (`\\href`, `\\url`, … under `trust:
        false`): it draws each one's name in its error colour instead."""
        return tuple(dict.fromkeys(_REFUSED.findall(self.html)))

    def refused_message(self) -> str:
        """What to say about a formula with refused commands ("" if none)."""
        if not self.refused:
            return ""
        return (
            f"KaTeX refused {', '.join(self.refused)} (shown in red on the page): "
            "links, images and HTML are not allowed in math; write them in "
            "the prose"
        )


# KaTeX's errorColor (#cc0000) around a command's name: the command refused.
_REFUSED = re.compile(r'style="color:#cc0000;">(\\[A-Za-z@]+)</span>')


class KatexUnavailable(RuntimeError):
    """node or the katex package cannot be run."""


class Katex:
    """Renders batches of formulas in one long-lived node process, cached.

    Call it with `(tex, display)` pairs; it returns {(tex, display): Rendered}.
    A formula KaTeX rejects comes back with `error` set; whether that fails
    the build is the caller's decision. `starts` counts node processes.
    """

    def __init__(self, cwd: Path | None = None, node_path: Path | None = None):
        self.cwd = cwd
        self.node_path = node_path
        self.cache: dict[tuple[str, bool], Rendered] = {}
        self.starts = 0  # node processes started
        self.batches = 0  # batches sent (formulas not in the cache)
        self._process: subprocess.Popen | None = None
        self._sent: list[tuple[str, bool]] = []  # the batch awaiting its reply

    @classmethod
    def for_dist(cls, dist: Path) -> Katex:
        """The renderer for a KaTeX distribution folder (`.../katex/dist`)."""
        package = dist.parent if dist.name == "dist" else dist
        return cls(cwd=package.parent.parent, node_path=package.parent)

    def __call__(self, formulas: Iterable[tuple[str, bool]]) -> dict:
        return self.send(formulas)()

    def send(self, formulas: Iterable[tuple[str, bool]]) -> Callable[[], dict]:
        """Send the batch to node now; the returned function waits for it.

        The caller can do other work (highlight the code) while node
        typesets. Raises KatexUnavailable, now or when waiting.
        """
        wanted = list(dict.fromkeys(formulas))
        self._receive()  # a reply nobody waited for goes to the cache first
        missing = [f for f in wanted if f not in self.cache]
        if missing:
            self._write(missing)

        def results() -> dict:
            self._receive()
            return {formula: self.cache[formula] for formula in wanted}

        return results

    def close(self) -> None:
        """End the node process (a later call starts a new one)."""
        self._sent = []
        process, self._process = self._process, None
        if process is not None:
            process.stdin.close()
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            process.stdout.close()
            process.stderr.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass

    def _write(self, formulas: list[tuple[str, bool]]) -> None:
        """Send one batch; its reply is read by `_receive`."""
        process = self._process or self._start()
        line = json.dumps([[tex, display] for tex, display in formulas]) + "\n"
        try:
            process.stdin.write(line.encode("utf-8"))
            process.stdin.flush()
        except OSError as error:
            detail = self._stop_with_stderr()
            raise KatexUnavailable(f"{SCRIPT.name}: {error}{detail}") from None
        self._sent = formulas
        self.batches += 1

    def _receive(self) -> None:
        """Read the reply to the batch in flight, if any, into the cache."""
        formulas, self._sent = self._sent, []
        if not formulas:
            return
        try:
            reply = self._read_line(self._process)
        except (OSError, KatexUnavailable) as error:
            detail = self._stop_with_stderr()
            raise KatexUnavailable(f"{SCRIPT.name}: {error}{detail}") from None
        results = json.loads(reply)
        if len(results) != len(formulas):
            raise KatexUnavailable(
                f"{SCRIPT.name} returned {len(results)} results for {len(formulas)}"
            )
        for formula, result in zip(formulas, results, strict=True):
            self.cache[formula] = Rendered(
                result.get("html", ""), result.get("error", "")
            )

    def _start(self) -> subprocess.Popen:
        node = shutil.which("node")
        if node is None:
            raise KatexUnavailable(
                "node not found on PATH; install Node.js and `npm ci`"
            )
        env = dict(os.environ)
        if self.node_path is not None:
            paths = [str(self.node_path), env.get("NODE_PATH", "")]
            env["NODE_PATH"] = os.pathsep.join(p for p in paths if p)
        self._process = subprocess.Popen(
            [node, str(SCRIPT)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=self.cwd,
            env=env,
        )
        self.starts += 1
        return self._process

    @staticmethod
    def _read_line(process: subprocess.Popen) -> bytes:
        """One reply line, or KatexUnavailable when node exits or hangs."""
        fd, chunks = process.stdout.fileno(), []
        deadline = time.monotonic() + TIMEOUT_S
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise KatexUnavailable(f"no answer in {TIMEOUT_S} s")
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                raise KatexUnavailable("node exited")
            chunks.append(chunk)
            if chunk.endswith(b"\n"):
                return b"".join(chunks)

    def _stop_with_stderr(self) -> str:
        process, self._process = self._process, None
        if process is None:
            return ""
        process.kill()
        stderr = process.stderr.read().decode("utf-8", "replace").strip()
        process.wait()
        lines = [row.strip() for row in stderr.splitlines() if row.strip()]
        # node's own message ("Error: Cannot find module 'katex'"), else the end.
        said = next((row for row in lines if row.startswith("Error")), "")
        said = said or (lines[-1] if lines else "")
        where = f" under {self.node_path}" if self.node_path else ""
        hint = (
            f"; the katex package is looked for{where} (the plugin's `katex` "
            "option names its dist folder): install it with `npm install katex`"
        )
        return f" ({said}){hint}" if said else hint


_DEFAULT: Katex | None = None


def render_formulas(formulas: Iterable[tuple[str, bool]]) -> dict:
    """Render with the shared default `Katex` (node_modules of the cwd)."""
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = Katex(node_path=Path("node_modules").resolve())
    return _DEFAULT(formulas)


def clear_cache() -> None:
    """Forget every formula the shared default `Katex` rendered."""
    if _DEFAULT is not None:
        _DEFAULT.cache.clear()
