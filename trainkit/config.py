"""The checks on a training configuration: one message per option.

`train.Config.__post_init__` calls `check_config`, so a wrong value fails when
the configuration is made, naming the option and what it must be, before any
file is read or written. The command line prints the message as one line.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import get_type_hints

from trainkit import RunError

COUNTS = ("n_layer", "n_head", "d_model", "context", "batch_size", "steps")
COUNTS += ("eval_interval", "eval_batches", "log_interval")

# What `torch.manual_seed` takes is -2**63 to 2**64 - 1, but a negative seed s
# draws what 2**64 + s draws; only the non-negative ones are distinct.
SEEDS = range(2**64)
SEEDS_TEXT = "an integer from 0 to 2**64 - 1 (torch.manual_seed's range)"


def shown(value: object, limit: int = 60) -> str:
    """`repr(value)`, cut to `limit` characters: for one-line messages."""
    try:
        text = repr(value)
    except ValueError:  # an integer too long to write in decimal
        return f"an integer of {value.bit_length()} bits"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def check_config(cfg) -> None:
    """Raise `ValueError("--option ...")` for the first field out of range."""

    def fail(name: str, expected: str) -> None:
        value = shown(getattr(cfg, name))
        raise ValueError(f"--{name} must be {expected}, got {value}")

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
            f"--d_model {shown(cfg.d_model)} must be divisible by --n_head "
            f"{shown(cfg.n_head)}"
        )
    if cfg.seed not in SEEDS:
        fail("seed", SEEDS_TEXT)
    if cfg.device not in ("auto", "cpu", "cuda"):
        raise ValueError(f"--device must be auto, cpu or cuda, not {shown(cfg.device)}")


_TYPE_NAMES = {bool: "true or false", int: "an integer", float: "a number"}
_TYPE_NAMES[str] = "a string"


def config_from_dict(cls: type, values: object):
    """`cls(**values)` for a configuration read from a file, checked first.

    Each known field must have its field's type (an integer counts as a
    number); `cls` then runs `check_config`, the checks of the command line.
    Missing fields take their defaults and unknown ones are ignored, so a file
    written by an older or newer `train.py` still reads. Raises `ValueError`.
    """
    if not isinstance(values, Mapping):
        raise ValueError(f"expected a dict of options, got {type(values).__name__}")
    hints = get_type_hints(cls)
    given = {}
    for f in dataclasses.fields(cls):
        if f.name not in values:
            continue
        value, hint = values[f.name], hints[f.name]
        fits = isinstance(value, hint) and (hint is bool or not isinstance(value, bool))
        if hint is float and isinstance(value, int) and not isinstance(value, bool):
            value, fits = float(value), True
        if not fits:
            expected = _TYPE_NAMES[hint]
            raise ValueError(f"--{f.name} must be {expected}, got {shown(value)}")
        given[f.name] = value
    return cls(**given)


def check_text_length(length: int, cfg, name: str) -> None:
    """Refuse a text too short for `train.split`: each of its two parts must
    hold one window, `context` characters and the one that follows."""

    def cut(n: int) -> int:  # train.split's cut
        return int(n * (1 - cfg.val_fraction))

    need = cfg.context + 1
    if need <= cut(length) <= length - need:
        return
    # The shortest length that passes (the cut rounds down, so search).
    shortest = next(n for n in range(2 * need, 2**62) if need <= cut(n) <= n - need)
    raise RunError(
        f"{name} has {length} characters, too short for --context "
        f"{cfg.context}: the training and validation parts (--val_fraction "
        f"{cfg.val_fraction}) each need {need}, so it needs at least {shortest}"
    )
