"""Record the ablation table: `python -m trainkit.ablations runs/ablations`.

Trains the `cpu` preset of `train.py` once per variant in `VARIANTS`, each
with one choice of the recipe undone, at the reduced budget `BUDGET` (the
whole schedule compressed into fewer steps) and the preset's seed, on one
thread, so the losses do not depend on the machine's load (only the times
do). Each run trains into `out/ablations/<name>/` (ignored by git). Then, and
only if every run succeeded, it writes into the folder named:

* `results.json`: per variant its name, the extra flags, the configuration
  fields they changed, the final training and validation losses, every
  evaluation, the wall time and the parameter count; and the machine and
  versions the runs had;
* `README.md`: what the table is, the command, the variants and the table.

Each file is replaced atomically (`trainkit.files.write_atomically`); a
failed run leaves the folder as it was.

    python -m trainkit.ablations [--variants a,b] [--work DIR] FOLDER [OPTIONS]

OPTIONS after the folder go to every run, after `BUDGET` (so they can change
it: `--steps 2000`) and before the variant's own flags (so a variant always
differs from the baseline in what its name says). `--variants` picks some of
the variants by name, `--work` the folder the runs train into.

`ablation_rows` reads `results.json` back for the page, which prints it in
its own words and language.
"""

from __future__ import annotations

import json
import math
import os
import platform
import shlex
import subprocess
import sys
import textwrap
import time
from dataclasses import dataclass
from pathlib import Path

import torch

from trainkit import RunError
from trainkit.checkpoints import load_checkpoint
from trainkit.files import write_atomically
from trainkit.metrics import Metrics

ROOT = Path(__file__).resolve().parent.parent
RECORDED = ROOT / "runs" / "ablations"
WORK = Path("out/ablations")
# A third of the `cpu` preset's 3000 steps (`README.md` records how long each
# run took).
BUDGET = ["--threads", "1", "--steps", "1000", "--eval_interval", "250"]

# name: (the flags added to the baseline's, what they change: words that
# `README.md` fills in with the baseline's configuration).
VARIANTS = {
    "baseline": ([], "the preset as it is, at the same budget"),
    "no-positions": (
        ["--no-positions"],
        "no position embedding: each position's input is its character's "
        "embedding alone",
    ),
    "one-head": (
        ["--n_head", "1"],
        "one attention head of width {d_model} per block instead of {n_head} "
        "heads of {d_head} (the same weight matrices, so the same parameter "
        "count)",
    ),
    "no-scaled-init": (
        ["--no-scaled_init"],
        "each sublayer's output projection starts at standard deviation 0.02, "
        "not GPT-2's 0.02 / sqrt(2L) with L = {n_layer} blocks",
    ),
    "no-warmup": (
        ["--warmup", "0"],
        "the learning rate starts at its peak instead of rising to it over "
        "{warmup} steps",
    ),
    "dropout-0.1": (
        ["--dropout", "0.1"],
        "dropout 0.1 on the embeddings, attention weights and sublayer outputs",
    ),
    "another-seed": (
        ["--seed", "1"],
        "the baseline with another seed (weights, batches and evaluation "
        "batches): how far a change of seed alone moves the losses",
    ),
}
# Options that would make the runs share a folder or continue old runs.
REFUSED = ("--out", "--resume")

USAGE = (
    "usage: python -m trainkit.ablations [--variants NAME,NAME] [--work DIR] "
    "FOLDER [train.py options]"
)


@dataclass(frozen=True)
class AblationRow:
    name: str
    flags: list[str]  # what the variant adds to the baseline's command
    val: float  # validation loss at the last step, nats per character
    delta: float | None  # val minus the baseline's (None without a baseline)
    train: float  # training loss at the last step
    parameters: int
    wall_seconds: float  # the training command, start-up included
    evaluations: list[dict]  # {"step", "train", "val"} each


def ablation_rows(folder: Path = RECORDED) -> list[AblationRow]:
    """The recorded table, one row per variant in the order they ran."""
    results = json.loads((Path(folder) / "results.json").read_text(encoding="utf-8"))
    base = {r["name"]: r["val"] for r in results["runs"]}.get("baseline")
    return [
        AblationRow(
            name=r["name"],
            flags=list(r["flags"]),
            val=r["val"],
            delta=None if base is None else r["val"] - base,
            train=r["train"],
            parameters=r["parameters"],
            wall_seconds=r["wall_seconds"],
            evaluations=r["evaluations"],
        )
        for r in results["runs"]
    ]


def train_variant(name: str, flags: list[str], options: list[str], work: Path):
    """Train one variant into `work/name`; its record for `results.json`."""
    out = work / name
    args = ["--out", str(out), *BUDGET, *options, *flags]
    began = time.perf_counter()
    result = subprocess.run(
        [sys.executable, str(ROOT / "train.py"), *args],
        capture_output=True,
        encoding="utf-8",
    )
    wall = time.perf_counter() - began
    if result.returncode != 0:
        last = result.stderr.strip().splitlines()[-1:] or ["(nothing on stderr)"]
        raise RunError(
            f"{name}: training failed (status {result.returncode}): {last[0]}"
        )
    (out / "train.log").write_text(result.stdout, encoding="utf-8")
    state = load_checkpoint(out / "ckpt.pt")
    records = Metrics.resume(out / "metrics.jsonl", step=math.inf).records
    evaluations = [
        {"step": r["step"], "train": r["train"], "val": r["val"]}
        for r in records
        if "val" in r
    ]
    return {
        "name": name,
        "flags": flags,
        "command": "python train.py " + shlex.join(args),
        "config": state["config"],
        "train": evaluations[-1]["train"],
        "val": evaluations[-1]["val"],
        "evaluations": evaluations,
        "wall_seconds": round(wall, 1),
        "loop_seconds": next(r["time"] for r in reversed(records) if "val" in r),
        "threads": state["threads"],
        "parameters": used_parameters(state),
    }


def used_parameters(state: dict) -> int:
    """The weights the model computes with: the output layer is the token
    embedding (tied, counted once), and without positions the position table
    is built (so every other weight starts as in the baseline) but unused."""
    unused = {"head.weight"}
    if not state["config"].get("positions", True):
        unused.add("position.weight")
    return sum(t.numel() for k, t in state["model"].items() if k not in unused)


def record(
    folder: Path, options: list[str], names: list[str], work: Path, command: str
) -> dict:
    """Train `names` in order, then write `folder`'s files; nothing is written
    unless every run succeeded (a failed one raises `RunError`). `command` is
    the command line that `README.md` and `results.json` name."""
    for option in options:
        if option.split("=")[0] in REFUSED:
            raise RunError(f"{option}: not an option for the ablations' runs")
    load_before = os.getloadavg()
    began = time.perf_counter()
    runs = []
    for i, name in enumerate(names, 1):
        flags = VARIANTS[name][0]
        what = shlex.join(flags) or "no extra flags"
        print(
            f"[{i}/{len(names)}] {name} ({what}): training into {work / name}",
            flush=True,
        )
        run = train_variant(name, flags, options, work)
        print(
            f"[{i}/{len(names)}] {name}: val {run['val']:.3f}, "
            f"train {run['train']:.3f}, {run['wall_seconds']:.0f} s",
            flush=True,
        )
        runs.append(run)
    # What each variant's flags changed, against the baseline (or the first).
    base = next((r for r in runs if r["name"] == "baseline"), runs[0])["config"]
    for run in runs:
        config = run.pop("config")
        run["changes"] = {
            k: v for k, v in config.items() if k != "out" and base.get(k) != v
        }
    results = {
        "command": command,
        "work": str(work),
        "budget": BUDGET,
        "options": options,
        "config": {k: v for k, v in base.items() if k != "out"},
        "wall_seconds": round(time.perf_counter() - began, 1),
        "cpus": os.cpu_count(),
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in os.getloadavg()],
        "torch": torch.__version__,
        "python": platform.python_version(),
        "runs": runs,
    }
    text = json.dumps(results, indent=1) + "\n"
    write_atomically(folder / "results.json", lambda f: f.write(text.encode()))
    readme = readme_text(results)
    write_atomically(folder / "README.md", lambda f: f.write(readme.encode()))
    return results


def readme_text(results: dict) -> str:
    """`README.md`: what the folder holds, how it was made, and the table."""
    runs, config = results["runs"], results["config"]
    base = next((r["val"] for r in runs if r["name"] == "baseline"), None)
    rows = []
    for r in runs:
        delta = "" if base is None else f"{r['val'] - base:+.3f}"
        flags = f"`{shlex.join(r['flags'])}`" if r["flags"] else ""
        rows.append(
            f"| {r['name']} | {flags} | {r['val']:.3f} | {delta} | "
            f"{r['train']:.3f} | {r['parameters']:,} | {r['wall_seconds']:.0f} |"
        )
    values = {**config, "d_head": config["d_model"] // config["n_head"]}
    variants = [
        f"* `{r['name']}`: {VARIANTS[r['name']][1].format(**values)}."
        for r in runs
        if r["name"] in VARIANTS
    ]
    minutes, seconds = divmod(round(results["wall_seconds"]), 60)
    options = results["options"]
    preset = options[options.index("--preset") + 1] if "--preset" in options else "cpu"
    paragraphs = [
        f"# Ablations of the `{preset}` preset",
        f"Each row trains the model of `train.py`'s `{preset}` preset with one "
        "choice of the recipe undone, and compares its validation loss at the "
        "end with the baseline's, trained the same way. The `train.py` page "
        "reads `results.json`.",
        "## The command",
        "From the repository root, with the environment of `make install`:",
        f"```bash\n{results['command']}\n```",
        f"Every run adds `{shlex.join(results['budget'])}` to the preset (options "
        "after the folder come after these, and each variant's own flags after "
        f"them). So each run takes {config['steps']} steps, with the whole "
        "learning-rate schedule compressed into them. All but `another-seed` "
        "use the preset's seed, hence the same initial weights (but for the "
        "projections `no-scaled-init` scales) and the same batches in the same "
        "order, and every run has one thread, so the losses do not depend on "
        "the machine's load. Each trains "
        f"into `{results['work']}/<name>/`; the files here are replaced only if "
        "every run succeeded.",
        f"The {len(runs)} runs took {minutes} min {seconds:02d} s one after the "
        f"other, on a machine of {results['cpus']} cores (load average "
        f"{results['load_average_before'][0]} at the start, "
        f"{results['load_average_after'][0]} at the end), torch "
        f"{results['torch']}, Python {results['python']}.",
        "## The variants",
        "\n".join(variants),
        "## The table",
        "Losses in nats per character after the last step, each the mean over "
        f"{config['eval_batches']} batches of its split (the same windows for "
        "every run of the same seed); Δ is the validation loss minus the "
        "baseline's. The parameters count the tied output layer once and leave "
        "out the position table that `no-positions` builds but never uses. The "
        "seconds are the whole training command's, start-up included: they "
        "depend on what else the machine was running (the load averages above), "
        "the losses do not.",
        "| variant | flags | validation | Δ | training | parameters | seconds |\n"
        "|---|---|---:|---:|---:|---:|---:|\n" + "\n".join(rows),
        "`results.json` holds every evaluation of every run, the configuration "
        "fields each variant changed, the wall and loop times, and the machine.",
    ]
    seeded = next((r["val"] for r in runs if r["name"] == "another-seed"), None)
    if base is not None and seeded is not None:
        paragraphs.insert(
            -1,
            "Changing only the seed moved the validation loss by "
            f"{seeded - base:+.3f}. Each variant ran once, so a Δ about that size "
            "may be the seed's doing rather than the variant's.",
        )
    return "\n\n".join(_wrapped(p) for p in paragraphs) + "\n"


def _wrapped(paragraph: str) -> str:
    """Prose and list items filled to 76 columns; headings, code and tables
    as they are."""
    if paragraph.startswith(("#", "```", "|")):
        return paragraph
    fill = {"width": 76, "break_on_hyphens": False, "break_long_words": False}
    if paragraph.startswith("* "):
        items = paragraph.split("\n")
        return "\n".join(
            textwrap.fill(i, subsequent_indent="  ", **fill) for i in items
        )
    return textwrap.fill(paragraph, **fill)


def main(argv: list[str]) -> None:
    command = shlex.join(["python", "-m", "trainkit.ablations", *argv])
    names, work = list(VARIANTS), WORK
    argv = list(argv)
    while argv and argv[0] in ("--variants", "--work"):
        if len(argv) < 2:
            sys.exit(USAGE)
        option, value, argv = argv[0], argv[1], argv[2:]
        if option == "--work":
            work = Path(value)
        else:
            names = value.split(",")
            unknown = [n for n in names if n not in VARIANTS]
            if unknown or not names:
                sys.exit(f"--variants: unknown {unknown}; known: {', '.join(VARIANTS)}")
    if not argv or argv[0].startswith("-"):
        sys.exit(USAGE)
    folder, options = Path(argv[0]), argv[1:]
    try:
        results = record(folder, options, names, work, command)
    except RunError as error:
        sys.exit(f"trainkit.ablations: {error}; {folder} was not changed")
    minutes = results["wall_seconds"] / 60
    print(f"{folder}: recorded {len(names)} runs in {minutes:.1f} min")


if __name__ == "__main__":
    main(sys.argv[1:])
