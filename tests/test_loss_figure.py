"""The loss curve of train.py's page (`trainkit/metrics.loss_figure`): the
counters' labels sit in the legend under the axes, where no curve or marker
can cover them, on the wide figure and the narrow one alike."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from trainkit.metrics import Metrics, loss_figure  # noqa: E402

BASELINES = [("uniform", 4.26), ("trigram counts", 2.05), ("5-gram counts", 1.65)]


def metrics() -> Metrics:
    records = [{"step": s, "loss": 4.0 - s / 1000} for s in range(10, 3001, 10)]
    records += [
        {"step": s, "train": 4 - s / 900, "val": 4 - s / 950} for s in (0, 3000)
    ]
    return Metrics("unused.jsonl", records)


@pytest.mark.parametrize("columns", [1, 2])
def test_counters_are_named_in_a_legend_outside_the_axes(columns):
    fig = loss_figure(metrics(), baselines=BASELINES, columns=columns)
    try:
        fig.canvas.draw()
        ax = fig.axes[0]
        assert not ax.texts and ax.get_legend() is None  # nothing drawn inside
        (legend,) = fig.legends
        labels = [t.get_text() for t in legend.get_texts()]
        for label, value in BASELINES:
            assert f"{label}: {value:.2f}" in labels
        renderer = fig.canvas.get_renderer()
        box, axes = legend.get_window_extent(renderer), ax.get_window_extent(renderer)
        assert box.y1 <= axes.y0  # below the axes, not over the curves
        page = fig.bbox
        assert page.x0 <= box.x0 and box.x1 <= page.x1 and page.y0 <= box.y0  # whole
    finally:
        plt.close(fig)


def test_without_counters_the_legend_stays_inside():
    fig = loss_figure(metrics())
    try:
        assert fig.axes[0].get_legend() is not None and not fig.legends
    finally:
        plt.close(fig)
