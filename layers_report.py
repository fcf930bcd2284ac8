"""What `layers.py` reports but does not teach.

The figures (the architecture, the position encodings, the reverser's
cross-attention), the tables its experiments print, and the record of the
warmup experiment. `layers.py` imports this module; its page shows what
these functions print and draw. Every word drawn or printed goes through
`tr`, which gives it in the language of the page (see `literate.words`).
"""

from __future__ import annotations

import json
from pathlib import Path

import torch

from literate.words import tr
from report import markdown_table, ylabel

WARMUP_RECORD = Path(__file__).parent / "runs" / "layers" / "warmup.json"

# ## Printed results


def vector(x: torch.Tensor) -> str:
    """A short vector, three decimals: `(-1.342, -0.447, 0.447, 1.342)`."""
    return "(" + ", ".join(f"{v:.3f}" for v in x.tolist()) + ")"


def parameters(module: torch.nn.Module) -> int:
    """The number of weights and biases in `module`."""
    return sum(p.numel() for p in module.parameters())


def scores(digits: float, whole: float) -> str:
    """The reverser's test result, one line."""
    line = tr("digits right: {d}; sequences entirely right: {s}")
    return line.format(d=f"{digits:.1%}", s=f"{whole:.1%}")


def rearranged(source, guess, target) -> str:
    """How many outputs `[count, S]` hold the source's own digits in some
    order, and the share of digits right at each output position."""
    same = (guess.sort(1).values == source.sort(1).values).all(1)
    line = tr("outputs made of the source's own digits, in any order: {n} of {total}")
    places = (guess == target).float().mean(0).tolist()
    shares = tr(", ").join(f"{share:.0%}" for share in places)
    by_place = tr("digits right at output positions 0 to {last}: {shares}")
    return "\n".join(
        (
            line.format(n=int(same.sum()), total=len(source)),
            by_place.format(last=len(places) - 1, shares=shares),
        )
    )


# ## Tables


def format_warmup(record: dict) -> str:
    """The recorded warmup experiment: one row per order and warmup, seeds across."""
    seeds = record["seeds"]
    header = [tr("order"), tr("warmup steps")]
    header += [tr("seed {s}").format(s=s) for s in seeds]
    cells = []
    for row in record["rows"]:
        name = tr("post-LN") if row["order"] == "post" else tr("pre-LN")
        whole = [f"{r['sequences']:.0%}" for r in row["runs"]]
        cells.append([name, str(row["warmup"]), *whole])
    return markdown_table(header, cells, align="lr" + "r" * len(seeds))


def warmup_settings(record: dict) -> str:
    """The recorded experiment's settings, one line."""
    line = tr("{layers} layers each side, learning rate {lr}, {steps} steps")
    return line.format(**record["settings"])


def read_warmup() -> dict:
    """The record `python layers.py warmup` writes."""
    return json.loads(WARMUP_RECORD.read_text(encoding="utf-8"))


def write_warmup(record: dict) -> None:
    WARMUP_RECORD.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(record, indent=2, ensure_ascii=False) + "\n"
    WARMUP_RECORD.write_text(text, encoding="utf-8")


# ## Figures
#
# Each function draws and leaves the figure open; the page shows it. They
# import matplotlib when called, so `layers.py` does not need it. Each is
# narrow (under 4 inches) so that a phone shows it near its natural size.


def draw_architecture() -> None:
    """The decoder-only stack of chapter 4, top to bottom, shapes on arrows."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import FancyBboxPatch

    fig, ax = plt.subplots(figsize=(3.9, 6.2))
    ax.set_xlim(0, 10)
    ax.set_ylim(1.3, 17)
    ax.axis("off")
    x0, width, mid = 0.5, 7.0, 4.0  # boxes span x0 .. x0 + width

    def box(y, text, colour):
        ax.add_patch(
            FancyBboxPatch(
                (x0, y - 0.38), width, 0.76, boxstyle="round,pad=0.05",
                facecolor=colour, edgecolor="0.4", lw=0.8,
            )
        )  # fmt: skip
        ax.text(mid, y, text, ha="center", va="center", fontsize=10, color="k")

    def arrow(y_from, y_to, label=None, x=mid):
        ax.annotate(
            "", (x, y_to), (x, y_from),
            arrowprops={"arrowstyle": "-|>", "color": "0.5", "lw": 1},
        )  # fmt: skip
        if label:
            ax.text(x + 0.25, (y_from + y_to) / 2, label, va="center", fontsize=9)

    def plus(y):
        ax.add_patch(plt.Circle((mid, y), 0.3, fill=False, color="0.5", lw=1))
        ax.text(mid, y, "+", ha="center", va="center", fontsize=12)

    def residual(y_from, y_to):
        side = x0 + width + 0.9
        ax.plot([mid, side, side], [y_from, y_from, y_to], color="0.5", lw=1)
        ax.annotate(
            "", (mid + 0.3, y_to), (side, y_to),
            arrowprops={"arrowstyle": "-|>", "color": "0.5", "lw": 1},
        )  # fmt: skip

    ax.text(mid, 16.6, tr("token ids"), ha="center", fontsize=10)
    arrow(16.45, 15.75, "[B, S]")
    box(15.35, tr("token embedding + position"), "#cfe3f5")
    arrow(14.95, 13.2, "[B, S, D]")
    # One block, drawn once, repeated L times.
    ax.add_patch(
        FancyBboxPatch(
            (0.3, 6.55), 9.1, 7.3, boxstyle="round,pad=0.1",
            fill=False, edgecolor="0.5", lw=1, ls="--",
        )
    )  # fmt: skip
    ax.text(9.3, 6.75, tr("× L blocks"), ha="right", fontsize=10)
    residual(13.45, 10.45)
    box(12.8, tr("LayerNorm"), "#eeeeee")
    arrow(12.4, 11.95)
    box(11.55, tr("causal multi-head attention"), "#f8d9b0")
    arrow(11.15, 10.75)
    plus(10.45)
    residual(10.0, 7.1)
    arrow(10.15, 9.85)
    box(9.45, tr("LayerNorm"), "#eeeeee")
    arrow(9.05, 8.6)
    box(8.2, tr("feed-forward"), "#d5ecd0")
    arrow(7.8, 7.4)
    plus(7.1)
    arrow(6.8, 5.6, "[B, S, D]")
    box(5.2, tr("LayerNorm"), "#eeeeee")
    arrow(4.8, 4.0)
    box(3.6, tr("linear head"), "#e6d5f0")
    arrow(3.2, 2.2, "[B, S, N]")
    ax.text(mid, 1.75, tr("a score for each of N tokens"), ha="center", fontsize=10)
    fig.tight_layout(pad=0.2)


def draw_positions(table: torch.Tensor) -> None:
    """A table of position encodings `[positions, D]` as a heatmap, positions down."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(3.8, 4.6), layout="constrained")
    image = ax.imshow(table.numpy(), cmap="RdBu_r", vmin=-1, vmax=1, aspect="auto")
    ax.set_xlabel(tr("feature 2i or 2i + 1"), fontsize=10)
    ylabel(ax, tr("position"), fontsize=10)
    ax.tick_params(labelsize=9)
    fig.colorbar(image, ax=ax, shrink=0.7).ax.tick_params(labelsize=9)


def draw_cross_attention(
    weights: torch.Tensor, rows: list[str], columns: list[str]
) -> None:
    """One heatmap per head `[H, rows, columns]`, stacked, weights 0 to 1."""
    import matplotlib.pyplot as plt

    heads = weights.shape[0]
    fig, axes = plt.subplots(
        heads, 1, figsize=(3.0, 2.5 * heads), squeeze=False, layout="constrained"
    )
    for h, ax in enumerate(axes[:, 0]):
        image = ax.imshow(weights[h].float().numpy(), vmin=0, vmax=1, cmap="viridis")
        ax.set_title(tr("head {h}").format(h=h), fontsize=10)
        ax.set_xticks(range(len(columns)), columns, fontsize=10)
        ax.set_yticks(range(len(rows)), rows, fontsize=10)
        ax.set_xlabel(tr("source digit"), fontsize=10)
        ylabel(ax, tr("output digit"), fontsize=10)
    bar = fig.colorbar(image, ax=list(axes[:, 0]), shrink=0.6)
    ylabel(bar.ax, tr("weight"))
    bar.ax.tick_params(labelsize=9)
