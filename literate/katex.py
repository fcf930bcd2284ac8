"""TeX to HTML + MathML at build time, with KaTeX run in-process or by node.

KaTeX runs in an embedded V8 (the `mini-racer` package) inside the Python
process, from the KaTeX distribution that ships in this package
(`literate/vendor/katex`: its JS, CSS, woff2 fonts and licence), so a site
needs no Node.js. `python bench/katex.py` measures it against the node
process it replaced; where mini-racer cannot be imported, or the
distribution folder holds no `katex.min.js`, a node process
(`katex_render.js`) is used instead, found by node's own rules.

A `Katex` keeps one engine for as long as it lives and sends it the formulas
of each page as one batch, so a site or a corpus of hundreds of pages pays
for loading KaTeX once, not once per page. Results, errors included, are
cached by `(tex, display)`: a rebuild under `mkdocs serve` renders only the
formulas that changed. The pipeline owns one `Katex`; the module-level
`render_formulas` uses a shared default one.
"""

from __future__ import annotations

import json
import os
import re
import select
import shutil
import subprocess
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

SCRIPT = Path(__file__).with_name("katex_render.js")
# The KaTeX distribution carried in the package (version: VERSION).
DIST = Path(__file__).with_name("vendor") / "katex"
VERSION = "0.16.47"
TIMEOUT_S = 120
V8_FLAGS: tuple[str, ...] = ()  # V8's defaults: helper threads allowed


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
    """Neither the in-process engine nor node can run KaTeX."""


def dist_folder(root: Path, option: str) -> Path:
    """The KaTeX distribution a `katex_dist` option names: a folder relative to
    `root`, or "" for the one carried in this package."""
    return root / option if option else DIST


class Katex:
    """Renders batches of formulas in one long-lived engine, cached.

    Call it with `(tex, display)` pairs; it returns {(tex, display): Rendered}.
    A formula KaTeX rejects comes back with `error` set; whether that fails
    the build is the caller's decision. `starts` counts engines started (a V8
    context loading KaTeX, or a node process).

    `dist`: the KaTeX distribution folder to run in-process (default: the
    packaged one). `node=True`, or a `cwd`/`node_path` without a `dist`,
    runs node instead, which finds the `katex` package from the working
    directory `cwd` (its `node_modules/`) or `NODE_PATH`.
    """

    def __init__(
        self,
        cwd: Path | None = None,
        node_path: Path | None = None,
        *,
        dist: Path | None = None,
        node: bool | None = None,
    ):
        self.cwd = cwd
        self.node_path = node_path
        if node is None:
            legacy = dist is None and (cwd or node_path) is not None
            forced = os.environ.get("LITERATE_KATEX") == "node"  # e.g. the tests
            node = legacy or forced or not _in_process_available(dist or DIST)
        self.node = node
        self.dist = dist or DIST
        self.cache: dict[tuple[str, bool], Rendered] = {}
        self.starts = 0  # engines started
        self.batches = 0  # batches sent (formulas not in the cache)
        self._engine: _Node | _V8 | None = None
        self._sent: list[tuple[str, bool]] = []  # the batch awaiting its reply

    @classmethod
    def for_dist(cls, dist: Path, *, node: bool | None = None) -> Katex:
        """The renderer for a KaTeX distribution folder (`.../katex/dist`):
        in-process where it can be, else node with that folder's package."""
        package = dist.parent if dist.name == "dist" else dist
        return cls(
            cwd=package.parent.parent, node_path=package.parent, dist=dist, node=node
        )

    @property
    def engine(self) -> str:
        """ "v8" (in-process) or "node"."""
        return "node" if self.node else "v8"

    def __call__(self, formulas: Iterable[tuple[str, bool]]) -> dict:
        return self.send(formulas)()

    def send(self, formulas: Iterable[tuple[str, bool]]) -> Callable[[], dict]:
        """Start typesetting the batch now; the returned function waits for it.

        The caller can do other work (highlight the code) while KaTeX
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
        """End the engine (a later call starts a new one)."""
        self._sent = []
        engine, self._engine = self._engine, None
        if engine is not None:
            engine.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass

    def _write(self, formulas: list[tuple[str, bool]]) -> None:
        """Send one batch; its reply is read by `_receive`."""
        if self._engine is None:
            self._engine = _Node(self) if self.node else _V8(self.dist)
            self.starts += 1
        line = json.dumps([[tex, display] for tex, display in formulas])
        try:
            self._engine.write(line)
        except KatexUnavailable as error:
            self._engine = None
            raise KatexUnavailable(f"{SCRIPT.name}: {error}") from None
        self._sent = formulas
        self.batches += 1

    def _receive(self) -> None:
        """Read the reply to the batch in flight, if any, into the cache."""
        formulas, self._sent = self._sent, []
        if not formulas:
            return
        try:
            reply = self._engine.read()
        except KatexUnavailable as error:
            self._engine = None
            raise KatexUnavailable(f"{SCRIPT.name}: {error}") from None
        results = json.loads(reply)
        if len(results) != len(formulas):
            raise KatexUnavailable(
                f"{SCRIPT.name} returned {len(results)} results for {len(formulas)}"
            )
        for formula, result in zip(formulas, results, strict=True):
            self.cache[formula] = Rendered(
                result.get("html", ""), result.get("error", "")
            )


def _in_process_available(dist: Path) -> bool:
    """Whether mini-racer imports and `dist` holds KaTeX's browser build."""
    try:
        import py_mini_racer  # noqa: F401
    except ImportError:
        return False
    return (dist / "katex.min.js").is_file()


class _V8:
    """KaTeX in an embedded V8 context; a batch runs on a worker thread,
    which waits on V8 without holding the GIL, so Python goes on meanwhile."""

    def __init__(self, dist: Path):
        from py_mini_racer import MiniRacer, init_mini_racer

        code = dist / "katex.min.js"
        try:
            # V8 with its own helper threads (mini-racer's default is
            # `--single-threaded`): it compiles and collects garbage beside
            # the page's formulas, as node does (bench/katex.py measures it).
            # Once per process; a V8 started before keeps its flags.
            init_mini_racer(flags=V8_FLAGS, ignore_duplicate_init=True)
            self._context = MiniRacer()
            self._context.eval(code.read_text(encoding="utf-8"))
            self._context.eval(SCRIPT.read_text(encoding="utf-8"))
        except OSError as error:
            raise KatexUnavailable(f"{code}: {error.strerror}") from None
        except Exception as error:  # noqa: BLE001 - V8's own exception types
            raise KatexUnavailable(f"loading {code}: {error}") from None
        self._thread: threading.Thread | None = None
        self._reply: str | BaseException = ""

    def write(self, line: str) -> None:
        def run() -> None:
            try:
                self._reply = self._context.call("literateRenderBatch", line)
            except BaseException as error:  # noqa: BLE001 - handed to read()
                self._reply = error

        self._thread = threading.Thread(target=run, name="katex", daemon=True)
        self._thread.start()

    def read(self) -> str:
        self._thread.join(TIMEOUT_S)
        if self._thread.is_alive():
            raise KatexUnavailable(f"no answer in {TIMEOUT_S} s")
        reply, self._reply = self._reply, ""
        if isinstance(reply, BaseException):
            raise KatexUnavailable(f"V8: {reply}")
        return reply

    def close(self) -> None:
        if self._thread is not None:
            self._thread.join(TIMEOUT_S)
        self._context.close()


class _Node:
    """KaTeX in a node process reading batches on stdin, one per line."""

    def __init__(self, owner: Katex):
        self.node_path = owner.node_path
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
            cwd=owner.cwd,
            env=env,
        )

    def write(self, line: str) -> None:
        try:
            self._process.stdin.write((line + "\n").encode("utf-8"))
            self._process.stdin.flush()
        except OSError as error:
            raise KatexUnavailable(f"{error}{self._stop_with_stderr()}") from None

    def read(self) -> bytes:
        """One reply line, or KatexUnavailable when node exits or hangs."""
        fd, chunks = self._process.stdout.fileno(), []
        deadline = time.monotonic() + TIMEOUT_S
        try:
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
        except (OSError, KatexUnavailable) as error:
            raise KatexUnavailable(f"{error}{self._stop_with_stderr()}") from None

    def close(self) -> None:
        process = self._process
        process.stdin.close()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        process.stdout.close()
        process.stderr.close()

    def _stop_with_stderr(self) -> str:
        process = self._process
        process.kill()
        stderr = process.stderr.read().decode("utf-8", "replace").strip()
        process.wait()
        lines = [row.strip() for row in stderr.splitlines() if row.strip()]
        # node's own message ("Error: Cannot find module 'katex'"), else the end.
        said = next((row for row in lines if row.startswith("Error")), "")
        said = said or (lines[-1] if lines else "")
        where = f" under {self.node_path}" if self.node_path else ""
        hint = (
            f"; the katex package is looked for{where} (the plugin's `katex_dist` "
            "option names its dist folder): install it with `npm install katex`"
        )
        return f" ({said}){hint}" if said else hint


_DEFAULT: Katex | None = None


def render_formulas(formulas: Iterable[tuple[str, bool]]) -> dict:
    """Render with the shared default `Katex` (the packaged distribution)."""
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = Katex()
    return _DEFAULT(formulas)
