"""layers.py: residual and LayerNorm, the feed-forward block, position
encodings, the encoder and decoder layers against PyTorch's, the reverser,
and the figures and tables of `layers_report`."""

from __future__ import annotations

import math

import matplotlib
import pytest
import torch

import layers_report
from attention import causal_mask, padding_mask
from layers import (
    DecoderLayer,
    EncoderLayer,
    FeedForward,
    Reverser,
    offset_rotation,
    residual,
    reversal_batch,
    reverse,
    sinusoidal,
    train_reverser,
)
from literate import words
from mha import MultiHeadAttention, to_torch_mha

matplotlib.use("Agg")

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
    layer = make_decoder().train()  # training mode; gradients flow
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


@pytest.fixture(scope="session")
def reverser() -> Reverser:
    """The chapter's reverser as the page trains it, trained once per run."""
    return train_reverser()


@pytest.mark.slow
def test_training_the_reverser_is_deterministic_for_its_seed():
    # The same procedure as the page's 250 steps, shortened: the same seed
    # gives the same weights, bit for bit; another seed, others.
    model, again, other = (train_reverser(steps=20, seed=s) for s in (0, 0, 1))
    for a, b in zip(model.parameters(), again.parameters(), strict=True):
        assert torch.equal(a, b)
    assert not all(
        torch.equal(a, b)
        for a, b in zip(model.parameters(), other.parameters(), strict=True)
    )


@pytest.mark.slow
def test_reverser_learns_the_anti_diagonal(reverser):
    model = reverser
    source, target, _ = reversal_batch(torch.Generator().manual_seed(1), 200)
    guess, weights = reverse(model, source)
    assert (guess == target).float().mean() > 0.95
    # Output i reads source position S - 1 - i, in every head.
    looked_at = weights.mean(0).argmax(-1)  # [H, S]
    mirrored = torch.arange(source.shape[1]).flip(0)
    assert (looked_at == mirrored).all()


# ## Residual, LayerNorm, feed-forward


def test_residual_orders():
    torch.manual_seed(0)
    norm, f = torch.nn.LayerNorm(8), torch.nn.Linear(8, 8)
    with torch.no_grad():
        torch.nn.init.normal_(norm.weight)
        torch.nn.init.normal_(norm.bias)
    x = torch.randn(2, 3, 8)
    post = residual(x, f, norm, norm_first=False)
    pre = residual(x, f, norm, norm_first=True)
    torch.testing.assert_close(post, norm(x + f(x)))
    torch.testing.assert_close(pre, x + f(norm(x)))
    # Pre-LN leaves the sum unnormalised: its mean over features is not 0.
    assert post.mean(-1).abs().max() < 1e-5 + norm.bias.abs().max()
    assert not torch.allclose(pre, post)


def test_layer_norm_formula_matches_torch():
    x = torch.randn(4, 6, 16)
    norm = torch.nn.LayerNorm(16)
    mean, var = x.mean(-1, keepdim=True), x.var(-1, unbiased=False, keepdim=True)
    by_hand = (x - mean) / torch.sqrt(var + norm.eps)
    torch.testing.assert_close(norm(x), by_hand, atol=1e-5, rtol=0)


@pytest.mark.parametrize("d_model", [8, 32])
def test_feed_forward_per_position_and_size(d_model):
    torch.manual_seed(0)
    ff = FeedForward(d_model)
    x = torch.randn(3, 7, d_model)
    alone = torch.stack([ff(x[:, s]) for s in range(7)], dim=1)
    torch.testing.assert_close(ff(x), alone)
    assert layers_report.parameters(ff) == 8 * d_model**2 + 5 * d_model
    attn = MultiHeadAttention(d_model, 2)
    assert layers_report.parameters(attn) == 4 * d_model**2 + 4 * d_model


# ## Position encodings


def test_attention_is_unchanged_by_shuffling_keys_and_values():
    torch.manual_seed(0)
    attn = MultiHeadAttention(16, 4).eval()
    query, memory = torch.randn(2, 3, 16), torch.randn(2, 9, 16)
    order = torch.randperm(9)
    with torch.no_grad():
        before = attn(query=query, key=memory, value=memory)
        after = attn(query=query, key=memory[:, order], value=memory[:, order])
    torch.testing.assert_close(before, after, atol=1e-6, rtol=0)


@pytest.mark.parametrize("positions, d_model", [(1, 2), (50, 16), (128, 64)])
def test_sinusoidal_matches_the_formula(positions, d_model):
    table = sinusoidal(positions, d_model)
    assert table.shape == (positions, d_model) and table.dtype == torch.float64
    for p in range(0, positions, max(1, positions // 7)):
        for i in range(d_model // 2):
            omega = 10000 ** (-2 * i / d_model)
            assert math.isclose(table[p, 2 * i], math.sin(p * omega), abs_tol=1e-12)
            assert math.isclose(table[p, 2 * i + 1], math.cos(p * omega), abs_tol=1e-12)


@pytest.mark.parametrize("k", [0, 1, 5, 37])
@pytest.mark.parametrize("d_model", [2, 16, 64])
def test_an_offset_is_one_rotation_for_every_position(k, d_model):
    rotation = offset_rotation(k, d_model)
    assert rotation.shape == (d_model, d_model)
    # Block-diagonal 2 x 2 rotations: orthogonal, determinant 1.
    eye = torch.eye(d_model, dtype=torch.float64)
    torch.testing.assert_close(rotation @ rotation.T, eye, atol=1e-12, rtol=0)
    assert torch.linalg.det(rotation).item() == pytest.approx(1.0)
    off_blocks = rotation.clone()
    for i in range(0, d_model, 2):
        off_blocks[i : i + 2, i : i + 2] = 0
    assert not off_blocks.any()
    # PE[p + k] = R_k PE[p] at every p, against the formula directly.
    table = sinusoidal(200 + k, d_model)
    torch.testing.assert_close(table[:200] @ rotation.T, table[k:], atol=1e-10, rtol=0)


def test_rotations_compose_like_offsets():
    a, b = offset_rotation(3, 16), offset_rotation(8, 16)
    torch.testing.assert_close(a @ b, offset_rotation(11, 16), atol=1e-12, rtol=0)


def test_reverser_without_positions_sees_the_source_as_a_set():
    torch.manual_seed(0)
    model = Reverser(positions="none").eval()
    source = torch.randint(0, 10, (2, 6))
    order = torch.randperm(6)
    with torch.no_grad():
        memory = model.encoder[0](model.embed(source))
        shuffled = model.encoder[0](model.embed(source[:, order]))
    torch.testing.assert_close(shuffled, memory[:, order], atol=1e-6, rtol=0)


def test_reverser_positions_options():
    torch.manual_seed(0)
    ids = torch.randint(0, 11, (2, 6))
    learned = Reverser(positions="learned")
    waves = Reverser(positions="sinusoidal")
    none = Reverser(positions="none")
    with torch.no_grad():
        expected = learned.token(ids) + learned.position.weight
        torch.testing.assert_close(learned.embed(ids), expected)
        expected = waves.token(ids) + sinusoidal(6, 32).float()
        torch.testing.assert_close(waves.embed(ids), expected)
        torch.testing.assert_close(none.embed(ids), none.token(ids))


# ## Encoder and decoder layers against PyTorch's


@pytest.mark.parametrize("norm_first", [False, True])
def test_encoder_layer_matches_torch_transformer_encoder_layer(norm_first):
    torch.manual_seed(0)
    layer = EncoderLayer(D_MODEL, HEADS, norm_first).eval()
    ref = torch.nn.TransformerEncoderLayer(
        D_MODEL, HEADS, 4 * D_MODEL, dropout=0.0, batch_first=True,
        norm_first=norm_first,
    ).eval()  # fmt: skip
    ref.self_attn = to_torch_mha(layer.attn)
    ref.linear1, ref.linear2 = layer.ff[0], layer.ff[2]
    ref.norm1, ref.norm2 = layer.norm1, layer.norm2
    x = torch.randn(3, 7, D_MODEL)
    mask = padding_mask(torch.tensor([7, 5, 2]))
    with torch.no_grad():
        ours = layer(x, mask)
        expected = ref(x, src_key_padding_mask=~mask[:, 0, 0])
    real = mask[:, 0, 0]  # PyTorch's fast path may zero padded rows
    torch.testing.assert_close(ours[real], expected[real], atol=1e-5, rtol=0)


def test_pre_ln_decoder_layer_matches_torch():
    layer = make_decoder()
    layer.norm_first = True
    ref = torch.nn.TransformerDecoderLayer(
        D_MODEL, HEADS, 4 * D_MODEL, dropout=0.0, batch_first=True,
        norm_first=True,
    ).eval()  # fmt: skip
    ref.self_attn = to_torch_mha(layer.self_attn)
    ref.multihead_attn = to_torch_mha(layer.cross_attn)
    ref.linear1, ref.linear2 = layer.ff[0], layer.ff[2]
    ref.norm1, ref.norm2, ref.norm3 = layer.norm1, layer.norm2, layer.norm3
    x, memory = torch.randn(3, 6, D_MODEL), torch.randn(3, 8, D_MODEL)
    mask = padding_mask(torch.tensor([8, 5, 2]))
    with torch.no_grad():
        ours, weights = layer(x, memory, mask, need_weights=True)
        expected = ref(
            x, memory, tgt_mask=~causal_mask(6), memory_key_padding_mask=~mask[:, 0, 0]
        )
    torch.testing.assert_close(ours, expected, atol=1e-5, rtol=0)
    assert weights.shape == (3, HEADS, 6, 8)


def test_deep_pre_ln_reverser_shapes():
    model = Reverser(layers=3, norm_first=True).eval()
    source, _, target_in = reversal_batch(torch.Generator().manual_seed(0), 4)
    with torch.no_grad():
        logits, weights = model(source, target_in)
    assert logits.shape == (4, 6, 11) and weights.shape == (4, 2, 6, 6)
    assert isinstance(model.final, torch.nn.LayerNorm)
    assert isinstance(Reverser().final, torch.nn.Identity)


def test_warmup_rises_linearly_then_holds():
    torch.manual_seed(0)
    seen = []
    original = torch.optim.Adam.step

    def spy(self, *args, **kwargs):
        seen.append(self.param_groups[0]["lr"])
        return original(self, *args, **kwargs)

    torch.optim.Adam.step = spy
    try:
        train_reverser(steps=6, lr=1.0, warmup=4)
    finally:
        torch.optim.Adam.step = original
    assert seen == pytest.approx([0.25, 0.5, 0.75, 1.0, 1.0, 1.0])


# ## The report's figures and tables


def figure_texts(fig) -> list[str]:
    return [t.get_text() for t in fig.findobj(matplotlib.text.Text)]


@pytest.mark.parametrize(
    "draw, word",
    [
        (layers_report.draw_architecture, "feed-forward"),
        (lambda: layers_report.draw_positions(sinusoidal(16, 8)), "position"),
        (
            lambda: layers_report.draw_cross_attention(
                torch.rand(2, 3, 4).softmax(-1), list("abc"), list("wxyz")
            ),
            "source digit",
        ),
    ],
)
def test_figures_draw_their_words_through_tr(draw, word):
    import matplotlib.pyplot as plt

    plt.close("all")
    words.use({word: "TRANSLATED"})
    try:
        draw()
    finally:
        words.use({})
    fig = plt.gcf()
    texts = figure_texts(fig)
    assert "TRANSLATED" in texts and word not in texts
    width, _ = fig.get_size_inches()
    assert width <= 4  # narrow enough for a phone
    plt.close("all")


def test_cross_attention_figure_has_one_panel_per_head():
    import matplotlib.pyplot as plt

    plt.close("all")
    layers_report.draw_cross_attention(
        torch.rand(3, 6, 6), list("abcdef"), list("uvwxyz")
    )
    titles = [ax.get_title() for ax in plt.gcf().axes if ax.get_title()]
    assert titles == ["head 0", "head 1", "head 2"]
    plt.close("all")


def test_format_warmup_table():
    record = {
        "settings": {"layers": 4, "lr": 0.01, "steps": 150, "warmup": 50},
        "seeds": [0, 1],
        "rows": [
            {
                "order": "post",
                "warmup": 0,
                "runs": [{"sequences": 0.0}, {"sequences": 0.5}],
            },
            {
                "order": "pre",
                "warmup": 50,
                "runs": [{"sequences": 1.0}, {"sequences": 0.987}],
            },
        ],
    }
    assert layers_report.warmup_settings(record) == (
        "4 layers each side, learning rate 0.01, 150 steps"
    )
    lines = layers_report.format_warmup(record).splitlines()
    header = [cell.strip() for cell in lines[0].split("|")[1:-1]]
    assert header == ["order", "warmup steps", "seed 0", "seed 1"]
    assert "| post-LN |            0 |     0% |    50% |" in lines
    assert "| pre-LN  |           50 |   100% |    99% |" in lines


def test_recorded_warmup_matches_its_settings():
    record = layers_report.read_warmup()
    assert record["command"] == "python layers.py warmup"
    assert {(r["order"], r["warmup"]) for r in record["rows"]} == {
        ("post", 0), ("post", record["settings"]["warmup"]),
        ("pre", 0), ("pre", record["settings"]["warmup"]),
    }  # fmt: skip
    for row in record["rows"]:
        assert [r["seed"] for r in row["runs"]] == record["seeds"]
        assert all(0 <= r["sequences"] <= r["digits"] <= 1 for r in row["runs"])


def test_scores_line():
    assert layers_report.scores(0.253, 0.006) == (
        "digits right: 25.3%; sequences entirely right: 0.6%"
    )
    assert layers_report.vector(torch.tensor([-1.3416, 0.0])) == "(-1.342, 0.000)"
