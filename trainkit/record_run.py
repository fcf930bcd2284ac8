"""Record a run for the pages: `python -m trainkit.record_run runs/cpu [OPTIONS]`.

Trains `train.py` (the `cpu` preset, plus any OPTIONS) into `out/record/`,
then writes into the folder named, all together:

* `metrics.jsonl` and `loss.png`: the run's records and loss curve;
* `model.pt`: the trained weights, configuration and vocabulary, without
  the optimizer's state (a few MB, read with `weights_only=True`);
* `sample.txt`: `python train.py sample` from that `model.pt`, with the
  settings in `SAMPLE` written out, not left to the defaults;
* `run.json`: the facts the page prints: wall time of the training command,
  threads, cores, load average, versions, vocabulary and corpus size, the
  configuration and the sample's arguments;
* `train.log`: what the training command printed.

Nothing in the folder is replaced unless the training command succeeded.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import subprocess
import sys
import time
from pathlib import Path

import torch

from trainkit.checkpoints import load_checkpoint
from trainkit.corpus import read_text
from trainkit.session import model_file

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ["--prompt", "ROMEO:", "--tokens", "500", "--temperature", "0.8"]
SAMPLE += ["--top-k", "40", "--seed", "0"]


def main(argv: list[str]) -> None:
    if not argv or argv[0].startswith("-"):
        sys.exit("usage: python -m trainkit.record_run FOLDER [train.py options]")
    folder, options = Path(argv[0]), argv[1:]
    work = Path("out/record")
    command = [sys.executable, str(ROOT / "train.py"), "--out", str(work), *options]
    load_before = os.getloadavg()
    began = time.perf_counter()
    # Read as UTF-8, not in the locale's encoding: `train.py` prints UTF-8
    # under the C locale too, and the plays hold a `—`.
    utf8 = {"capture_output": True, "encoding": "utf-8"}
    result = subprocess.run(command, **utf8)
    wall = time.perf_counter() - began
    if result.returncode != 0:
        sys.exit(f"trainkit.record_run: training failed:\n{result.stderr}")
    state = load_checkpoint(work / "ckpt.pt")
    text, _ = read_text(state["config"]["data"], ROOT / "data")
    staged = folder.with_name(folder.name + ".new")
    shutil.rmtree(staged, ignore_errors=True)
    staged.mkdir(parents=True)
    torch.save(model_file(state), staged / "model.pt")
    for name in ("metrics.jsonl", "loss.png"):
        shutil.copy(work / name, staged / name)
    (staged / "train.log").write_text(result.stdout, encoding="utf-8")
    sample = [sys.executable, str(ROOT / "train.py"), "sample"]
    sample += ["--checkpoint", str(staged / "model.pt"), *SAMPLE]
    drawn = subprocess.run(sample, check=True, **utf8)
    (staged / "sample.txt").write_text(drawn.stdout, encoding="utf-8")
    run = {
        "command": "python train.py " + " ".join(options),
        "wall_seconds": round(wall, 1),
        "threads": state["threads"],
        "cpus": os.cpu_count(),
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in os.getloadavg()],
        "torch": torch.__version__,
        "python": platform.python_version(),
        "vocabulary": len(state["vocab"]),
        "characters": len(text),
        "parameters": sum(
            t.numel() for k, t in state["model"].items() if k != "head.weight"
        ),
        "config": state["config"],
        "sample_args": ["--checkpoint", str(folder / "model.pt"), *SAMPLE],
    }
    (staged / "run.json").write_text(json.dumps(run, indent=1) + "\n")
    folder.mkdir(parents=True, exist_ok=True)
    for path in staged.iterdir():
        os.replace(path, folder / path.name)
    staged.rmdir()
    print(f"{folder}: recorded; {wall:.0f} s of training, {run['command']}")


if __name__ == "__main__":
    main(sys.argv[1:])
