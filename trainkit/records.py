"""A run's metrics as a JSON-lines file and a loss-curve PNG.

Two kinds of record share the file, one JSON object per line:

    {"step": 10, "loss": 3.91, "lr": 0.0001}                 # training batches
    {"step": 250, "train": 2.41, "val": 2.45, "time": 31.2}  # an evaluation

`step` counts the optimizer updates done. The file is plain text so a person
can read a run with `cat`, and the PNG with any image viewer.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from literate.words import tr  # the figure's words in the page's language


class Metrics:
    """Records in memory, written out whole (atomically) on `write()`."""

    def __init__(self, path: Path, records: list[dict] | None = None):
        self.path = Path(path)
        self.records = list(records or [])

    @classmethod
    def resume(cls, path: Path, step: int) -> Metrics:
        """The records of a run up to `step`: what a run resumed there keeps.

        Records a killed run wrote after its last checkpoint are dropped, so
        the resumed run's file reads as if it had never stopped.
        """
        path = Path(path)
        if not path.exists():
            return cls(path)
        with open(path, encoding="utf-8") as f:
            records = [json.loads(line) for line in f if line.strip()]
        return cls(path, [r for r in records if r["step"] <= step])

    def add(self, **record: float) -> None:
        self.records.append(record)

    def evaluations(self) -> list[dict]:
        return [r for r in self.records if "val" in r]

    def write(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(self.path.name + ".tmp")
        with open(tmp, "w", encoding="utf-8") as f:
            f.writelines(json.dumps(r) + "\n" for r in self.records)
        os.replace(tmp, self.path)


def plot_losses(metrics: Metrics, path: Path, title: str = "") -> None:
    """`loss_figure` written to the PNG file `path` (atomically)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig = loss_figure(metrics, title)
    tmp = Path(path).with_name(Path(path).name + ".tmp.png")
    fig.savefig(tmp)
    plt.close(fig)
    os.replace(tmp, path)


def loss_figure(metrics: Metrics, title: str = "", baseline: float | None = None):
    """Training-batch loss, and evaluated train and validation loss, by step.

    `baseline`, if given, is drawn as a dashed line: the uniform model's loss,
    ln N for a vocabulary of N characters.
    """
    import matplotlib.pyplot as plt

    batches = [r for r in metrics.records if "loss" in r]
    evals = metrics.evaluations()
    fig, ax = plt.subplots(figsize=(7, 4), dpi=100)
    ax.plot(
        [r["step"] for r in batches],
        [r["loss"] for r in batches],
        color="tab:gray",
        linewidth=1.5,
        zorder=3,
        label=tr("training batches (mean of each log_interval)"),
    )
    names = {"train": tr("train (evaluation)"), "val": tr("val (evaluation)")}
    for key, colour, marker in (("train", "tab:blue", "o"), ("val", "tab:orange", "s")):
        ax.plot(
            [r["step"] for r in evals],
            [r[key] for r in evals],
            marker=marker,
            markersize=5,
            linewidth=0.8,
            color=colour,
            zorder=4,
            label=names[key],
        )
    if baseline is not None:
        ax.axhline(baseline, color="tab:red", linestyle="--", linewidth=1)
        ax.annotate(
            tr("uniform: ln N = {n}").format(n=f"{baseline:.2f}"),
            (ax.get_xlim()[1], baseline),
            xytext=(-4, -4),
            textcoords="offset points",
            ha="right",
            va="top",
            color="tab:red",
        )
    ax.set_xlabel(tr("step"))
    ax.set_ylabel(tr("cross-entropy (nats per character)"))
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    return fig
