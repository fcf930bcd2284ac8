"""Benchmark repeated content: many identical sections or headings in one page.

    python bench/repeats.py [--small 2000] [--large 16000] [--repeats 3]

Parse and render (English, no examples, math none) of a source made of
`--small` and of `--large` copies of one section, each timed in the same
process (median of --repeats). Linear work gives a ratio of about
large / small (8 by default); the search for a free anchor or heading id
that restarted at `-2` for every repeat made it about 60.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[0] = str(ROOT)

from bench.timing import format_table, median_seconds  # noqa: E402
from literate.parse import parse  # noqa: E402
from literate.render import render_page  # noqa: E402

BLOCKS = {
    "identical sections": "# Same.\nx = 1\n",
    "identical headings": "# ## Same\n#\n# text\nx = 1\n",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--small", type=int, default=2000)
    parser.add_argument("--large", type=int, default=16000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    if not 0 < args.small < args.large:
        parser.error("--small and --large: expected 0 < small < large")
    rows = []
    for name, block in BLOCKS.items():
        seconds = {
            n: median_seconds(
                lambda n=n, b=block: render_page(parse(b * n, "same.py")),
                warmup=0,
                repeats=args.repeats,
            )
            for n in (args.small, args.large)
        }
        ratio = seconds[args.large] / seconds[args.small]
        rows.append(
            [name, f"{seconds[args.small]:.2f}", f"{seconds[args.large]:.2f}",
             f"{ratio:.1f}x", f"{args.large / args.small:.0f}x"]
        )  # fmt: skip
    headers = ["source", f"{args.small} (s)", f"{args.large} (s)", "ratio", "linear"]
    print(format_table(headers, rows))


if __name__ == "__main__":
    main()
