"""The shipped model's loss on the whole validation split, position by position.

    python -m trainkit.whole_split runs/cpu

The run's own log estimates the validation loss on `eval_batches` batches of
random windows; the counting baselines are scored on every validation
character. To compare them on the same characters, this scores the model in
`FOLDER/model.pt` on its whole validation split (`train.py`'s `split`, with
the model's configuration), cut into windows of `context` characters side
by side (the few characters after the last whole window are left out), and
keeps the loss at every position. It writes `FOLDER/whole_split.json`:

* `by_position`: the mean loss at each position of a window, over all the
  windows, in nats; position `t` predicts the window's character `t + 1`
  from the `t + 1` characters before it in the window, so the first
  positions see less than a 5-gram's four;
* `groups` and `per_window`: each window's mean loss over the positions
  whose number of preceding characters lies in each group (1, 2, 3, 4, 5-8,
  9-16, ...: `context_groups`), one row per window: what a standard error
  over the windows needs, and what a test recomputes for a few windows to
  check the file against the model;
* `windows`, `context`, `first` (the validation index of the first scored
  character, 1) and `characters` (how many are scored), the command, and
  how long the pass took on which machine.

The pass takes about a minute on a 2-core machine, too long for every page
build, so it is recorded once, like the run; `read` refuses a file that does
not fit the split it is asked about.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import torch
import torch.nn.functional as F

from trainkit import RunError
from trainkit.checkpoints import load_checkpoint, model_config
from trainkit.corpus import encode_all, read_text
from trainkit.files import write_atomically

ROOT = Path(__file__).resolve().parent.parent
NAME = "whole_split.json"
COMMAND = "python -m trainkit.whole_split runs/cpu"


def windows_of(val: torch.Tensor, context: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Inputs and targets `[W, context]` each: the validation ids cut into
    `W` whole windows side by side, the targets shifted by one."""
    count = (len(val) - 1) // context
    if count < 1:
        raise RunError(
            f"the validation split has {len(val)} characters; expected at least "
            f"{context + 1} for one window of --context {context}"
        )
    end = count * context
    return val[:end].view(count, context), val[1 : end + 1].view(count, context)


@torch.no_grad()
def window_losses(model, x: torch.Tensor, y: torch.Tensor, batch: int = 64):
    """The loss of every position of every window, `[W, context]`, in nats."""
    model.eval()
    rows = []
    for i in range(0, len(x), batch):
        logits = model(x[i : i + batch]).float()  # [b, S, N]
        loss = F.cross_entropy(
            logits.transpose(1, 2), y[i : i + batch], reduction="none"
        )
        rows.append(loss.double())
    return torch.cat(rows)


def context_groups(context: int) -> list[tuple[int, int]]:
    """`(first, last)` numbers of preceding characters: 1, 2, 3 and 4 alone,
    then groups that double, 5-8, 9-16, ..., up to `context`."""
    groups = [(c, c) for c in range(1, min(4, context) + 1)]
    low = 5
    while low <= context:
        groups.append((low, min(2 * low - 2, context)))
        low = 2 * low - 1
    return groups


def group_means(losses: torch.Tensor, groups) -> torch.Tensor:
    """`[W, G]`: each window's mean loss over each group's positions (a
    position `t` has `t + 1` characters before it)."""
    return torch.stack([losses[:, lo - 1 : hi].mean(1) for lo, hi in groups], 1)


def validation_ids(path: Path):
    """`(model, val)`: the model in `path` and its validation ids, split as
    `train.py` split them for its configuration."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    import train

    state = load_checkpoint(path, keys=("model", "config", "vocab"))
    cfg = model_config(path, state, train.Config)
    model, vocab = train.load_model(path, torch.device("cpu"))
    text, name = read_text(cfg.data, ROOT / "data")
    _, val = train.split(encode_all(text, vocab.chars, name), cfg, name)
    return model, val


def record(folder: Path) -> dict:
    """Score `folder/model.pt` on its whole validation split; write the file."""
    model, val = validation_ids(folder / "model.pt")
    x, y = windows_of(val, model.context)
    load = os.getloadavg()
    began = time.perf_counter()
    losses = window_losses(model, x, y)
    seconds = time.perf_counter() - began
    groups = context_groups(model.context)
    by_group = group_means(losses, groups)
    result = {
        "command": COMMAND.replace("runs/cpu", str(folder)),
        "windows": len(x),
        "context": model.context,
        "first": 1,
        "characters": losses.numel(),
        "mean": round(losses.mean().item(), 6),
        "by_position": [round(v, 6) for v in losses.mean(0).tolist()],
        "groups": groups,
        "per_window": [[round(v, 4) for v in row] for row in by_group.tolist()],
        "seconds": round(seconds, 1),
        "threads": torch.get_num_threads(),
        "cpus": os.cpu_count(),
        "load_average_before": [round(v, 2) for v in load],
        "torch": torch.__version__,
    }
    rows = result.pop("per_window")  # one line per window, not per number
    text = json.dumps(result, indent=1)[:-2] + ',\n "per_window": [\n'
    text += ",\n".join(json.dumps(row) for row in rows) + "\n ]\n}\n"
    result["per_window"] = rows
    write_atomically(folder / NAME, lambda f: f.write(text.encode("utf-8")))
    return result


def read(folder: Path, val_length: int, context: int) -> dict:
    """The recorded file, checked against a validation split of `val_length`
    characters scored in windows of `context`."""
    path = folder / NAME
    if not path.exists():
        raise RunError(f"{path}: not found; record it with `{COMMAND}`")
    result = json.loads(path.read_text(encoding="utf-8"))
    expected = ((val_length - 1) // context, context)
    if (result["windows"], result["context"]) != expected:
        raise RunError(
            f"{path}: {result['windows']} windows of {result['context']}; expected "
            f"{expected[0]} of {expected[1]} for this split; record it again "
            f"with `{COMMAND}`"
        )
    return result


def main(argv: list[str]) -> None:
    if len(argv) != 1 or argv[0].startswith("-"):
        sys.exit("usage: python -m trainkit.whole_split FOLDER (holding model.pt)")
    folder = Path(argv[0])
    try:
        result = record(folder)
    except RunError as error:
        sys.exit(f"trainkit.whole_split: error: {error}")
    print(
        f"{folder / NAME}: {result['windows']} windows of {result['context']}, "
        f"mean {result['mean']:.4f} nats, {result['seconds']:.0f} s"
    )


if __name__ == "__main__":
    main(sys.argv[1:])
