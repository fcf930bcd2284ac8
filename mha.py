r"""
---
title: Multi-head attention
summary: Multi-head attention in PyTorch, from two heads built by hand to a
  minimal module and the full one, checked against PyTorch's own.
---

# Multi-head attention

[Chapter 1](attention.html) built attention for one set of queries, keys and
values. A transformer runs several attentions side by side, the *heads*, each
on its own learned projection of the same input, and mixes their results.
Vaswani et al. call this *multi-head attention* in
[Attention Is All You Need](https://arxiv.org/abs/1706.03762) (2017).

The sections below follow one another: the heads' projections are blocks of
one matrix; two heads built by hand give one query two rows of weights, each
with most of its weight on a different word, where one head has one row; a
minimal module computes multi-head attention; the full module that the
later chapters use adds what training and generating need; its key/value
cache serves generation; PyTorch's `torch.nn.MultiheadAttention` gives the
same results; and notes on efficiency close the page.

Shapes are written with the letters of [chapter 1](attention.html#shapes).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

import argument_checks as checks
import mha_report as report
from attention import (
    TOY_KEYS,
    TOY_QUERIES,
    TOY_VALUES,
    WORDS,
    attention,
    causal_mask,
    padding_mask,
)
from literate.words import tr  # a figure's words in the page's language

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
# one `[D, D]` matrix, and one product computes every head's projection at once:
#
# $$
# W^Q = \left[\, W^Q_1 \mid W^Q_2 \mid \dots \mid W^Q_H \,\right]
# $$
#
# so the $i$-th block of $D_k$ columns of $X W^Q$ holds head $i$'s queries.
# `nn.Linear(D, D)` is that product plus a bias (it stores the transpose,
# $W^{Q\top}$, so head $i$ is a block of *rows* of its `weight`). Reshaping
# its output splits the last dimension into `H` heads of `Dk` features, and
# the heads then move to the second dimension, so that each head is a
# separate batch of matrix products.


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
# block on its own, as the paper writes it, and compare with the module.
# Both compute the same products, but the one large product may add them up
# in another order than the `H` small ones, so the two agree up to rounding:
# the largest difference, printed below, is on the scale of the float32
# step printed beside it.


def heads_as_blocks(d_model: int = 8, heads: int = 2, seed: int = 0) -> None:
    torch.manual_seed(seed)
    prepare = PrepareForMultiHeadAttention(d_model, heads, d_model // heads)
    x = torch.randn(1, 3, d_model)  # [B, S, D]
    weight, bias = prepare.linear.weight, prepare.linear.bias
    blocks = weight.split(prepare.d_k)  # H blocks [Dk, D]
    biases = bias.split(prepare.d_k)  # H blocks [Dk]
    separate = torch.stack(
        [F.linear(x, w, b) for w, b in zip(blocks, biases, strict=True)],
        dim=1,
    )  # H times [B, S, Dk] -> [B, H, S, Dk]
    together = prepare(x)  # [B, H, S, Dk]
    difference = (separate - together).abs().max().item()
    report.print_blocks(weight, blocks[0], together, difference)


#| heads_as_blocks()

# ## Two heads doing two things
#
# Why several heads, rather than one? Take chapter 1's sentence again, "cats
# chase small mice", and give each word of $X$ two kinds of features, `[S, 7]`:
# its word class, one-hot (noun, action, adjective, chapter 1's values), and
# its position, one-hot. Two heads project it, each with `Dk = 2`:
#
# * head 0 reads the classes with chapter 1's queries and keys: a noun looks
#   for an action, the verb for the nouns, the adjective, more weakly, for a
#   noun;
# * head 1 reads the positions only: the key of position $j$ points one of
#   four ways, and the query of position $i$ is the key of position $i - 1$,
#   so each word looks for the word before it (`cats`, the first, for
#   itself).
#
# Each weight `[D, Dk]` has a row per feature of $X$: head 0's are zero on
# the position rows, head 1's on the class rows. Both heads take the word
# classes as their values, `[D, 3]`, so each head's output says what kind of
# word it read.

TOY_X = torch.cat([TOY_VALUES, torch.eye(4)], dim=1)  # [S, D], D = 3 + 4

NO_POSITION = torch.zeros(4, 2)  # the rows of the 4 position features
NO_CLASS = torch.zeros(3, 2)  # the rows of the 3 class features
CLASS_QUERIES = torch.tensor([[0.0, 2], [2, 0], [1, 0]])  # [3, Dk]
CLASS_KEYS = torch.tensor([[2.0, 0], [0, 2], [0, 0]])  # [3, Dk]
POSITION_KEYS = torch.tensor([[2.0, 0], [0, 2], [-2, 0], [0, -2]])

W_Q0 = torch.cat([CLASS_QUERIES, NO_POSITION])  # head 0, [D, Dk]
W_K0 = torch.cat([CLASS_KEYS, NO_POSITION])
W_Q1 = torch.cat([NO_CLASS, POSITION_KEYS[[0, 0, 1, 2]]])  # head 1
W_K1 = torch.cat([NO_CLASS, POSITION_KEYS])
W_V = torch.cat([torch.eye(3), torch.zeros(4, 3)])  # both heads, [D, 3]
TOY_HEADS = [(W_Q0, W_K0), (W_Q1, W_K1)]

# Head 0's queries $X W^Q_0$ and keys $X W^K_0$ are chapter 1's, exactly:


def head_0_is_chapter_1() -> None:
    same_q = torch.equal(TOY_X @ W_Q0, TOY_QUERIES)  # [S, Dk]
    same_k = torch.equal(TOY_X @ W_K0, TOY_KEYS)  # [S, Dk]
    print(tr("queries equal: {q}; keys equal: {k}").format(q=same_q, k=same_k))


#| head_0_is_chapter_1()

# Each head is chapter 1's `attention()` on its own projections. The
# heads' weights, side by side (a row is a query, a column a key):


def toy_heads() -> tuple[list[torch.Tensor], torch.Tensor]:
    weights, outputs = [], []
    v = TOY_X @ W_V  # [S, 3]
    for w_q, w_k in TOY_HEADS:
        out, w = attention(TOY_X @ w_q, TOY_X @ w_k, v)  # [S,3], [S,S]
        weights.append(w)
        outputs.append(out)
    return weights, torch.cat(outputs, dim=-1)  # Concat: [S, 2 x 3]


def draw_toy_heads() -> None:
    titles = [tr("head 0: partner"), tr("head 1: word before")]
    panels = dict(zip(titles, toy_heads()[0], strict=True))
    report.draw_two_heads(panels, WORDS)


#| draw_toy_heads()  | alt: head 0 pairs nouns and verb; head 1 reads the previous word

# Each head has its own pattern. In head 0, `cats` and `mice` look at
# `chase`, and `chase` at the two nouns: chapter 1's weights. In head 1,
# each word looks at the word before it. Concatenated, the two heads'
# outputs sit side by side, `[S, 2 × 3]`: head 0's three columns say what
# kind of word each word's partner is, head 1's what kind comes before it.
#
# $W^O$ then mixes the heads into one vector per word. A learned $W^O$ is
# `[D, D]` and can weigh and combine the heads in any way. Set by hand here,
# `[2 × 3, 6]`, it is the identity: head 0's columns become the output
# features "partner: ...", head 1's "before: ..." (the rows below). Both
# answers survive: in the table, the column of `mice` says that its partner
# is an action and that the word before it is an adjective. A $W^O$ adding
# the heads' columns class by class would blend them again.

W_O = torch.eye(6)  # [2 x 3, 6]: head 0 -> partner, head 1 -> before


def print_toy_output() -> None:
    names = report.class_columns([tr("partner"), tr("before")])
    out = toy_heads()[1] @ W_O  # [S, 6]
    print(report.matrix_table(out.T, names, WORDS, corner=tr("output")))


#| print_toy_output()

# !!! tip "Try this"
#     Ask one head to do both: give it both heads' features, queries
#     $[Q_0 \mid Q_1]$ and keys $[K_0 \mid K_1]$ of width 4, so that its
#     $QK^\top$ is the two heads' $QK^\top$ added. The function below
#     prints its weights, then `mice`'s rows in the two heads.


def try_one_head_for_both() -> None:
    q = torch.cat([TOY_X @ w_q for w_q, _ in TOY_HEADS], dim=-1)  # [S, 4]
    k = torch.cat([TOY_X @ w_k for _, w_k in TOY_HEADS], dim=-1)  # [S, 4]
    _, weights = attention(q, k, TOY_X @ W_V)  # [S, S]
    mice = [w[3] for w in toy_heads()[0]]  # mice's row in heads 0, 1
    rows = [*WORDS, tr("mice, head 0"), tr("mice, head 1")]
    table = torch.cat([weights, torch.stack(mice)])  # [S + 2, S]
    print(report.matrix_table(table, rows, WORDS, corner=tr("one head")))


#| try_one_head_for_both()

# `attention()` divides this head's scores by $\sqrt 4$ rather than each head's
# $\sqrt 2$, so its scaled scores are the two heads' scaled scores added and
# divided by $\sqrt 2$. Where the two heads want different words, the one head
# splits its weight between them: the rows of `cats` and `mice` put about half
# on each. A head gives each query one softmax row of weights summing to 1, so
# two words cannot each get most of one query's weight: what one gains, the
# other loses. Two heads give the query two rows, as the last two rows show for
# `mice`: head 0 on `chase`, head 1 on `small`; and $W^O$ keeps both.

# ## A minimal module
#
# A module does what the toy did by hand, for a batch and with learned
# weights, for `H` heads at once:
#
# $$
# \begin{aligned}
# &\mathrm{head}_i = \mathrm{Attention}(X_q W^Q_i, \\
# &\qquad X_{kv} W^K_i,\ X_{kv} W^V_i) \\
# &\mathrm{MultiHead}(X_q, X_{kv}) \\
# &\quad = \mathrm{Concat}(\mathrm{head}_1, \dots, \mathrm{head}_H)\, W^O
# \end{aligned}
# $$
#
# $X_q$ `[B, Sq, D]` holds the positions that ask, and $X_{kv}$ `[B, Sk, D]`
# the positions they read; in self-attention both are the same $X$ (`Sq` and
# `Sk` count query and key positions, as in chapter 1's
# [masks](attention.html#masks)). `Concat` sets the heads' outputs side by
# side, `H` blocks of `Dk` features making `D` again, and $W^O$ `[D, D]`
# mixes them. With $d_k = D / H$, the `H` heads together cost about as much
# as one head of width `D` (section 3.2.2 of the paper).
#
# After `transpose` the tensor is in general not contiguous: a position's
# heads no longer follow one another in memory, so `.view` cannot merge
# them and raises an error. (With one position, `Sq = 1`, the layout still
# fits and `.view` works.) `reshape` copies into order only when it must.
#
# %symbols W^Q=query W^K=key W^V=value W^O=output X_q=x_q X_{kv}=x_kv d_k=d_k


class MinimalMHA(nn.Module):
    """Multi-head attention and nothing more: one path, no checks."""

    def __init__(self, d_model: int, heads: int):
        super().__init__()
        self.heads = heads
        self.query = nn.Linear(d_model, d_model)  # W^Q of every head
        self.key = nn.Linear(d_model, d_model)  # W^K
        self.value = nn.Linear(d_model, d_model)  # W^V
        self.output = nn.Linear(d_model, d_model)  # W^O

    def forward(self, x_q, x_kv, mask=None):
        batch, seq_q, d_model = x_q.shape
        d_k = d_model // self.heads

        def split(x):  # [B, S, D] -> [B, S, H, Dk] -> [B, H, S, Dk]
            return x.view(batch, -1, self.heads, d_k).transpose(1, 2)

        q = split(self.query(x_q))  # X_q W^Q
        k = split(self.key(x_kv))  # X_kv W^K
        v = split(self.value(x_kv))  # X_kv W^V
        x, _ = attention(q, k, v, mask)  # every head: [B, H, Sq, Dk]
        # Concat, `[B, H, Sq, Dk] -> [B, Sq, H, Dk] -> [B, Sq, D]`.
        x = x.transpose(1, 2).reshape(batch, seq_q, d_model)
        return self.output(x)  # ... W^O


# `MinimalMHA` computes what the full `MultiHeadAttention` below computes.
# Give both the same weights (the full module's names carry an extra
# `.linear`, as the next section explains) and compare them on
# self-attention under the causal mask and on cross-attention.


def check_minimal(d_model: int = 64, heads: int = 4, seed: int = 0) -> None:
    torch.manual_seed(seed)
    full = MultiHeadAttention(d_model, heads).eval()
    mini = MinimalMHA(d_model, heads)
    state = full.state_dict()  # query.linear.weight, ..., output.bias
    state = {n.replace(".linear", ""): w for n, w in state.items()}
    mini.load_state_dict(state)  # query.weight, ..., output.bias
    x = torch.randn(2, 10, d_model)  # [B, Sq, D]
    memory = torch.randn(2, 7, d_model)  # [B, Sk, D]
    with torch.no_grad():
        self_mini = mini(x, x, causal_mask(10))
        self_full = full(query=x, key=x, value=x, is_causal=True)
        cross_mini = mini(x, memory)
        cross_full = full(query=x, key=memory, value=memory)
    pairs = {
        tr("self-attention, causal"): (self_mini, self_full),
        tr("cross-attention"): (cross_mini, cross_full),
    }
    report.print_differences(pairs)


#| check_minimal()

# !!! tip "Try this"
#     Build `MinimalMHA` with `heads=1`. The split is then a reshape to one
#     head, `[B, 1, S, D]`, and the module should be chapter 1's
#     `attention()` on the three projections, followed by $W^O$. The
#     function below computes both and prints their largest difference.


def try_one_head(d_model: int = 8, seed: int = 0) -> None:
    torch.manual_seed(seed)
    mini = MinimalMHA(d_model, heads=1)
    x = torch.randn(2, 5, d_model)  # [B, S, D]
    with torch.no_grad():
        q, k, v = mini.query(x), mini.key(x), mini.value(x)  # [B, S, D]
        by_hand = mini.output(attention(q, k, v)[0])  # [B, S, D]
        difference = (mini(x, x) - by_hand).abs().max()
    print(tr("heads=1 against attention(): {d}").format(d=f"{difference:.1e}"))


#| try_one_head()

# !!! tip "Try this"
#     Heads have no order. Swap heads 0 and 1 in $W^Q$, $W^K$ and $W^V$
#     (their blocks of rows in each `weight`), and the matching blocks of
#     columns of $W^O$, and the output should not change; swap them in
#     $W^Q$, $W^K$, $W^V$ only, and $W^O$ mixes the wrong heads. The
#     function below prints the largest change of the output both ways.


def try_swapping_heads(d_model: int = 8, seed: int = 0) -> None:
    torch.manual_seed(seed)
    mini = MinimalMHA(d_model, heads=2)
    x = torch.randn(2, 5, d_model)  # [B, S, D]
    half = d_model // 2
    order = torch.cat([torch.arange(half, d_model), torch.arange(half)])
    for also_output in (True, False):
        swapped = MinimalMHA(d_model, heads=2)
        swapped.load_state_dict(mini.state_dict())
        with torch.no_grad():
            for p in (swapped.query, swapped.key, swapped.value):
                p.weight.copy_(p.weight[order])  # rows: head 1, head 0
                p.bias.copy_(p.bias[order])
            if also_output:
                w_o = swapped.output.weight  # a column per input feature
                w_o.copy_(w_o[:, order])
            change = (swapped(x, x) - mini(x, x)).abs().max()
        where = tr("W^Q, W^K, W^V and W^O") if also_output else tr("W^Q, W^K, W^V only")
        line = tr("swapped in {where}: output changes by {c}")
        print(line.format(where=where, c=f"{change:.1e}"))


#| try_swapping_heads()

# ## What the full module adds
#
# `MultiHeadAttention` is the module the later chapters use. It computes
# the function of `MinimalMHA`, as the check above shows, and adds what a
# model that trains and generates needs:
#
# * **`key` and `value` as two arguments**, keyword-only, so every call
#   names its tensors;
# * **argument checks**: a wrong shape fails at the top of `forward`, in one
#   line that names the argument, rather than deep inside a product;
# * **a key/value cache** (`kv_cache`), for generating one token at a time
#   (the next section);
# * **a causal flag** (`is_causal`), merged with any mask;
# * **two paths**: PyTorch's fused `scaled_dot_product_attention` by
#   default, and chapter 1's `attention()` when the caller asks for the
#   weights (`need_weights=True`);
# * **dropout** on the weights, in training;
# * **a stacked projection** for self-attention while gradients are on.
#
# The projections are `PrepareForMultiHeadAttention` modules, so the submodules
# are named `query.linear`, `key.linear`, `value.linear` and `output`, the
# layout of labml's annotated `MultiHeadAttention`: with the default
# `bias=True`, a state dict saved from it loads here unchanged. (labml's
# `bias=False` keeps the value and output biases, which ours drops.)


class MultiHeadAttention(nn.Module):
    """Multi-head attention over batch-first tensors `[B, S, D]`."""

    def __init__(
        self, d_model: int, heads: int, dropout: float = 0.0, bias: bool = True
    ):
        super().__init__()
        checks.check_heads("MultiHeadAttention", d_model, heads)
        self.d_model = d_model
        self.heads = heads
        self.d_k = d_model // heads
        d_k = self.d_k
        self.query = PrepareForMultiHeadAttention(d_model, heads, d_k, bias)
        self.key = PrepareForMultiHeadAttention(d_model, heads, d_k, bias)
        self.value = PrepareForMultiHeadAttention(d_model, heads, d_k, bias)
        self.output = nn.Linear(d_model, d_model, bias=bias)
        self.dropout = nn.Dropout(dropout)

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
        # Bad input fails here, naming the argument, the expected shape and
        # the one received.
        where = "MultiHeadAttention"
        for name, x in (("query", query), ("key", key), ("value", value)):
            checks.check_sequence(where, name, x, self.d_model)
        checks.check_same_length(where, key=key, value=value)
        checks.check_same_batch(where, query=query, key=key, value=value)
        batch, seq_q, _ = query.shape
        # 1. Project and split into heads: `[B, S, D] -> [B, H, S, Dk]`.
        # With gradients on, self-attention stacks the three weights into
        # one product (see the efficiency notes).
        if query is key is value and torch.is_grad_enabled():
            q, k, v = self._project_stacked(query)
        else:
            q, k, v = self.query(query), self.key(key), self.value(value)
        # 2. With a cache, store the new keys and values and attend over all
        # of them: `[B, H, Sn, Dk] -> [B, H, Sk, Dk]`.
        if kv_cache is not None:
            k, v = kv_cache.append(k, v)
        # The mask is checked against the full `[B, H, Sq, Sk]`, cached keys
        # included, then merged with the causal flag. The fused kernel wants
        # at least two dimensions: a `[Sk]` mask becomes `[1, Sk]`.
        seq_k = k.shape[2]
        if mask is not None:
            checks.check_mask(where, mask, (batch, self.heads, seq_q, seq_k))
            mask = mask.unsqueeze(0) if mask.dim() == 1 else mask
        mask, flag = self._merge_masks(mask, is_causal, seq_q, seq_k, q.device)
        # 3. The explicit path when the weights are asked for; it needs the
        # causal flag as a mask.
        if need_weights:
            if flag:
                mask = causal_mask(seq_q, seq_k, device=q.device)
            x, weights = attention(q, k, v, mask, self.dropout)
        # Otherwise the fused path, `scaled_dot_product_attention`. On CPU,
        # with boolean masks, it too gives a fully masked row zeros in the
        # PyTorch this site pins (the check against PyTorch below shows it).
        else:
            p = self.dropout.p if self.training else 0.0
            x = F.scaled_dot_product_attention(
                q, k, v, attn_mask=mask, dropout_p=p, is_causal=flag
            )
        # 4. Concatenate the heads, `[B, H, Sq, Dk] -> [B, Sq, H, Dk] ->
        # [B, Sq, D]`, and mix them with $W^O$, as in `MinimalMHA`.
        x = x.transpose(1, 2).reshape(batch, seq_q, self.d_model)
        x = self.output(x)
        return (x, weights) if need_weights else x

    # The mask and the causal flag become one boolean mask, or stay a flag
    # when `scaled_dot_product_attention` can take the flag as it is (the
    # efficiency notes say when). A single query, as in each decoding step
    # with a cache, may see every key, so nothing is masked.
    def _merge_masks(self, mask, is_causal, seq_q, seq_k, device):
        if not is_causal or seq_q == 1:
            return mask, False
        if mask is None and seq_q == seq_k:
            return None, True
        causal = causal_mask(seq_q, seq_k, device=device)  # [Sq, Sk]
        return (causal if mask is None else causal & mask), False

    # The stacked projection: the three weights `[D, D]` stacked into one
    # `[3 D, D]`, one product, and three views of its output.
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

    def new_cache(
        self, batch_size: int, max_len: int, *, device=None, dtype=None
    ) -> KVCache:
        """An empty cache for `batch_size` sequences of up to `max_len`."""
        weight = self.key.linear.weight
        shape = (batch_size, self.heads, max_len, self.d_k)  # [B, H, M, Dk]
        options = dict(device=device or weight.device, dtype=dtype or weight.dtype)
        return KVCache(torch.empty(shape, **options), torch.empty(shape, **options))


# ## The key/value cache
#
# A model that writes text one token at a time calls attention once per new
# token. The keys and values of the old tokens are projections of inputs
# that do not change (in a stack of layers, because of the causal mask:
# chapter 5 says why), so a cache keeps them and each call passes only the
# new positions. `KVCache` holds keys and values `[B, H, M, Dk]`,
# allocated once by `new_cache`, where `M` is its capacity, `max_len`, and
# `length` counts the positions filled. A call with `kv_cache` stores its
# `Sn` new keys and values and attends over all `Sk = length + Sn` of them.
# [Chapter 5](generate.html) uses the cache to generate text, checks that
# it gives the same result as recomputing the prefix, and times it.


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

    # New positions `[B, H, Sn, Dk]` go to `[length, length + Sn)`, in place;
    # the return values are views of the filled part, `[B, H, Sk, Dk]`, not
    # copies.
    def append(
        self, key: torch.Tensor, value: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        checks.check_cache_room(self.batch_size, self.max_len, self.length, key)
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
    ref = nn.MultiheadAttention(mha.d_model, mha.heads, bias=bias, batch_first=True)
    ref = ref.to(mha.output.weight)  # its device and dtype
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
    left_padded = causal & padding_mask(ids, pad_id=0)
    cases = [
        (tr("self, causal mask"), x, x, causal, {}),
        (tr("self, is_causal=True"), x, x, None, {"is_causal": True}),
        (tr("cross, padding"), x, memory, padding_mask(memory_lengths), {}),
        (tr("left padding, no key"), x, x, left_padded, {}),
    ]
    rows = []
    with torch.no_grad():
        for name, q, kv, mask, flag in cases:
            fused = ours(query=q, key=kv, value=kv, mask=mask, **flag)
            explicit, weights = ours(
                query=q, key=kv, value=kv, mask=mask, need_weights=True, **flag
            )
            # PyTorch wants a `[B * H, Sq, Sk]` mask; ours broadcasts to
            # `[B, H, Sq, Sk]`: expand it, merge the first two dimensions.
            seq_k = kv.shape[1]
            full = causal if mask is None else mask
            full = full.expand(batch, ours.heads, seq, seq_k)
            ref_mask = ~full.reshape(batch * ours.heads, seq, seq_k)
            expected, expected_weights = ref(
                q, kv, kv, attn_mask=ref_mask, average_attn_weights=False
            )
            # Queries with no key: count PyTorch's NaN rows, then compare them
            # with our bias and their weights with zeros.
            empty = ~full.any(dim=-1)  # [B, H, Sq]
            nan_rows = expected[empty[:, 0]].isnan().any(dim=-1).sum().item()
            expected[empty[:, 0]] = ours.output.bias
            expected_weights[empty] = 0.0
            ours_all, ref_all = (fused, explicit, weights), (expected, expected_weights)
            rows.append(report.check_row(name, ours_all, ref_all, nan_rows))
    return rows


# The largest absolute differences. For scale, the column *largest output*
# gives the largest value PyTorch's output holds, and the last column counts
# the queries to which PyTorch gave NaN:

#| print(report.format_check_table(check_against_pytorch()))

# What counts as small? A float32 holds 24 significant bits, so near 1
# neighbouring numbers are this far apart (`torch.finfo(torch.float32).eps`):

#| print(f"{torch.finfo(torch.float32).eps:.2e}")

# Every difference in the table is within a few of these steps: rounding,
# from adding the same numbers in another order, and no more. (The tests in
# `tests/test_mha.py` go further: more masks, float64, gradients, the cache.)

# ## Efficiency notes
#
# **The stacked projection.** The switch is grad mode, `torch.is_grad_enabled()`,
# not `.train()`. With gradients on, self-attention (one tensor object passed
# as `query`, `key` and `value`) is projected by one product with the three
# weights stacked `[3 D, D]`, so its backward pass, too, takes one product for
# the gradient of `x` and one for the weights, not three of each;
# `tests/test_mha.py` checks that output and gradients are those of three
# products. With gradients off the three products stay: for one new token,
# `torch.cat` would copy `3 D × D` numbers, as many as the product reads. This
# page does not time the two; `bench/mha_speed.py` does ("ours, fast" against
# "ours, 3 products").
#
# **The causal flag.** `scaled_dot_product_attention(is_causal=True)`
# aligns its causal mask to the *start* of the keys when there are more
# keys than queries (its documentation builds the mask with
# `torch.ones(Sq, Sk).tril(diagonal=0)`), which would hide a cached prefix
# from the new queries. So the module passes the flag on only when queries and
# keys have the same length and no other mask is given; otherwise it
# builds the mask, aligned to the end of the keys (chapter 1's
# `causal_mask`), and combines it with the given one by a logical and.

# ## Next
#
# [The transformer layer](layers.html) puts `MultiHeadAttention` into a
# layer with a feed-forward network, residual connections and LayerNorm,
# and uses cross-attention to let one sequence read another.

# `python mha.py` runs the demonstrations.

if __name__ == "__main__":
    check_minimal()
    print("\nLargest difference from torch.nn.MultiheadAttention (float32):\n")
    print(report.format_check_table(check_against_pytorch()))
