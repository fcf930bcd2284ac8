"""What `attention.py` reports but does not teach.

Its results as Markdown tables and figures, the record the scaling table is
made from, and the data of the page's widget. `attention.py` imports this
module; its page shows what these functions print and draw. The checks of
its arguments are `argument_checks`; the tables and y labels every chapter
uses are `report`.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from literate.data import Data
from literate.narrow import narrow
from literate.words import tr
from report import markdown_table, ylabel
from report import matrix_table as matrix_table  # re-exported: attention.py calls it

# ## Records of results


@dataclass(frozen=True)
class ScalingRow:
    """One width $d_k$, raw scores against scores divided by $\\sqrt{d_k}$."""

    d_k: int
    var_raw: float  # variance of q·k
    var_scaled: float  # variance of q·k / sqrt(d_k)
    peak_raw: float  # mean of the largest softmax weight, raw scores
    peak_scaled: float  # the same with scaled scores
    keys_raw: float  # mean participation ratio of |dL/ds| over the keys
    keys_scaled: float  # the same with scaled scores
    grad_s_raw: float  # mean norm of dL/ds, raw scores
    grad_s_scaled: float  # the same with scaled scores
    grad_q_raw: float  # mean norm of dL/dq, raw scores
    grad_q_scaled: float  # the same with scaled scores


# ## Tables


def vector_line(name: str, values: torch.Tensor, digits: int = 3) -> str:
    """`name: [a, b, c]` with each value to `digits` decimals."""
    numbers = ", ".join(f"{v:.{digits}f}" for v in values.tolist())
    return f"{name + ':':<14}[{numbers}]"


def format_scaling_table(rows: list[ScalingRow]) -> str:
    """The forward half of the scaling experiment: variance and largest weight."""
    header = ["d_k", tr("Var raw"), tr("Var scaled"), tr("max p raw")]
    header += [tr("max p scaled")]
    cells = [
        [f"{r.d_k}", f"{r.var_raw:.1f}", f"{r.var_scaled:.2f}"]
        + [f"{r.peak_raw:.2f}", f"{r.peak_scaled:.2f}"]
        for r in rows
    ]
    return markdown_table(header, cells, align="r" * len(header))


def format_keys_table(rows: list[ScalingRow]) -> str:
    """The backward half, first: how many keys receive gradient."""
    header = ["d_k", tr("keys raw"), tr("keys scaled")]
    cells = [[f"{r.d_k}", f"{r.keys_raw:.1f}", f"{r.keys_scaled:.1f}"] for r in rows]
    return markdown_table(header, cells, align="r" * len(header))


def format_gradient_table(rows: list[ScalingRow]) -> str:
    """The backward half, then: ‖∂L/∂s‖ and ‖∂L/∂q‖ (five columns, which a
    phone's width holds)."""
    header = ["d_k", tr("‖∂L/∂s‖ raw"), tr("‖∂L/∂s‖ scaled")]
    header += [tr("‖∂L/∂q‖ raw"), tr("‖∂L/∂q‖ scaled")]
    cells = [
        [f"{r.d_k}", f"{r.grad_s_raw:.3f}", f"{r.grad_s_scaled:.3f}"]
        + [f"{r.grad_q_raw:.2f}", f"{r.grad_q_scaled:.2f}"]
        for r in rows
    ]
    return markdown_table(header, cells, align="r" * len(header))


# ## Figures
#
# Each function draws and leaves the figure open; the page shows it. They
# import matplotlib when called, so `attention.py` does not need it. Every
# word drawn goes through `tr`, which gives it in the language of the page
# that shows the figure (see `literate.words`).

CMAP = "viridis"  # weights from 0 to 1, in the figures and the page's widget


def draw_heatmaps(
    panels: dict[str, torch.Tensor],
    rows: list[str],
    columns: list[str],
    *,
    hidden: dict[str, torch.Tensor] | None = None,
    numbers: bool = False,
    per_row: int = 2,
) -> None:
    """Heatmaps of weights from 0 to 1, a panel for each of `panels`.

    `hidden[title]` is a boolean `[rows, columns]`, `True` on cells to leave
    empty and hatch (masked cells). `numbers` writes each weight in its cell.
    The panels stand in one row; with more than `per_row` of them the figure
    is drawn again, in a grid of `per_row` columns, as the variant a phone
    shows (`literate.narrow`). The colour bar takes an empty cell of the grid
    when there is one.
    """
    _heatmap_figure(panels, rows, columns, hidden or {}, numbers, len(panels))
    if len(panels) > per_row:
        narrow(_heatmap_figure(panels, rows, columns, hidden or {}, numbers, per_row))


def _heatmap_figure(panels, rows, columns, hidden, numbers, across):
    import matplotlib.pyplot as plt

    across = min(across, len(panels))
    down = -(-len(panels) // across)
    cell = 0.55 if numbers else 0.3  # inches; a number needs room
    font = 11 if numbers else 14  # points; large, as a phone shrinks it
    size = cell * max(len(rows), len(columns)) + 0.9
    fig, axes = plt.subplots(
        down,
        across,
        figsize=(
            size * across + (0.8 if across * down == len(panels) else 0),
            size * down,
        ),
        squeeze=False,
        layout="compressed",
    )
    used = axes.flat[: len(panels)]
    for index, (ax, (title, weights)) in enumerate(
        zip(used, panels.items(), strict=True)
    ):
        shown = weights.detach().float()
        if title in hidden:
            shown = shown.masked_fill(hidden[title], float("nan"))
            for i, j in hidden[title].nonzero().tolist():
                ax.add_patch(
                    plt.Rectangle(
                        (j - 0.5, i - 0.5), 1, 1, fill=False, hatch="///",
                        edgecolor="0.5", lw=0,
                    )
                )  # fmt: skip
        image = ax.imshow(shown, vmin=0, vmax=1, cmap=CMAP)
        if numbers:
            for (i, j), value in zip(
                torch.cartesian_prod(*map(torch.arange, shown.shape)).tolist(),
                shown.flatten().tolist(),
                strict=True,
            ):
                colour = "black" if value > 0.6 else "white"
                ax.text(j, i, f"{value:.2f}", ha="center", va="center", color=colour)
        if len(panels) > 1:
            ax.set_title(title, fontsize=font)
        turn = 90 if max(map(len, columns)) > 3 and len(columns) > 4 else 0
        ax.set_xticks(range(len(columns)), columns, fontsize=font, rotation=turn)
        ax.set_yticks(range(len(rows)), rows, fontsize=font)
        if index + across >= len(panels):  # the lowest panel of its column
            ax.set_xlabel(tr("key"), fontsize=font)
        if index % across == 0:
            ylabel(ax, tr("query"), fontsize=font)
    spare = list(axes.flat[len(panels) :])
    for ax in spare:
        ax.set_axis_off()
    if spare:
        bar = fig.colorbar(image, cax=spare[0].inset_axes((0.1, 0.05, 0.1, 0.9)))
    else:
        bar = fig.colorbar(image, ax=list(axes.flat), shrink=0.8)
    ylabel(bar.ax, tr("weight"), fontsize=font)
    bar.ax.tick_params(labelsize=font - 1)
    return fig


# ## The page's widget
#
# The four-token example, handed to `docs/assets/js/toy.js` as the page's
# data (see `literate.data`): the numbers, the colours of the heatmaps and
# the widget's words in the page's language.


def toy_data(
    words: list[str], queries: torch.Tensor, keys: torch.Tensor, values: torch.Tensor
) -> Data:
    """What the toy widget needs to rerun `toy_weights` in the page."""
    from matplotlib import colormaps
    from matplotlib.colors import to_hex

    colours = colormaps[CMAP](torch.linspace(0, 1, 17).tolist())
    classes = [tr("noun"), tr("action"), tr("adjective")]
    labels = {
        "title": tr("Change what one word looks for"),
        "pick": tr("Query to change"),
        "feature": tr("{feature} of the query of {word}"),
        "reset": tr("Reset"),
        "queries": tr("queries Q"),
        "keys": tr("keys K (fixed)"),
        "scores": tr("scores Q Kᵀ"),
        "scaled": tr("scaled Q Kᵀ / √{d_k}"),
        "weights": tr("weights A"),
        "output": tr("output A V"),
        "sum": tr("row sum"),
        "weight": tr("weight"),
    }
    return Data(
        "toy",
        {
            "words": words,
            "queries": queries,
            "keys": keys,
            "values": values,
            "d_k": keys.shape[-1],
            "features": classes[:2],  # a query's features: [noun, action]
            "controls": [tr("noun feature"), tr("action feature")],  # their inputs
            "classes": classes,  # the values' columns
            "range": [-4.0, 4.0, 0.1],  # what a feature's control allows
            "colours": [to_hex(c) for c in colours],  # weights 0, 1/16, ..., 1
            "labels": labels,
        },
    )
