"""The execute stage: run a page's `#|` examples and attach what they showed.

An example is a `#|` line (its grammar: `literate.directives`; the
authors' guide: `docs/outputs.md`), evaluated in the namespace of the page's
module, imported under its dotted name from the first folder above it that
is not a package (`geom.vectors` for `src/geom/vectors.py`), so the page's
own package imports work and `if __name__ == "__main__":` blocks do not run.
What it shows is what a notebook cell would (see `literate.example_process`).

All the pending examples of a page run in one fresh subprocess, started in
the repository root, with matplotlib's Agg backend and the figures' style
(`literate.example_process.STYLE`). Each
result is cached under a key made from everything that can change it (see
`literate.cache_key`): a build where nothing changed starts no process, and
editing one function re-runs only the examples that reach it.

For a translated page, the examples that reach a `tr("...")` word (see
`literate.words`) run again with that language's words, and with a font
that has its glyphs; the others show the English page's outputs. A glyph
missing from the fonts is an error naming the example's line; a figure's
text that reaches past its canvas, cut off in the saved file, is a warning
naming it (`literate.clipped`), which fails a `--strict` build.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import replace
from itertools import pairwise
from pathlib import Path, PurePosixPath

from literate.cache_key import (
    PACKAGES,
    Reach,
    code_key,
    reach,
)
from literate.directives import Example, ExecuteError, page_examples
from literate.directives import read_directive as read_directive  # re-exported
from literate.example_process import STYLE, scrub
from literate.figures import figure_url
from literate.languages import FONTS
from literate.model import Output, Page
from literate.narrow import is_narrow, smallest_text

log = logging.getLogger(__name__)
# Warnings about the pages (a figure's text cut off): in a `--strict` mkdocs
# build each one fails the build.
page_log = logging.getLogger("mkdocs.plugins.literate")

DEFAULT_CACHE = Path(".cache/outputs")  # relative to the repository root
TIMEOUT = 600.0  # seconds for all the pending examples of one page

# Bump when what a cache entry holds, or how it is made, changes.
# 2: each figure's PNG too ("rasters"), beside its SVG.
# 3: each figure's text cut off by its canvas ("clipped").
FORMAT = 3


def execute_page(
    page: Page,
    source_path: Path,
    *,
    cache_dir: Path | None = None,
    root: Path | None = None,
    timeout: float = TIMEOUT,
    packages: tuple[str, ...] = PACKAGES,
    lang: str = "",
    words: Mapping[str, str] | None = None,
    reaches: Mapping[int, Reach] | None = None,
) -> Page:
    """`page` with the outputs of its examples; runs only what is not cached.

    `source_path` is the file `page` was parsed from; the repository root is
    the folder that `page.source` is relative to, unless `root` is given.
    `cache_dir` defaults to `.cache/outputs` under the root; `packages` are
    the installed packages whose versions count for the cache key. For a
    translated page, `lang` is its language and `words` its table (English
    -> translation, checked): the examples' `tr` words and alt texts.
    `reaches`: what each example (by its line) reaches (`cache_key.reach`),
    when the caller has it; else it is found here.
    """
    examples = [e for e in page_examples(page) if not e.notebook_only]
    if not examples:
        return page
    root = (root or _root_of(Path(source_path), page.source)).resolve()
    cache = Cache(root / (cache_dir or DEFAULT_CACHE), root)
    words = words or {}
    reaches = dict(reaches or {})
    for e in examples:
        if e.line not in reaches:
            reaches[e.line] = reach(root, page.source, e.expr)
    used = {e.line: _used_words(reaches[e.line], lang, words) for e in examples}
    keys = {
        e.line: _example_key(
            e, page.source, root, packages, reaches[e.line], lang, used[e.line]
        )
        for e in examples
    }
    results = {e.line: cache.get(keys[e.line]) for e in examples}
    pending = [e for e in examples if results[e.line] is None]
    if pending:
        log.info("%s: running %d example(s) %s", page.source, len(pending), lang)
        language = (lang, {w: v for e in pending for w, v in used[e.line].items()})
        done, failure = _run(page.source, root, pending, timeout, language)
        for result in done:  # those that succeeded, even if a later one failed
            cache.put(keys[result["line"]], result)
            results[result["line"]] = result
        if failure:
            raise failure
    outputs = {
        e.line: _outputs(e, results[e.line], page.source, words.get(e.alt) or e.alt)
        for e in examples
    }
    for e in examples:
        _warn_clipped(e, results[e.line], page.source, lang if used[e.line] else "")
    sections = tuple(
        replace(
            s,
            outputs=tuple(o for d in s.directives for o in outputs.get(d.number, ())),
        )
        for s in page.sections
    )
    return replace(page, sections=sections)


def _root_of(source_path: Path, source: str) -> Path:
    """The folder that the repo-relative `source` is relative to."""
    path = source_path.resolve()
    parts = PurePosixPath(source).parts
    if tuple(path.parts[-len(parts) :]) != parts:
        raise ExecuteError(
            source, 1, f"source_path {source_path} does not end with {source}"
        )
    return path.parents[len(parts) - 1]


def _used_words(reached: Reach, lang: str, words: Mapping[str, str]) -> dict[str, str]:
    """The `tr` words an example reaches, with their translations in `lang`.

    {} for an English page, or an example that reaches none: its output is
    then the English page's.
    """
    if not lang or lang == "en":
        return {}
    return {w: words.get(w, "") for w in reached.words}


def _example_key(
    example: Example,
    source: str,
    root: Path,
    packages: tuple[str, ...],
    reached: Reach,
    lang: str = "",
    used: dict[str, str] | None = None,
) -> str:
    """The cache key: the example, the code it reaches, and the versions.

    With `used` words, also the language, its fonts and those translations.
    """
    salt: dict = {"format": FORMAT, "style": STYLE}
    if used:
        salt |= {"lang": lang, "fonts": FONTS.get(lang), "words": used}
    return code_key(root, source, example.expr, salt, packages, reached)


def _outputs(
    example: Example, result: dict, source: str, alt: str = ""
) -> tuple[Output, ...]:
    """A cached result as Outputs: its text, then its figures with alt text.

    `alt` is the example's alt text in the page's language (default: its own).
    """
    alt = alt or example.alt
    outputs = []
    if result["text"]:
        outputs.append(Output(example.line, "text", text=result["text"]))
    figures = result["figures"]
    if figures and not example.alt:
        raise ExecuteError(
            source,
            example.line,
            f"`{example.expr}` made {len(figures)} figure(s) but has no alt text; "
            "end the line with `| alt: what the figure shows`",
        )
    rasters = result.get("rasters") or [""] * len(figures)
    # A narrow variant (`literate.narrow`) is the figure before it, redrawn:
    # it takes that one's number and alt text.
    wide = [not is_narrow(svg) for svg in figures]
    if any(not w and not before for before, w in pairwise([False, *wide])):
        raise ExecuteError(
            source,
            example.line,
            f"`{example.expr}` drew a narrow variant (narrow(fig)) that does not"
            " follow a figure of its own: draw the wide figure, then its variant",
        )
    count, i = sum(wide), 0
    for svg, png, shown in zip(figures, rasters, wide, strict=True):
        i += shown
        numbered = alt if count == 1 else f"{alt} ({i}/{count})"
        url = figure_url(svg, png)
        outputs.append(
            Output(
                example.line,
                "image",
                image=url,
                alt=numbered,
                variant="" if shown else "narrow",
                text_size=smallest_text(svg),
            )
        )
    for data in result.get("data", ()):  # entries cached before data had none
        outputs.append(
            Output(example.line, "data", text=data["json"], name=data["name"])
        )
    return tuple(outputs)


def _warn_clipped(example: Example, result: dict, source: str, lang: str) -> None:
    """A warning per figure whose canvas cuts off some of its text, naming the
    example's `file:line`, the language it was drawn in and the texts; every
    build gives them, cached or not, as the result keeps its findings."""
    clipped = result.get("clipped") or ()
    for number, lines in enumerate(clipped, 1):
        if not lines:
            continue
        figure = f"figure {number} of {len(clipped)}" if len(clipped) > 1 else "figure"
        drawn = f" ({lang})" if lang and lang != "en" else ""
        shown = "; ".join(lines[:4]) + (
            f"; and {len(lines) - 4} more" if lines[4:] else ""
        )
        page_log.warning(
            "%s:%d: %s%s: text cut off by the canvas: %s. Make room for it "
            "(a larger figure, a shorter or wrapped label, a layout engine)",
            source, example.line, figure, drawn, shown,
        )  # fmt: skip


class Cache:
    """Results by key, one JSON file each; valid while their inputs are unchanged.

    A result also lists the data files (not Python sources) that its example
    read, or tried to read, under the root, with their hashes: a changed file,
    or one that has since appeared, re-runs it.
    """

    def __init__(self, folder: Path, root: Path):
        self.folder, self.root = folder, root

    def get(self, key: str) -> dict | None:
        try:
            entry = json.loads((self.folder / f"{key}.json").read_text("utf-8"))
        except (OSError, ValueError):
            return None
        for name, digest in entry["inputs"].items():
            if _file_hash(self.root / name) != digest:
                return None
        return entry

    def put(self, key: str, result: dict) -> None:
        """Write atomically: a reader sees the old entry or the whole new one."""
        self.folder.mkdir(parents=True, exist_ok=True)
        inputs = {name: _file_hash(self.root / name) for name in result["inputs"]}
        entry = dict(result, inputs=inputs)
        fd, tmp = tempfile.mkstemp(dir=self.folder, suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(entry, f, ensure_ascii=False, sort_keys=True)
        os.replace(tmp, self.folder / f"{key}.json")


def _file_hash(path: Path) -> str:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return ""  # a missing file matches no recorded hash


# ---- the parent's side of the subprocess ----------------------------------


def _run(
    source: str,
    root: Path,
    pending: list[Example],
    timeout: float,
    language: tuple[str, dict[str, str]] = ("", {}),
) -> tuple[list[dict], ExecuteError | None]:
    """Run `pending` in a fresh interpreter: the results, and the failure if any.

    Examples run in order and stop at the first that fails; the results of
    those before it come back too, so that they can be cached. `language` is
    the page's language and the `tr` words with their translations.
    """
    literate_home = str(Path(__file__).resolve().parents[1])
    env = dict(os.environ, MPLBACKEND="Agg", PYTHONHASHSEED="0")
    env["PYTHONPATH"] = os.pathsep.join(
        [literate_home, *filter(None, [os.environ.get("PYTHONPATH")])]
    )
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "results.json"
        request = {
            "root": str(root),
            "source": source,
            "examples": [[e.line, e.expr, e.hide_value] for e in pending],
            "results": str(out),
            "lang": language[0],
            "words": language[1],
        }
        first = pending[0].line
        try:
            done = subprocess.run(
                [sys.executable, "-m", "literate.example_process"],
                input=json.dumps(request),
                capture_output=True,
                text=True,
                cwd=root,
                env=env,
                timeout=timeout,
            )
        except subprocess.TimeoutExpired as err:
            raise ExecuteError(
                source, first, f"the examples did not finish in {timeout:g} s"
            ) from err
        if not out.exists():
            stderr = scrub(done.stderr, root)[-4000:]
            raise ExecuteError(
                source,
                first,
                f"the example process ended (exit status {done.returncode}) "
                f"without results:\n{stderr}",
            )
        reply = json.loads(out.read_text("utf-8"))
    if done.stderr.strip():
        log.info("%s: the examples wrote to stderr:\n%s", source, done.stderr)
    failure = reply["error"]
    if failure:
        failure = ExecuteError(source, failure["line"], failure["traceback"])
    return reply["results"], failure
