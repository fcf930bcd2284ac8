"""Shared helpers for the benchmarks: median timing, peak memory, tables.

Import from a benchmark script run as `python bench/<name>.py`. Python puts the
script's folder first on `sys.path`, not the repository root; so each script
first swaps that entry for the root, where the tutorial's modules (`mha`,
`train`) lie, and imports `bench.timing` as a package path:

    ROOT = Path(__file__).resolve().parent.parent
    sys.path[0] = str(ROOT)
    from bench.timing import times_each, median_ratio, peak_rss, format_table

Times are medians after warm-up calls (the first calls pay for allocation and
kernel selection). Memory is the resident-set high-water mark of one call in a
fresh subprocess, because a process that already ran other cases keeps their
freed memory in its allocator and would hide the call's own peak.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def median_seconds(
    fn: Callable[[], object], *, warmup: int = 2, repeats: int = 7
) -> float:
    """Median wall time of `fn()` in seconds over `repeats` calls after `warmup`."""
    return median_seconds_each({"fn": fn}, warmup=warmup, repeats=repeats)["fn"]


def times_each(
    fns: Mapping[str, Callable[[], object]], *, warmup: int = 2, repeats: int = 7
) -> dict[str, list[float]]:
    """Wall times in seconds of each function, taken in turns, one call per round.

    On a shared machine the load changes from second to second; taking turns
    (in an order that rotates every round) exposes every function to the same
    changes, so their ratios hold even when their absolute times drift.
    """
    if repeats < 1:
        raise ValueError(f"times_each: repeats must be >= 1, got {repeats}")
    for fn in fns.values():
        for _ in range(warmup):
            fn()
    names = list(fns)
    times: dict[str, list[float]] = {name: [] for name in names}
    for r in range(repeats):
        for name in names[r % len(names) :] + names[: r % len(names)]:
            start = time.perf_counter()
            fns[name]()
            times[name].append(time.perf_counter() - start)
    return times


def median_seconds_each(
    fns: Mapping[str, Callable[[], object]], *, warmup: int = 2, repeats: int = 7
) -> dict[str, float]:
    """Median of `times_each` for each function."""
    times = times_each(fns, warmup=warmup, repeats=repeats)
    return {name: statistics.median(t) for name, t in times.items()}


def median_ratio(times: Sequence[float], reference: Sequence[float]) -> float:
    """Median over rounds of `times[i] / reference[i]` (from one `times_each`).

    A ratio within a round compares calls made seconds apart, under the same
    load; its median is steadier than the ratio of two medians.
    """
    if len(times) != len(reference) or not times:
        raise ValueError(
            f"median_ratio: expected two equally long, non-empty lists of times, "
            f"got {len(times)} and {len(reference)}"
        )
    return statistics.median(t / r for t, r in zip(times, reference, strict=True))


@dataclass(frozen=True)
class PeakRss:
    """Resident memory of one measured call, in bytes."""

    before: int  # RSS just before the call (interpreter, libraries, inputs)
    peak: int  # high-water mark of RSS during the call

    @property
    def call(self) -> int:
        """Memory the call itself added at its peak."""
        return max(self.peak - self.before, 0)


# glibc grows its mmap threshold after large frees, after which freed blocks
# stay in the heap and the measured call could reuse the warm-up's memory
# unseen. A fixed threshold makes every block over 128 KiB its own mapping,
# returned to the system when freed.
_MALLOC_ENV = {"MALLOC_MMAP_THRESHOLD_": "131072", "MALLOC_TRIM_THRESHOLD_": "131072"}

# Runs in the fresh subprocess. `setup(*args)` builds the inputs and returns the
# call to measure; the high-water mark is reset only after setup, so it counts
# the call alone. Writing "5" to clear_refs resets VmHWM (Linux >= 4.0).
_CHILD = """
import importlib, json, sys
sys.path.insert(0, sys.argv[1])
module, _, name = sys.argv[2].partition(":")
call = getattr(importlib.import_module(module), name)(*json.loads(sys.argv[3]))
call()  # warm-up: first-call allocations (thread pools, kernels) are not the call's


def status(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no " + field + " in /proc/self/status")


with open("/proc/self/clear_refs", "w") as f:
    f.write("5")
before = status("VmRSS")
call()
print(json.dumps({"before": before, "peak": status("VmHWM")}))
"""


def peak_rss(target: str, *args: object, timeout: float = 600) -> PeakRss:
    """Peak RSS of one call, measured in a fresh Python subprocess.

    `target` is `"module:function"`, importable from the repository root
    (e.g. `"bench.mha_speed:memory_case"`); the function is called with `args`
    (which must survive JSON) and returns the zero-argument callable to measure.
    """
    module, sep, name = target.partition(":")
    if not sep or not module or not name:
        raise ValueError(f"peak_rss: target must be 'module:function', got {target!r}")
    if not Path("/proc/self/clear_refs").exists():
        raise RuntimeError("peak_rss: needs Linux /proc/self/clear_refs")
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD, str(ROOT), target, json.dumps(list(args))],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
        env={**os.environ, **_MALLOC_ENV},
    )
    if proc.returncode != 0:
        raise RuntimeError(
            f"peak_rss: {target}{tuple(args)} failed (exit {proc.returncode}):\n"
            f"{proc.stderr.strip()}"
        )
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    return PeakRss(before=result["before"], peak=result["peak"])


def format_table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A Markdown table, columns padded so it also reads well in a terminal."""
    cells = [[str(h) for h in headers]] + [[str(c) for c in row] for row in rows]
    for i, row in enumerate(cells):
        if len(row) != len(headers):
            raise ValueError(
                f"format_table: row {i} has {len(row)} cells, "
                f"expected {len(headers)} (one per header)"
            )
    widths = [max(len(row[c]) for row in cells) for c in range(len(headers))]

    def line(row: Sequence[str]) -> str:
        return (
            "| "
            + " | ".join(c.ljust(w) for c, w in zip(row, widths, strict=True))
            + " |"
        )

    rule = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return "\n".join([line(cells[0]), rule, *(line(r) for r in cells[1:])])
