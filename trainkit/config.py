"""The checks on a training configuration: one message per option.

`train.Config.__post_init__` calls `check_config`, so a wrong value fails when
the configuration is made, naming the option and what it must be, before any
file is read or written. The command line prints the message as one line.
"""

from __future__ import annotations

import math

COUNTS = ("n_layer", "n_head", "d_model", "context", "batch_size", "steps")
COUNTS += ("eval_interval", "eval_batches", "log_interval")


def check_config(cfg) -> None:
    """Raise `ValueError("--option ...")` for the first field out of range."""

    def fail(name: str, expected: str) -> None:
        raise ValueError(f"--{name} must be {expected}, got {getattr(cfg, name)!r}")

    for name in COUNTS:
        if getattr(cfg, name) < 1:
            fail(name, ">= 1")
    for name in ("warmup", "threads"):
        if getattr(cfg, name) < 0:
            fail(name, ">= 0")
    # A float option given as `nan` or `inf` passes every comparison below
    # unless it is refused first.
    floats = ("val_fraction", "dropout", "lr", "min_lr", "weight_decay")
    for name in (*floats, "beta2", "grad_clip"):
        if not math.isfinite(getattr(cfg, name)):
            fail(name, "a finite number")
    if not 0 < cfg.val_fraction < 1:
        fail("val_fraction", "between 0 and 1, both excluded")
    if not 0 <= cfg.dropout < 1:
        fail("dropout", "a probability in [0, 1)")
    if cfg.lr <= 0:
        fail("lr", "> 0")
    for name in ("min_lr", "weight_decay", "grad_clip"):
        if getattr(cfg, name) < 0:
            fail(name, ">= 0")
    if not 0 <= cfg.beta2 < 1:
        fail("beta2", "in [0, 1)")
    if cfg.d_model % cfg.n_head:
        raise ValueError(
            f"--d_model {cfg.d_model} must be divisible by --n_head {cfg.n_head}"
        )
    if cfg.device not in ("auto", "cpu", "cuda"):
        raise ValueError(f"--device must be auto, cpu or cuda, not {cfg.device!r}")
