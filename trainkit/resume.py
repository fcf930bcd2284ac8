"""`--resume`: everything the training loop reads, back from the checkpoint."""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator
from dataclasses import asdict
from pathlib import Path

import torch

from trainkit import RunError
from trainkit.checkpoints import (
    check_progress,
    check_resumable,
    check_weights,
    load_checkpoint,
    restore_random_states,
    saved_config,
)
from trainkit.config import shown
from trainkit.metrics import Metrics


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
    Everything is checked before it is loaded: the configuration as the
    command line's is, the step, the weights' names and shapes; what PyTorch
    refuses in the optimizer's or generators' states is one line too.
    """
    path = Path(out) / "ckpt.pt"
    state = load_checkpoint(path, procs.device)
    saved = saved_config(path, state, type(cfg))
    check_resumable(path, asdict(saved), asdict(cfg), same_model)
    if state["vocab"] != vocab:
        raise RunError(f"{path}: made with another vocabulary")
    start, elapsed = check_progress(path, state)
    threads = state.get("threads", 1)
    if type(threads) is not int or threads < 1:
        got = shown(threads)
        raise RunError(f"{path}: its threads must be an integer >= 1, got {got}")
    check_weights(path, state["model"], model)
    model.load_state_dict(state["model"])
    with _fitting(path, "its optimizer state does not fit this model"):
        optimizer.load_state_dict(state["optimizer"])
        _check_optimizer_state(optimizer)
    with _fitting(path, "its random generator states are not usable"):
        restore_random_states(state["rng"], batches, procs.rank, procs.world)
    if cfg.threads == 0 and procs.device.type == "cpu" and "threads" in state:
        torch.set_num_threads(threads)  # the same sums as before
    warn = None if procs.main else lambda line: None  # None: standard error
    return start, elapsed, Metrics.resume(Path(out) / "metrics.jsonl", start, warn)


@contextlib.contextmanager
def _fitting(path: Path, problem: str) -> Iterator[None]:
    """PyTorch's errors while loading, as one line: the file, `problem`, why."""
    try:
        yield
    except (KeyError, IndexError, TypeError, ValueError, RuntimeError) as error:
        detail = (str(error).strip().splitlines() or [""])[0][:120]
        raise RunError(
            f"{path}: {problem} ({type(error).__name__}: {detail})"
        ) from None


def _check_optimizer_state(optimizer: torch.optim.Optimizer) -> None:
    """Each parameter's running averages must have the parameter's shape."""
    for param, averages in optimizer.state.items():
        for name, value in averages.items():
            if isinstance(value, torch.Tensor) and value.dim() > 0:
                if value.shape != param.shape:
                    raise ValueError(
                        f"{name} is {list(value.shape)}, its parameter "
                        f"{list(param.shape)}"
                    )
