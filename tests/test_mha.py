"""mha.py against PyTorch's and labml-nn's attention, and its own promises."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

from attention import (
    causal_mask,
    padding_mask,
)
from mha import (
    TOY_HEADS,
    TOY_X,
    W_O,
    W_V,
    KVCache,
    MinimalMHA,
    MultiHeadAttention,
    PrepareForMultiHeadAttention,
    check_against_pytorch,
    to_torch_mha,
    toy_heads,
)

ROOT = Path(__file__).resolve().parent.parent
D_MODEL, HEADS = 32, 4
TOLERANCE = {torch.float32: 1e-5, torch.float64: 1e-10}


def make_mha(
    dtype=torch.float32, bias=True, seed=0, d_model=D_MODEL, heads=HEADS
) -> MultiHeadAttention:
    torch.manual_seed(seed)
    mha = MultiHeadAttention(d_model, heads, bias=bias).to(dtype).eval()
    if bias:
        # nn.Linear starts some biases at zero-ish; make every one matter.
        with torch.no_grad():
            for name, p in mha.named_parameters():
                if name.endswith("bias"):
                    p.normal_()
    return mha


def run(mha, query, key=None, explicit=False, **kwargs):
    """Our output (and weights when `explicit`), self-attention if no `key`."""
    key = query if key is None else key
    out = mha(query=query, key=key, value=key, need_weights=explicit, **kwargs)
    return out if explicit else (out, None)


# Masks in our convention (True = may attend) for (batch, seq_q, seq_k), with
# the same mask in torch.nn.MultiheadAttention's convention (True = blocked).
def mask_case(name: str, batch: int, seq_q: int, seq_k: int):
    lengths = torch.randint(1, seq_k + 1, (batch,))
    lengths[0] = seq_k
    pad = padding_mask(lengths, seq_len=seq_k)  # [B, 1, 1, Sk]
    if name == "none":
        return None, {}
    if name == "causal":
        causal = causal_mask(seq_q, seq_k)
        return causal, {"attn_mask": ~causal}
    if name == "padding":
        return pad, {"key_padding_mask": ~pad[:, 0, 0]}
    if name == "causal+padding":
        causal = causal_mask(seq_q, seq_k)
        return causal & pad, {"attn_mask": ~causal, "key_padding_mask": ~pad[:, 0, 0]}
    if name == "keys":  # [Sk], the same for every query
        mask = torch.rand(seq_k) < 0.6
        mask[0] = True
        return mask, {"attn_mask": ~mask.expand(seq_q, seq_k)}
    if name == "per-query":  # [B, 1, Sq, Sk], every query keeps key 0
        mask = torch.rand(batch, 1, seq_q, seq_k) < 0.6
        mask[..., 0] = True
        per_head = mask.expand(batch, HEADS, seq_q, seq_k)
        return mask, {"attn_mask": ~per_head.reshape(batch * HEADS, seq_q, seq_k)}
    raise ValueError(name)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("explicit", [False, True], ids=["fused", "explicit"])
@pytest.mark.parametrize(
    "mask_name", ["none", "causal", "padding", "causal+padding", "keys", "per-query"]
)
@pytest.mark.parametrize("seq_k", [9, 13], ids=["self", "cross"])
def test_matches_torch_multihead_attention(dtype, explicit, mask_name, seq_k):
    mha = make_mha(dtype)
    ref = to_torch_mha(mha)
    torch.manual_seed(1)
    query = torch.randn(3, 9, D_MODEL, dtype=dtype)
    key = query if seq_k == 9 else torch.randn(3, seq_k, D_MODEL, dtype=dtype)
    ours_mask, ref_masks = mask_case(mask_name, 3, 9, seq_k)
    with torch.no_grad():
        out, weights = run(mha, query, key, explicit, mask=ours_mask)
        expected, expected_weights = ref(
            query, key, key, average_attn_weights=False, **ref_masks
        )
    torch.testing.assert_close(out, expected, atol=TOLERANCE[dtype], rtol=0)
    if explicit:
        torch.testing.assert_close(
            weights, expected_weights, atol=TOLERANCE[dtype], rtol=0
        )


@pytest.mark.parametrize("explicit", [False, True], ids=["fused", "explicit"])
def test_without_bias_matches_torch(explicit):
    mha = make_mha(bias=False)
    assert all(not name.endswith("bias") for name, _ in mha.named_parameters())
    ref = to_torch_mha(mha)
    x = torch.randn(2, 7, D_MODEL)
    with torch.no_grad():
        out, _ = run(mha, x, explicit=explicit, is_causal=True)
        expected, _ = ref(x, x, x, attn_mask=~causal_mask(7))
    torch.testing.assert_close(out, expected, atol=1e-5, rtol=0)


@pytest.mark.parametrize("seq_k", [11, 15], ids=["self", "cross"])
def test_matches_labml_nn(monkeypatch, seq_k):
    import labml.tracker as labml_tracker

    # labml-nn 0.5.1 calls labml.tracker.debug, which labml 0.5.3 removed.
    monkeypatch.setattr(labml_tracker, "debug", lambda *a, **k: None, raising=False)
    from labml_nn.transformers.mha import MultiHeadAttention as LabmlMHA

    mha = make_mha()
    theirs = LabmlMHA(HEADS, D_MODEL, dropout_prob=0.0).eval()
    theirs.load_state_dict(mha.state_dict())  # the classic layout, strictly
    query = torch.randn(2, 11, D_MODEL)
    key = query if seq_k == 11 else torch.randn(2, seq_k, D_MODEL)
    mask = causal_mask(11, seq_k) & padding_mask(torch.tensor([seq_k, seq_k - 2]))
    with torch.no_grad():
        ours = mha(query=query, key=key, value=key, mask=mask)
        # labml-nn is [seq, batch, d_model], its mask [Sq, Sk, B], 1 = attend.
        expected = theirs(
            query=query.transpose(0, 1),
            key=key.transpose(0, 1),
            value=key.transpose(0, 1),
            mask=mask[:, 0].permute(1, 2, 0),
        ).transpose(0, 1)
    torch.testing.assert_close(ours, expected, atol=1e-5, rtol=0)


@pytest.mark.parametrize("bias", [True, False])
def test_self_attention_in_training_is_one_product_with_the_same_gradients(bias):
    # With gradients on, self-attention (one tensor as query, key and value)
    # stacks its three projections into one product, so the `query` submodule
    # is not called; a view of `x` is another tensor and takes three products.
    # Both give the same output and the same gradient for every parameter,
    # and the state dict keeps the three projections.
    mha = make_mha(bias=bias)
    calls = []
    mha.query.register_forward_hook(lambda *args: calls.append(1))
    x = torch.randn(2, 7, D_MODEL, requires_grad=True)
    params = [x, *mha.parameters()]
    results = []
    for kv in (x, x.view_as(x)):
        out = mha(query=x, key=kv, value=kv, is_causal=True)
        results.append((out, torch.autograd.grad(out.square().sum(), params)))
    assert len(calls) == 1  # only the three-product call used `query`
    (one, grads_one), (three, grads_three) = results
    torch.testing.assert_close(one, three, atol=1e-5, rtol=0)
    for a, b in zip(grads_one, grads_three, strict=True):
        torch.testing.assert_close(a, b, atol=1e-5, rtol=1e-5)
    names = [
        f"{p}.linear.{w}" for p in ("query", "key", "value") for w in ("weight", "bias")
    ]
    names += ["output.weight", "output.bias"]
    assert list(mha.state_dict()) == [n for n in names if bias or n.endswith("weight")]


def test_paths_agree_in_float32():
    mha = make_mha()
    query, memory = torch.randn(4, 10, D_MODEL), torch.randn(4, 14, D_MODEL)
    mask = padding_mask(torch.tensor([14, 3, 0, 9]))  # row 2: no key at all
    for key, kwargs in ((query, {"is_causal": True}), (memory, {"mask": mask})):
        with torch.no_grad():
            fused, _ = run(mha, query, key, **kwargs)
            explicit, _ = run(mha, query, key, explicit=True, **kwargs)
        torch.testing.assert_close(fused, explicit, atol=1e-5, rtol=0)


@pytest.mark.parametrize("explicit", [False, True], ids=["fused", "explicit"])
def test_gradcheck_float64(explicit):
    # Small, because the numerical gradient runs the module twice per input.
    mha = make_mha(torch.float64, d_model=8, heads=2)
    query = torch.randn(2, 4, 8, dtype=torch.float64, requires_grad=True)
    memory = torch.randn(2, 5, 8, dtype=torch.float64, requires_grad=True)
    mask = padding_mask(torch.tensor([5, 0]))  # batch 1 fully masked

    def f(q, kv):
        return run(mha, q, kv, explicit, mask=mask)[0]

    assert torch.autograd.gradcheck(f, (query, memory))
    assert torch.autograd.gradcheck(
        lambda q: run(mha, q, explicit=explicit, is_causal=True)[0], (query,)
    )


@pytest.mark.parametrize("explicit", [False, True], ids=["fused", "explicit"])
@pytest.mark.parametrize("how", ["is_causal", "mask"])
def test_future_tokens_do_not_change_the_past(explicit, how):
    mha = make_mha()
    x = torch.randn(2, 12, D_MODEL)
    changed = x.clone()
    changed[:, 7:] = torch.randn(2, 5, D_MODEL)
    kwargs = {"is_causal": True} if how == "is_causal" else {"mask": causal_mask(12)}
    with torch.no_grad():
        before, _ = run(mha, x, explicit=explicit, **kwargs)
        after, _ = run(mha, changed, explicit=explicit, **kwargs)
    torch.testing.assert_close(before[:, :7], after[:, :7], atol=1e-6, rtol=0)
    assert (before[:, 7:] - after[:, 7:]).abs().max() > 1e-3


@pytest.mark.parametrize("explicit", [False, True], ids=["fused", "explicit"])
def test_fully_masked_rows_are_zero_with_finite_gradients(explicit):
    mha = make_mha()
    mha.train()  # dropout is 0; gradients flow to every parameter
    # Left padding: token ids, 0 = pad. Under the causal mask the leading pads
    # of sequence 1 see only pads, and sequence 2 is all padding.
    ids = torch.tensor([[5, 6, 7, 8, 9], [0, 0, 3, 4, 5], [0, 0, 0, 0, 0]])
    mask = causal_mask(5) & padding_mask(ids, pad_id=0)
    x = torch.randn(3, 5, D_MODEL, requires_grad=True)
    out, _ = run(mha, x, explicit=explicit, mask=mask)
    out.square().sum().backward()
    empty = ~mask.any(-1).expand(3, 1, 5)[:, 0]  # [B, Sq]: queries with no key
    assert empty.sum() == 7
    # No key: a zero vector before the output projection, so just its bias.
    torch.testing.assert_close(out[empty], mha.output.bias.expand(7, D_MODEL))
    assert out.isfinite().all()
    assert x.grad.isfinite().all()
    for name, p in mha.named_parameters():
        assert p.grad is not None and p.grad.isfinite().all(), name


@pytest.mark.parametrize("explicit", [False, True], ids=["fused", "explicit"])
def test_bfloat16_autocast_stays_close_to_float32(explicit):
    mha = make_mha()
    x = torch.randn(2, 16, D_MODEL)
    mask = padding_mask(torch.tensor([16, 9]))
    with torch.no_grad():
        expected, _ = run(mha, x, explicit=explicit, mask=mask, is_causal=True)
        with torch.autocast("cpu", dtype=torch.bfloat16):
            out, _ = run(mha, x, explicit=explicit, mask=mask, is_causal=True)
    assert out.dtype == torch.bfloat16
    # bfloat16 keeps 8 bits of mantissa: about 2-3 significant digits.
    scale = expected.abs().max()
    assert (out.float() - expected).abs().max() < 0.03 * scale


@pytest.mark.parametrize("batch", [1, 3])
def test_kv_cache_decoding_matches_full_recomputation(batch):
    mha = make_mha()
    x = torch.randn(batch, 64, D_MODEL)
    cache = mha.new_cache(batch, 64)
    storage = cache.keys.data_ptr()
    with torch.no_grad():
        full = mha(query=x, key=x, value=x, is_causal=True)
        steps = [
            mha(
                query=x[:, t : t + 1],
                key=x[:, t : t + 1],
                value=x[:, t : t + 1],
                is_causal=True,
                kv_cache=cache,
            )
            for t in range(64)
        ]
    assert cache.length == cache.max_len == 64
    assert cache.keys.data_ptr() == storage  # filled in place, never regrown
    torch.testing.assert_close(torch.cat(steps, dim=1), full, atol=1e-5, rtol=0)


@pytest.mark.parametrize("explicit", [False, True], ids=["fused", "explicit"])
def test_kv_cache_prompt_then_chunks_matches_full_recomputation(explicit):
    mha = make_mha()
    x = torch.randn(2, 20, D_MODEL)
    pad = padding_mask(torch.tensor([20, 17]))  # covers cached and new keys
    cache = mha.new_cache(2, 24)
    with torch.no_grad():
        full, _ = run(mha, x, explicit=explicit, is_causal=True, mask=pad)
        outs = []
        for start, end in ((0, 8), (8, 13), (13, 14), (14, 20)):
            chunk = x[:, start:end]
            out, _ = run(
                mha,
                chunk,
                explicit=explicit,
                is_causal=True,
                mask=pad[..., :end],
                kv_cache=cache,
            )
            outs.append(out)
    torch.testing.assert_close(torch.cat(outs, dim=1), full, atol=1e-5, rtol=0)
    cache.reset()
    assert cache.length == 0


def test_cache_without_is_causal_attends_to_everything_cached():
    mha = make_mha()
    memory, query = torch.randn(2, 9, D_MODEL), torch.randn(2, 3, D_MODEL)
    cache = mha.new_cache(2, 9)
    with torch.no_grad():
        mha(query=memory[:, :5], key=memory[:, :5], value=memory[:, :5], kv_cache=cache)
        out = mha(query=query, key=memory[:, 5:], value=memory[:, 5:], kv_cache=cache)
        expected = mha(query=query, key=memory, value=memory)
    torch.testing.assert_close(out, expected, atol=1e-5, rtol=0)


def test_dropout_only_in_training():
    mha = MultiHeadAttention(D_MODEL, HEADS, dropout=0.5)
    x = torch.randn(2, 6, D_MODEL)
    for explicit in (False, True):
        mha.eval()
        a, _ = run(mha, x, explicit=explicit)
        b, _ = run(mha, x, explicit=explicit)
        assert torch.equal(a, b)
        mha.train()
        c, _ = run(mha, x, explicit=explicit)
        assert not torch.allclose(a, c)


def minimal_like(mha: MultiHeadAttention) -> MinimalMHA:
    """A `MinimalMHA` holding `mha`'s weights (its names without `.linear`)."""
    mini = MinimalMHA(mha.d_model, mha.heads).to(mha.output.weight.dtype)
    state = {n.replace(".linear", ""): w for n, w in mha.state_dict().items()}
    mini.load_state_dict(state)
    return mini


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_minimal_module_equals_the_full_one_and_pytorch(dtype):
    mha = make_mha(dtype)
    mini = minimal_like(mha)
    ref = to_torch_mha(mha)
    torch.manual_seed(2)
    x = torch.randn(3, 9, D_MODEL, dtype=dtype)
    memory = torch.randn(3, 13, D_MODEL, dtype=dtype)
    pad = padding_mask(torch.tensor([13, 8, 1]))  # [B, 1, 1, Sk]
    tol = TOLERANCE[dtype]
    with torch.no_grad():
        ours = mini(x, x, causal_mask(9))
        torch.testing.assert_close(
            ours, mha(query=x, key=x, value=x, is_causal=True), atol=tol, rtol=0
        )
        expected, _ = ref(x, x, x, attn_mask=~causal_mask(9))
        torch.testing.assert_close(ours, expected, atol=tol, rtol=0)
        cross = mini(x, memory, pad)
        full = mha(query=x, key=memory, value=memory, mask=pad)
        torch.testing.assert_close(cross, full, atol=tol, rtol=0)
        expected, _ = ref(x, memory, memory, key_padding_mask=~pad[:, 0, 0])
        torch.testing.assert_close(cross, expected, atol=tol, rtol=0)


def test_minimal_module_with_one_head_is_attention_on_the_projections():
    torch.manual_seed(0)
    mini = MinimalMHA(8, heads=1)
    x = torch.randn(2, 5, 8)
    with torch.no_grad():
        q, k, v = mini.query(x), mini.key(x), mini.value(x)
        # PyTorch's own attention on the projections, then W^O.
        expected = mini.output(F.scaled_dot_product_attention(q, k, v))
        torch.testing.assert_close(mini(x, x), expected, atol=1e-6, rtol=0)


def test_heads_swapped_everywhere_leave_the_output_unchanged():
    torch.manual_seed(0)
    mini, swapped, partly = (MinimalMHA(8, heads=2) for _ in range(3))
    for other in (swapped, partly):
        other.load_state_dict(mini.state_dict())
    order = torch.cat([torch.arange(4, 8), torch.arange(4)])
    with torch.no_grad():
        for module in (swapped, partly):
            for p in (module.query, module.key, module.value):
                p.weight.copy_(p.weight[order])
                p.bias.copy_(p.bias[order])
        swapped.output.weight.copy_(swapped.output.weight[:, order])
        x = torch.randn(2, 5, 8)
        torch.testing.assert_close(swapped(x, x), mini(x, x), atol=1e-6, rtol=0)
        assert (partly(x, x) - mini(x, x)).abs().max() > 0.1


def test_view_cannot_merge_the_heads_after_transpose():
    x = torch.randn(2, 4, 5, 3).transpose(1, 2)  # [B, H, Sq, Dk] -> [B, Sq, H, Dk]
    with pytest.raises(RuntimeError, match="view"):
        x.view(2, 5, 12)
    assert torch.equal(x.reshape(2, 5, 12), x.contiguous().view(2, 5, 12))
    assert x.reshape(2, 5, 12).data_ptr() != x.data_ptr()  # reshape copied
    # One position (Sq = 1): still contiguous, so view works, nothing copied.
    one = torch.randn(2, 4, 1, 3).transpose(1, 2)  # [B, 1, H, Dk]
    assert one.is_contiguous()
    assert one.view(2, 1, 12).data_ptr() == one.data_ptr()
    assert one.reshape(2, 1, 12).data_ptr() == one.data_ptr()


def toy_scores(w_q, w_k):
    q, k = TOY_X @ w_q, TOY_X @ w_k
    return q @ k.T / q.shape[-1] ** 0.5


def test_toy_head_0_is_chapter_1_and_head_1_reads_the_word_before():
    from attention import TOY_KEYS, TOY_QUERIES, TOY_VALUES

    (w_q0, w_k0), (w_q1, w_k1) = TOY_HEADS
    assert torch.equal(TOY_X @ w_q0, TOY_QUERIES)
    assert torch.equal(TOY_X @ w_k0, TOY_KEYS)
    assert torch.equal(TOY_X @ W_V, TOY_VALUES)
    weights, concat = toy_heads()
    # Compared with PyTorch's softmax of the scaled scores.
    for w, (w_q, w_k) in zip(weights, TOY_HEADS, strict=True):
        torch.testing.assert_close(w, torch.softmax(toy_scores(w_q, w_k), dim=-1))
    # Head 0: cats and mice on chase; chase on the two nouns, equally.
    assert weights[0][[0, 3]].argmax(-1).tolist() == [1, 1]
    assert weights[0][1, 0] == weights[0][1, 3] > 0.4
    # Head 1: each word on the one before (cats, the first, on itself).
    assert weights[1].argmax(-1).tolist() == [0, 0, 1, 2]
    assert (weights[1].amax(-1) > 0.85).all()
    assert concat.shape == (4, 6)
    # W^O keeps the heads apart: the output is Concat under new names, and
    # mice's holds both an action (partner) and an adjective (before).
    mixed = concat @ W_O
    assert torch.equal(mixed, concat)
    assert mixed[3, 1] > 0.8 and mixed[3, 5] > 0.8


def test_two_heads_put_nearly_all_weight_on_two_words_one_head_cannot():
    import mha

    weights, _ = toy_heads()
    # mice: head 0 on chase, head 1 on small, each above 0.8.
    assert weights[0][3, 1] > 0.8 and weights[1][3, 2] > 0.8
    # One head's row is one softmax: its weights sum to 1, so any two of
    # them add to at most 1, whatever the scores.
    scores = torch.randn(1000, 4) * 20
    rows = torch.softmax(scores, dim=-1)
    torch.testing.assert_close(rows.sum(-1), torch.ones(1000))
    top2 = rows.topk(2, dim=-1).values.sum(-1)
    assert (top2 <= 1 + 1e-6).all()
    # The one head given both heads' features: mice splits, chase + small < 1.
    q = torch.cat([TOY_X @ w_q for w_q, _ in TOY_HEADS], dim=-1)
    k = torch.cat([TOY_X @ w_k for _, w_k in TOY_HEADS], dim=-1)
    _, one = mha.attention(q, k, TOY_X @ W_V)
    assert one[3, 1] + one[3, 2] <= 1 and one[3, 1] < 0.6 and one[3, 2] < 0.6


def test_one_head_given_both_heads_features_splits_where_they_disagree():
    import mha

    (w_q0, w_k0), (w_q1, w_k1) = TOY_HEADS
    q = torch.cat([TOY_X @ w_q0, TOY_X @ w_q1], dim=-1)
    k = torch.cat([TOY_X @ w_k0, TOY_X @ w_k1], dim=-1)
    # Its scores are the two heads' scores added (over sqrt(4), not sqrt(2)).
    summed = (toy_scores(w_q0, w_k0) + toy_scores(w_q1, w_k1)) * 2**0.5 / 2
    torch.testing.assert_close(q @ k.T / 2, summed)
    _, weights = mha.attention(q, k, TOY_X @ W_V)
    torch.testing.assert_close(weights, torch.softmax(summed, dim=-1))
    # cats: itself and chase; mice: chase and small; about half on each.
    for row, pair in ((0, [0, 1]), (3, [1, 2])):
        top = weights[row].topk(2)
        assert sorted(top.indices.tolist()) == pair
        assert (top.values > 0.4).all() and (top.values < 0.6).all()


def test_labml_state_dict_without_bias_keeps_biases_ours_drops(monkeypatch):
    import labml.tracker as labml_tracker

    monkeypatch.setattr(labml_tracker, "debug", lambda *a, **k: None, raising=False)
    from labml_nn.transformers.mha import MultiHeadAttention as LabmlMHA

    theirs = LabmlMHA(HEADS, D_MODEL, dropout_prob=0.0, bias=False)
    with pytest.raises(RuntimeError, match="value.linear.bias.*output.bias"):
        MultiHeadAttention(D_MODEL, HEADS, bias=False).load_state_dict(
            theirs.state_dict()
        )
    MultiHeadAttention(D_MODEL, HEADS).load_state_dict(
        LabmlMHA(HEADS, D_MODEL, dropout_prob=0.0).state_dict()
    )


def test_prepare_splits_heads():
    prepare = PrepareForMultiHeadAttention(D_MODEL, HEADS, D_MODEL // HEADS)
    x = torch.randn(2, 5, D_MODEL)
    heads = prepare(x)
    assert heads.shape == (2, HEADS, 5, D_MODEL // HEADS)
    whole = prepare.linear(x)  # head h holds features [h Dk, (h + 1) Dk)
    torch.testing.assert_close(heads[:, 1], whole[..., 8:16])


def bad_call(mha, **changes):
    args = {
        "query": torch.randn(2, 5, D_MODEL),
        "key": torch.randn(2, 7, D_MODEL),
        "value": torch.randn(2, 7, D_MODEL),
    }
    mha(**{**args, **changes})


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"query": torch.randn(2, 5, 16)}, r"query must be \[batch, seq, d_model=32\]"),
        ({"key": torch.randn(7, D_MODEL)}, r"key must be .* got \[7, 32\]"),
        ({"value": torch.randn(2, 6, D_MODEL)}, r"same length.*value \[2, 6, 32\]"),
        ({"query": torch.randn(3, 5, D_MODEL)}, r"same batch size.*\[3, 5, 32\]"),
        (
            {"mask": torch.ones(5, 6, dtype=torch.bool)},
            r"mask .*\[2, 4, 5, 7\].*\[5, 6\]",
        ),
        ({"mask": torch.ones(3, 1, 5, 7, dtype=torch.bool)}, r"mask .*\[3, 1, 5, 7\]"),
        ({"mask": torch.ones(5, 7)}, r"mask must be bool .*torch.float32"),
    ],
)
def test_bad_input_names_argument_and_shapes(changes, message):
    with pytest.raises(ValueError, match=message):
        bad_call(make_mha(), **changes)


def test_bad_construction_and_cache_errors():
    with pytest.raises(ValueError, match=r"d_model=30 must be divisible by heads=4"):
        MultiHeadAttention(30, 4)
    mha = make_mha()
    cache = mha.new_cache(2, 8)
    assert isinstance(cache, KVCache) and cache.keys.shape == (2, HEADS, 8, 8)
    bad_call(mha, kv_cache=cache)
    with pytest.raises(ValueError, match=r"kv_cache: full, holds 7 of max_len=8"):
        bad_call(mha, kv_cache=cache)
    with pytest.raises(ValueError, match=r"kv_cache: made for batch size 3, got .* 2"):
        bad_call(mha, kv_cache=mha.new_cache(3, 8))
    with pytest.raises(ValueError, match=r"lengths >= 0, got seq_q=-1, seq_k=2"):
        causal_mask(-1, 2)
    with pytest.raises(ValueError, match=r"token ids \[batch, seq\].*\[6\]"):
        padding_mask(torch.arange(6), pad_id=0)
    with pytest.raises(ValueError, match=r"seq_len=2 is shorter .* 3"):
        padding_mask(torch.tensor([1, 3]), seq_len=2)


def test_check_against_pytorch_reports_small_differences():
    rows = check_against_pytorch()
    for row in rows:
        assert max(row.fused, row.explicit, row.weights) < 1e-5, row
    # Only the left-padded case has queries with no key, where PyTorch's
    # output is NaN and ours is the output projection's bias.
    assert [row.nan_rows > 0 for row in rows] == [False, False, False, True]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("script", "printed"),
    [
        ("attention.py", "chase"),
        ("mha.py", "torch.nn.MultiheadAttention"),
        ("layers.py", "sequences entirely right"),
    ],
)
def test_running_a_chapter_prints_its_demonstration(script, printed):
    result = subprocess.run(
        [sys.executable, script],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert printed in result.stdout


def test_recorded_kv_timing_is_complete():
    record = json.loads((ROOT / "runs/mha/kv_cache.json").read_text())
    assert record["command"].startswith("python bench/kv_cache.py")
    assert (
        len(record["prefix"]) == len(record["cache_ms"]) == len(record["recompute_ms"])
    )
    assert all(t > 0 for t in record["cache_ms"] + record["recompute_ms"])


@pytest.mark.slow
def test_kv_cache_benchmark_writes_its_record(tmp_path):
    out = tmp_path / "kv_cache.json"
    subprocess.run(
        [sys.executable, "bench/kv_cache.py", "--repeats", "1", "--out", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    record = json.loads(out.read_text())
    assert record["command"].endswith("--repeats 1")
    assert (
        len(record["prefix"]) == len(record["cache_ms"]) == len(record["recompute_ms"])
    )
