r"""
---
title: Attention
summary: Scaled dot-product attention in PyTorch, from four tokens worked by hand
  to the function, why its scores are scaled, and masks.
---

# Attention

CHAPTER-1-INTRO
"""

from __future__ import annotations

import math

import torch
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

# `python attention.py` prints the worked example.

if __name__ == "__main__":
    print_toy_weights()
