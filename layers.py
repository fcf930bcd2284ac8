r"""
---
title: The transformer layer
summary: Residual connections, LayerNorm, the feed-forward network and
  position encodings around multi-head attention, encoder and decoder layers,
  and a tiny model that learns to reverse digits in seconds.
---

# The transformer layer

CHAPTER-3-INTRO
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

import mha_report as report
from literate.words import tr  # a figure's words in the page's language
from mha import MultiHeadAttention

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

# `python layers.py` trains the reverser and scores it.

if __name__ == "__main__":
    score_reverser(train_reverser())
