"""The checks that turn bad arguments into one-line `ValueError`s.

`attention.py`'s masks and `mha.py`'s module, cache and layers call these on
every call, before they compute anything. Each raises a `ValueError` whose
one line names the function (`where`), the argument, what was expected and
what came. The message is only formatted when the check fails, so a passing
check costs a comparison or two.
"""

from __future__ import annotations

import torch


def fail(where: str, message: str) -> None:
    """Raise `ValueError("where: message")`."""
    raise ValueError(f"{where}: {message}")


# ## Masks (`attention.py`)


def check_lengths(where: str, **lengths: int) -> None:
    """Every named length must be >= 0."""
    if min(lengths.values()) < 0:
        got = ", ".join(f"{name}={n}" for name, n in lengths.items())
        fail(where, f"expected lengths >= 0, got {got}")


def check_padding_input(x: torch.Tensor, pad_id, seq_len) -> None:
    """Token ids `[batch, seq]` with `pad_id`; else lengths, 1-D integers >= 0,
    none longer than `seq_len`."""
    where = "padding_mask"
    if pad_id is not None:
        if x.dim() != 2 or (seq_len is not None and seq_len != x.shape[1]):
            with_seq = "" if seq_len is None else f" with seq={seq_len}"
            fail(
                where,
                f"with pad_id, expected token ids [batch, seq]{with_seq}, got "
                f"shape {list(x.shape)}",
            )
        return
    if x.dim() != 1 or x.is_floating_point() or (x.numel() and x.min() < 0):
        fail(
            where,
            "without pad_id, expected lengths as a 1-D tensor of non-negative "
            f"integers [batch], got {x.dtype} of shape {list(x.shape)}",
        )
    longest = int(x.max()) if x.numel() else 0
    if seq_len is not None and longest > seq_len:
        fail(where, f"seq_len={seq_len} is shorter than the longest length, {longest}")


# ## The module and its inputs (`mha.py`, `layers.py`)


def check_sequence(where: str, name: str, x: torch.Tensor, d_model: int) -> None:
    """`x` must be `[batch, seq, d_model]`."""
    if x.dim() != 3 or x.shape[-1] != d_model:
        expected = f"[batch, seq, d_model={d_model}]"
        fail(where, f"{name} must be {expected}, got {list(x.shape)}")


def check_heads(where: str, d_model: int, heads: int) -> None:
    """`heads` must divide `d_model`."""
    if heads < 1 or d_model % heads != 0:
        fail(
            where,
            f"d_model={d_model} must be divisible by heads={heads} (each head "
            "gets d_model // heads features)",
        )


def check_same_length(where: str, key: torch.Tensor, value: torch.Tensor) -> None:
    """Keys and values pair up position by position (dimension 1)."""
    if key.shape[1] != value.shape[1]:
        fail(
            where,
            f"key and value must have the same length, got key {list(key.shape)} "
            f"and value {list(value.shape)}",
        )


def check_same_batch(where: str, **tensors: torch.Tensor) -> None:
    """All the named tensors must have the same batch size (dimension 0)."""
    if len({x.shape[0] for x in tensors.values()}) != 1:
        shapes = ", ".join(f"{list(x.shape)}" for x in tensors.values())
        fail(where, f"{', '.join(tensors)} must have the same batch size, got {shapes}")


def check_mask(where: str, mask: torch.Tensor, full: tuple[int, ...]) -> None:
    """A boolean mask that broadcasts to `full`, `[batch, heads, seq_q, seq_k]`."""
    ok = mask.dtype == torch.bool and mask.dim() <= 4
    if ok:
        try:
            ok = torch.broadcast_shapes(mask.shape, full) == full
        except RuntimeError:
            ok = False
    if not ok:
        fail(
            where,
            f"mask must be bool (True = may attend) and broadcast to "
            f"[batch, heads, seq_q, seq_k]={list(full)}, got {mask.dtype} of "
            f"shape {list(mask.shape)}",
        )


def check_cache_room(
    batch_size: int, max_len: int, length: int, key: torch.Tensor
) -> None:
    """A cache for `batch_size` sequences, `length` of `max_len` filled, takes `key`."""
    batch, new = key.shape[0], key.shape[2]
    if batch != batch_size:
        fail(
            "kv_cache",
            f"made for batch size {batch_size}, got a batch of {batch}; make a "
            f"new cache with new_cache({batch}, ...)",
        )
    if length + new > max_len:
        fail(
            "kv_cache",
            f"full, holds {length} of max_len={max_len} positions and {new} more "
            "were given; reset() it or make a larger one",
        )
