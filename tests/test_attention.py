"""attention.py: the worked example, the function, masks and scaling."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from attention import (
    TOY_KEYS,
    TOY_QUERIES,
    TOY_VALUES,
    attention,
    causal_mask,
    padding_mask,
    scaling_experiment,
    softmax_jacobian_norm,
    toy_weights,
)

D_MODEL, HEADS = 32, 4


def test_attention_function_matches_scaled_dot_product_attention():
    q, k, v = torch.randn(2, 3, 5, 8), torch.randn(2, 3, 7, 8), torch.randn(2, 3, 7, 8)
    mask = torch.rand(2, 1, 5, 7) < 0.5
    mask[..., 0] = True
    out, weights = attention(q, k, v, mask)
    expected = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    torch.testing.assert_close(out, expected, atol=1e-6, rtol=0)
    torch.testing.assert_close(weights.sum(-1), torch.ones(2, 3, 5))
    assert not weights.masked_select(~mask).any()


def test_masks_match_their_definitions():
    for seq_q, seq_k in ((5, 5), (3, 7), (1, 4), (0, 2), (6, 4)):
        expected = torch.ones(seq_q, seq_k, dtype=torch.bool).tril(seq_k - seq_q)
        assert torch.equal(causal_mask(seq_q, seq_k), expected)
    lengths = torch.tensor([3, 0, 5])
    ids = torch.tensor([[4, 4, 4, 9, 9], [9] * 5, [1, 2, 3, 4, 5]])
    from_ids = padding_mask(ids, pad_id=9)
    assert from_ids.shape == (3, 1, 1, 5)
    assert torch.equal(padding_mask(lengths), from_ids)
    assert padding_mask(lengths, seq_len=8).shape == (3, 1, 1, 8)


def test_scaling_experiment_shows_variance_d_k():
    rows = scaling_experiment((4, 64, 1024), samples=500, seed=3)
    assert rows == scaling_experiment((4, 64, 1024), samples=500, seed=3)
    for row in rows:
        # Var(q·k) = d_k in theory; the scaled scores have variance 1.
        assert row.var_raw == pytest.approx(row.d_k, rel=0.1)
        assert row.var_scaled == pytest.approx(1.0, rel=0.1)
    # Unscaled, wider heads saturate the softmax and shrink its gradient.
    assert rows[0].peak_raw < rows[1].peak_raw < rows[2].peak_raw
    assert rows[0].grad_raw > rows[1].grad_raw > rows[2].grad_raw
    assert rows[2].grad_scaled > 5 * rows[2].grad_raw


def test_worked_example_is_the_softmax_of_the_scaled_product():
    # By hand: scores Q K^T / sqrt(2), a softmax per row, then A V.
    expected = torch.softmax(TOY_QUERIES @ TOY_KEYS.T / 2**0.5, dim=-1)
    output, weights = attention(TOY_QUERIES, TOY_KEYS, TOY_VALUES)
    torch.testing.assert_close(weights, expected)
    torch.testing.assert_close(output, expected @ TOY_VALUES)
    torch.testing.assert_close(toy_weights(), expected)
    torch.testing.assert_close(weights.sum(-1), torch.ones(4))
    # What the prose reads from the table: cats and mice look at chase most;
    # small splits its weight equally between the two nouns.
    assert weights[0].argmax() == weights[3].argmax() == 1
    assert weights[2, 0] == weights[2, 3] == weights[2].max()


def test_softmax_jacobian_norm_vanishes_as_p_nears_one_hot():
    peaks = torch.tensor([0.5, 0.9, 0.99, 1.0])
    rows = torch.stack([torch.full((16,), (1 - p) / 15) for p in peaks])
    rows[:, 0] = peaks
    norms = softmax_jacobian_norm(rows.double())
    assert (norms[:-1] > norms[1:]).all()
    assert norms[-1] == 0
    # Not largest for a flat p: two equal keys give a larger norm.
    flat, two = torch.full((16,), 1 / 16), torch.zeros(16)
    two[:2] = 0.5
    assert softmax_jacobian_norm(two) > softmax_jacobian_norm(flat)
