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

import json
import math
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

import mha_report as report
from literate.words import tr  # a figure's words in the page's language

# ## Attention on four tokens
#
# Take the sentence "cats chase small mice". Give each word a query and a key
# with two features, `[S, 2]`: the first means *noun*, the second *action*.
# The keys say what each word is: `cats` and `mice` are nouns, `chase` an
# action, and `small` is neither. The queries say what each word looks for:
# a noun looks for its action, the verb for the nouns it joins, and the
# adjective, more weakly, for a noun. The values `[S, 3]` are one-hot word
# classes (noun, action, adjective), so the output says what kind of word each
# position read from.

WORDS = ["cats", "chase", "small", "mice"]
CLASSES = ["noun", "action", "adjective"]
TOY_QUERIES = torch.tensor([[0.0, 2.0], [2.0, 0.0], [1.0, 0.0], [0.0, 2.0]])
TOY_KEYS = torch.tensor([[2.0, 0.0], [0.0, 2.0], [0.0, 0.0], [2.0, 0.0]])
TOY_VALUES = torch.tensor([[1.0, 0, 0], [0, 1.0, 0], [0, 0, 1.0], [1.0, 0, 0]])

# The scores $Q K^\top$: one row per query, one column per key, each entry
# the dot product of a query with a key. A query scores high on the keys
# that share its feature, and 0 on keys it has nothing in common with.

#| print(report.matrix_table(TOY_QUERIES @ TOY_KEYS.T, WORDS, WORDS, digits=0))

# Attention divides the scores by $\sqrt{d_k}$, the square root of the
# number of features ($d_k = 2$ here; a later section says why), and takes
# the softmax of each row, $\mathrm{softmax}(s)_j = e^{s_j} / \sum_k e^{s_k}$:
# the weights $A$. Every row sums to one (the last column).


def toy_weights() -> torch.Tensor:
    d_k = TOY_KEYS.shape[-1]
    scores = TOY_QUERIES @ TOY_KEYS.T / math.sqrt(d_k)  # [S, S]
    return scores.softmax(dim=-1)  # [S, S], each row sums to 1


def print_toy_weights() -> None:
    weights = toy_weights()
    with_sums = torch.cat([weights, weights.sum(-1, keepdim=True)], dim=-1)
    print(report.matrix_table(with_sums, WORDS, WORDS + [tr("row sum")]))


#| print_toy_weights()

# Read the row of `cats` in the table: it puts most of its weight on
# `chase`, its action, and splits what is left evenly over the three words
# it scored 0 against. The row of `small` splits its weight equally between
# `cats` and `mice`: nothing in these features tells the two nouns apart,
# and attention on its own does not know word order, so it cannot prefer the
# noun right after it. (Models add each token's position to it for this;
# `train.py` does.) The same weights as a heatmap, a row per query and a
# column per key:


def draw_toy_weights() -> None:
    report.draw_heatmaps({"A": toy_weights()}, WORDS, WORDS, numbers=True)


#| draw_toy_weights()  | alt: cats and mice look at chase; chase and small at the nouns

# The output is the weighted average of the values, $A V$. With one-hot
# values, each output row adds up the weights per class: the row of `cats`
# has read mostly an action, the row of `chase` mostly nouns. The module
# below does the same with learned queries, keys and values of many features.

#| print(report.matrix_table(toy_weights() @ TOY_VALUES, WORDS, CLASSES))

# ## Scaled dot-product attention
#
# The same steps as a function, for a batch of heads `[B, H, S, Dk]`, with a
# mask and dropout, each step written out so that it can be read. It is the
# *explicit path*: `MultiHeadAttention` uses it whenever the caller asks for
# the attention weights. Otherwise it calls PyTorch's fused
# `scaled_dot_product_attention`, which computes the same numbers; its flash
# and memory-efficient kernels (on the devices and with the masks that allow
# them) do so without storing the `[Sq, Sk]` matrix of weights, while its
# plain fallback stores it as we do.
#
# `mask` is boolean and `True` means *may attend*, as in
# `scaled_dot_product_attention`. It must broadcast to the scores'
# `[..., Sq, Sk]`. `dropout`, if given, is applied to the weights (e.g. an
# `nn.Dropout`).


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
    # nothing: a zero vector and zero gradients instead of NaN. Such rows are
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


# On the four tokens (no batch or heads: the products work on the last two
# dimensions), `attention()` gives the weights and the output computed step
# by step above.


def check_toy_attention() -> None:
    output, weights = attention(TOY_QUERIES, TOY_KEYS, TOY_VALUES)
    by_hand = toy_weights()  # [S, S]
    print(f"weights: largest difference {(weights - by_hand).abs().max():.1e}")
    output_difference = (output - by_hand @ TOY_VALUES).abs().max()
    print(f"output: largest difference {output_difference:.1e}")


#| check_toy_attention()


# ## Masks
#
# A mask says which keys each query may use. Two are so common that they get
# helpers; both return booleans with `True` = may attend. Other code may
# differ: in `torch.nn.MultiheadAttention`, `True` means *may not* attend,
# while the Annotated Transformer keeps our meaning with 0/1 masks, filling
# the scores where `mask == 0`. Check which one a mask follows before passing
# it on.
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
    report.check_lengths("causal_mask", seq_q=seq_q, seq_k=seq_k)
    i = torch.arange(seq_q, device=device).unsqueeze(1)  # [Sq, 1]
    j = torch.arange(seq_k, device=device).unsqueeze(0)  # [1, Sk]
    return j <= i + (seq_k - seq_q)


# **Padding.** Sentences in a batch have different lengths, so the shorter
# ones are filled up to the longest with padding tokens. No query may attend to
# padding: it is not part of the sentence. Give either the lengths (padding on
# the right), or the token ids and the id used for padding (padding anywhere,
# left padding included). The mask is `[B, 1, 1, S]`: the same for every head
# and every query. Broadcasting stretches it over both without copying; a
# `[B, H, Sq, Sk]` mask made with `repeat` would hold `H * Sq` copies of each
# row in memory.


def padding_mask(
    lengths_or_ids: torch.Tensor,
    pad_id: int | None = None,
    *,
    seq_len: int | None = None,
) -> torch.Tensor:
    """`[B, 1, 1, S]` boolean, `True` on real tokens, `False` on padding."""
    x = torch.as_tensor(lengths_or_ids)
    report.check_padding_input(x, pad_id, seq_len)
    if pad_id is not None:
        return (x != pad_id)[:, None, None, :]
    longest = int(x.max()) if x.numel() else 0
    seq_len = longest if seq_len is None else seq_len
    positions = torch.arange(seq_len, device=x.device)  # [S]
    return (positions < x[:, None])[:, None, None, :]  # [B, 1, 1, S]


# The two combine with a logical *and*: `causal_mask(s) & padding_mask(ids,
# pad_id)` lets a real token see itself and the real tokens before it. Some
# queries are then left with no key at all: under left padding, every key a
# leading pad could see is a pad, so it sees nothing, and neither does any
# query of an empty sequence. Their rows are fully masked: `attention()`
# gives them a zero vector, and so does the fused path. (In the module that
# zero then goes through the output projection, so what comes out is that
# projection's bias.)
#
# Below, six positions of which the last two are padding. The queries and
# keys are set by hand so that each query prefers the key just before it, and
# a row is a query, a column a key. Hatched cells are masked (`False`): their
# weight is exactly $0$. The causal mask leaves the lower triangle; padding
# hides the pad *keys* from every query; with both, a real token reads itself
# and the real tokens before it, and the two pad queries read the real tokens
# only, not themselves. Their outputs are later ignored (a loss skips
# padding).


def masks_example() -> tuple[dict[str, torch.Tensor], dict[str, torch.Tensor]]:
    seq, real = 6, 4
    # Key j points at angle 0.8 j; query i at the angle of key i - 1. `[S, 2]`.
    angle = 0.8 * torch.arange(seq)
    keys = 3 * torch.stack([angle.cos(), angle.sin()], dim=-1)
    queries = 3 * torch.stack([(angle - 0.8).cos(), (angle - 0.8).sin()], dim=-1)
    causal = causal_mask(seq)  # [Sq, Sk]
    padding = padding_mask(torch.tensor([real]), seq_len=seq)[0, 0]  # [1, Sk]
    masks = {"causal": causal, "padding": padding, "both": causal & padding}
    weights = {
        name: attention(queries, keys, keys, mask)[1] for name, mask in masks.items()
    }
    hidden = {name: ~mask.expand(seq, seq) for name, mask in masks.items()}
    return weights, hidden


def draw_masks() -> None:
    weights, hidden = masks_example()
    names = ["t0", "t1", "t2", "t3", "pad4", "pad5"]
    titles = {"causal": tr("causal"), "padding": tr("padding"), "both": tr("both")}
    report.draw_heatmaps(
        {titles[name]: w for name, w in weights.items()},
        names,
        names,
        hidden={titles[name]: h for name, h in hidden.items()},
    )


#| draw_masks()  | alt: weights under the causal, padding and both masks, hatched

# ## Why scale by $1/\sqrt{d_k}$
#
# The four tokens had $d_k = 2$. What goes wrong when $d_k$ is 64, as in many
# models? Take a query $q$ and a key $k$ whose $d_k$ components are
# independent, with mean $0$ and variance $1$. Each product $q_i k_i$ then has
# mean $0$ and variance $1$, and their sum has variance $d_k$:
#
# $$
# \mathrm{Var}(q \cdot k)
#   = \sum_{i=1}^{d_k} \mathrm{Var}(q_i k_i) = d_k
# $$
#
# So the wider the head, the further apart the scores, and the softmax of
# scores far apart puts nearly all the weight on the largest. That stops
# learning, because of how the softmax passes gradients back.
#
# The softmax $p$ of a row of scores $s$ has the Jacobian
# $\partial p / \partial s = \mathrm{diag}(p) - p p^\top$. Its size, the
# norm $\lVert \partial p / \partial s \rVert$ (the square root of the sum
# of its squared entries), measures how much a change in the scores can
# still move the weights, and so how much gradient reaches the scores. It is $0$ for a
# one-hot $p$ and falls towards $0$ as $p$ nears one-hot, as the table below
# shows for a few rows of 16 weights. (It is not largest for a flat $p$:
# compare the first two rows.)


def softmax_jacobian_norm(probs: torch.Tensor) -> torch.Tensor:
    """Frobenius norm of the softmax Jacobian for each row of `probs` `[..., Sk]`."""
    jacobian = torch.diag_embed(probs) - probs.unsqueeze(-1) * probs.unsqueeze(-2)
    return jacobian.flatten(-2).norm(dim=-1)


def print_jacobian_norms(keys: int = 16) -> None:
    rows = {"flat": torch.full((keys,), 1.0 / keys)}
    for peak in (0.5, 0.9, 0.99, 1.0):  # one weight `peak`, the rest shared
        rows[f"one weight {peak}"] = torch.full((keys,), (1 - peak) / (keys - 1))
        rows[f"one weight {peak}"][0] = peak
    cells = [
        [name, f"{p.max():.3f}", f"{softmax_jacobian_norm(p):.3f}"]
        for name, p in rows.items()
    ]
    header = [tr("weights p"), "max p", "‖∂p/∂s‖"]
    print(report.markdown_table(header, cells, align="lrr"))


#| print_jacobian_norms()

# The experiment below measures what happens to real scores. For each $d_k$
# it draws `samples` queries, each scored against `keys` keys, and reports
# the variance of the scores, the mean largest softmax weight (`max p`) and
# the mean size of the softmax's gradient, unscaled and scaled.


def scaling_experiment(
    d_ks: tuple[int, ...] = (2, 4, 16, 64, 256, 1024),
    *,
    keys: int = 16,
    samples: int = 1000,
    seed: int = 0,
) -> list[report.ScalingRow]:
    r"""Measure the effect of the $1/\sqrt{d_k}$ scale; deterministic for a seed."""
    generator = torch.Generator().manual_seed(seed)
    rows = []
    for d_k in d_ks:
        # `samples` queries `[samples, 1, Dk]` against keys `[samples, keys, Dk]`:
        # scores `[samples, keys]`.
        q = torch.randn(samples, 1, d_k, generator=generator, dtype=torch.float64)
        k = torch.randn(samples, keys, d_k, generator=generator, dtype=torch.float64)
        raw = (q * k).sum(dim=-1)
        scaled = raw / math.sqrt(d_k)
        p_raw, p_scaled = raw.softmax(dim=-1), scaled.softmax(dim=-1)
        rows.append(
            report.ScalingRow(
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


# Measured when this page was built, with the defaults above. Read the row
# $d_k = 64$: the variance of the raw scores is about $d_k$, the largest
# weight unscaled (`max p raw`) is far above the scaled one, and the last
# column, `kept`, gives the share of the scaled gradient that the unscaled
# scores keep: from $d_k = 16$ on, the wider the head, the less is left.
# Divided by $\sqrt{d_k}$, the scores have
# variance about $1$ at every width, and neither the largest weight nor the
# gradient moves.

#| print(report.format_scaling_table(scaling_experiment()))

# The same measurements against the head width (the horizontal axis is on a
# log scale): the unscaled softmax saturates, its largest weight climbing
# towards $1$ and its gradient falling towards $0$, while the scaled one
# stays where it was at $d_k = 2$.

#| report.plot_scaling(scaling_experiment())  | alt: unscaled, max p → 1, gradient → 0

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


# **The same result.** Decode `steps` positions one at a time with a cache,
# each step passing only the newest token, and compare every output with
# attention recomputed over the whole sequence under the causal mask.


def check_cache(steps: int = 48, d_model: int = 64, heads: int = 4) -> None:
    torch.manual_seed(0)
    mha = MultiHeadAttention(d_model, heads).eval()
    x = torch.randn(2, steps, d_model)  # [B, S, D]
    cache = mha.new_cache(2, steps)
    with torch.no_grad():
        full = mha(query=x, key=x, value=x, is_causal=True)  # [B, S, D]
        step_by_step = torch.cat(
            [
                mha(query=token, key=token, value=token, kv_cache=cache)
                for token in x.split(1, dim=1)  # S times [B, 1, D]
            ],
            dim=1,
        )
    difference = (step_by_step - full).abs().max().item()
    print(f"{steps} positions decoded one at a time with the cache;")
    print(f"largest difference from recomputing the prefix: {difference:.1e}")


#| check_cache()

# **The time it saves.** `bench/kv_cache.py` times one new token with and
# without the cache at several prefix lengths and writes
# `runs/mha/kv_cache.json`. The figure is drawn from that recorded file, not
# timed while the page is built (slow, and noisy); the command and settings
# below come from the file, and `runs/mha/README.md` describes the machine.
# Both axes are on a log scale. The recomputed step grows fastest, since it
# redoes everything for the whole prefix; the cached step grows slowly,
# because only its attention over the stored keys gets longer; and the gap
# between them widens with the prefix.

KV_TIMING = Path("runs/mha/kv_cache.json")


def plot_recorded_kv_timing(path: Path = KV_TIMING) -> None:
    record = json.loads(path.read_text())
    print(f"recorded with: {record['command']}")
    print(f"d_model {record['d_model']}, {record['heads']} heads, batch", end=" ")
    print(f"{record['batch']}, PyTorch {record['torch']}, threads {record['threads']}")
    report.plot_kv_timing(record)


#| plot_recorded_kv_timing()  | alt: ms per token: recomputing grows faster than cached

# ## A decoder layer with cross-attention
#
# Self-attention takes its queries, keys and values from one sequence. In
# *cross-attention* the queries come from one sequence and the keys and
# values from another. The paper's translation model uses it: an *encoder*
# reads the source sentence into a sequence of vectors, the *memory*, and a
# *decoder* writes the target one token at a time. Each decoder layer has
# three sublayers:
#
# 1. masked self-attention over the target written so far (causal);
# 2. cross-attention: target queries, keys and values from the memory, with
#    the memory's padding mask;
# 3. a feed-forward network, applied to each position on its own.
#
# Each sublayer's output is added to its input (a *residual connection*) and
# the sum normalised with LayerNorm: $x \leftarrow \mathrm{LN}(x + f(x))$.
# That is the paper's order, *post-LN*, used here. `train.py` normalises
# before each sublayer instead, $x \leftarrow x + f(\mathrm{LN}(x))$,
# *pre-LN*: Xiong et al.,
# [On Layer Normalization in the Transformer Architecture](https://arxiv.org/abs/2002.04745)
# (2020), show that post-LN's gradients near the output are large at
# initialisation, so it needs a learning-rate warmup, while pre-LN trains
# without one. The small model below trains post-LN without a warmup.


class FeedForward(nn.Sequential):
    """`[B, S, D] -> [B, S, 4 D] -> [B, S, D]`, the same at every position."""

    def __init__(self, d_model: int, dropout: float = 0.0):
        super().__init__(
            nn.Linear(d_model, 4 * d_model),
            nn.ReLU(),
            nn.Linear(4 * d_model, d_model),
            nn.Dropout(dropout),
        )


class EncoderLayer(nn.Module):
    """Self-attention over the source, then the feed-forward network; post-LN."""

    def __init__(self, d_model: int, heads: int, dropout: float = 0.0):
        super().__init__()
        self.attn = MultiHeadAttention(d_model, heads, dropout)
        self.ff = FeedForward(d_model, dropout)
        self.norm1, self.norm2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None):
        """`x` `[B, S, D]`; `mask` `[B, 1, 1, S]`, `True` on real tokens."""
        x = self.norm1(x + self.attn(query=x, key=x, value=x, mask=mask))
        return self.norm2(x + self.ff(x))


class DecoderLayer(nn.Module):
    """Masked self-attention, cross-attention to a memory, feed-forward; post-LN."""

    def __init__(self, d_model: int, heads: int, dropout: float = 0.0):
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model, heads, dropout)
        self.cross_attn = MultiHeadAttention(d_model, heads, dropout)
        self.ff = FeedForward(d_model, dropout)
        self.norm1, self.norm2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.norm3 = nn.LayerNorm(d_model)
        self.d_model = d_model

    def forward(
        self,
        x: torch.Tensor,
        memory: torch.Tensor,
        memory_mask: torch.Tensor | None = None,
        need_weights: bool = False,
    ) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
        """The target `x` `[B, Sq, D]` attends to the `memory` `[B, Sk, D]`.

        `memory_mask` is `[B, 1, 1, Sk]`, `True` on the memory's real tokens,
        as `padding_mask` makes it. Returns `[B, Sq, D]`, and with
        `need_weights=True` also the cross-attention weights `[B, H, Sq, Sk]`.
        """
        where = "DecoderLayer"
        report.check_sequence(where, "x", x, self.d_model)
        report.check_sequence(where, "memory", memory, self.d_model)
        report.check_same_batch(where, x=x, memory=memory)
        # 1. Each target position reads itself and the positions before it.
        x = self.norm1(x + self.self_attn(query=x, key=x, value=x, is_causal=True))
        # 2. Target queries against the memory's keys and values:
        # `[B, H, Sq, Dk] @ [B, H, Dk, Sk] -> [B, H, Sq, Sk]` scores.
        cross = self.cross_attn(
            query=x,
            key=memory,
            value=memory,
            mask=memory_mask,
            need_weights=need_weights,
        )
        read, weights = cross if need_weights else (cross, None)
        x = self.norm2(x + read)
        # 3. The feed-forward network, position by position.
        x = self.norm3(x + self.ff(x))
        return (x, weights) if need_weights else x


# **Cross-attention at work.** A tiny encoder–decoder learns to reverse a
# sequence of six digits: the source `3 1 4 1 5 9` must come out as
# `9 5 1 4 1 3`. To write output position $i$, the decoder must read source
# position $(5 - i)$, so if cross-attention learns the task, its weights form
# an anti-diagonal. Token and position embeddings go in (learned positions,
# as in `train.py`; the paper adds fixed sine and cosine waves instead, and
# reports that learned ones did about as well); one encoder layer, one
# decoder layer and a linear head to the `N` tokens (ten digits and a start
# token) come out.


START = 10  # the start token's id, after the digits 0 to 9


class Reverser(nn.Module):
    """Encoder–decoder for sequences of `length` digits: one layer each."""

    def __init__(self, length: int = 6, d_model: int = 32, heads: int = 2):
        super().__init__()
        self.start = START
        self.token = nn.Embedding(START + 1, d_model)  # N = START + 1 tokens
        self.position = nn.Embedding(length, d_model)
        self.encoder = EncoderLayer(d_model, heads)
        self.decoder = DecoderLayer(d_model, heads)
        self.head = nn.Linear(d_model, START + 1)

    def embed(self, ids: torch.Tensor) -> torch.Tensor:
        positions = torch.arange(ids.shape[1])  # [S]
        return self.token(ids) + self.position(positions)  # [B, S, D]

    def forward(self, source: torch.Tensor, target_in: torch.Tensor):
        """Logits `[B, Sq, N]` and cross-attention weights `[B, H, Sq, Sk]`."""
        memory = self.encoder(self.embed(source))  # [B, Sk, D]
        x, weights = self.decoder(self.embed(target_in), memory, need_weights=True)
        return self.head(x), weights


# Training shows the decoder the reversed sequence shifted right by one, the
# start token first (*teacher forcing*), so that every position is trained in
# one step. All sources have six digits, so the memory has no padding and
# no mask. Training uses one thread, so that a seed gives the same model
# every time it runs.


def reversal_batch(generator: torch.Generator, batch: int, length: int = 6):
    """Source digits, the target (reversed) and the decoder input, `[B, S]` each."""
    source = torch.randint(0, START, (batch, length), generator=generator)
    target = source.flip(1)
    start = torch.full((batch, 1), START)
    return source, target, torch.cat([start, target[:, :-1]], dim=1)


def train_reverser(steps: int = 250, seed: int = 0) -> Reverser:
    """Adam on batches of 64 random sequences; a few seconds on one core."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    torch.manual_seed(seed)
    generator = torch.Generator().manual_seed(seed)
    model = Reverser()
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    for _ in range(steps):
        source, target, target_in = reversal_batch(generator, 64)
        logits, _ = model(source, target_in)  # [B, S, N]
        loss = F.cross_entropy(logits.flatten(0, 1), target.flatten())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    torch.set_num_threads(threads)
    return model.eval()


# To test it, the decoder writes each of 1000 new sequences one token at a
# time from the start token, each step feeding back its own best guess
# (greedy decoding), with no access to the answer.


@torch.no_grad()
def reverse(model: Reverser, source: torch.Tensor):
    """Greedy output `[B, S]` and the last step's cross-attention `[B, H, S, S]`."""
    out = torch.full((source.shape[0], 1), model.start)  # [B, 1]
    for _ in range(source.shape[1]):
        logits, weights = model(source, out)  # [B, t, N]
        out = torch.cat([out, logits[:, -1:].argmax(-1)], dim=1)
    return out[:, 1:], weights


def score_reverser(model: Reverser, count: int = 1000):
    source, target, _ = reversal_batch(torch.Generator().manual_seed(1), count)
    guess, weights = reverse(model, source)
    digits = (guess == target).float().mean().item()
    whole = (guess == target).all(dim=1).float().mean().item()
    print(f"digits right: {digits:.1%}; sequences entirely right: {whole:.1%}")
    return source, guess, weights


def reversal_demo() -> None:
    source, guess, weights = score_reverser(train_reverser())
    first = [str(d) for d in source[0].tolist()]
    written = [str(d) for d in guess[0].tolist()]
    head = tr("head {h}")
    panels = {head.format(h=h): weights[0, h] for h in range(weights.shape[1])}
    report.draw_heatmaps(
        panels, written, first, xlabel=tr("source"), ylabel=tr("output")
    )


#| reversal_demo()  | alt: cross-attention weights of the reverser: an anti-diagonal

# Both heads have learned the alignment: output position $i$ puts its weight
# on source position $(5 - i)$, the anti-diagonal. Nobody told the model where
# to look; the loss only rewarded the right digits.

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
    print("Attention on four tokens, the weights:\n")
    print_toy_weights()
    print("\nScaling the scores by 1/sqrt(d_k):\n")
    print(report.format_scaling_table(scaling_experiment()))
    print("\nHeads as column blocks of one projection:\n")
    heads_as_blocks()
    print("\nThe key/value cache:\n")
    check_cache()
    print("\nCross-attention, a decoder layer trained to reverse digits:\n")
    score_reverser(train_reverser())
    print("\nLargest difference from torch.nn.MultiheadAttention (float32):\n")
    print(report.format_check_table(check_against_pytorch()))
