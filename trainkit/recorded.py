"""What `train.py`'s page prints about its recorded runs, in tables.

The recorded run of the `cpu` preset lies in `runs/cpu/` (written by
`python -m trainkit.record_run runs/cpu`), the ablation table in
`runs/ablations/` (`python -m trainkit.ablations runs/ablations`). These
functions read them and print Markdown tables, every word through `tr` so a
translated page prints them in its language. Formatting only: what the
numbers mean is on the page.
"""

from __future__ import annotations

import functools
import json
import math
import re
import shlex
from pathlib import Path

import numpy as np

from literate.narrow import narrow
from literate.words import tr
from report import markdown_table
from trainkit import whole_split
from trainkit.baselines import ngram_loss, ngram_losses, witten_bell_loss
from trainkit.corpus import encode_all, read_text
from trainkit.metrics import Metrics, loss_figure

ROOT = Path(__file__).resolve().parent.parent
RECORDED = ROOT / "runs" / "cpu"
ABLATIONS = ROOT / "runs" / "ablations"


def run_record(folder: Path = RECORDED) -> tuple[dict, list[dict]]:
    """`run.json` and every record of `metrics.jsonl`."""
    run = json.loads((folder / "run.json").read_text(encoding="utf-8"))
    records = Metrics.resume(folder / "metrics.jsonl", step=math.inf).records
    return run, records


def show_sample(folder: Path = RECORDED) -> None:
    """The recorded sample, after the command and settings that produced it."""
    run = json.loads((folder / "run.json").read_text(encoding="utf-8"))
    args = [shlex.quote(a) for a in run["sample_args"]]
    pairs = [" ".join(args[i : i + 2]) for i in range(0, len(args), 2)]
    print("python train.py sample \\\n    " + " \\\n    ".join(pairs))
    print()
    print((folder / "sample.txt").read_text(encoding="utf-8"))


@functools.lru_cache(maxsize=2)
def split_ids(cfg, split) -> tuple[np.ndarray, np.ndarray, int]:
    """`(train_ids, val_ids, vocab_size)` of `cfg`'s text cut by `split`
    (train.py's). Cached, like the counters below: the page's tables and
    figure read the same numbers (the words, through `tr`, are not cached)."""
    text, name = read_text(cfg.data, ROOT / "data")
    chars = "".join(sorted(set(text)))
    train_ids, val_ids = split(encode_all(text, chars, name), cfg, name)
    return train_ids.numpy(), val_ids.numpy(), len(chars)


@functools.lru_cache(maxsize=2)
def counter_losses(cfg, split) -> tuple[tuple[float, ...], np.ndarray, np.ndarray]:
    """The add-one unigram, bigram and trigram mean losses, and each validation
    character's loss under the add-one trigram and the Witten-Bell 5-gram."""
    train_ids, val_ids, n = split_ids(cfg, split)
    means = tuple(g.nats for g in ngram_losses(train_ids, val_ids, n))
    trigram = ngram_loss(train_ids, val_ids, n, 3, 1.0, True)
    five = witten_bell_loss(train_ids, val_ids, n, 5, per_character=True)
    return means, trigram, five


def baselines(cfg, split) -> list[tuple[str, float]]:
    """The uniform, unigram, bigram and trigram (add-one) losses on `cfg`'s
    validation text, split by `split` (train.py's), then the Witten-Bell
    5-gram's: `(label, nats)` each."""
    n = split_ids(cfg, split)[2]
    means, _, five = counter_losses(cfg, split)
    names = [tr("unigram counts"), tr("bigram counts"), tr("trigram counts")]
    rows = [(tr("uniform, N = {n}").format(n=n), math.log(n))]
    rows += list(zip(names, means, strict=True))
    return rows + [(tr("5-gram counts, Witten-Bell"), float(five.mean()))]


SPEAKER = re.compile(r"^([A-Z][A-Z' ]*[A-Z]):$", re.M)  # a speech's first line


def unseen_speakers(cfg, split) -> None:
    """How many of the validation text's speakers (the capitals before a
    speech) the training text never names, and how many speeches they give."""
    text, name = read_text(cfg.data, ROOT / "data")
    train_text, val_text = split(text, cfg, name)  # the cut, on the characters
    known = set(SPEAKER.findall(train_text))
    speeches = SPEAKER.findall(val_text)
    new = [s for s in speeches if s not in known]
    most = sorted(set(new), key=lambda s: (-new.count(s), s))[:6]
    line = tr(
        "validation speakers with no speech in the training text: {n} of {total},"
        " with {s} of its {all} speeches ({names}, ...)"
    )
    print(line.format(n=len(set(new)), total=len(set(speeches)), s=len(new),
                      all=len(speeches), names=tr(", ").join(most)))  # fmt: skip


def loss_table(cfg, split, folder: Path = RECORDED) -> None:
    """The baselines on `cfg`'s validation split (`baselines`), then the
    recorded run's losses, in nats, bits and e^loss."""
    counted = baselines(cfg, split)
    run, records = run_record(folder)
    evals = [r for r in records if "val" in r]
    first, last = evals[0], evals[-1]
    batch = next(r for r in records if "loss" in r)
    step, steps = tr("step {step}, {split}"), tr("steps 1-{step}, {split}")
    train, val = tr("training"), tr("validation")
    rows = [
        *counted,
        (step.format(step=first["step"], split=val), first["val"]),
        (steps.format(step=batch["step"], split=train), batch["loss"]),
        (step.format(step=last["step"], split=train), last["train"]),
        (step.format(step=last["step"], split=val), last["val"]),
    ]
    cells = [
        [what, f"{nats:.3f}", f"{nats / math.log(2):.3f}", f"{math.exp(nats):.2f}"]
        for what, nats in rows
    ]
    header = [tr("loss of"), tr("nats"), tr("bits"), tr("e^loss")]
    print(markdown_table(header, cells, align="lrrr"))


def same_characters(cfg, split, folder: Path = RECORDED) -> None:
    """The shipped model's loss on the whole validation split (recorded by
    `trainkit.whole_split`) beside the trigram's and the 5-gram's on the very
    characters it scored: all of them (of the split's), and those with at
    least the 5-gram's four characters before them in their window. A table
    only, so that the page shows it as one."""
    result, counters, total = scored_characters(cfg, split, folder)
    model = np.array(result["by_position"])
    (trigram, _), (five, _) = counters.items()
    n, w, s = result["characters"], result["windows"], result["context"]

    def both(losses: np.ndarray) -> np.ndarray:  # all, and 4 or more before
        return np.array([losses.mean(), losses[..., 3:].mean()])

    ours, tri, wb = both(model), both(counters[trigram]), both(counters[five])
    rows = [
        (trigram, tri),
        (five, wb),
        (tr("the model, runs/cpu/model.pt"), ours),
        (tr("trigram counts minus the model"), tri - ours),
        (tr("5-gram counts minus the model"), wb - ours),
    ]
    cells = [[what, *(f"{v:.3f}" for v in values)] for what, values in rows]
    header = [
        tr("nats per character, {w} windows of {s}").format(w=f"{w:,}", s=s),
        tr("{n} of {total}").format(n=f"{n:,}", total=f"{total:,}"),
        tr("the {n} with 4 or more before them").format(n=f"{w * (s - 3):,}"),
    ]
    print(markdown_table(header, cells, align="lrr"))


def by_context(cfg, split, folder: Path = RECORDED) -> None:
    """The same pass, by how many characters precede the one predicted in its
    window (position + 1), in groups that double: the model's loss, the
    5-gram's on the same characters, the difference, and the difference's
    standard error over the windows (a window's characters are neighbours,
    so they are not independent; the windows nearly are)."""
    result, counters, _ = scored_characters(cfg, split, folder)
    model = np.array(result["per_window"])  # [W, G]
    five = list(counters.values())[-1]  # the 5-gram's, [W, S]
    rows = []
    for g, (low, high) in enumerate(result["groups"]):
        lead = five[:, low - 1 : high].mean(1) - model[:, g]  # per window
        error = lead.std(ddof=1) / math.sqrt(len(lead))
        span = str(low) if low == high else f"{low}–{high}"
        ours, theirs = model[:, g].mean(), five[:, low - 1 : high].mean()
        cells = [f"{ours:.3f}", f"{theirs:.3f}", f"{lead.mean():+.3f}", f"{error:.3f}"]
        rows.append([span, *cells])
    header = [
        tr("characters before it in the window"),
        tr("the model"),
        tr("5-gram"),
        tr("5-gram minus the model"),
        "±",  # one standard error, as the page says
    ]
    print(markdown_table(header, rows, align="rrrrr"))


def scored_characters(cfg, split, folder: Path = RECORDED):
    """`(result, counters, total)`: the recorded whole-split pass, the
    trigram's and the 5-gram's losses `[windows, context]` on the characters
    it scored (by label), and the validation split's length."""
    _, val_ids, _ = split_ids(cfg, split)
    result = whole_split.read(folder, len(val_ids), cfg.context)
    _, trigram, five = counter_losses(cfg, split)
    first, w, s = result["first"], result["windows"], result["context"]

    def scored(losses: np.ndarray) -> np.ndarray:  # every character's -> [W, S]
        return losses[first : first + w * s].reshape(w, s)

    counters = {
        tr("trigram counts"): scored(trigram),
        tr("5-gram counts, Witten-Bell"): scored(five),
    }
    return result, counters, len(val_ids)


def run_facts(folder: Path = RECORDED) -> None:
    """How much text the recorded run saw, its time, and the train/val gap."""
    run, records = run_record(folder)
    evals = [r for r in records if "val" in r]
    last = evals[-1]
    cfg = run["config"]
    seen = last["step"] * cfg["batch_size"] * cfg["context"]
    train_chars = int(run["characters"] * (1 - cfg["val_fraction"]))
    minutes, seconds = divmod(round(run["wall_seconds"]), 60)
    picked = evals[::4] if evals[::4][-1] is last else [*evals[::4], last]
    gaps = " → ".join(f"{r['val'] - r['train']:.2f}" for r in picked)
    facts = [
        [tr("characters trained on"), f"{seen:,}"],
        [tr("characters of training text"), f"{train_chars:,}"],
        [tr("passes over the training text"), f"{seen / train_chars:.2f}"],
        [
            tr("validation minus training loss, steps {steps}").format(
                steps=", ".join(str(r["step"]) for r in picked)
            ),
            gaps,
        ],
        [
            tr("wall time, whole command"),
            tr("{m} min {s} s").format(m=minutes, s=f"{seconds:02d}"),
        ],
        [tr("time in the loop"), tr("{s} s").format(s=f"{last['time']:.0f}")],
        [tr("threads / cores"), f"{run['threads']} / {run['cpus']}"],
    ]
    print(markdown_table([tr("the run"), tr("value")], facts, align="lr"))


def loss_curve(cfg, split, folder: Path = RECORDED):
    """The recorded run's curve, with a dashed line per baseline; and the
    same figure narrower, its legend in one column, for a phone
    (`literate.narrow`): its labels keep their size in points, so they
    shrink less with the screen."""
    counted = baselines(cfg, split)
    metrics = Metrics.resume(folder / "metrics.jsonl", step=math.inf)
    loss_figure(metrics, "", baselines=counted)
    phone = loss_figure(metrics, "", baselines=counted, columns=1)
    phone.set_size_inches(4.0, 6.4)
    return narrow(phone)


def ablation_table(folder: Path = ABLATIONS) -> None:
    """The recorded ablations: each variant's losses, the difference from the
    baseline, and the command that recorded them."""
    from trainkit.ablations import ablation_rows

    rows = ablation_rows(folder)
    cells = []
    for row in rows:
        delta = "" if row.delta is None or row.name == "baseline" else row.delta
        cells.append(
            [
                row.name,
                " ".join(row.flags) or "",
                f"{row.train:.3f}",
                f"{row.val:.3f}",
                f"{delta:+.3f}" if delta != "" else "",
            ]
        )
    header = [tr("variant"), tr("flags"), tr("train"), tr("val"), tr("val − baseline")]
    print(markdown_table(header, cells, align="llrrr"))


def ablation_budget(folder: Path = ABLATIONS) -> None:
    """The command that recorded the ablation table, and each run's budget,
    with the passes over the training text it makes (the text being the
    recorded run's)."""
    results = json.loads((folder / "results.json").read_text(encoding="utf-8"))
    steps = results["runs"][0]["evaluations"][-1]["step"]
    cfg = results["config"]
    run, _ = run_record()
    train_chars = int(run["characters"] * (1 - cfg["val_fraction"]))
    passes = steps * cfg["batch_size"] * cfg["context"] / train_chars
    print("python -m trainkit.ablations runs/ablations")
    line = tr("each run: the cpu preset for {steps} steps ({passes} passes over the "
              "training text), on one thread")  # fmt: skip
    print(line.format(steps=steps, passes=f"{passes:.2f}"))
