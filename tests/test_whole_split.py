"""The whole-split pass (`trainkit/whole_split.py`) and what train.py's page
says about it: the recorded file agrees with the shipped model, the counters
are compared on the very characters it scored, and the sentences about the
table by context hold for the recorded numbers."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import numpy as np
import pytest
import torch

import train
from trainkit import RunError, recorded, whole_split
from trainkit.baselines import ngram_loss, split_ids, witten_bell_loss

ROOT = Path(__file__).resolve().parent.parent
FOLDER = ROOT / "runs" / "cpu"


@pytest.fixture(scope="module")
def recorded_pass() -> dict:
    return json.loads((FOLDER / whole_split.NAME).read_text(encoding="utf-8"))


def test_recorded_file_agrees_with_the_shipped_model_on_a_slice(recorded_pass):
    # The first and last windows, scored again: the same group means, to
    # the file's rounding (and thread-count noise).
    model, val = whole_split.validation_ids(FOLDER / "model.pt")
    x, y = whole_split.windows_of(val, model.context)
    assert (len(x), model.context) == (
        recorded_pass["windows"],
        recorded_pass["context"],
    )
    picked = [*range(6), *range(len(x) - 6, len(x))]
    losses = whole_split.window_losses(model, x[picked], y[picked])
    got = whole_split.group_means(losses, recorded_pass["groups"])
    want = torch.tensor([recorded_pass["per_window"][i] for i in picked]).double()
    assert torch.allclose(got, want, atol=2e-4), (got - want).abs().max()


def test_recorded_file_is_consistent_with_itself(recorded_pass):
    w, s = recorded_pass["windows"], recorded_pass["context"]
    assert recorded_pass["characters"] == w * s
    assert len(recorded_pass["by_position"]) == s
    assert recorded_pass["mean"] == pytest.approx(np.mean(recorded_pass["by_position"]))
    # The group means, weighted by their sizes, give the same mean.
    sizes = np.array([high - low + 1 for low, high in recorded_pass["groups"]])
    per_window = np.array(recorded_pass["per_window"])  # [W, G]
    assert per_window.shape == (w, len(sizes))
    mean = (per_window @ sizes / s).mean()
    assert mean == pytest.approx(recorded_pass["mean"], abs=1e-4)


@pytest.mark.parametrize("context", [1, 3, 4, 5, 9, 32, 100, 128])
def test_context_groups_cover_every_position_once(context):
    groups = whole_split.context_groups(context)
    covered = [c for low, high in groups for c in range(low, high + 1)]
    assert covered == list(range(1, context + 1))


def test_window_losses_are_the_mean_cross_entropy_of_the_model():
    cfg = train.PRESETS["tiny"]
    torch.manual_seed(0)
    model = train.CharTransformer(cfg, 11)
    val = torch.randint(0, 11, (5 * cfg.context + 7,))
    x, y = whole_split.windows_of(val, cfg.context)
    assert x.shape == (5, cfg.context)
    assert torch.equal(x[1:, 0], y[:-1, -1])  # windows side by side
    losses = whole_split.window_losses(model, x, y, batch=2)
    whole = train.cross_entropy(model(x), y)
    assert losses.mean().item() == pytest.approx(whole.item(), rel=1e-5)


def test_a_split_too_short_for_one_window_is_refused():
    with pytest.raises(RunError, match="expected at least 33 for one window"):
        whole_split.windows_of(torch.zeros(32, dtype=torch.long), 32)


def test_a_file_for_another_split_is_refused(tmp_path, recorded_pass):
    (tmp_path / whole_split.NAME).write_text(json.dumps(recorded_pass))
    with pytest.raises(RunError) as error:
        whole_split.read(tmp_path, 1000, 128)
    message = str(error.value)
    assert whole_split.NAME in message and whole_split.COMMAND in message
    assert "\n" not in message
    with pytest.raises(RunError, match="not found; record it with"):
        whole_split.read(tmp_path / "nowhere", 1000, 128)


def test_per_character_counters_average_to_their_losses():
    rng = np.random.default_rng(0)
    train_ids, val_ids = rng.integers(0, 5, 3000), rng.integers(0, 5, 500)
    for order in (1, 3):
        each = ngram_loss(train_ids, val_ids, 5, order, per_character=True)
        assert each.shape == (500,)
        assert each.mean() == pytest.approx(
            ngram_loss(train_ids, val_ids, 5, order).nats
        )
    each = witten_bell_loss(train_ids, val_ids, 5, 4, per_character=True)
    assert each.mean() == pytest.approx(witten_bell_loss(train_ids, val_ids, 5, 4))


@pytest.fixture(scope="module")
def by_context(recorded_pass):
    """Per group: the model's loss, the 5-gram's on the same characters,
    and the lead and its standard error, as the page's table computes them;
    and the trigram's margin over the model on all the scored characters."""
    cfg = train.PRESETS["cpu"]
    result, counters, _ = recorded.scored_characters(cfg, train.split)
    (_, trigram), (_, five) = counters.items()
    model = np.array(result["per_window"])
    rows = []
    for g, (low, high) in enumerate(result["groups"]):
        theirs = five[:, low - 1 : high].mean(1)
        lead = theirs - model[:, g]
        rows.append(
            (
                low,
                model[:, g].mean(),
                theirs.mean(),
                lead.mean(),
                lead.std() / math.sqrt(len(lead)),
            )
        )
    return rows, trigram.mean() - np.mean(result["by_position"])


def test_the_page_claims_about_context_hold(by_context):
    rows, trigram_margin = by_context
    leads = {low: lead for low, _, _, lead, _ in rows}
    errors = {low: error for low, _, _, _, error in rows}
    # "With four characters or fewer before it the model is behind the 5-gram
    # (at four, within two ±); from the 5-8 row on it leads, and from 9-16 on
    # by several ±"
    assert all(lead < 0 for low, lead in leads.items() if low <= 4)
    assert -leads[4] < 2 * errors[4]
    assert all(lead > 0 for low, lead in leads.items() if low >= 5)
    assert all(leads[low] > 3 * errors[low] for low in leads if low >= 9)
    assert [low for low in leads if low >= 5][-3:] == [17, 33, 65]
    # "The lead grows up to the 33-64 row and then stops" (and past 9-16 each
    # step is larger than the two rows' errors)
    rising = [row for row in rows if 5 <= row[0] <= 33]
    for before, after in zip(rising, rising[1:], strict=False):
        assert after[3] > before[3]
        if before[0] >= 9:
            assert after[3] - before[3] > before[4] + after[4]
    assert leads[65] <= leads[33]
    # "Its own column moves little past 9-16 ... the 5-gram's moves more"
    late = [row for row in rows if row[0] >= 9]
    spread = np.ptp([row[1] for row in late])
    assert spread < np.ptp([row[2] for row in late])
    # "its largest lead is small beside its margin over the trigram"
    assert max(leads.values()) < trigram_margin / 4


def test_same_characters_prints_margins_on_one_set_of_characters(capsys, recorded_pass):
    cfg = dataclasses.replace(train.PRESETS["cpu"])
    total = len(split_ids(cfg)[1])
    n, w, s = (recorded_pass[k] for k in ("characters", "windows", "context"))
    recorded.same_characters(cfg, train.split)
    lines = capsys.readouterr().out.splitlines()
    assert all(line.startswith("| ") for line in lines)  # one table, nothing else
    header = [cell.strip() for cell in lines[0].split("|")[1:-1]]
    assert header[1] == f"{n:,} of {total:,}" and 0 < total - n <= s
    assert header[2].startswith(f"the {w * (s - 3):,} with 4 or more")
    rows = {
        cells[0]: [float(c) for c in cells[1:]]
        for cells in ([c.strip() for c in line.split("|")[1:-1]] for line in lines[2:])
    }
    model = rows["the model, runs/cpu/model.pt"]
    for counter in ("trigram counts", "5-gram counts, Witten-Bell"):
        margin = rows[f"{counter.split(',')[0]} minus the model"]
        assert margin == pytest.approx(np.subtract(rows[counter], model), abs=1.5e-3)
