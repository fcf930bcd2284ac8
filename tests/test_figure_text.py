"""Figure text: none cut off by the canvas, and short CJK y labels upright.

A text that reaches past the saved figure's edge is a build warning naming
the example's `file:line` (`literate.clipped`, the execute stage), on every
build, cached or not. The report modules draw every y label through
`report.ylabel`, which stands a short Chinese or Japanese label upright and
leaves every other label as matplotlib draws it (issue 20).
"""

from __future__ import annotations

import ast
import io
import logging
from pathlib import Path

import matplotlib
import pytest

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from literate.clipped import drawn_texts, outside  # noqa: E402
from literate.execute import execute_page  # noqa: E402
from literate.parse import parse  # noqa: E402
from report import upright_lines, ylabel  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
LONG = "a y label far too long for a figure this short"

PAGE = f'''"""Two figures: one whose y label runs off the canvas, one that fits."""

import matplotlib.pyplot as plt


def clipped():
    fig, ax = plt.subplots(figsize=(3, 2), layout="constrained")
    ax.plot([0, 1], [0, 1])
    ax.set_ylabel("{LONG}")


def fitted():
    fig, ax = plt.subplots(figsize=(3, 2), layout="constrained")
    ax.plot([0, 1], [0, 1])
    ax.set_ylabel("short")


#| clipped()  | alt: a line under a label cut off
#| fitted()  | alt: a line under its label
'''


def cut_off(fig) -> list[str]:
    """What `outside` finds in `fig` saved as the build saves it (SVG)."""
    with drawn_texts() as drawn:
        fig.savefig(io.StringIO(), format="svg")
    plt.close(fig)
    return outside(drawn)


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


# ## The check, on figures drawn here


def test_a_label_longer_than_the_figure_is_cut_off_on_both_ends():
    fig, ax = plt.subplots(figsize=(2, 1.5))
    ax.set_ylabel(LONG)
    found = [line for line in cut_off(fig) if LONG in line]
    assert len(found) == 1
    assert "top by" in found[0] and "bottom by" in found[0]


@pytest.mark.parametrize(
    "draw, text",
    [
        (lambda fig, ax: fig.suptitle("a suptitle above the top", y=1.08), "suptitle"),
        (
            lambda fig, ax: ax.annotate(
                "a note past the right",
                (1, 0.5),
                xycoords="axes fraction",
                xytext=(60, 0),
                textcoords="offset points",
            ),
            "a note past the right",
        ),
        (
            lambda fig, ax: (
                ax.plot([0, 1], label="a legend entry"),
                ax.legend(loc="center left", bbox_to_anchor=(1.3, 0.5)),
            ),
            "a legend entry",
        ),
        (lambda fig, ax: ax.set_yticks([0.5], ["a wide tick label"]), "tick label"),
    ],
    ids=["suptitle", "annotation", "legend", "tick label"],
)
def test_every_kind_of_text_is_checked(draw, text):
    fig, ax = plt.subplots(figsize=(3, 2))  # no layout engine to make room
    ax.set_xlim(0, 1)
    draw(fig, ax)
    assert any(text in line for line in cut_off(fig)), text


def test_a_figure_that_fits_has_nothing_cut_off():
    fig, ax = plt.subplots(figsize=(3, 2), layout="constrained")
    ax.plot([1, 2], [3, 4], label="data")
    ax.set_title("a title")
    ax.set_xlabel("x")
    ax.set_ylabel("y")
    ax.legend()
    assert cut_off(fig) == []


def test_hidden_and_clipped_texts_do_not_count():
    fig, ax = plt.subplots(figsize=(3, 2), layout="constrained")
    ax.set_xlim(0, 1)
    hidden = ax.text(5, 0.5, "hidden, past the right edge")
    hidden.set_visible(False)
    ax.text(5, 0.5, "clipped to the axes", clip_on=True)
    assert cut_off(fig) == []


# ## The check in the build: a warning naming file:line, every build


def line_of(text: str, name: str) -> int:
    return text.split("\n").index(name) + 1


def test_the_execute_stage_warns_with_file_line_every_build(tmp_path, caplog):
    (tmp_path / "page.py").write_text(PAGE, encoding="utf-8")
    page = parse(PAGE, "page.py")
    clipped = line_of(PAGE, "#| clipped()  | alt: a line under a label cut off")
    fitted = line_of(PAGE, "#| fitted()  | alt: a line under its label")
    for build in ("fresh", "cached"):
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="mkdocs.plugins.literate"):
            execute_page(page, tmp_path / "page.py", cache_dir=tmp_path / "cache")
        warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
        assert len(warnings) == 1, (build, warnings)
        assert warnings[0].startswith(f"page.py:{clipped}: figure: text cut off"), build
        assert f"{LONG!r} (bottom by" in warnings[0], warnings[0]
        assert not any(f"page.py:{fitted}:" in w for w in warnings)
    assert len(list((tmp_path / "cache").glob("*.json"))) == 2


# ## Upright y labels


@pytest.mark.parametrize(
    "text, lines",
    [
        ("クエリ", ["ク", "エ", "リ"]),
        ("重み", ["重", "み"]),
        ("读取方（查询）", ["读", "取", "方", "︵", "查", "询", "︶"]),
        ("読む側（クエリ）", ["読", "む", "側", "︵", "ク", "エ", "リ", "︶"]),
        ("层 0", ["层", "0"]),
        ("層 12", ["層", "12"]),
        ("キー", ["キ", "︱"]),
    ],
)
def test_short_cjk_labels_stack_a_character_to_a_line(text, lines):
    assert upright_lines(text) == lines


@pytest.mark.parametrize(
    "text",
    [
        "query",  # English: as matplotlib draws it
        "ms per new token (log scale)",
        "1\xa0トークンあたりの時間（ms、対数目盛り）",  # too long to stack
        "交差エントロピー（1\xa0文字あたりのナット）",
        "Transformer 層",  # a Latin word does not stand upright
    ],
)
def test_english_and_long_labels_stay_turned(text):
    assert upright_lines(text) is None


def test_ylabel_turns_english_as_before_and_stands_cjk_upright():
    fig, (left, right) = plt.subplots(1, 2)
    ylabel(left, "query", fontsize=11)
    plain = plt.figure().add_subplot().set_ylabel("query", fontsize=11)
    english = left.yaxis.label
    assert english.get_text() == "query" and english.get_rotation() == 90
    assert english.get_fontsize() == plain.get_fontsize() == 11
    assert english.get_horizontalalignment() == plain.get_horizontalalignment()
    ylabel(right, "クエリ", fontsize=11)
    upright = right.yaxis.label
    assert upright.get_text() == "ク\nエ\nリ" and upright.get_rotation() == 0
    assert upright.get_horizontalalignment() == "right"  # left of the ticks


def test_a_colour_bar_label_stands_upright_to_the_right_of_the_bar():
    fig, ax = plt.subplots()
    bar = fig.colorbar(ax.imshow([[0, 1]]), ax=ax)
    ylabel(bar.ax, "重み")
    label = bar.ax.yaxis.label
    assert label.get_text() == "重\nみ" and label.get_rotation() == 0
    assert label.get_horizontalalignment() == "left"


def test_the_report_modules_draw_every_y_label_through_ylabel():
    """No report module sets a y label or a colour bar's label by itself."""
    modules = [*ROOT.glob("*_report.py"), ROOT / "trainkit" / "metrics.py"]
    direct = []
    for path in modules:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            name = getattr(node.func, "attr", getattr(node.func, "id", ""))
            labelled = name == "colorbar" and any(
                k.arg == "label" for k in node.keywords
            )
            if name in ("set_ylabel", "set_label") or labelled:
                direct.append(f"{path.name}:{node.lineno}")
    assert len(modules) >= 5
    assert direct == []
