"""Checkpoint files: written atomically, read without running code, checked.

A checkpoint is written by `trainkit.files.write_atomically`: to a temporary
file of a unique name in the same folder, flushed to disk, then renamed over
the old one. A rename within a file system is atomic, so a run killed at any
moment (`kill -9` included) leaves either the old checkpoint or the new one,
never half of one; a write that fails (a full disk, a read-only folder) says
why in one line and leaves the old one as it was.

It is read with `torch.load(..., weights_only=True)`: only tensors and plain
containers are unpickled, never arbitrary objects, so a checkpoint from
elsewhere cannot run code. A file that is not a whole checkpoint gives an
error naming it, and is left as it is. What it holds is checked before
anything is built from it: the configuration by the command line's checks,
the vocabulary's type and size, the weights' names, shapes and values, and
the step.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from pathlib import Path

import torch
import torch.distributed as dist

from trainkit import RunError
from trainkit.config import config_from_dict, shown
from trainkit.files import write_atomically
from trainkit.machine import parameter_count

KEYS = {"model", "optimizer", "step", "elapsed", "config", "vocab", "rng"}
# The weight with one row per character of the vocabulary.
EMBEDDING = "token.weight"


def save_checkpoint(path: Path, state: dict) -> None:
    write_atomically(Path(path), lambda f: torch.save(state, f))


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


def model_config(path: Path, state: Mapping, cls: type):
    """The configuration `cls` of the checkpoint or model file `state`, read
    from `path`, once its configuration, vocabulary and weights are checked:
    everything but the weights' names and shapes (`check_weights`), which need
    the model. The model it describes is no bigger than the weights in the
    file, so building it is safe."""
    cfg = saved_config(path, state, cls)
    vocab = check_vocab(path, state["vocab"])
    weights = _tensors(path, state["model"])
    rows = weights[EMBEDDING].shape[0] if EMBEDDING in weights else len(vocab)
    if rows != len(vocab):
        raise RunError(
            f"{path}: its vocabulary has {len(vocab)} characters but its embedding "
            f"({EMBEDDING}) {rows} rows; expected one row per character"
        )
    need = parameter_count(cfg, len(vocab))
    held = sum(t.numel() for t in weights.values())
    if need > held:
        raise RunError(
            f"{path}: its weights do not match its configuration (--n_layer "
            f"{shown(cfg.n_layer)} --d_model {shown(cfg.d_model)} --context "
            f"{shown(cfg.context)}), which has {_count(need)} parameters; the "
            f"file holds {held:,} numbers"
        )
    return cfg


def saved_config(path: Path, state: Mapping, cls: type):
    """`state`'s configuration as a `cls`, through the command line's checks."""
    try:
        return config_from_dict(cls, state["config"])
    except ValueError as error:
        raise RunError(f"{path}: its configuration: {error}") from None


def check_vocab(path: Path, vocab: object) -> str:
    """`vocab` if it is what `train.Vocab` needs: distinct characters, sorted."""
    if not isinstance(vocab, str) or not vocab:
        raise RunError(
            f"{path}: its vocabulary must be a non-empty string, got {shown(vocab)}"
        )
    if "".join(sorted(set(vocab))) != vocab:
        raise RunError(
            f"{path}: its vocabulary must hold each character once, in code-point order"
        )
    return vocab


def _tensors(path: Path, weights: object) -> Mapping[str, torch.Tensor]:
    """`weights` if they are finite floating-point tensors, by name."""
    if not isinstance(weights, Mapping) or not all(
        isinstance(k, str) and isinstance(t, torch.Tensor) for k, t in weights.items()
    ):
        raise RunError(f"{path}: its weights must be a dict of tensors by name")
    for name, tensor in weights.items():
        if not tensor.is_floating_point():
            raise RunError(
                f"{path}: its weight {shown(name)} must hold floating-point "
                f"numbers, not {tensor.dtype}"
            )
        if not torch.isfinite(tensor).all():
            raise RunError(
                f"{path}: its weight {shown(name)} holds NaN or infinite values"
            )
    return weights


def check_weights(path: Path, weights: Mapping, model: torch.nn.Module) -> None:
    """Fail unless `weights` has exactly `model`'s names and shapes."""
    expected = {k: tuple(t.shape) for k, t in model.state_dict().items()}
    weights = _tensors(path, weights)
    missing = [k for k in expected if k not in weights]
    extra = [k for k in weights if k not in expected]
    wrong = [k for k in expected if k in weights and weights[k].shape != expected[k]]
    problem = ""
    if missing:
        problem = f"missing {_names(missing)}"
    elif extra:
        problem = f"unexpected {_names(extra)}"
    elif wrong:
        k = wrong[0]
        problem = (
            f"{shown(k)} is {list(weights[k].shape)} there, "
            f"{list(expected[k])} for its configuration"
        )
    if problem:
        raise RunError(f"{path}: its weights do not match its configuration: {problem}")


def _names(keys: list[str]) -> str:
    listed = ", ".join(shown(k) for k in keys[:3])
    return listed + (f" and {len(keys) - 3} more" if len(keys) > 3 else "")


def _count(n: int) -> str:
    return f"{n:,}" if n < 10**15 else f"about {n:.1e}"


def check_progress(path: Path, state: Mapping) -> tuple[int, float]:
    """A checkpoint's step (an integer >= 0) and elapsed seconds (>= 0)."""
    step, elapsed = state["step"], state["elapsed"]
    if type(step) is not int or step < 0:
        raise RunError(f"{path}: its step must be an integer >= 0, got {shown(step)}")
    if type(elapsed) not in (int, float) or not math.isfinite(elapsed) or elapsed < 0:
        raise RunError(
            f"{path}: its elapsed time must be a number of seconds >= 0, got "
            f"{shown(elapsed)}"
        )
    return step, float(elapsed)


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
