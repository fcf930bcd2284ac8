"""Checkpoint files: written atomically, read without running code.

A checkpoint is written to a temporary file in the same folder, flushed to
disk, then renamed over the old one. A rename within a file system is atomic,
so a run killed at any moment (`kill -9` included) leaves either the old
checkpoint or the new one, never half of one.

It is read with `torch.load(..., weights_only=True)`: only tensors and plain
containers are unpickled, never arbitrary objects, so a checkpoint from
elsewhere cannot run code. A file that is not a whole checkpoint gives an
error naming it, and is left as it is.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path

import torch
import torch.distributed as dist

from trainkit import RunError

KEYS = {"model", "optimizer", "step", "elapsed", "config", "vocab", "rng"}


def save_checkpoint(path: Path, state: dict) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as f:
        torch.save(state, f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def load_checkpoint(
    path: Path, device: torch.device | str = "cpu", keys: Iterable[str] = KEYS
) -> dict:
    """The dict saved at `path`, which must hold `keys` (a checkpoint's, or
    a model file's: weights, configuration and vocabulary)."""
    path = Path(path)
    if not path.is_file():
        raise RunError(f"{path}: no checkpoint there")
    try:
        state = torch.load(path, map_location=device, weights_only=True)
    except Exception as e:
        raise RunError(f"{path}: {_why_unreadable(e)}") from None
    missing = set(keys) - set(state) if isinstance(state, dict) else set(keys)
    if missing:
        raise RunError(f"{path}: not a train.py checkpoint (missing {sorted(missing)})")
    return state


def _why_unreadable(error: Exception) -> str:
    """What went wrong, without PyTorch's advice to load with `weights_only`
    off: that would run whatever code the file holds."""
    text = str(error)
    detail = ""
    if "WeightsUnpickler error:" in text:
        after = text.split("WeightsUnpickler error:", 1)[1].strip().splitlines()
        detail = after[0].strip() if after else ""
    elif "weights_only" not in text:
        lines = text.strip().splitlines()
        detail = lines[0] if lines else ""
    if detail.startswith("Unsupported global"):
        return (
            "holds objects other than tensors and plain containers, which are "
            "refused: loading them could run code"
        )
    reason = f" ({type(error).__name__}: {detail})" if detail else ""
    return f"not a readable checkpoint; the file may be truncated or corrupted{reason}"


def newest_checkpoint(folder: Path) -> Path:
    """The most recently written `folder/*/ckpt.pt`."""
    found = sorted(Path(folder).glob("*/ckpt.pt"), key=lambda p: p.stat().st_mtime)
    if not found:
        raise RunError(
            f"no checkpoint under {folder}/: train one first (python train.py "
            "--preset tiny) or give --checkpoint PATH"
        )
    return found[-1]


def check_resumable(
    path: Path, saved: Mapping, now: Mapping, fields: Iterable[str]
) -> None:
    """Fail unless configurations `saved` and `now` agree on `fields`."""
    changed = [f for f in fields if saved.get(f) != now.get(f)]
    if changed:
        pairs = ", ".join(
            f"{f}={saved.get(f)!r} there, {now.get(f)!r} now" for f in changed
        )
        raise RunError(f"{path}: cannot resume with another model or text: {pairs}")


# The random state of a run: the batch generator, the same in every process,
# and each process's own generators (dropout).


def random_states(batches: torch.Generator, world: int) -> dict:
    """Generator states; in a distributed run, gathered from every process."""
    mine = {"torch": torch.get_rng_state()}
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        mine["cuda"] = torch.cuda.get_rng_state()
    every = [mine]
    if world > 1:
        every = [None] * world
        dist.all_gather_object(every, mine)
    return {"batches": batches.get_state(), "processes": every}


def restore_random_states(
    states: dict, batches: torch.Generator, rank: int, world: int
) -> None:
    """Undo `random_states`; dropout is reseeded if the process count changed."""
    batches.set_state(states["batches"].cpu())
    if len(states["processes"]) == world:
        mine = states["processes"][rank]
        torch.set_rng_state(mine["torch"].cpu())
        if "cuda" in mine and torch.cuda.is_available():
            torch.cuda.set_rng_state(mine["cuda"].cpu())
