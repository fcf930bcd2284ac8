"""layers.py: the decoder layer against PyTorch's, and the reverser."""

from __future__ import annotations

import pytest
import torch

from attention import causal_mask, padding_mask
from layers import DecoderLayer, reversal_batch, reverse, train_reverser
from mha import to_torch_mha

D_MODEL, HEADS = 32, 4


def make_decoder(seed=0, d_model=D_MODEL, heads=HEADS) -> DecoderLayer:
    torch.manual_seed(seed)
    return DecoderLayer(d_model, heads).eval()


def test_decoder_layer_shapes_and_cross_attention_weights():
    layer = make_decoder()
    x, memory = torch.randn(2, 5, D_MODEL), torch.randn(2, 9, D_MODEL)
    mask = padding_mask(torch.tensor([9, 4]))
    with torch.no_grad():
        out = layer(x, memory, mask)
        again, weights = layer(x, memory, mask, need_weights=True)
    assert out.shape == (2, 5, D_MODEL)
    assert weights.shape == (2, HEADS, 5, 9)
    torch.testing.assert_close(out, again, atol=1e-5, rtol=0)
    torch.testing.assert_close(weights.sum(-1), torch.ones(2, HEADS, 5))
    assert not weights[1, :, :, 4:].any()  # padded memory is never read


def test_decoder_layer_is_causal_over_the_target():
    layer = make_decoder()
    x, memory = torch.randn(2, 8, D_MODEL), torch.randn(2, 6, D_MODEL)
    changed = x.clone()
    changed[:, 5:] = torch.randn(2, 3, D_MODEL)
    with torch.no_grad():
        before, after = layer(x, memory), layer(changed, memory)
    torch.testing.assert_close(before[:, :5], after[:, :5], atol=1e-6, rtol=0)
    assert (before[:, 5:] - after[:, 5:]).abs().max() > 1e-3


def test_decoder_layer_ignores_padded_memory():
    layer = make_decoder()
    x, memory = torch.randn(2, 4, D_MODEL), torch.randn(2, 7, D_MODEL)
    mask = padding_mask(torch.tensor([7, 3]))
    changed = memory.clone()
    changed[1, 3:] = torch.randn(4, D_MODEL)
    with torch.no_grad():
        before, after = layer(x, memory, mask), layer(x, changed, mask)
    torch.testing.assert_close(before, after, atol=1e-6, rtol=0)


def test_decoder_layer_fully_padded_memory_gives_no_nan():
    layer = make_decoder().train()  # dropout is 0; gradients flow
    x = torch.randn(2, 4, D_MODEL, requires_grad=True)
    memory = torch.randn(2, 6, D_MODEL, requires_grad=True)
    mask = padding_mask(torch.tensor([6, 0]))  # sequence 1: no memory at all
    out = layer(x, memory, mask)
    out.square().sum().backward()
    assert out.isfinite().all()
    assert x.grad.isfinite().all() and memory.grad.isfinite().all()
    for name, p in layer.named_parameters():
        assert p.grad is not None and p.grad.isfinite().all(), name


def test_decoder_layer_matches_torch_transformer_decoder_layer():
    # Post-LN, ReLU, a 4 D feed-forward: torch.nn.TransformerDecoderLayer with
    # norm_first=False, given our weights, computes the same layer.
    layer = make_decoder()
    ref = torch.nn.TransformerDecoderLayer(
        D_MODEL, HEADS, 4 * D_MODEL, dropout=0.0, batch_first=True
    ).eval()
    ref.self_attn = to_torch_mha(layer.self_attn)
    ref.multihead_attn = to_torch_mha(layer.cross_attn)
    ref.linear1, ref.linear2 = layer.ff[0], layer.ff[2]
    ref.norm1, ref.norm2, ref.norm3 = layer.norm1, layer.norm2, layer.norm3
    x, memory = torch.randn(3, 6, D_MODEL), torch.randn(3, 8, D_MODEL)
    mask = padding_mask(torch.tensor([8, 5, 2]))
    with torch.no_grad():
        ours = layer(x, memory, mask)
        expected = ref(
            x, memory, tgt_mask=~causal_mask(6), memory_key_padding_mask=~mask[:, 0, 0]
        )
    torch.testing.assert_close(ours, expected, atol=1e-5, rtol=0)


def test_decoder_layer_attention_parts_match_torch_multihead_attention():
    layer = make_decoder()
    x, memory = torch.randn(2, 5, D_MODEL), torch.randn(2, 7, D_MODEL)
    mask = padding_mask(torch.tensor([7, 4]))
    with torch.no_grad():
        ours_self = layer.self_attn(query=x, key=x, value=x, is_causal=True)
        ours_cross = layer.cross_attn(query=x, key=memory, value=memory, mask=mask)
        ref_self, _ = to_torch_mha(layer.self_attn)(x, x, x, attn_mask=~causal_mask(5))
        ref_cross, _ = to_torch_mha(layer.cross_attn)(
            x, memory, memory, key_padding_mask=~mask[:, 0, 0]
        )
    torch.testing.assert_close(ours_self, ref_self, atol=1e-5, rtol=0)
    torch.testing.assert_close(ours_cross, ref_cross, atol=1e-5, rtol=0)


@pytest.mark.parametrize(
    "x, memory, message",
    [
        (
            (2, 4, 16),
            (2, 6, D_MODEL),
            r"DecoderLayer: x must be \[batch, seq, d_model=32\]",
        ),
        (
            (2, 4, D_MODEL),
            (6, D_MODEL),
            r"DecoderLayer: memory must be .*got \[6, 32\]",
        ),
        (
            (2, 4, D_MODEL),
            (3, 6, D_MODEL),
            r"DecoderLayer: x, memory must have the same batch",
        ),
    ],
)
def test_decoder_layer_bad_input(x, memory, message):
    with pytest.raises(ValueError, match=message):
        make_decoder()(torch.randn(x), torch.randn(memory))


def test_decoder_layer_bad_memory_mask_names_the_shapes():
    with pytest.raises(
        ValueError, match=r"mask must be bool .*\[2, 4, 4, 6\].*\[2, 5\]"
    ):
        make_decoder()(
            torch.randn(2, 4, D_MODEL),
            torch.randn(2, 6, D_MODEL),
            torch.ones(2, 5, dtype=torch.bool),
        )


@pytest.mark.slow
def test_reverser_learns_the_anti_diagonal():
    model = train_reverser()
    again = train_reverser()
    for a, b in zip(model.parameters(), again.parameters(), strict=True):
        assert torch.equal(a, b)  # deterministic for its seed
    source, target, _ = reversal_batch(torch.Generator().manual_seed(1), 200)
    guess, weights = reverse(model, source)
    assert (guess == target).float().mean() > 0.95
    # Output i reads source position S - 1 - i, in every head.
    looked_at = weights.mean(0).argmax(-1)  # [H, S]
    mirrored = torch.arange(source.shape[1]).flip(0)
    assert (looked_at == mirrored).all()
