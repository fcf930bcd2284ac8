"""`--resume`: everything the training loop reads, back from the checkpoint."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict
from pathlib import Path

import torch

from trainkit import RunError
from trainkit.checkpoints import (
    check_resumable,
    load_checkpoint,
    restore_random_states,
)
from trainkit.records import Metrics


def resume_run(
    out: Path,
    cfg,
    same_model: Iterable[str],
    vocab: str,
    model: torch.nn.Module,
    optimizer: torch.optim.Optimizer,
    batches: torch.Generator,
    procs,
) -> tuple[int, float, Metrics]:
    """Load `out/ckpt.pt` into the model, optimizer and generators.

    Returns the step to start from, the seconds already spent, and the
    metrics recorded up to that step (those a killed run wrote after its
    last checkpoint are dropped). Reads files only: nothing is written.
    """
    path = Path(out) / "ckpt.pt"
    state = load_checkpoint(path, procs.device)
    check_resumable(path, state["config"], asdict(cfg), same_model)
    if state["vocab"] != vocab:
        raise RunError(f"{path}: made with another vocabulary")
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    restore_random_states(state["rng"], batches, procs.rank, procs.world)
    if cfg.threads == 0 and procs.device.type == "cpu" and "threads" in state:
        torch.set_num_threads(state["threads"])  # the same sums as before
    start, elapsed = state["step"], state["elapsed"]
    return start, elapsed, Metrics.resume(Path(out) / "metrics.jsonl", start)
