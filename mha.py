r"""
---
title: Multi-head attention
summary: Multi-head attention in PyTorch, one idea at a time, from four tokens
  worked by hand to a decoder layer with cross-attention, every claim run on the
  page and checked against PyTorch's own.
---

# Multi-head attention

Attention lets every position of a sequence gather information from other
positions, weighting each by how well it matches. Vaswani et al. introduced the
scaled dot-product form in
[Attention Is All You Need](https://arxiv.org/abs/1706.03762) (2017), the paper
behind the transformer:

$$
\begin{aligned}
&\mathrm{Attention}(Q, K, V) \\
&\quad = \mathrm{softmax}\left(\frac{Q K^\top}{\sqrt{d_k}}\right) V
\end{aligned}
$$

Each row of $Q$ is a *query*: what a position is looking for. Each row of $K$
is a *key*: what a position offers to be found by. $Q K^\top$ scores every
query against every key, the softmax turns each row of scores into weights that
sum to one, and the weights average the rows of $V$, the *values*.

*Multi-head* attention runs several of these side by side, each on its own
learned projection of the same input, so that each head can learn its own
pattern of what to look at; their results are concatenated and projected
back. The page builds it in this order: attention on four tokens, worked by
hand; the function; masks; why the scores are scaled; heads; the module; a
key/value cache for generating text; a decoder layer that attends to another
sequence; and a check against PyTorch's own implementation.

## Shapes

Every tensor's shape is written with these letters, here and in `train.py`:

| letter | meaning |
|---|---|
| `B` | batch size |
| `S` | sequence length |
| `Sq`, `Sk` | query positions; key (and value) positions |
| `Sn` | new key positions given to a cache that holds the rest |
| `D` | model width, `d_model` |
| `H` | number of heads |
| `Dk` | width of one head, `D // H` (the $d_k$ of the formula) |
| `M` | capacity of a key/value cache, `max_len` |
| `L` | number of transformer blocks |
| `N` | vocabulary size: how many different tokens there are |

`train.py` uses `B`, `S`, `D`, `H`, `L` and `N`. Tensors are batch first,
`[B, S, D]`; inside attention, heads come second, `[B, H, S, Dk]`, the layout
PyTorch's `scaled_dot_product_attention` expects.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

import mha_report as report
from attention import attention, causal_mask, padding_mask

# ## Heads are column blocks of one projection
#
# In a model nobody sets the queries and keys by hand. Each token arrives as
# a vector of `D` features, the rows of $X$ `[S, D]`, and three learned
# matrices turn it into its query, key and value: $Q = X W^Q$, $K = X W^K$,
# $V = X W^V$. Training adjusts them until the matches that help the task
# score high. In *self-attention* all three come from the same sequence $X$.
#
# With several heads, the paper gives head $i$ its own projections
# $W^Q_i$, $W^K_i$, $W^V_i$, each `[D, Dk]`. Placed side by side they make
# one `[D, D]` matrix, and one product computes every head's projection at
# once:
#
# $$
# W^Q = \left[\, W^Q_1 \mid W^Q_2 \mid \dots \mid W^Q_H \,\right]
# $$
#
# so the $i$-th block of $D_k$ columns of $X W^Q$ holds head $i$'s queries.
# `nn.Linear(D, D)` is that product plus a bias (it stores the transpose,
# $W^{Q\top}$, so head $i$ is a block of *rows* of its `weight`). Reshaping its output
# splits the last dimension into `H` heads of `Dk` features, and the heads
# then move to the second dimension, so that each head is a separate batch of
# matrix products.


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


# To see it, cut the weight into `H` blocks of `Dk` rows, project with each
# block on its own, as the paper writes it, and compare with the module. The
# two agree to within float32 rounding: the same products, summed in
# another order.


def heads_as_blocks(d_model: int = 8, heads: int = 2, seed: int = 0) -> None:
    torch.manual_seed(seed)
    prepare = PrepareForMultiHeadAttention(d_model, heads, d_model // heads)
    x = torch.randn(1, 3, d_model)  # [B, S, D]
    blocks = prepare.linear.weight.split(prepare.d_k)  # H blocks [Dk, D]
    biases = prepare.linear.bias.split(prepare.d_k)  # H blocks [Dk]
    separate = torch.stack(
        [F.linear(x, w, b) for w, b in zip(blocks, biases, strict=True)], dim=1
    )  # H times [B, S, Dk] -> [B, H, S, Dk]
    together = prepare(x)  # [B, H, S, Dk]
    print(f"weight {list(prepare.linear.weight.shape)} -> {heads} blocks of", end=" ")
    print(f"{list(blocks[0].shape)}; output {list(together.shape)}")
    difference = (separate - together).abs().max().item()
    print(f"largest difference: {difference:.1e}; float32 steps near 1 are", end=" ")
    print(f"{torch.finfo(torch.float32).eps:.1e} apart")


#| heads_as_blocks()

# ## The module
#
# $$
# \begin{aligned}
# &\mathrm{head}_i = \mathrm{Attention}(Q_i, K_i, V_i) \\
# &\quad X_i = X W^X_i \text{ for } X = Q, K, V \\
# &\mathrm{MultiHead}(Q, K, V) \\
# &\quad = \mathrm{Concat}(\mathrm{head}_1, \dots, \mathrm{head}_H)\, W^O
# \end{aligned}
# $$
#
# `Concat` sets the heads' outputs side by side, `H` blocks of `Dk` features
# making `D` again, and $W^O$, `[D, D]`, mixes them. With $d_k = D / H$, the
# `H` heads together cost about as much as one head of width `D`.
#
# The submodules are named `query.linear`, `key.linear`, `value.linear` and
# `output`, the layout of labml's annotated `MultiHeadAttention` (its state
# dict holds `query.linear.weight`, `query.linear.bias`, …, `output.weight`),
# so a state dict saved from it loads here unchanged. `bias=False` removes the
# bias of all four projections.


class MultiHeadAttention(nn.Module):
    """Multi-head attention over batch-first tensors `[B, S, D]`."""

    def __init__(
        self, d_model: int, heads: int, dropout: float = 0.0, bias: bool = True
    ):
        super().__init__()
        report.check_heads("MultiHeadAttention", d_model, heads)
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
        shape = (batch_size, self.heads, max_len, self.d_k)  # [B, H, M, Dk]
        options = dict(device=device or weight.device, dtype=dtype or weight.dtype)
        return KVCache(torch.empty(shape, **options), torch.empty(shape, **options))

    # In self-attention the query, key and value are one tensor `x`, and the
    # three projections multiply it by three `[D, D]` matrices. Stacked into
    # one `[3 D, D]` matrix they make a single product whose three blocks of
    # `D` columns are the queries, keys and values. In training that pays
    # with two threads and costs about the same with one (`bench/mha.py`,
    # "ours, fast" against "ours, 3 products"): the backward pass, too, takes
    # one product for the gradient of `x` and one for the weights instead of
    # three each, and larger products share out better between cores.
    #
    # The parameters stay the three `nn.Linear`s, so the state dict keeps its
    # layout; `torch.cat` is differentiable, so each weight gets its block of
    # the gradient. Inference keeps the three products: decoding projects one
    # token at a time, and for one token the `3 D x D` numbers that
    # `torch.cat` copies are as many as the product itself reads.
    def _project_stacked(self, x: torch.Tensor) -> list[torch.Tensor]:
        batch, seq, _ = x.shape
        qkv = F.linear(x, *self.stacked_projection())  # [B, S, 3 D]
        # Three views `[B, S, D]`, each `-> [B, S, H, Dk] -> [B, H, S, Dk]`.
        return [
            t.view(batch, seq, self.heads, self.d_k).transpose(1, 2)
            for t in qkv.split(self.d_model, dim=-1)
        ]

    def stacked_projection(self) -> tuple[torch.Tensor, torch.Tensor | None]:
        """The query, key and value weights stacked, `[3 D, D]`, and biases."""
        parts = (self.query.linear, self.key.linear, self.value.linear)
        weight = torch.cat([p.weight for p in parts])  # [3 D, D]
        bias = None if parts[0].bias is None else torch.cat([p.bias for p in parts])
        return weight, bias

    # The mask and the causal flag become one boolean mask, or stay a flag.
    #
    # * Causal with as many queries as keys and no other mask: the flag goes
    #   to `scaled_dot_product_attention` as is, and the kernels that support
    #   it skip the masked half without building a mask.
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
        # Bad input fails here, naming the argument, the expected shape and the
        # one received, rather than deep inside a matrix product.
        where = "MultiHeadAttention"
        for name, x in (("query", query), ("key", key), ("value", value)):
            report.check_sequence(where, name, x, self.d_model)
        report.check_same_length(where, key=key, value=value)
        report.check_same_batch(where, query=query, key=key, value=value)
        batch, seq_q, _ = query.shape
        # 1. Project and split into heads: `[B, S, D] -> [B, H, S, Dk]`.
        # Self-attention in training takes one stacked product (see above).
        if query is key is value and torch.is_grad_enabled():
            q, k, v = self._project_stacked(query)
        else:
            q = self.query(query)
            k = self.key(key)
            v = self.value(value)
        # 2. With a cache, store the new keys and values and attend over all
        # of them: `[B, H, Sn, Dk] -> [B, H, Sk, Dk]`.
        if kv_cache is not None:
            k, v = kv_cache.append(k, v)
        # The mask is checked against the full `[B, H, Sq, Sk]`, cached keys
        # included, then merged with the causal flag as described above. The
        # fused kernel wants at least two dimensions: a `[Sk]` mask becomes
        # `[1, Sk]`.
        seq_k = k.shape[2]
        if mask is not None:
            report.check_mask(where, mask, (batch, self.heads, seq_q, seq_k))
            mask = mask.unsqueeze(0) if mask.dim() == 1 else mask
        mask, flag = self._merge_masks(mask, is_causal, seq_q, seq_k, q.device)
        # 3. The explicit path when the weights are asked for; it needs the
        # causal flag as a mask.
        if need_weights:
            if flag:
                mask = causal_mask(seq_q, seq_k, device=q.device)
            x, weights = attention(q, k, v, mask, self.dropout)
        # Otherwise the fused path, `scaled_dot_product_attention`. Since
        # PyTorch 2.5 it, too, gives a fully masked row zeros.
        else:
            p = self.dropout.p if self.training else 0.0
            x = F.scaled_dot_product_attention(
                q, k, v, attn_mask=mask, dropout_p=p, is_causal=flag
            )
        # 4. Concatenate the heads, `[B, H, Sq, Dk] -> [B, Sq, H, Dk] ->
        # [B, Sq, D]`, and mix them with the output projection $W^O$. After
        # `transpose` the tensor is no longer laid out row by row in memory
        # (not *contiguous*), so `.view` would raise an error; `reshape`
        # copies it into order, the same as `.contiguous().view(...)`.
        x = x.transpose(1, 2).reshape(batch, seq_q, self.d_model)
        x = self.output(x)
        return (x, weights) if need_weights else x


# ## The key/value cache
#
# A model that generates text calls attention once per new token, and needs
# only the newest output. Recomputing the whole prefix at step $t$ projects
# all $t$ tokens and scores $t \times t$ query-key pairs. Yet the keys and
# values of old tokens never change (under the causal mask old tokens never
# see new ones). The cache keeps them, so a step projects only the new token
# (the same work at every step) and scores it against the $t$ stored keys:
# attention work that grows as $O(t)$ rather than $O(t^2)$, with the same
# result.
#
# The storage is allocated once, `[B, H, M, Dk]`, and filled in place; growing
# it with `torch.cat` would allocate and copy the whole prefix at every step.
# `length` counts the positions filled. Use the cache for inference, under
# `torch.no_grad()`: with gradients on, its in-place writes would tie all the
# steps into one autograd graph.


class KVCache:
    """Preallocated keys and values `[B, H, M, Dk]`, the first `length` filled."""

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
        report.check_cache_room(self.batch_size, self.max_len, self.length, key)
        start, end = self.length, self.length + key.shape[2]
        self.keys[:, :, start:end] = key
        self.values[:, :, start:end] = value
        self.length = end
        return self.keys[:, :, :end], self.values[:, :, :end]


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
    with torch.no_grad():
        in_weight, in_bias = mha.stacked_projection()  # [3 D, D], [3 D]
        ref.in_proj_weight.copy_(in_weight)
        ref.out_proj.weight.copy_(mha.output.weight)
        if bias:
            ref.in_proj_bias.copy_(in_bias)
            ref.out_proj.bias.copy_(mha.output.bias)
    return ref.eval()


# Four cases, each through both of our paths: causal self-attention given as
# a mask and as the `is_causal=True` flag, cross-attention with padding, and
# a left-padded batch under the causal mask, where some queries have no key
# at all. PyTorch returns NaN for such a query; ours returns the output
# projection's bias (a zero vector before $W^O$), so that is what those rows
# are compared with, and their weights with zeros.


def check_against_pytorch(seed: int = 0) -> list[report.CheckRow]:
    """Compare with `torch.nn.MultiheadAttention` on random input, in float32."""
    torch.manual_seed(seed)
    batch, seq, seq_memory, d_model = 3, 10, 7, 64
    ours = MultiHeadAttention(d_model, heads=4).eval()
    ref = to_torch_mha(ours)
    x = torch.randn(batch, seq, d_model)  # [B, S, D]
    memory = torch.randn(batch, seq_memory, d_model)  # [B, Sk, D]
    memory_lengths = torch.tensor([seq_memory, seq_memory - 2, 2])  # [B]
    ids = torch.randint(1, 9, (batch, seq))  # token ids, 0 = padding
    ids[1, : seq // 2] = 0  # sequence 1: the first half is left padding
    causal = causal_mask(seq)  # [S, S]
    cases = [
        ("self, causal mask", x, x, causal, {}),
        ("self, is_causal=True", x, x, None, {"is_causal": True}),
        ("cross, padding", x, memory, padding_mask(memory_lengths), {}),
        ("left padding, no key", x, x, causal & padding_mask(ids, pad_id=0), {}),
    ]
    rows = []
    with torch.no_grad():
        for name, q, kv, mask, flag in cases:
            fused = ours(query=q, key=kv, value=kv, mask=mask, **flag)
            explicit, weights = ours(
                query=q, key=kv, value=kv, mask=mask, need_weights=True, **flag
            )
            # PyTorch wants a `[B * H, Sq, Sk]` mask; ours broadcasts to
            # `[B, H, Sq, Sk]`, so expand it and merge the first two dimensions.
            seq_k = kv.shape[1]
            full = causal if mask is None else mask
            full = full.expand(batch, ours.heads, seq, seq_k)
            expected, expected_weights = ref(
                q,
                kv,
                kv,
                attn_mask=~full.reshape(batch * ours.heads, seq, seq_k),
                average_attn_weights=False,
            )
            # Queries with no key: count PyTorch's NaN rows, then compare them
            # with our bias and their weights with zeros.
            empty = ~full.any(dim=-1)  # [B, H, Sq]
            nan_rows = expected[empty[:, 0]].isnan().any(dim=-1).sum().item()
            expected[empty[:, 0]] = ours.output.bias
            expected_weights[empty] = 0.0
            rows.append(
                report.CheckRow(
                    case=name,
                    fused=(fused - expected).abs().max().item(),
                    explicit=(explicit - expected).abs().max().item(),
                    weights=(weights - expected_weights).abs().max().item(),
                    size=expected.abs().max().item(),
                    nan_rows=nan_rows,
                )
            )
    return rows


# The largest absolute differences. For scale, `largest output` is the
# largest value PyTorch's output holds, and the last column counts the
# queries to which PyTorch gave NaN:

#| print(report.format_check_table(check_against_pytorch()))

# What counts as small? A float32 holds 24 significant bits, so near 1
# neighbouring numbers are this far apart (`torch.finfo(torch.float32).eps`):

#| print(f"{torch.finfo(torch.float32).eps:.2e}")

# Every difference in the table is within a few of these steps: rounding,
# from adding the same numbers in another order, and no more. (The tests in
# `tests/test_mha.py` go further: more masks, float64, gradients, the cache.)

# `python mha.py` runs the demonstrations.

if __name__ == "__main__":
    print("Heads as column blocks of one projection:\n")
    heads_as_blocks()
    print("\nLargest difference from torch.nn.MultiheadAttention (float32):\n")
    print(report.format_check_table(check_against_pytorch()))
