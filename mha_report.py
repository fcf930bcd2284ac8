"""What `mha.py` reports but does not teach.

Its results as Markdown tables and figures, and the records they are made
from. `mha.py` imports this module; its page shows what these functions
print and draw. The checks of its arguments are `argument_checks`; the
tables and y labels every chapter uses are `report`.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from literate.words import tr
from report import markdown_table, ylabel
from report import matrix_table as matrix_table  # re-exported: mha.py calls it

# ## Records of results


@dataclass(frozen=True)
class CheckRow:
    """Largest difference from PyTorch for one kind of attention."""

    case: str
    fused: float  # our fused path, `scaled_dot_product_attention`
    explicit: float  # our explicit path (need_weights=True)
    weights: float  # our attention weights against PyTorch's
    size: float  # the largest absolute value of PyTorch's output
    nan_rows: int  # queries whose output PyTorch left NaN


def check_row(
    case: str,
    ours: tuple[torch.Tensor, torch.Tensor, torch.Tensor],
    expected: tuple[torch.Tensor, torch.Tensor],
    nan_rows: int,
) -> CheckRow:
    """The largest differences of our (fused, explicit, weights) from PyTorch's
    (output, weights)."""
    fused, explicit, weights = ours
    output, expected_weights = expected
    return CheckRow(
        case=case,
        fused=(fused - output).abs().max().item(),
        explicit=(explicit - output).abs().max().item(),
        weights=(weights - expected_weights).abs().max().item(),
        size=output.abs().max().item(),
        nan_rows=nan_rows,
    )


# ## Tables


def class_columns(prefixes: list[str]) -> list[str]:
    """Column names "prefix: word class" for each prefix, for the toy heads."""
    classes = [tr("noun"), tr("action"), tr("adjective")]
    return [f"{p}{tr(': ')}{c}" for p in prefixes for c in classes]


def print_blocks(
    weight: torch.Tensor, block: torch.Tensor, together: torch.Tensor, difference: float
) -> None:
    """What `heads_as_blocks` found: the shapes, and the largest difference."""
    heads = weight.shape[0] // block.shape[0]
    shapes = tr("weight {w} -> {n} blocks of {b}; output {o}")
    w, b, o = (list(t.shape) for t in (weight, block, together))
    print(shapes.format(w=w, n=heads, b=b, o=o))
    eps = torch.finfo(torch.float32).eps
    line = tr("largest difference: {d}; float32 steps near 1 are {eps} apart")
    print(line.format(d=f"{difference:.1e}", eps=f"{eps:.1e}"))


def print_differences(pairs: dict[str, tuple[torch.Tensor, torch.Tensor]]) -> None:
    """One line per named pair of tensors: the largest absolute difference."""
    for name, (a, b) in pairs.items():
        largest = f"{tr('largest difference')} {(a - b).abs().max().item():.1e}"
        print(f"{name}{tr(': ')}{largest}")


def format_check_table(rows: list[CheckRow]) -> str:
    """The comparison with PyTorch as a Markdown table of largest differences."""
    header = [tr("case"), tr("fused path"), tr("explicit path"), tr("weights")]
    header += [tr("largest output"), tr("NaN in PyTorch")]
    cells = [
        [r.case, f"{r.fused:.1e}", f"{r.explicit:.1e}", f"{r.weights:.1e}"]
        + [f"{r.size:.2f}", f"{r.nan_rows}"]
        for r in rows
    ]
    return markdown_table(header, cells, align="lrrrrr")


# ## Figures
#
# Each function draws and leaves the figure open; the page shows it. They
# import matplotlib when called, so `mha.py` does not need it. Every word
# drawn goes through `tr`, which gives it in the language of the page that
# shows the figure (see `literate.words`).


def draw_two_heads(panels: dict[str, torch.Tensor], words: list[str]) -> None:
    """Two small heatmaps side by side, each weight written in its cell.

    Sized to be read on a phone: under 5 inches wide, ticks at 11 pt.
    """
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(panels), figsize=(4.6, 2.7), layout="compressed")
    for ax, (title, weights) in zip(axes, panels.items(), strict=True):
        shown = weights.detach().float()
        ax.imshow(shown, vmin=0, vmax=1, cmap="viridis")
        for (i, j), value in zip(
            torch.cartesian_prod(*map(torch.arange, shown.shape)).tolist(),
            shown.flatten().tolist(),
            strict=True,
        ):
            colour = "black" if value > 0.6 else "white"
            ax.text(j, i, f"{value:.2f}", ha="center", va="center", color=colour,
                    fontsize=9.5)  # fmt: skip
        ax.set_title(title, fontsize=11)
        ax.set_xticks(range(len(words)), words, fontsize=11, rotation=45)
        ax.set_yticks(range(len(words)), words, fontsize=11)
        ax.set_xlabel(tr("key"), fontsize=11)
    ylabel(axes[0], tr("query"), fontsize=11)
    axes[1].tick_params(labelleft=False)


def plot_kv_timing(record: dict) -> None:
    """Milliseconds per generated token against the prefix length, from a record."""
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter, NullFormatter

    fig, ax = plt.subplots(figsize=(5.5, 3.4))
    prefix = record["prefix"]
    recompute, cache = tr("recompute the prefix"), tr("key/value cache")
    ax.plot(prefix, record["recompute_ms"], marker="o", label=recompute)
    ax.plot(prefix, record["cache_ms"], marker="o", label=cache)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    # Ticks as plain numbers (64, 0.1): an exponent's small digits would come
    # out under 9 CSS px on a phone (tests/test_layout.py).
    for axis in (ax.xaxis, ax.yaxis):
        axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        axis.set_minor_formatter(NullFormatter())
    ax.set_xlabel(tr("tokens already generated (log scale)"))
    ylabel(ax, tr("ms per new token (log scale)"))
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
