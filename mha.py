r"""
---
title: Multi-head attention
summary: Multi-head attention in PyTorch, one idea at a time, with the scaling, the
  masks and a key/value cache for fast decoding, checked against PyTorch's own.
---

# Multi-head attention

Attention lets every position of a sequence gather information from other
positions, weighting each by how well it matches. Vaswani et al. introduced the
scaled dot-product form in
[Attention Is All You Need](https://arxiv.org/abs/1706.03762) (2017), the paper
behind the transformer:

$$
\mathrm{Attention}(Q, K, V)
  = \mathrm{softmax}\left(\frac{Q K^\top}{\sqrt{d_k}}\right) V
$$

Each row of $Q$ is a *query*: what a position is looking for. Each row of $K$
is a *key*: what a position offers to be found by. $Q K^\top$ scores every
query against every key, the softmax turns each row of scores into weights that
sum to one, and the weights average the rows of $V$, the *values*.

*Multi-head* attention runs several of these side by side on smaller learned
projections of the same input, so that one head can follow, say, the previous
word while another follows the subject of the sentence; their results are
concatenated and projected back.

## Shapes

Every tensor's shape is written with these letters:

| letter | meaning |
|---|---|
| `B` | batch size |
| `H` | number of heads |
| `D` | model width, `d_model` |
| `Dk` | width of one head, `D // H` (the $d_k$ of the formula) |
| `Sq` | query positions: the positions whose outputs we compute |
| `Sk` | key (and value) positions: the positions attended to |
| `Sn` | new key positions passed in one call when a cache holds the rest |
| `L` | capacity of a key/value cache, `max_len` |
| `N` | number of samples in the scaling experiment |

Tensors are batch first, `[B, S, D]`; inside attention, heads come second,
`[B, H, S, Dk]`, the layout `scaled_dot_product_attention` expects.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

# ## Why scale by $1/\sqrt{d_k}$
#
# Take a query $q$ and a key $k$ whose $d_k$ components are independent, with
# mean $0$ and variance $1$. Each product $q_i k_i$ then has mean $0$ and
# variance $1$, and their sum has variance $d_k$:
#
# $$
# \mathrm{Var}(q \cdot k) = \sum_{i=1}^{d_k} \mathrm{Var}(q_i k_i) = d_k
# $$
#
# With $d_k = 64$ the scores spread over about $\pm 8$, and the softmax of
# scores that far apart is close to one-hot. A one-hot softmax has a gradient
# close to zero, so the model stops learning which keys to prefer. Dividing by
# $\sqrt{d_k}$ brings the variance back to $1$ whatever the head width.
#
# The experiment below measures this instead of taking it on trust. For each
# $d_k$ it draws `samples` queries, each scored against `keys` keys, and
# reports the variance of the scores, the largest softmax weight and the size
# of the softmax's gradient. Unscaled, as $d_k$ grows the largest weight
# climbs towards $1$ and the gradient shrinks towards $0$; scaled, neither
# moves.


@dataclass(frozen=True)
class ScalingRow:
    """One width $d_k$: score spread, softmax peak and gradient, raw and scaled."""

    d_k: int
    var_raw: float  # variance of q·k
    var_scaled: float  # variance of q·k / sqrt(d_k)
    peak_raw: float  # mean of the largest softmax probability, raw scores
    peak_scaled: float  # the same with scaled scores
    grad_raw: float  # mean norm of the softmax Jacobian, raw scores
    grad_scaled: float  # the same with scaled scores


# The softmax $p$ of a row of scores has the Jacobian
# $\partial p / \partial s = \mathrm{diag}(p) - p p^\top$. Its norm measures how
# much a change in the scores can still move the weights: it is largest for a
# flat $p$ and falls to $0$ as $p$ becomes one-hot.


def softmax_jacobian_norm(probs: torch.Tensor) -> torch.Tensor:
    """Frobenius norm of the softmax Jacobian for each row of `probs` `[..., Sk]`."""
    jacobian = torch.diag_embed(probs) - probs.unsqueeze(-1) * probs.unsqueeze(-2)
    return jacobian.flatten(-2).norm(dim=-1)


def scaling_experiment(
    d_ks: tuple[int, ...] = (4, 16, 64, 256, 1024),
    *,
    keys: int = 16,
    samples: int = 1000,
    seed: int = 0,
) -> list[ScalingRow]:
    """Measure the effect of the $1/\\sqrt{d_k}$ scale; deterministic for a seed."""
    generator = torch.Generator().manual_seed(seed)
    rows = []
    for d_k in d_ks:
        # Queries `[N, 1, Dk]` against keys `[N, keys, Dk]`: scores `[N, keys]`.
        q = torch.randn(samples, 1, d_k, generator=generator, dtype=torch.float64)
        k = torch.randn(samples, keys, d_k, generator=generator, dtype=torch.float64)
        raw = (q * k).sum(dim=-1)
        scaled = raw / math.sqrt(d_k)
        p_raw, p_scaled = raw.softmax(dim=-1), scaled.softmax(dim=-1)
        rows.append(
            ScalingRow(
                d_k=d_k,
                var_raw=raw.var().item(),
                var_scaled=scaled.var().item(),
                peak_raw=p_raw.amax(dim=-1).mean().item(),
                peak_scaled=p_scaled.amax(dim=-1).mean().item(),
                grad_raw=softmax_jacobian_norm(p_raw).mean().item(),
                grad_scaled=softmax_jacobian_norm(p_scaled).mean().item(),
            )
        )
    return rows


def format_scaling_table(rows: list[ScalingRow]) -> str:
    """The experiment as a Markdown table."""
    header = ["d_k", "Var(q·k)", "Var(q·k/√d_k)", "max p", "max p, scaled"]
    header += ["‖∂p/∂s‖", "‖∂p/∂s‖, scaled"]
    cells = [
        [f"{r.d_k}", f"{r.var_raw:.1f}", f"{r.var_scaled:.2f}"]
        + [f"{r.peak_raw:.3f}", f"{r.peak_scaled:.3f}"]
        + [f"{r.grad_raw:.3f}", f"{r.grad_scaled:.3f}"]
        for r in rows
    ]
    return markdown_table(header, cells, align="rrrrrrr")


# Both tables pad their columns to one width, so that their Markdown reads
# as a table as it is, in a terminal or on this page.


def markdown_table(header: list[str], rows: list[list[str]], align: str) -> str:
    """A Markdown table; `align` holds "l" or "r" for each column."""
    columns = zip(header, *rows, strict=True)
    widths = [max(len(cell) for cell in column) for column in columns]

    def line(cells: list[str]) -> str:
        padded = [
            cell.ljust(width) if side == "l" else cell.rjust(width)
            for cell, width, side in zip(cells, widths, align, strict=True)
        ]
        return "| " + " | ".join(padded) + " |"

    end = {"l": "-", "r": ":"}  # `---:` aligns a column to the right
    rule = ["-" * (w - 1) + end[side] for w, side in zip(widths, align, strict=True)]
    return "\n".join([line(header), line(rule), *map(line, rows)])


# Measured when this page was built, with the defaults above:

#| print(format_scaling_table(scaling_experiment()))

# The same measurements drawn against the head width, on a log scale: the
# unscaled softmax saturates, its largest weight climbing towards $1$ and its
# gradient falling towards $0$, while the scaled one stays where it was at
# $d_k = 4$. Figures import matplotlib when called, so the module does not
# need it.


def plot_softmax_saturation(rows: list[ScalingRow] | None = None) -> None:
    """The experiment's largest weight and gradient norm against $d_k$."""
    import matplotlib.pyplot as plt

    rows = rows or scaling_experiment()
    d_k = [r.d_k for r in rows]
    fig, (peak, grad) = plt.subplots(1, 2, figsize=(8, 3.2))
    for ax, field, label in (
        (peak, "peak", "largest weight, mean"),
        (grad, "grad", "‖∂p/∂s‖, mean"),
    ):
        raw = [getattr(r, f"{field}_raw") for r in rows]
        scaled = [getattr(r, f"{field}_scaled") for r in rows]
        ax.plot(d_k, raw, marker="o", label="q·k")
        ax.plot(d_k, scaled, marker="o", label="q·k / √d_k")
        ax.set_xscale("log", base=2)
        ax.set_xlabel("d_k")
        ax.set_ylabel(label)
        ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3)
    peak.legend()
    fig.tight_layout()


#| plot_softmax_saturation()  | alt: unscaled, the peak weight nears 1 as d_k grows

# ## Scaled dot-product attention
#
# This is the formula, written out so that each step can be read: the teaching
# path. `MultiHeadAttention` uses it whenever the caller asks for the attention
# weights; otherwise it calls PyTorch's fused kernel, which computes the same
# numbers without ever storing the `[Sq, Sk]` matrix of weights.
#
# `mask` is boolean and `True` means *may attend*, as in
# `scaled_dot_product_attention`. It must broadcast to `[B, H, Sq, Sk]`.
# `dropout`, if given, is applied to the weights (e.g. an `nn.Dropout`).


def attention(
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    mask: torch.Tensor | None = None,
    dropout: nn.Module | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Return the output `[B, H, Sq, Dk]` and the weights `[B, H, Sq, Sk]`."""
    # Score every query against every key, $S = Q K^\top / \sqrt{d_k}$:
    # `[B, H, Sq, Dk] @ [B, H, Dk, Sk] -> [B, H, Sq, Sk]`.
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.shape[-1])
    # A masked score becomes the most negative number the dtype holds, so its
    # $e^{s}$ is $0$. We use that number rather than $-\infty$: a row whose
    # every key is masked would be $\mathrm{softmax}(-\infty, \dots, -\infty)$,
    # which is $0/0$, NaN, and the NaN would spread through every gradient.
    if mask is not None:
        scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
    # Each row of weights sums to one over the keys,
    # $A = \mathrm{softmax}_{\text{keys}}(S)$.
    weights = scores.softmax(dim=-1)
    # A fully masked row came out uniform (all its scores were equal); zeroing
    # the masked weights turns it into a row of zeros, so that query reads
    # nothing: a zero output and zero gradients instead of NaN. Such rows are
    # ordinary (left padding, an empty sequence in a batch), and one NaN would
    # poison the loss and every parameter. Rows with an allowed key do not
    # change: their masked weights were already 0.
    if mask is not None:
        weights = weights.masked_fill(~mask, 0.0)
    if dropout is not None:
        weights = dropout(weights)
    # The output is the weighted average of the values, $A V$:
    # `[B, H, Sq, Sk] @ [B, H, Sk, Dk] -> [B, H, Sq, Dk]`.
    return weights @ value, weights


# ## Masks
#
# A mask says which keys each query may use. Two are so common that they get
# helpers; both return booleans with `True` = may attend.
#
# **Causal.** A language model learns to predict the token after each
# position, so the output at position $i$ must not use the tokens after it:
# query $i$ may see key $j$ only when $j \le i$. When there are more keys than
# queries, as when new tokens follow a cached prefix, the queries are the
# *last* $S_q$ positions, so the mask is aligned to the end of the keys: query
# $i$ sees key $j$ when $j \le i + (S_k - S_q)$. (With fewer keys than queries
# the first $S_q - S_k$ queries see no key at all.)


def causal_mask(
    seq_q: int, seq_k: int | None = None, *, device: torch.device | None = None
) -> torch.Tensor:
    """`[Sq, Sk]` boolean, `True` where query `i` may see key `j`."""
    seq_k = seq_q if seq_k is None else seq_k
    if seq_q < 0 or seq_k < 0:
        raise ValueError(
            f"causal_mask: expected lengths >= 0, got seq_q={seq_q}, seq_k={seq_k}"
        )
    i = torch.arange(seq_q, device=device).unsqueeze(1)  # [Sq, 1]
    j = torch.arange(seq_k, device=device).unsqueeze(0)  # [1, Sk]
    return j <= i + (seq_k - seq_q)


# **Padding.** Sentences in a batch have different lengths, so the shorter
# ones are filled up to the longest with padding tokens. No query may attend to
# padding: it is not part of the sentence. Give either the lengths (padding on
# the right), or the token ids and the id used for padding (padding anywhere,
# left padding included). The mask is `[B, 1, 1, S]`: the same for every head
# and every query, so it broadcasts over both.
#
# The two combine with a logical *and*: `causal_mask(s) & padding_mask(ids,
# pad_id)` lets a token see itself and the real tokens before it. Some queries
# are then left with no key at all: under left padding, the leading pads see
# only the pads before them, and every query of an empty sequence sees nothing.
# Their rows are fully masked, and both paths give them a zero vector.


def padding_mask(
    lengths_or_ids: torch.Tensor,
    pad_id: int | None = None,
    *,
    seq_len: int | None = None,
) -> torch.Tensor:
    """`[B, 1, 1, S]` boolean, `True` on real tokens, `False` on padding."""
    x = torch.as_tensor(lengths_or_ids)
    if pad_id is not None:
        if x.dim() != 2 or (seq_len is not None and seq_len != x.shape[1]):
            raise ValueError(
                f"padding_mask: with pad_id, expected token ids [batch, seq]"
                f"{'' if seq_len is None else f' with seq={seq_len}'}, "
                f"got shape {list(x.shape)}"
            )
        return (x != pad_id)[:, None, None, :]
    if x.dim() != 1 or x.is_floating_point() or (x.numel() and x.min() < 0):
        raise ValueError(
            "padding_mask: without pad_id, expected lengths as a 1-D tensor of "
            f"non-negative integers [batch], got {x.dtype} of shape {list(x.shape)}"
        )
    longest = int(x.max()) if x.numel() else 0
    seq_len = longest if seq_len is None else seq_len
    if longest > seq_len:
        raise ValueError(
            f"padding_mask: seq_len={seq_len} is shorter than the longest "
            f"length, {longest}"
        )
    positions = torch.arange(seq_len, device=x.device)  # [S]
    return (positions < x[:, None])[:, None, None, :]  # [B, 1, 1, S]


# ## Preparing queries, keys and values
#
# Each head works on its own learned projection of the input. One
# `nn.Linear(D, D)` computes all heads' projections at once; reshaping its
# output splits the last dimension into `H` heads of `Dk` features, and the
# heads then move to the second dimension so that each head is a separate
# batch of matrix products.


class PrepareForMultiHeadAttention(nn.Module):
    """A linear projection `[B, S, D] -> [B, H, S, Dk]`, one slice per head."""

    def __init__(self, d_model: int, heads: int, d_k: int, bias: bool = True):
        super().__init__()
        self.linear = nn.Linear(d_model, heads * d_k, bias=bias)
        self.heads = heads
        self.d_k = d_k

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, seq, _ = x.shape
        # `[B, S, D] -> [B, S, H, Dk] -> [B, H, S, Dk]`
        x = self.linear(x).view(batch, seq, self.heads, self.d_k)
        return x.transpose(1, 2)


# ## The key/value cache
#
# A model that generates text calls attention once per new token, and needs
# only the newest output. Recomputing the whole prefix at step $t$ projects
# all $t$ tokens and scores $t \times t$ query-key pairs: $O(t^2)$ work for
# one token. Yet the keys and values of old tokens never change (under the
# causal mask old tokens never see new ones). The cache keeps them, so a step
# projects only the new token and scores it against the $t$ stored keys:
# $O(t)$ work, with the same result.
#
# The storage is allocated once, `[B, H, L, Dk]`, and filled in place; growing
# it with `torch.cat` would allocate and copy the whole prefix at every step.
# `length` counts the positions filled. Use the cache for inference, under
# `torch.no_grad()`: with gradients on, its in-place writes would tie all the
# steps into one autograd graph.


class KVCache:
    """Preallocated keys and values `[B, H, L, Dk]`, the first `length` filled."""

    def __init__(self, keys: torch.Tensor, values: torch.Tensor):
        self.keys = keys
        self.values = values
        self.length = 0

    @property
    def max_len(self) -> int:
        return self.keys.shape[2]

    @property
    def batch_size(self) -> int:
        return self.keys.shape[0]

    def reset(self) -> None:
        """Forget the stored positions; the storage is kept for reuse."""
        self.length = 0

    # New positions `[B, H, Sn, Dk]` go to `[length, length + Sn)`; the return
    # values are views of the filled part, `[B, H, Sk, Dk]` with
    # $S_k = \text{length} + S_n$, not copies.
    def append(
        self, key: torch.Tensor, value: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        start, end = self.length, self.length + key.shape[2]
        if key.shape[0] != self.batch_size:
            raise ValueError(
                f"kv_cache: made for batch size {self.batch_size}, got a batch of "
                f"{key.shape[0]}; make a new cache with new_cache({key.shape[0]}, ...)"
            )
        if end > self.max_len:
            raise ValueError(
                f"kv_cache: full, holds {start} of max_len={self.max_len} "
                f"positions and {key.shape[2]} more were given; reset() it or "
                f"make a larger one"
            )
        self.keys[:, :, start:end] = key
        self.values[:, :, start:end] = value
        self.length = end
        return self.keys[:, :, :end], self.values[:, :, :end]


# ## Multi-head attention
#
# $$
# \mathrm{MultiHead}(Q, K, V) = \mathrm{Concat}(\mathrm{head}_1, \dots,
#   \mathrm{head}_h) W^O, \quad
# \mathrm{head}_i = \mathrm{Attention}(Q W^Q_i, K W^K_i, V W^V_i)
# $$
#
# The submodules keep the classic names `query.linear`, `key.linear`,
# `value.linear` and `output`, so a state dict saved from that layout loads.
# `bias=False` removes the bias of all four projections.


class MultiHeadAttention(nn.Module):
    """Multi-head attention over batch-first tensors `[B, S, D]`."""

    def __init__(
        self, d_model: int, heads: int, dropout: float = 0.0, bias: bool = True
    ):
        super().__init__()
        if heads < 1 or d_model % heads != 0:
            raise ValueError(
                f"MultiHeadAttention: d_model={d_model} must be divisible by "
                f"heads={heads} (each head gets d_model // heads features)"
            )
        self.d_model = d_model
        self.heads = heads
        self.d_k = d_model // heads
        self.query = PrepareForMultiHeadAttention(d_model, heads, self.d_k, bias)
        self.key = PrepareForMultiHeadAttention(d_model, heads, self.d_k, bias)
        self.value = PrepareForMultiHeadAttention(d_model, heads, self.d_k, bias)
        self.output = nn.Linear(d_model, d_model, bias=bias)
        self.dropout = nn.Dropout(dropout)

    def new_cache(
        self,
        batch_size: int,
        max_len: int,
        *,
        device: torch.device | None = None,
        dtype: torch.dtype | None = None,
    ) -> KVCache:
        """An empty cache for `batch_size` sequences of up to `max_len` positions."""
        weight = self.key.linear.weight
        shape = (batch_size, self.heads, max_len, self.d_k)  # [B, H, L, Dk]
        options = dict(device=device or weight.device, dtype=dtype or weight.dtype)
        return KVCache(torch.empty(shape, **options), torch.empty(shape, **options))

    # Bad input fails here, naming the argument, the expected shape and the
    # one received, rather than deep inside a matrix product.
    def _check_inputs(
        self, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor
    ) -> None:
        for name, x in (("query", query), ("key", key), ("value", value)):
            if x.dim() != 3 or x.shape[-1] != self.d_model:
                raise ValueError(
                    f"MultiHeadAttention: {name} must be [batch, seq, "
                    f"d_model={self.d_model}], got {list(x.shape)}"
                )
        if key.shape[1] != value.shape[1]:
            raise ValueError(
                f"MultiHeadAttention: key and value must have the same length, "
                f"got key {list(key.shape)} and value {list(value.shape)}"
            )
        if not query.shape[0] == key.shape[0] == value.shape[0]:
            raise ValueError(
                f"MultiHeadAttention: query, key and value must have the same "
                f"batch size, got {list(query.shape)}, {list(key.shape)}, "
                f"{list(value.shape)}"
            )

    # A mask must broadcast to `[B, H, Sq, Sk]`. The fused kernel wants at
    # least two dimensions, so a `[Sk]` mask becomes `[1, Sk]`.
    def _check_mask(self, mask: torch.Tensor, full: tuple[int, ...]) -> torch.Tensor:
        ok = mask.dtype == torch.bool and mask.dim() <= 4
        if ok:
            try:
                ok = torch.broadcast_shapes(mask.shape, full) == full
            except RuntimeError:
                ok = False
        if not ok:
            raise ValueError(
                f"MultiHeadAttention: mask must be bool (True = may attend) and "
                f"broadcast to [batch, heads, seq_q, seq_k]={list(full)}, got "
                f"{mask.dtype} of shape {list(mask.shape)}"
            )
        return mask.unsqueeze(0) if mask.dim() == 1 else mask

    # The mask and the causal flag become one boolean mask, or stay a flag.
    #
    # * Causal with as many queries as keys and no other mask: the flag goes
    #   to `scaled_dot_product_attention` as is, and its kernel skips the
    #   masked half without building a mask.
    # * A single query, as in each decoding step with a cache: aligned to the
    #   end of the keys, the causal mask allows every key, so nothing is masked.
    # * Otherwise the causal mask is built, aligned to the end of the keys.
    #   (The kernel's own flag aligns it to the *start* when the lengths
    #   differ, which would hide the cached prefix from the new queries.)
    #   A given mask is combined with it by a logical and.
    def _merge_masks(
        self,
        mask: torch.Tensor | None,
        is_causal: bool,
        seq_q: int,
        seq_k: int,
        device: torch.device,
    ) -> tuple[torch.Tensor | None, bool]:
        if not is_causal or seq_q == 1:
            return mask, False
        if mask is None and seq_q == seq_k:
            return None, True
        causal = causal_mask(seq_q, seq_k, device=device)  # [Sq, Sk]
        return (causal if mask is None else causal & mask), False

    def forward(
        self,
        *,
        query: torch.Tensor,
        key: torch.Tensor,
        value: torch.Tensor,
        mask: torch.Tensor | None = None,
        is_causal: bool = False,
        need_weights: bool = False,
        kv_cache: KVCache | None = None,
    ) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
        """Attend from `query` `[B, Sq, D]` to `key`/`value` `[B, Sk, D]`.

        For self-attention pass the same tensor three times; for
        cross-attention, `key` and `value` come from another sequence and may
        have another length. `mask` is boolean, `True` = may attend, and
        broadcasts to `[B, H, Sq, Sk]` (so `[Sk]`, `[Sq, Sk]`, `[B, 1, 1, Sk]`
        and `[B, 1, Sq, Sk]` all work). `is_causal=True` adds the causal mask
        aligned to the end of the keys. With `kv_cache`, `key` and `value`
        hold only the new positions, and `Sk` counts the cached ones too.

        Returns the output `[B, Sq, D]`, or `(output, weights)` with the
        weights `[B, H, Sq, Sk]` when `need_weights=True`.
        """
        self._check_inputs(query, key, value)
        batch, seq_q, _ = query.shape
        # 1. Project and split into heads: `[B, S, D] -> [B, H, S, Dk]`.
        q = self.query(query)
        k = self.key(key)
        v = self.value(value)
        # 2. With a cache, store the new keys and values and attend over all
        # of them: `[B, H, Sn, Dk] -> [B, H, Sk, Dk]`.
        if kv_cache is not None:
            k, v = kv_cache.append(k, v)
        # The mask is checked against the full `[B, H, Sq, Sk]`, cached keys
        # included, then merged with the causal flag as described above.
        seq_k = k.shape[2]
        if mask is not None:
            mask = self._check_mask(mask, (batch, self.heads, seq_q, seq_k))
        mask, flag = self._merge_masks(mask, is_causal, seq_q, seq_k, q.device)
        # 3a. Weights requested: the teaching path computes them explicitly.
        if need_weights:
            if flag:
                mask = causal_mask(seq_q, seq_k, device=q.device)
            x, weights = attention(q, k, v, mask, self.dropout)
        # 3b. Otherwise the fused kernel: no `[Sq, Sk]` matrix is kept, and
        # (since PyTorch 2.5) a fully masked row also comes out as zeros.
        else:
            p = self.dropout.p if self.training else 0.0
            x = F.scaled_dot_product_attention(
                q, k, v, attn_mask=mask, dropout_p=p, is_causal=flag
            )
        # 4. Concatenate the heads, `[B, H, Sq, Dk] -> [B, Sq, H, Dk] ->
        # [B, Sq, D]`, and mix them with the output projection $W^O$.
        x = x.transpose(1, 2).reshape(batch, seq_q, self.d_model)
        x = self.output(x)
        return (x, weights) if need_weights else x


# ## The masks, seen
#
# One head of a small, untrained `MultiHeadAttention` over one sequence of
# six tokens whose last two are padding. A row is a query, a column a key,
# and each row of weights sums to one. Hatched cells are masked (`False`):
# their weight is exactly $0$. The causal mask leaves the lower triangle;
# padding hides the pad keys from every query; with both, each query reads
# itself and the real tokens before it.


def plot_attention_weights(seed: int = 0) -> None:
    """Heatmaps of one head's weights under the causal and padding masks."""
    import matplotlib.pyplot as plt

    torch.manual_seed(seed)
    seq, real = 6, 4
    mha = MultiHeadAttention(d_model=16, heads=2).eval()
    x = torch.randn(1, seq, 16)  # [B, S, D]
    causal = causal_mask(seq)  # [Sq, Sk]
    padding = padding_mask(torch.tensor([real]), seq_len=seq)  # [B, 1, 1, Sk]
    masks = {"causal": causal, "padding": padding, "both": causal & padding}
    names = [f"t{i}" for i in range(real)] + ["pad"] * (seq - real)
    fig, axes = plt.subplots(1, 3, figsize=(9, 3.4), sharey=True)
    for ax, (title, mask) in zip(axes, masks.items(), strict=True):
        with torch.no_grad():
            _, weights = mha(query=x, key=x, value=x, mask=mask, need_weights=True)
        # The mask broadcast to this head's `[Sq, Sk]`; masked cells are left
        # empty (NaN) and hatched.
        allowed = mask.expand(1, 1, seq, seq)[0, 0]
        shown = weights[0, 0].masked_fill(~allowed, float("nan"))  # [Sq, Sk]
        image = ax.imshow(shown, vmin=0, vmax=1, cmap="viridis")
        for i, j in (~allowed).nonzero().tolist():
            cell = (j - 0.5, i - 0.5)
            ax.add_patch(
                plt.Rectangle(
                    cell, 1, 1, fill=False, hatch="///", edgecolor="0.5", lw=0
                )
            )
        ax.set_title(title)
        ax.set_xticks(range(seq), names, fontsize=8)
        ax.set_yticks(range(seq), names, fontsize=8)
        ax.set_xlabel("key")
    axes[0].set_ylabel("query")
    fig.colorbar(image, ax=axes, shrink=0.8, label="weight")


#| plot_attention_weights()  | alt: one head's weights: causal, padding, both masks

# ## Checking against PyTorch
#
# `torch.nn.MultiheadAttention` computes the same function with its own code.
# Copying our weights into it and comparing outputs checks ours end to end. It
# stores the three input projections stacked in one `[3 D, D]` matrix, and its
# boolean `attn_mask` has the opposite meaning to ours: `True` there means
# *may not* attend.


def to_torch_mha(mha: MultiHeadAttention) -> nn.MultiheadAttention:
    """A `torch.nn.MultiheadAttention` (batch first) holding `mha`'s weights."""
    bias = mha.output.bias is not None
    weight = mha.output.weight
    ref = nn.MultiheadAttention(mha.d_model, mha.heads, bias=bias, batch_first=True).to(
        device=weight.device, dtype=weight.dtype
    )
    projections = (mha.query.linear, mha.key.linear, mha.value.linear)
    with torch.no_grad():
        ref.in_proj_weight.copy_(torch.cat([p.weight for p in projections]))
        ref.out_proj.weight.copy_(mha.output.weight)
        if bias:
            ref.in_proj_bias.copy_(torch.cat([p.bias for p in projections]))
            ref.out_proj.bias.copy_(mha.output.bias)
    return ref.eval()


@dataclass(frozen=True)
class CheckRow:
    """Largest difference from PyTorch for one kind of attention."""

    case: str
    fast: float  # our fast path
    explicit: float  # our explicit path (need_weights=True)
    weights: float  # our attention weights against PyTorch's


def check_against_pytorch(seed: int = 0) -> list[CheckRow]:
    """Compare with `torch.nn.MultiheadAttention` on random input, in float32."""
    torch.manual_seed(seed)
    ours = MultiHeadAttention(d_model=64, heads=4).eval()
    ref = to_torch_mha(ours)
    x, memory = torch.randn(3, 10, 64), torch.randn(3, 7, 64)
    lengths = torch.tensor([7, 5, 2])
    cases = [
        ("self, causal", x, x, causal_mask(10)),
        ("cross, padding", x, memory, padding_mask(lengths)),
    ]
    rows = []
    with torch.no_grad():
        for name, q, kv, mask in cases:
            fast = ours(query=q, key=kv, value=kv, mask=mask)
            slow, weights = ours(
                query=q, key=kv, value=kv, mask=mask, need_weights=True
            )
            # PyTorch wants `[B * H, Sq, Sk]` masks; ours is `[Sq, Sk]` or
            # `[B, 1, 1, Sk]`, so broadcast it and repeat it per head.
            full = mask.expand(3, 4, 10, kv.shape[1]).reshape(12, 10, -1)
            expected, expected_weights = ref(
                q, kv, kv, attn_mask=~full, average_attn_weights=False
            )
            rows.append(
                CheckRow(
                    case=name,
                    fast=(fast - expected).abs().max().item(),
                    explicit=(slow - expected).abs().max().item(),
                    weights=(weights - expected_weights).abs().max().item(),
                )
            )
    return rows


def format_check_table(rows: list[CheckRow]) -> str:
    """The comparison as a Markdown table of largest absolute differences."""
    header = ["case", "fast path", "explicit path", "weights"]
    cells = [
        [r.case, f"{r.fast:.1e}", f"{r.explicit:.1e}", f"{r.weights:.1e}"] for r in rows
    ]
    return markdown_table(header, cells, align="lrrr")


#| print(format_check_table(check_against_pytorch()))

# `python mha.py` runs both demonstrations.

if __name__ == "__main__":
    print("Scaling the scores by 1/sqrt(d_k):\n")
    print(format_scaling_table(scaling_experiment()))
    print("\nLargest difference from torch.nn.MultiheadAttention (float32):\n")
    print(format_check_table(check_against_pytorch()))
