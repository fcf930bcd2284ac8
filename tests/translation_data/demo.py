r"""
---
title: Demo of translation keys
summary: A tiny literate source for the translation tests.
---

# Demo

Attention weights come from the softmax of $Q K^\top / \sqrt{d_k}$; see
[the paper](https://arxiv.org/abs/1706.03762) and `torch.softmax`.
"""

import math

# Scale the scores by $1/\sqrt{d_k}$ so that the softmax does not
# saturate<br>when the head is wide. A price such as $5 is not math.
#
# $$
# s = \frac{q \cdot k}{\sqrt{d_k}}
# $$


def scale(d_k: int) -> float:
    r"""The factor $1/\sqrt{d_k}$ for a head of width `d_k`."""
    return 1 / math.sqrt(d_k)


# - a list item that
#   wraps onto a second line
# - another item, **strong** and *emphasised*, see <https://pytorch.org>
#
# > A quote that wraps
# > onto two lines.
CONSTANT = 2
