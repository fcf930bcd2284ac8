"""A faster path for sampling with the key/value caches, for benchmarks.

`generate.generate` teaches and uses `model(ids, caches)`; with `fast=True`
it runs the same cached steps through `decoder` instead.
`CharTransformer.forward` with caches computes one new character through
dozens of `nn.Module` calls: every `LayerNorm`, `Linear`, `GELU` and
container is a call into Python. `decoder` reads the weights once and returns
a function that runs the same operations on the same weights, with the
positions as rows of 2-D tensors `[B * Sn, D]` and the products as `addmm` on
transposed views made once, so each step makes a fraction of the calls.
`tests/test_decode.py` checks that it returns the logits of
`CharTransformer.forward`, and that it sets no process-wide PyTorch switch;
`bench/train_speed.py` times both ways.

It applies to a model in evaluation mode (no dropout) under `torch.no_grad()`
or `torch.inference_mode()`; the weights it read must not change while it is
in use (make a new one after training more).
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import nn

from mha import causal_mask

Rows = Callable[[torch.Tensor], torch.Tensor]  # [R, D_in] -> [R, D_out]


def _linear(weight: torch.Tensor, bias: torch.Tensor | None) -> Rows:
    """`x W^T + b` for rows `x`; `W^T` is a view, made once."""
    w_t = weight.t()
    if bias is None:
        return lambda x: torch.mm(x, w_t)
    return lambda x: torch.addmm(bias, x, w_t)


def _norm(ln: nn.LayerNorm) -> Rows:
    shape, weight, bias, eps = ln.normalized_shape, ln.weight, ln.bias, ln.eps
    return lambda x: torch.layer_norm(x, shape, weight, bias, eps)


def _feed_forward(ffn: nn.Sequential) -> Rows:
    widen, act, narrow = ffn
    if not isinstance(act, nn.GELU):
        raise TypeError(f"decoder: expected nn.GELU in the feed-forward, got {act}")
    first = _linear(widen.weight, widen.bias)
    second = _linear(narrow.weight, narrow.bias)
    approximate = act.approximate
    return lambda x: second(F.gelu(first(x), approximate=approximate))


def attention_step(
    attn: nn.Module,
) -> Callable[[torch.Tensor, int, object], torch.Tensor]:
    """`run(x, B, cache)`: causal self-attention of `attn` (`mha.py`'s module) for
    the new positions, rows `x` `[B * Sn, D]`, over those stored in `cache`."""
    heads, d_k, d_model = attn.heads, attn.d_k, attn.d_model
    # The three projections stacked, `[3 D, D]`: queries, keys, values.
    project = _linear(*attn.stacked_projection())
    output = _linear(attn.output.weight, attn.output.bias)

    def run(x: torch.Tensor, batch: int, cache) -> torch.Tensor:
        new = x.shape[0] // batch
        # [B * Sn, 3 D] -> [B, Sn, 3, H, Dk] -> three [B, H, Sn, Dk]
        qkv = project(x).view(batch, new, 3, heads, d_k).permute(2, 0, 3, 1, 4)
        k, v = cache.append(qkv[1], qkv[2])  # [B, H, Sk, Dk]
        # One new position may see every cached one; several see the cached
        # ones and, among themselves, the earlier ones only.
        mask = None if new == 1 else causal_mask(new, k.shape[2], device=x.device)
        y = F.scaled_dot_product_attention(qkv[0], k, v, attn_mask=mask)
        # [B, H, Sn, Dk] -> [B, Sn, H, Dk] -> [B * Sn, D]
        return output(y.transpose(1, 2).reshape(batch * new, d_model))

    return run


def decoder(model: nn.Module) -> Callable[[torch.Tensor, list], torch.Tensor]:
    """`step(ids [B, Sn], caches) -> logits [B, Sn, N]`, as `model(ids, caches)`."""
    if model.training:
        raise ValueError("decoder: call model.eval() first (dropout is not applied)")
    token, position = model.token.weight, model.position.weight
    blocks = [
        (_norm(b.ln1), attention_step(b.attn), _norm(b.ln2), _feed_forward(b.ffn))
        for b in model.blocks
    ]
    final_norm, head = _norm(model.ln_f), _linear(model.head.weight, None)

    def step(ids: torch.Tensor, caches: list) -> torch.Tensor:
        batch, new = ids.shape
        start = caches[0].length
        if start + new > len(position):
            raise ValueError(
                f"decoder: positions {start} to {start + new - 1} do not fit a "
                f"context of {len(position)}; reset the caches first"
            )
        # [B, Sn] -> [B, Sn, D] -> rows [B * Sn, D]
        x = (F.embedding(ids, token) + position[start : start + new]).flatten(0, 1)
        for (ln1, attn, ln2, ffn), cache in zip(blocks, caches, strict=True):
            x = x + attn(ln1(x), batch, cache)
            x = x + ffn(ln2(x))
        return head(final_norm(x)).view(batch, new, -1)  # [B, Sn, N]

    return step
