"""A run's metrics as a JSON-lines file and a loss-curve PNG.

Two kinds of record share the file, one JSON object per line:

    {"step": 10, "loss": 3.91, "lr": 0.0001}                 # training batches
    {"step": 250, "train": 2.41, "val": 2.45, "time": 31.2}  # an evaluation

`step` counts the optimizer updates done. The file is plain text so a person
can read a run with `cat`, and the PNG with any image viewer. Both are
written whole and atomically (`trainkit.files.write_atomically`). A file
whose last line was cut short (a copy or a disk that failed halfway) is read
up to its last whole record, and says so; one with a damaged record before
that, or a step recorded twice, is refused.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from literate.words import tr  # the figure's words in the page's language
from report import ylabel
from trainkit import RunError
from trainkit.files import write_atomically


class Metrics:
    """Records in memory, written out whole (atomically) on `write()`."""

    def __init__(self, path: Path, records: list[dict] | None = None):
        self.path = Path(path)
        self.records = list(records or [])

    @classmethod
    def resume(
        cls, path: Path, step: float, warn: Callable[[str], None] | None = None
    ) -> Metrics:
        """The records of a run up to `step`: what a run resumed there keeps.

        Records a killed run wrote after its last checkpoint are dropped, so
        the resumed run's file reads as if it had never stopped. A last line
        cut short is dropped too, with one line to `warn` (standard error by
        default); any other damage is a `RunError` naming the line.
        """
        path = Path(path)
        if not path.exists():
            return cls(path)
        try:
            text = path.read_bytes().decode("utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise RunError(f"{path}: not readable as UTF-8 text ({error})") from None
        lines = text.split("\n")
        records: list[dict] = []
        last: dict[str, int] = {}  # the last step of each kind of record
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except ValueError:
                if number == len(lines):  # no newline after it: cut short
                    (warn or _stderr)(
                        f"{path}:{number}: the last line is cut short; kept the "
                        f"{len(records)} whole records before it"
                    )
                    break
                raise RunError(
                    f"{path}:{number}: not a JSON record; expected one object per line"
                ) from None
            kind = _kind(record)
            if kind is None:
                raise RunError(
                    f"{path}:{number}: expected a record with an integer step >= "
                    "0 and a loss (or train and val)"
                )
            if record["step"] <= last.get(kind, -1):
                raise RunError(
                    f"{path}:{number}: step {record['step']} comes after step "
                    f"{last[kind]}; expected each step once, in order"
                )
            last[kind] = record["step"]
            records.append(record)
        return cls(path, [r for r in records if r["step"] <= step])

    def add(self, **record: float) -> None:
        self.records.append(record)

    def evaluations(self) -> list[dict]:
        return [r for r in self.records if "val" in r]

    def write(self) -> None:
        text = "".join(json.dumps(r) + "\n" for r in self.records)
        write_atomically(self.path, lambda f: f.write(text.encode("utf-8")))


def _kind(record: object) -> str | None:
    """ "loss" or "evaluation" for a well-formed record, else None."""
    if not isinstance(record, dict):
        return None
    step = record.get("step")
    if type(step) is not int or step < 0:
        return None
    if "loss" in record:
        return "loss"
    return "evaluation" if "train" in record and "val" in record else None


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def readable(text: str) -> str:
    """`text` with the bytes of an undecodable file name (surrogates, as
    Python gives them under the C locale) decoded as UTF-8 or replaced."""
    try:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace").decode("utf-8")


def plot_losses(metrics: Metrics, path: Path, title: str = "") -> None:
    """`loss_figure` written to the PNG file `path` (atomically)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig = loss_figure(metrics, readable(title))
    try:
        write_atomically(Path(path), lambda f: fig.savefig(f, format="png"))
    finally:
        plt.close(fig)


def loss_figure(
    metrics: Metrics,
    title: str = "",
    baselines: Sequence[tuple[str, float]] = (),
    columns: int = 2,
):
    """Training-batch loss, and evaluated train and validation loss, by step.

    `baselines` are `(label, loss)` pairs, each drawn as a dashed line of its
    own colour and named, with its value, in the legend, which then sits
    under the axes (`columns` wide): a label inside them would lie under the
    curves at some width.
    """
    import matplotlib.pyplot as plt

    batches = [r for r in metrics.records if "loss" in r]
    evals = metrics.evaluations()
    fig, ax = plt.subplots(figsize=(6.4, 5.0) if baselines else (5.6, 4), dpi=100)
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
    colours = ("tab:red", "tab:purple", "tab:brown", "tab:pink", "tab:olive")
    for i, (label, value) in enumerate(baselines):
        colour = colours[i % len(colours)]
        ax.axhline(
            value,
            color=colour,
            linestyle="--",
            linewidth=1,
            label=f"{label}: {value:.2f}",
        )
    ax.set_xlabel(tr("step"))
    ylabel(ax, tr("cross-entropy (nats per character)"))
    ax.set_title(title)
    ax.grid(alpha=0.3)
    if baselines:  # under the axes, the layout making room for it
        fig.set_layout_engine("constrained")
        fig.legend(fontsize=9, ncol=columns, loc="outside lower center")
    else:
        ax.legend(fontsize=9)
        fig.tight_layout()
    return fig
