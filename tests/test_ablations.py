"""The recorded ablation table (`trainkit/ablations.py`), on the tiny preset."""

import json
import os
import subprocess
import sys

import pytest
import torch
from conftest import ROOT

import train
from trainkit import ablations
from trainkit.corpus import cached_corpus
from trainkit.metrics import Metrics

# A few steps of the tiny preset on the first 100,000 characters of the plays.
TINY = ["--preset", "tiny", "--steps", "4", "--eval_interval", "2"]


@pytest.fixture
def in_tmp(tmp_path, monkeypatch):
    """A temporary folder as the working one, holding `small.txt`."""
    text = cached_corpus(ROOT / "data").read_text(encoding="utf-8")[:100_000]
    (tmp_path / "small.txt").write_text(text, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    threads = torch.get_num_threads()
    yield tmp_path
    torch.set_num_threads(threads)


def test_records_each_run_with_its_flags_and_losses(in_tmp):
    args = ["--variants", "baseline,one-head", "--work", "work", "rec"]
    args += [*TINY, "--data", "small.txt"]
    result = subprocess.run(
        [sys.executable, "-m", "trainkit.ablations", *args],
        capture_output=True,
        encoding="utf-8",
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    results = json.loads((in_tmp / "rec" / "results.json").read_text())
    runs = results["runs"]
    assert [r["name"] for r in runs] == ["baseline", "one-head"]
    assert [r["flags"] for r in runs] == [[], ["--n_head", "1"]]
    # The flags did what the name says, and nothing else.
    assert [r["changes"] for r in runs] == [{}, {"n_head": 1}]
    assert results["config"]["n_head"] == train.PRESETS["tiny"].n_head
    assert results["config"]["threads"] == 1 and results["config"]["steps"] == 4
    assert results["options"] == [*TINY, "--data", "small.txt"]
    assert results["command"].endswith(" ".join(args))
    cfg = train.PRESETS["tiny"]
    for i, run in enumerate(runs, 1):
        # Its losses are the run's own records, its last evaluation's.
        out = in_tmp / "work" / run["name"]
        evals = [r for r in Metrics.resume(out / "metrics.jsonl", 10).records]
        evals = [
            {k: r[k] for k in ("step", "train", "val")} for r in evals if "val" in r
        ]
        assert run["evaluations"] == evals and [e["step"] for e in evals] == [0, 2, 4]
        assert (run["train"], run["val"]) == (evals[-1]["train"], evals[-1]["val"])
        assert run["threads"] == 1 and run["wall_seconds"] > 0
        model = train.CharTransformer(
            cfg, len(train.Vocab.of((in_tmp / "small.txt").read_text(encoding="utf-8")))
        )
        assert run["parameters"] == sum(p.numel() for p in model.parameters())
        assert f"[{i}/2] {run['name']}" in lines[2 * i - 2]
        assert f"[{i}/2] {run['name']}: val {run['val']:.3f}" in lines[2 * i - 1]
    readme = (in_tmp / "rec" / "README.md").read_text(encoding="utf-8")
    assert results["command"] in readme
    assert f"| one-head | `--n_head 1` | {runs[1]['val']:.3f} |" in readme
    rows = ablations.ablation_rows(in_tmp / "rec")
    assert [row.name for row in rows] == ["baseline", "one-head"]
    assert rows[0].delta == 0 and rows[1].delta == runs[1]["val"] - runs[0]["val"]
    assert rows[1].flags == ["--n_head", "1"] and rows[1].evaluations == evals


def test_a_failed_run_leaves_the_recorded_folder_as_it_was(in_tmp, monkeypatch, capsys):
    folder = in_tmp / "rec"
    folder.mkdir()
    (folder / "results.json").write_text('{"old": true}\n')
    (folder / "README.md").write_text("old\n")
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    # The first run fails (train.py refuses --n_head 3 for --d_model 32, in
    # a second or two), so the second is never started.
    broken = (["--n_head", "3"], "a variant train.py refuses")
    monkeypatch.setitem(ablations.VARIANTS, "broken", broken)
    args = ["--variants", "broken,baseline", "--work", "work", "rec"]
    with pytest.raises(SystemExit) as exit:
        ablations.main([*args, *TINY, "--data", "small.txt"])
    assert "broken: training failed (status 2)" in str(exit.value)
    assert "--n_head 3" in str(exit.value) and "rec was not changed" in str(exit.value)
    assert "[1/2] broken" in capsys.readouterr().out
    assert not (in_tmp / "work" / "baseline").exists()
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before
    # Options that would make the runs share one folder are refused first.
    with pytest.raises(SystemExit, match="--out"):
        ablations.main(["rec", "--out", "elsewhere"])
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before
