"""Benchmark the site: full build, re-render of one source, page weight,
labml's corpus.

    python bench/site.py [--files 221] [--builds 3] [--parts site,weight,corpus]
                         [--reference SITE]

(a) `mkdocs build` of the whole site in a subprocess (median of --builds;
    skipped with a note when mkdocs.yml is missing), and the in-process
    re-render of one changed source (parse, translate, render; every language)
    as `mkdocs serve` does it after an edit, with the math cache warm.
(w) page weight (`bench/page_weight.py`) of the site just built: for each
    chapter and home page in every language, the bytes a browser loads for
    the page opened and for the page read to the end (HTML, CSS, JS, images,
    fonts, data), against labml's published mha page (74 kB, cited from the
    comparison of labml's tree, not run) and, with --reference, against
    another build (the site before a change), measured in the same run.
(b) every `.py` file of the installed `labml_nn` package (labml's annotated
    implementations, the corpus this renderer must handle), sorted, through
    one `Pipeline` rooted at the folder above the package: parsed and
    rendered in English, no examples run. Rendering uses the tolerant mode:
    a formula KaTeX rejects is shown as escaped TeX and counted; any
    exception is a failure, and so is an ASCII control character (other
    than tab and newline) in the HTML. The reference is Pygments
    highlighting the same files, timed in the same run, so the ratio holds
    on a busy machine even when the absolute rate does not.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from importlib.metadata import entry_points
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[0] = str(ROOT)  # the repository root: `bench.timing`

import labml_nn  # noqa: E402
from pygments import highlight  # noqa: E402
from pygments.formatters import HtmlFormatter  # noqa: E402
from pygments.lexers import PythonLexer  # noqa: E402

from bench import page_weight  # noqa: E402
from bench.timing import format_table, median_seconds  # noqa: E402
from literate.pipeline import Pipeline  # noqa: E402

LABML = Path(labml_nn.__file__).resolve().parent
CONTROL = re.compile("[\x00-\x08\x0b-\x0c\x0e-\x1f\x7f]")


def corpus(count: int) -> list[Path]:
    """The first `count` `.py` files of the installed labml_nn, sorted."""
    return sorted(LABML.rglob("*.py"))[:count]


# --- (a) the site ------------------------------------------------------------------


def plugin_env(folder: Path) -> dict[str, str]:
    """The environment for `mkdocs build`, registering the plugin if needed.

    `make install` installs the project (and its entry point); a checkout
    that has not gets a throwaway dist-info in `folder` on PYTHONPATH.
    """
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    if entry_points(group="mkdocs.plugins", name="literate"):
        return env
    info = folder / "literate_local-0.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: literate-local\n")
    (info / "entry_points.txt").write_text(
        "[mkdocs.plugins]\nliterate = literate.mkdocs.plugin:LiteratePlugin\n"
    )
    env["PYTHONPATH"] = os.pathsep.join([str(folder), str(ROOT)])
    return env


def build_seconds(builds: int, out: Path) -> list[float]:
    """Times of `builds` builds into `out` (the last build stays there)."""
    times = []
    with tempfile.TemporaryDirectory() as tmp:
        env = plugin_env(Path(tmp) / "ep")
        command = [sys.executable, "-m", "mkdocs", "build", "-q", "-d", str(out)]
        for _ in range(builds):
            start = time.perf_counter()
            done = subprocess.run(
                command, cwd=ROOT, env=env, capture_output=True, text=True
            )
            times.append(time.perf_counter() - start)
            if done.returncode != 0:
                raise SystemExit(f"mkdocs build failed:\n{done.stderr[-2000:]}")
    return times


def rerender_seconds(source: str) -> dict[str, float]:
    """One source edited, then parsed and rendered in every language."""
    text = (ROOT / source).read_text(encoding="utf-8")
    langs = sorted(p.name for p in (ROOT / "translations").iterdir() if p.is_dir())
    pipeline = Pipeline(ROOT, run_examples=False)
    edits = iter(range(10**6))

    def rerender(new_formula: bool) -> None:
        n = next(edits)
        extra = f"$x_{{{n}}}$" if new_formula else f"edit {n}"
        pipeline.read = lambda _: text + f"\n# An edit: {extra}.\n"
        pipeline.forget(source)
        for lang in ["en", *langs]:
            pipeline.html(pipeline.page(source, lang))

    try:
        return {
            "prose edited": median_seconds(lambda: rerender(False), repeats=5),
            "new formula": median_seconds(lambda: rerender(True), repeats=5),
        }
    finally:
        pipeline.close()


# --- (b) foreign files -------------------------------------------------------------


def render_corpus(files: list[Path]) -> dict:
    pipeline = Pipeline(LABML.parent, run_examples=False)
    failures, tolerated, times = [], 0, []
    children = _children_cpu()
    cpu = time.process_time()
    wall = time.perf_counter()
    for path in files:
        name = path.relative_to(LABML.parent).as_posix()
        start = time.perf_counter()
        try:
            html, errors = pipeline.tolerant_html(pipeline.english(name))
            tolerated += len(errors)
            control = CONTROL.search(html)
            if control:
                failures.append(f"{name}: control character {control.group()!r}")
        except Exception as error:  # noqa: BLE001 - every failure is counted
            failures.append(f"{name}: {type(error).__name__}: {error}")
        times.append((time.perf_counter() - start, name))
    pipeline.close()  # node exits: its CPU time is now counted
    return {
        "wall": time.perf_counter() - wall,
        "cpu": time.process_time() - cpu,
        "node": _children_cpu() - children,
        "slowest": max(times),
        "failures": failures,
        "tolerated": tolerated,
    }


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def pygments_seconds(files: list[Path]) -> float:
    lexer, formatter = PythonLexer(), HtmlFormatter()
    start = time.perf_counter()
    for path in files:
        highlight(path.read_text(encoding="utf-8"), lexer, formatter)
    return time.perf_counter() - start


def weigh_pages(site: Path, reference: Path | None) -> None:
    """Print the page weight table of the built `site` (see bench/page_weight.py)."""
    weights = page_weight.measure(site)
    before = page_weight.measure(reference) if reference else None
    print("Page weight, kB (1000 bytes); read = scrolled to the end, no search\n")
    print(page_weight.table(weights, before))
    print()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--files", type=int, default=221)
    parser.add_argument("--builds", type=int, default=3)
    parser.add_argument(
        "--parts", default="site,weight,corpus", help="which parts to run"
    )
    parser.add_argument(
        "--reference", type=Path, help="a built site to weigh the pages against"
    )
    args = parser.parse_args()
    parts = set(args.parts.split(","))
    if parts - {"site", "weight", "corpus"}:
        parser.error(f"--parts: expected site, weight, corpus; got {args.parts!r}")
    rows = []
    if not (ROOT / "mkdocs.yml").exists():
        print("note: no mkdocs.yml yet, so no site build timing\n")
    elif parts & {"site", "weight"}:
        with tempfile.TemporaryDirectory() as tmp:
            builds = build_seconds(args.builds if "site" in parts else 1, Path(tmp))
            if "weight" in parts:
                weigh_pages(Path(tmp), args.reference)
        if "site" in parts:
            median = statistics.median(builds)
            rows.append(["mkdocs build, whole site", f"{median:.2f} s", "≤ 3 s"])
            for what, seconds in rerender_seconds("mha.py").items():
                rows.append(
                    [f"re-render mha.py, {what}", f"{seconds:.3f} s", "≤ 0.5 s"]
                )
    if "corpus" not in parts:
        if rows:
            print(format_table(["measure", "result", "target"], rows))
        return
    files = corpus(args.files)
    result = render_corpus(files)
    reference = pygments_seconds(files)
    n = len(files)
    slow_time, slow_name = result["slowest"]
    rows += [
        [
            f"{n} labml_nn files, parse + render",
            f"{n / result['wall']:.1f} files/s",
            "≥ 50",
        ],
        [
            "  same, CPU time of this process and node",
            f"{n / (result['cpu'] + result['node']):.1f} files/s",
            "",
        ],
        ["  Pygments alone on the same files", f"{n / reference:.1f} files/s", ""],
        ["  render time / Pygments time", f"{result['wall'] / reference:.2f}", ""],
        ["  slowest file", f"{slow_time:.2f} s {slow_name}", ""],
        ["  failures", str(len(result["failures"])), "0"],
        ["  formulas shown as TeX (KaTeX error)", str(result["tolerated"]), ""],
    ]
    print(format_table(["measure", "result", "target"], rows))
    print(f"load average while measuring: {os.getloadavg()[0]:.1f}")
    for failure in result["failures"]:
        print("FAILED", failure)


if __name__ == "__main__":
    main()
