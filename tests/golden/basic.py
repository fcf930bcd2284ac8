r"""
---
title: A small attention example
summary: Scores, a softmax and a weighted sum, in a few lines.
---

# Attention in brief

The weights are $A = \mathrm{softmax}\left(\frac{Q K^\top}{\sqrt{d_k}}\right)$,
see [the paper](https://arxiv.org/abs/1706.03762) and `scaled_dot_product_attention`.
"""

import math

import torch

# ## Scores
#
# Each query is compared with each key:
#
# $$
# s_{ij} = \frac{q_i \cdot k_j}{\sqrt{d_k}}
# $$


def scores(q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
    """Scores `[Sq, Sk]` of queries `[Sq, Dk]` against keys `[Sk, Dk]`."""
    return q @ k.T / math.sqrt(q.shape[-1])


class Attention:
    r"""Attention as a tiny class: $\underset{\text{keys}}{\mathrm{softmax}}(s)$."""

    def __init__(self, d_k: int):
        self.d_k = d_k

    def weights(self, q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
        # The softmax runs over the keys, the last axis.
        return scores(q, k).softmax(dim=-1)

    def __call__(self, q, k, v):
        # A weighted average of the values.
        return self.weights(q, k) @ v
