"""attention.py: the worked example, the function, why scale, and masks."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

from attention import (
    TOY_KEYS,
    TOY_QUERIES,
    TOY_VALUES,
    WORDS,
    attention,
    causal_mask,
    keys_receiving_gradient,
    masks_example,
    padding_mask,
    scaling_experiment,
    softmax_backward,
    toy_weights,
)

ROOT = Path(__file__).resolve().parent.parent


def test_attention_function_matches_scaled_dot_product_attention():
    q, k, v = torch.randn(2, 3, 5, 8), torch.randn(2, 3, 7, 8), torch.randn(2, 3, 7, 8)
    mask = torch.rand(2, 1, 5, 7) < 0.5
    mask[..., 0] = True
    out, weights = attention(q, k, v, mask)
    expected = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    torch.testing.assert_close(out, expected, atol=1e-6, rtol=0)
    torch.testing.assert_close(weights.sum(-1), torch.ones(2, 3, 5))
    assert not weights.masked_select(~mask).any()


def test_fully_masked_rows_read_zeros_here_and_in_the_fused_function():
    # The page: attention() gives a query with no key a zero vector, "and so
    # does PyTorch's fused function on the CPU with a boolean mask".
    q, k = torch.randn(1, 2, 4, 8, requires_grad=True), torch.randn(1, 2, 6, 8)
    v = torch.randn(1, 2, 6, 8)
    mask = torch.ones(1, 1, 4, 6, dtype=torch.bool)
    mask[..., 1, :] = False  # query 1 may see no key
    out, weights = attention(q, k, v, mask)
    fused = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    assert not out[..., 1, :].any() and not weights[..., 1, :].any()
    assert not fused[..., 1, :].any()
    torch.testing.assert_close(out, fused, atol=1e-6, rtol=0)
    out.sum().backward()
    assert torch.isfinite(q.grad).all() and not q.grad[..., 1, :].any()


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
    with pytest.raises(ValueError, match="causal_mask: expected lengths >= 0"):
        causal_mask(-1)


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


def test_the_try_this_boxes_change_what_their_prose_says():
    cats, chase, small = (WORDS.index(w) for w in ("cats", "chase", "small"))
    scaled = toy_weights()
    # Without the scale, cats puts more on chase (0.85 -> 0.95 on the page).
    raw = torch.softmax(TOY_QUERIES @ TOY_KEYS.T, dim=-1)
    assert raw[cats, chase] > scaled[cats, chase] + 0.05
    # A noun-like key for small: chase gives it what it gives cats; cats'
    # row, which looks for an action, does not move.
    keys = TOY_KEYS.clone()
    keys[small] = torch.tensor([2.0, 0.0])
    noun_like = toy_weights(keys)
    torch.testing.assert_close(noun_like[chase, small], noun_like[chase, cats])
    assert noun_like[chase, small] > scaled[chase, small] + 0.2
    torch.testing.assert_close(noun_like[cats], scaled[cats])
    # Under the causal mask cats sees only itself; mice, the last, is as before.
    _, causal = attention(TOY_QUERIES, TOY_KEYS, TOY_VALUES, causal_mask(4))
    torch.testing.assert_close(causal[cats], torch.tensor([1.0, 0, 0, 0]))
    torch.testing.assert_close(causal[3], scaled[3])
    assert (causal.triu(1) == 0).all()


def test_the_masks_figure_shows_what_its_prose_says():
    weights, hidden = masks_example()
    both = weights["both"]
    assert not both.masked_select(hidden["both"]).any()
    # Each real query t1..t3 prefers the key just before it.
    assert [int(both[i].argmax()) for i in (1, 2, 3)] == [0, 1, 2]
    # The pad queries read the real tokens only, not themselves.
    assert not both[4:, 4:].any() and torch.allclose(both[4:].sum(-1), torch.ones(2))


def test_softmax_backward_is_what_autograd_computes():
    s = torch.randn(5, 16, dtype=torch.float64, requires_grad=True)
    g = torch.randn(5, 16, dtype=torch.float64)
    p = torch.softmax(s, dim=-1)
    (p * g).sum().backward()
    torch.testing.assert_close(softmax_backward(p.detach(), g), s.grad)


def test_softmax_gradients_sum_to_zero_so_at_least_two_keys_share_them():
    torch.manual_seed(0)
    # Scores far apart: the largest weight rounds to 1 even in float64.
    s = 40 * torch.randn(500, 16, dtype=torch.float64)
    g = torch.randn(500, 16, dtype=torch.float64)
    p = torch.softmax(s, dim=-1)
    assert (p.amax(dim=-1) == 1).any()
    grad = softmax_backward(p, g)
    scale = grad.abs().amax(dim=-1)
    assert (grad.sum(dim=-1).abs() <= 1e-12 * scale).all()
    assert (keys_receiving_gradient(grad) >= 2 - 1e-9).all()
    # Autograd's p (g - sum p g) loses the winner's gradient to rounding.
    s.requires_grad_()
    (torch.softmax(s, dim=-1) * g).sum().backward()
    assert (keys_receiving_gradient(s.grad) < 2 - 1e-3).any()
    # Exactly 2 when the gradient flows between two keys only.
    two = softmax_backward(torch.tensor([0.5, 0.5, 0.0]), torch.randn(3))
    assert keys_receiving_gradient(two) == pytest.approx(2)


def test_keys_receiving_gradient_counts_keys():
    assert keys_receiving_gradient(torch.ones(16)) == pytest.approx(16)
    one_hot = torch.zeros(16)
    one_hot[3] = -2.0
    assert keys_receiving_gradient(one_hot) == pytest.approx(1)
    x = torch.randn(8, 16, dtype=torch.float64)
    # The same for a gradient and that gradient times any number.
    torch.testing.assert_close(
        keys_receiving_gradient(x), keys_receiving_gradient(-0.1 * x)
    )


def autograd_reference(d_k: int, keys: int, samples: int, seed: int) -> dict:
    """The experiment's numbers with `torch.softmax` and `backward`."""
    generator = torch.Generator().manual_seed(seed)
    q, k, g = (
        torch.randn(*shape, generator=generator, dtype=torch.float64)
        for shape in ((samples, d_k), (samples, keys, d_k), (samples, keys))
    )
    result = {}
    for name, c in (("raw", 1.0), ("scaled", 1 / math.sqrt(d_k))):
        query = q.clone().requires_grad_()
        scores = c * torch.einsum("nkd,nd->nk", k, query)
        scores.retain_grad()
        p = torch.softmax(scores, dim=-1)
        (p * g).sum().backward()  # each draw's loss g·p; draws independent
        size = scores.grad.abs()
        result[f"keys_{name}"] = (size.sum(-1) ** 2 / (size**2).sum(-1)).mean()
        result[f"grad_s_{name}"] = scores.grad.norm(dim=-1).mean()
        result[f"grad_q_{name}"] = query.grad.norm(dim=-1).mean()
        result[f"peak_{name}"] = p.max(dim=-1).values.mean()
        result[f"var_{name}"] = scores.var()
    return {key: value.item() for key, value in result.items()}


@pytest.mark.parametrize("d_k", [16, 64, 1024])
def test_scaling_experiment_agrees_with_autograd(d_k):
    (row,) = scaling_experiment((d_k,), samples=400, seed=5)
    reference = autograd_reference(d_k, keys=16, samples=400, seed=5)
    for field, value in reference.items():
        if d_k == 1024 and field == "keys_raw":
            # Some raw rows have a weight that rounds to 1: autograd's
            # p (g - sum p g) loses that key's gradient, softmax_backward
            # keeps it (test_softmax_gradients_sum_to_zero_...).
            assert getattr(row, field) > value
            continue
        assert getattr(row, field) == pytest.approx(value, rel=1e-9), field


def test_scaling_experiment_directions():
    rows = scaling_experiment((16, 64, 1024), samples=1000, seed=3)
    assert rows == scaling_experiment((16, 64, 1024), samples=1000, seed=3)
    for row in rows:
        # Var(q·k) = d_k in theory; the scaled scores have variance 1.
        assert row.var_raw == pytest.approx(row.d_k, rel=0.1)
        assert row.var_scaled == pytest.approx(1.0, rel=0.1)
        # Scaled, several times as many keys receive gradient ...
        assert row.keys_scaled > 2 * row.keys_raw
        # ... but the gradient reaching the query is larger unscaled.
        assert row.grad_q_raw > 3 * row.grad_q_scaled
        # The gradient at the scores is the other way round (§3.2.1).
        assert row.grad_s_raw < row.grad_s_scaled
        assert row.peak_raw > row.peak_scaled
    # Unscaled, wider heads saturate the softmax and fewer keys get gradient;
    # scaled, neither moves with the width.
    assert rows[0].peak_raw < rows[1].peak_raw < rows[2].peak_raw
    assert rows[0].keys_raw > rows[1].keys_raw > rows[2].keys_raw > 2
    assert rows[0].grad_s_raw > rows[1].grad_s_raw > rows[2].grad_s_raw
    scaled_keys = [row.keys_scaled for row in rows]
    assert max(scaled_keys) - min(scaled_keys) < 0.5


def test_softmax_of_eight_times_the_scores_is_peaked():
    s = torch.tensor([0.1, -0.2, 0.3, -0.2, 0.5])
    p, p8 = s.softmax(-1), (8 * s).softmax(-1)
    assert p.max() < 0.3 and p8.max() > 0.5
    # Every ratio of two weights raised to the 8th power.
    torch.testing.assert_close(p8[4] / p8[2], (p[4] / p[2]) ** 8)


def test_running_the_chapter_prints_the_worked_example():
    result = subprocess.run(
        [sys.executable, "attention.py"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    assert "chase" in result.stdout and "row sum" in result.stdout
