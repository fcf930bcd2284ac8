"""Benchmark build-time math: KaTeX in-process (embedded V8) against node.

    python bench/katex.py [--files 221] [--repeats 5]

The formulas are those of labml's corpus: every `.py` file of the installed
`labml_nn`, sorted, parsed and rendered once (tolerant mode, no examples)
with a recorder that keeps each page's batch of `(tex, display)` pairs, as
the pipeline sends them. Each round then typesets every batch, page by page,
in a fresh `literate.katex.Katex` per engine (so the engine's start, and
KaTeX's load, are counted once, as in one site build), taking turns:

- v8: KaTeX's browser build in mini-racer's V8, in this process (the default);
- node: a node process fed batches on stdin (`katex_render.js`), the way math
  was typeset before, from `node_modules/katex` (`npm ci`).

The table gives formulas per second (median of the rounds) and the ratio of
each engine's time to node's, round by round. It also checks that both
engines give byte-identical HTML for every formula.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[0] = str(ROOT)  # the repository root: `bench.timing`

import labml_nn  # noqa: E402

from bench.timing import format_table, median_ratio, times_each  # noqa: E402
from literate.katex import Katex  # noqa: E402
from literate.parse import parse  # noqa: E402
from literate.render import render_page_tolerant  # noqa: E402

LABML = Path(labml_nn.__file__).resolve().parent
NODE_DIST = ROOT / "node_modules" / "katex" / "dist"


def corpus_batches(count: int) -> list[list[tuple[str, bool]]]:
    """Each page's batch of formulas, for the first `count` labml sources."""
    batches: list[list[tuple[str, bool]]] = []
    recorder = Katex()

    def record(formulas):
        batch = list(dict.fromkeys(formulas))
        batches.append(batch)
        return recorder(batch)

    for path in sorted(LABML.rglob("*.py"))[:count]:
        source = path.relative_to(LABML.parent).as_posix()
        page = parse(path.read_text(encoding="utf-8"), source)
        render_page_tolerant(page, formulas=record)
    recorder.close()
    return [batch for batch in batches if batch]


def typeset(node: bool, batches: list[list[tuple[str, bool]]]) -> dict:
    """Every batch in a fresh engine; the formulas' results."""
    katex = Katex.for_dist(NODE_DIST, node=node)
    results: dict = {}
    try:
        for batch in batches:
            results.update(katex(batch))
    finally:
        katex.close()
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=221)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    if not (NODE_DIST / "katex.min.js").is_file():
        sys.exit(f"bench/katex.py: {NODE_DIST} is missing; run `npm ci` first")

    batches = corpus_batches(args.files)
    formulas = {f for batch in batches for f in batch}
    sent = len(formulas)  # each distinct formula is typeset once per run
    engines = {"v8 (in-process)": False, "node process": True}  # name: node?
    v8, node = (typeset(False, batches), typeset(True, batches))
    differ = [f for f in formulas if v8[f] != node[f]]

    times = times_each(
        {
            name: lambda n=uses_node: typeset(n, batches)
            for name, uses_node in engines.items()
        },
        warmup=1,
        repeats=args.repeats,
    )
    reference = times["node process"]
    rows = []
    for name in engines:
        seconds = statistics.median(times[name])
        ratio = median_ratio(reference, times[name])  # node's time / this one's
        rows.append([name, f"{seconds:.2f}", f"{sent / seconds:,.0f}", f"{ratio:.2f}x"])
    pages = len(batches)
    print(
        f"labml_nn: {min(args.files, len(list(LABML.rglob('*.py'))))} sources, "
        f"{pages} pages with math, {sent} distinct formulas "
        f"({sum(len(b) for b in batches)} in the pages' batches), "
        f"{args.repeats} rounds; errors (KaTeX rejects): "
        f"{sum(1 for f in formulas if v8[f].error)}"
    )
    print(format_table(["engine", "seconds", "formulas/s", "speed vs node"], rows))
    print(
        "HTML identical for every formula: "
        + ("yes" if not differ else f"no, {len(differ)} differ, e.g. {differ[0]!r}")
    )


if __name__ == "__main__":
    main()
