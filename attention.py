r"""
---
title: Attention
summary: Scaled dot-product attention in PyTorch, from four tokens worked by hand
  to the function, why its scores are scaled, and masks.
---

# Attention

Attention lets every position of a sequence gather information from the other
positions, weighting each by how well it matches what the position looks for.
Vaswani et al. introduced the scaled dot-product form in
[Attention Is All You Need](https://arxiv.org/abs/1706.03762) (2017), the paper
behind the transformer:

$$
\begin{aligned}
&\mathrm{Attention}(Q, K, V) \\
&\quad = \mathrm{softmax}\left(\frac{Q K^\top}{\sqrt{d_k}}\right) V
\end{aligned}
$$

Each row of $Q$ is a *query*: what a position is looking for. Each row of $K$
is a *key*: what a position can be found by. $Q K^\top$ scores every query
against every key, the softmax turns each row of scores into weights that sum
to one, and the weights average the rows of $V$, the *values*: what each
position hands on when it is found.

Before the transformer, sequence models were mostly recurrent: they read one
position after another, so what position 1 holds reaches position $n$ through
$n - 1$ steps, and the steps cannot run at the same time. Table 1 of the paper
compares, among other layers, the two kinds for $n$ positions of width $d$. A
self-attention layer joins any two positions in one step (a longest path of
$O(1)$, against $O(n)$) and needs $O(1)$ sequential operations, against $O(n)$.
Its work per layer is $O(n^2 d)$, against $O(n d^2)$ for a recurrent layer, so
it is the cheaper of the two while the sequence is shorter than the width.

This page builds attention in four steps: four tokens worked by hand, the
function, why the scores are divided by $\sqrt{d_k}$, and masks.

## Shapes

Every tensor's shape is written with these letters, on this page and the next:

| letter | meaning |
|---|---|
| `B` | batch size: how many sequences are processed together |
| `S` | sequence length |
| `D` | model width, `d_model`: the features of one token |
| `H` | number of heads |
| `Dk` | width of one head, `D // H` (the $d_k$ of the formula) |

Tensors are batch first, `[B, S, D]`; inside attention, heads come second,
`[B, H, S, Dk]`, the layout PyTorch's `scaled_dot_product_attention` expects.
Other letters are defined where they are first needed.
"""

from __future__ import annotations

import math

import torch
from torch import nn

import argument_checks as checks
import attention_report as report
from literate.data import Data  # numbers for the page's widget
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
# position read from. These vectors are written by hand so that every number
# below can be checked; in a model they are learned, as
# [chapter 2](mha.html) shows: projections of each token's vector.

WORDS = ["cats", "chase", "small", "mice"]
TOY_QUERIES = torch.tensor(  # [S, 2], each row [noun, action]
    [
        [0.0, 2.0],  # cats looks for an action
        [2.0, 0.0],  # chase looks for nouns
        [1.0, 0.0],  # small looks, more weakly, for a noun
        [0.0, 2.0],  # mice looks for an action
    ]
)
TOY_KEYS = torch.tensor(  # [S, 2], each row [noun, action]
    [
        [2.0, 0.0],  # cats is a noun
        [0.0, 2.0],  # chase is an action
        [0.0, 0.0],  # small is neither
        [2.0, 0.0],  # mice is a noun
    ]
)
TOY_VALUES = torch.tensor(  # [S, 3], each row [noun, action, adjective]
    [
        [1.0, 0.0, 0.0],  # cats
        [0.0, 1.0, 0.0],  # chase
        [0.0, 0.0, 1.0],  # small
        [1.0, 0.0, 0.0],  # mice
    ]
)

# The scores $Q K^\top$: one row per query, one column per key, each entry
# the dot product of a query with a key. A query scores high on the keys
# that share its feature, and 0 on keys it has nothing in common with.

#| print(report.matrix_table(TOY_QUERIES @ TOY_KEYS.T, WORDS, WORDS, digits=0))

# Attention divides the scores by $\sqrt{d_k}$, the square root of the
# number of features ($d_k = 2$ here; [why scale](#why-scale-by-1-sqrt-d_k), right after
# the function, says why), and takes the softmax of each row,
# $\mathrm{softmax}(s)_j = e^{s_j} / \sum_k e^{s_k}$: the weights $A$. Every
# row sums to one (the last column).


def toy_weights(
    keys: torch.Tensor = TOY_KEYS, queries: torch.Tensor = TOY_QUERIES
) -> torch.Tensor:
    d_k = keys.shape[-1]
    scores = queries @ keys.T / math.sqrt(d_k)  # [S, S]
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
# noun right after it. (Models give attention each token's position for
# this; [the transformer layer](layers.html) shows how.) The same weights as
# a heatmap,
# a row per query and a column per key:


def draw_toy_weights() -> None:
    report.draw_heatmaps({"A": toy_weights()}, WORDS, WORDS, numbers=True)


#| draw_toy_weights()  | alt: cats and mice look at chase; chase and small at the nouns

# The output is the weighted average of the values, $A V$. With one-hot
# values, each output row adds up the weights per class: the row of `cats`
# has read mostly an action, the row of `chase` mostly nouns.


def print_toy_output() -> None:
    classes = [tr("noun"), tr("action"), tr("adjective")]
    print(report.matrix_table(toy_weights() @ TOY_VALUES, WORDS, classes))


#| print_toy_output()

# Try these steps in the page: under this paragraph's code, pick a word and
# change the two features of its query. The scores, the scaled scores the
# softmax takes, the weights (coloured as in the heatmap, with their row
# sums) and the output follow at once; the figure above keeps the page's
# numbers, and Reset brings them back. The keys are shown beside the
# queries, and the widget leaves them as they are. It reruns `toy_weights`
# in the browser on the numbers this function hands it.
# <span class="lit-nojs">This page is being read without JavaScript, so
# the widget is not shown; the tables and the figure above are where it
# starts.</span>


def toy_widget() -> Data:
    return report.toy_data(WORDS, TOY_QUERIES, TOY_KEYS, TOY_VALUES)


#| toy_widget()

# !!! tip "Try this"
#     In the widget, set the query of `cats` to `[0, 0]`. It now scores 0
#     against every key, so its row of weights is uniform: it reads every
#     word alike, whatever the keys say. The function makes the same change;
#     only the row of `cats` differs from the weights above.


def try_blank_query() -> None:
    queries = TOY_QUERIES.clone()
    queries[WORDS.index("cats")] = torch.tensor([0.0, 0.0])  # matches no key
    print(report.matrix_table(toy_weights(queries=queries), WORDS, WORDS))


#| try_blank_query()

# !!! tip "Try this"
#     Make `small` look like a noun: give it the key `[2, 0]` (in the
#     function below: the widget changes only queries), and read its column
#     in the weights below. The function makes exactly that change;
#     compare each row with the weights in [Attention on four
#     tokens](#attention-on-four-tokens) to see who now attends to `small`,
#     and whose row does not move.


def try_noun_like_small() -> None:
    keys = TOY_KEYS.clone()
    keys[WORDS.index("small")] = torch.tensor([2.0, 0.0])  # a noun's key
    print(report.matrix_table(toy_weights(keys), WORDS, WORDS))


#| try_noun_like_small()

# ## Scaled dot-product attention
#
# The same steps as a function, for a batch of heads `[B, H, S, Dk]`, with a
# mask and dropout, each step written out so that it can be read. Queries
# and keys need not come from the same sequence (a decoder's queries read
# an encoder's keys in [the transformer layer](layers.html)), so their
# lengths get their own letters: `Sq` query positions and `Sk` key (and
# value) positions.
#
# This is the *explicit path*: the
# [multi-head module](mha.html#MultiHeadAttention) uses it whenever the
# caller asks for the attention weights. Otherwise it calls PyTorch's fused
# `scaled_dot_product_attention`, which computes the same numbers; its
# flash and memory-efficient kernels (on the devices and with the masks
# that allow them) do so without storing the `[Sq, Sk]` matrix of weights,
# while its plain fallback stores it as we do.
#
# `mask` is boolean and `True` means *may attend*, as in
# `scaled_dot_product_attention`. It must broadcast to the scores'
# `[..., Sq, Sk]`. `dropout`, if given, is applied to the weights (e.g. an
# `nn.Dropout`).
#
# %symbols Q=query K=key V=value S=scores A=weights


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
    # $A = \mathrm{softmax}_{\text{keys}}(S)$ (until dropout, in training,
    # zeroes some of them and scales the rest up).
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
    weights_gap = f"{(weights - by_hand).abs().max():.1e}"
    output_gap = f"{(output - by_hand @ TOY_VALUES).abs().max():.1e}"
    print(tr("weights: largest difference {d}").format(d=weights_gap))
    print(tr("output: largest difference {d}").format(d=output_gap))


#| check_toy_attention()


# ## Why scale by $1/\sqrt{d_k}$
#
# First something to check by hand. Below, the softmax of five scores close
# together, then of the same scores times 8. The ratio of two weights is
# $e^{s_i} / e^{s_j} = e^{s_i - s_j}$, so multiplying every score by 8 raises
# every ratio to the 8th power: the weight that was largest takes most of
# the row.


def softmax_sharpens() -> None:
    scores = torch.tensor([0.1, -0.2, 0.3, -0.2, 0.5])
    print(report.vector_line("s", scores, digits=1))
    print(report.vector_line("softmax(s)", scores.softmax(dim=-1)))
    print(report.vector_line("softmax(8 s)", (8 * scores).softmax(dim=-1)))


#| softmax_sharpens()

# A wide head does that to its scores. Take a query $q$ and a key $k$ whose
# $d_k$ components are independent, with mean $0$ and variance $1$. Each
# product $q_i k_i$ then has mean $0$ and variance $1$, and their sum has
# variance $d_k$ (the argument of the paper's §3.2.1 and its footnote):
#
# $$
# \mathrm{Var}(q \cdot k)
#   = \sum_{i=1}^{d_k} \mathrm{Var}(q_i k_i) = d_k
# $$
#
# So raw dot products are $\sqrt{d_k}$ times as spread as scores of variance
# $1$: at $d_k = 64$, the factor 8 above. Dividing by $\sqrt{d_k}$ gives the
# scores variance $1$ at every width. Put another way, the softmax of raw
# scores is the softmax of the scaled ones at *temperature* $1/\sqrt{d_k}$
# (a softmax at temperature $T$ takes $s / T$): without the scale, how
# peaked the weights are would depend on the width of the head.
#
# Why does a peaked row matter to learning? Write $g_j$ for
# $\partial L / \partial p_j$, what the loss $L$ sends back to weight $j$.
# The softmax passes on to score $j$
#
# $$
# \frac{\partial L}{\partial s_j} = p_j \Big( g_j - \sum_k p_k g_k \Big)
# $$
#
# which carries the factor $p_j$: a key with almost no weight gets almost no
# gradient on its score, and neither does the key itself, whose gradient is
# proportional to $\partial L / \partial s_j$.


def softmax_backward(p: torch.Tensor, g: torch.Tensor) -> torch.Tensor:
    r"""$\partial L / \partial s$ `[..., Sk]` from the weights $p$ and $g$."""
    # p_j sum_k p_k (g_j - g_k): the formula above, as the p_k sum to 1, but
    # with no g_j - (a number almost g_j) to lose to rounding when p_j ~ 1.
    gaps = g.unsqueeze(-1) - g.unsqueeze(-2)  # g_j - g_k, [..., Sk, Sk]
    return p * (gaps * p.unsqueeze(-2)).sum(dim=-1)


# To count how many keys of a row receive gradient, take the sizes
# $a_j = |\partial L / \partial s_j|$ and their *participation ratio*
# $(\sum_j a_j)^2 / \sum_j a_j^2$: it is the number of keys when all get the
# same. It cannot fall to $1$ here: the $p_j$ sum to 1, so the score
# gradients sum to $0$, and what one key gains the others lose. The ratio is
# then at least $2$, and exactly $2$ when the gradient flows between two keys
# only. It does not change when every $a_j$ is multiplied by the same
# number, so it is the same whether we differentiate with respect to the
# raw or the scaled scores.


def keys_receiving_gradient(grad: torch.Tensor) -> torch.Tensor:
    """The participation ratio of `|grad|` over the last dimension."""
    size = grad.abs()
    return size.sum(dim=-1) ** 2 / size.pow(2).sum(dim=-1)


# The experiment below draws, for each $d_k$, `samples` queries, each with
# `keys` keys, every component independent with mean $0$ and variance $1$,
# and a random $g$ (as if the loss were a random linear function of the
# weights). It scores them both ways, raw and scaled, and averages over the
# draws: the variance of the scores, the largest weight (*max p*), the keys
# receiving gradient (*keys*), the size of the gradient at the scores,
# $\lVert \partial L / \partial s \rVert$, and the size of the gradient that
# reaches the query, $\lVert \partial L / \partial q \rVert$, which is what
# the query's projection learns from.


def scaling_experiment(
    d_ks: tuple[int, ...] = (2, 16, 64, 256, 1024),
    *,
    keys: int = 16,
    samples: int = 2000,
    seed: int = 0,
) -> list[report.ScalingRow]:
    r"""Raw against scaled scores, per $d_k$; deterministic for a seed."""
    generator = torch.Generator().manual_seed(seed)

    def draw(*shape: int) -> torch.Tensor:
        return torch.randn(*shape, generator=generator, dtype=torch.float64)

    rows = []
    for d_k in d_ks:
        q, k = draw(samples, d_k), draw(samples, keys, d_k)
        g = draw(samples, keys)  # a random dL/dp
        dots = (k @ q.unsqueeze(-1)).squeeze(-1)  # q·k_j, [samples, keys]
        measured = {}
        for name, c in (("raw", 1.0), ("scaled", 1 / math.sqrt(d_k))):
            scores = c * dots  # s_j = c q·k_j
            p = scores.softmax(dim=-1)
            grad_s = softmax_backward(p, g)  # [samples, keys]
            shared = keys_receiving_gradient(grad_s)  # [samples]
            # $\partial L / \partial q
            #   = c \sum_j (\partial L / \partial s_j) k_j$:
            # `[samples, 1, keys] @ [samples, keys, Dk]`
            # `-> [samples, 1, Dk]`.
            grad_q = c * (grad_s.unsqueeze(1) @ k).squeeze(1)
            measured |= {
                f"var_{name}": scores.var().item(),
                f"peak_{name}": p.amax(dim=-1).mean().item(),
                f"keys_{name}": shared.mean().item(),
                f"grad_s_{name}": grad_s.norm(dim=-1).mean().item(),
                f"grad_q_{name}": grad_q.norm(dim=-1).mean().item(),
            }
        rows.append(report.ScalingRow(d_k=d_k, **measured))
    return rows


# Measured when this page was built, with the defaults above. Read the row
# $d_k = 64$. Unscaled, the variance of the scores is about $d_k$ and the
# largest weight is far above the scaled one; scaled, the variance stays
# about $1$, and neither it nor the largest weight moves much with the width.

#| print(report.format_scaling_table(scaling_experiment()))

# The gradients, from the same draws. Unscaled, the gradient reaches a few of
# the 16 keys, fewer the wider the head, until at $d_k = 1024$ the *keys*
# column is close to its floor of $2$; scaled, more keys share it, and their
# number hardly moves with the width.

#| print(report.format_keys_table(scaling_experiment()))

# The paper, in §3.2.1, suspects that large dot products push the softmax
# "into regions where it has extremely small gradients". The column
# $\lVert \partial L / \partial s \rVert$ bears that out: unscaled, the
# gradient at the scores shrinks as the head widens, while scaled it keeps
# its size. The gradient that reaches the query is another matter. It is
# $c \sum_j (\partial L / \partial s_j)\, k_j$, and a key's length grows
# like $\sqrt{d_k}$; unscaled ($c = 1$) that growth makes up for the smaller
# score gradient, so the last two columns show it larger unscaled at every
# width (scaled, the factor $c = 1/\sqrt{d_k}$ cancels the growth).
#
# None of this says anything about training: it holds at initialisation,
# for components of variance $1$, and training changes the queries and keys.
# What it shows is what the scale keeps fixed: the softmax's temperature,
# and with it the size of the gradient at the scores and how many keys share
# it, stay the same whatever the width of the head; unscaled, a wide head
# starts out training the few keys that happen to win.

#| print(report.format_gradient_table(scaling_experiment()))

# !!! tip "Try this"
#     Remove `/ math.sqrt(d_k)` from the worked example and compare the row
#     of `cats`. Here $d_k = 2$, so the raw scores are only $\sqrt 2$ times
#     the scaled ones; the output below shows the weight `cats` puts on
#     each word, one column with the scale and one without.


def try_without_scaling() -> None:
    raw = (TOY_QUERIES @ TOY_KEYS.T).softmax(dim=-1)  # no / sqrt(d_k)
    cats = torch.stack([toy_weights()[0], raw[0]], dim=-1)  # [S, 2]
    print(report.matrix_table(cats, WORDS, [tr("scaled"), tr("raw")]))


#| try_without_scaling()

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
# queries, as when new tokens follow a prefix already processed, the queries
# are the *last* `Sq` positions, so the mask is aligned to the end of the
# keys: query $i$ sees key $j$ when $j \le i + (S_k - S_q)$. (With fewer keys
# than queries the first $S_q - S_k$ queries see no key at all.)


def causal_mask(
    seq_q: int, seq_k: int | None = None, *, device: torch.device | None = None
) -> torch.Tensor:
    """`[Sq, Sk]` boolean, `True` where query `i` may see key `j`."""
    seq_k = seq_q if seq_k is None else seq_k
    checks.check_lengths("causal_mask", seq_q=seq_q, seq_k=seq_k)
    i = torch.arange(seq_q, device=device).unsqueeze(1)  # [Sq, 1]
    j = torch.arange(seq_k, device=device).unsqueeze(0)  # [1, Sk]
    return j <= i + (seq_k - seq_q)


# !!! tip "Try this"
#     Give the worked example `mask=causal_mask(4)`, as if the sentence were
#     being written word by word. The weights below show which words lose
#     the partner they found above: a word can now attend only to itself
#     and the words before it.


def try_causal_toy() -> None:
    mask = causal_mask(4)  # [S, S] for the four words
    _, weights = attention(TOY_QUERIES, TOY_KEYS, TOY_VALUES, mask)
    print(report.matrix_table(weights, WORDS, WORDS))


#| try_causal_toy()

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
    checks.check_padding_input(x, pad_id, seq_len)
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
# gives them a zero vector, and so does PyTorch's fused function on the CPU
# with a boolean mask (a test compares the two). In the
# [multi-head module](mha.html#MultiHeadAttention) that zero then goes
# through the output projection, so what comes out is that projection's
# bias (on the CPU; other devices' kernels are not tested here).
#
# Below, six positions of which the last two are padding. The queries and
# keys are set by hand so that each query prefers the key just before it, and
# a row is a query, a column a key. Hatched cells are masked (`False`): their
# weight is exactly $0$. The causal mask leaves the lower triangle; padding
# hides the pad *keys* from every query; with both, a real token reads itself
# and the real tokens before it, and the two pad queries read the real tokens
# only, not themselves. Their outputs are later ignored (a loss skips
# padding).


def masks_example() -> tuple[dict, dict]:  # name -> [S, S] tensor
    seq, real = 6, 4
    # Key j points at angle 0.8 j; query i at the angle of key i - 1. `[S, 2]`.
    angle = 0.8 * torch.arange(seq)
    keys = 3 * torch.stack([angle.cos(), angle.sin()], dim=-1)
    before = angle - 0.8
    queries = 3 * torch.stack([before.cos(), before.sin()], dim=-1)
    causal = causal_mask(seq)  # [Sq, Sk]
    padding = padding_mask(torch.tensor([real]), seq_len=seq)[0, 0]  # [1, Sk]
    masks = {"causal": causal, "padding": padding, "both": causal & padding}
    weights = {}
    for name, mask in masks.items():
        weights[name] = attention(queries, keys, keys, mask)[1]  # [Sq, Sk]
    hidden = {name: ~mask.expand(seq, seq) for name, mask in masks.items()}
    return weights, hidden


def draw_masks() -> None:
    weights, hidden = masks_example()
    names = ["t0", "t1", "t2", "t3", "pad4", "pad5"]
    titles = {
        "causal": tr("causal"),
        "padding": tr("padding"),
        "both": tr("both"),
    }
    report.draw_heatmaps(
        {titles[name]: w for name, w in weights.items()},
        names,
        names,
        hidden={titles[name]: h for name, h in hidden.items()},
    )


#| draw_masks()  | alt: weights under the causal, padding and both masks, hatched

# ## Next
#
# One call of `attention()` gives each query one weighted average. The next
# chapter, [multi-head attention](mha.html), runs several side by side, each
# on its own learned projection of the same tokens, and builds the module
# around them. `python attention.py` prints the worked example.

if __name__ == "__main__":
    print_toy_weights()
