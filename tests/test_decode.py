"""trainkit/decode.py: the faster sampling path gives the model's own logits."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import pytest
import torch

import train
from mha import MultiHeadAttention
from trainkit.decode import attention_step, decoder

ROOT = Path(__file__).resolve().parent.parent


def switches_set(call) -> list[str]:
    """The `torch._C._set_*` functions (process-wide switches) `call()` calls."""
    seen = []

    def profile(frame, event, arg):
        if event == "c_call" and getattr(arg, "__module__", "") == "torch._C":
            if getattr(arg, "__name__", "").startswith("_set_"):
                seen.append(arg.__name__)

    sys.setprofile(profile)
    try:
        call()
    finally:
        sys.setprofile(None)
    return seen


def random_model(dtype=torch.float32, vocab: int = 13, **changes):
    cfg = replace(train.PRESETS["tiny"], **changes)
    torch.manual_seed(0)
    model = train.CharTransformer(cfg, vocab).to(dtype).eval()
    # Non-zero biases and LayerNorm shifts, so that a forgotten one shows.
    with torch.no_grad():
        for p in model.parameters():
            if p.dim() == 1:
                p.add_(0.1 * torch.randn_like(p))
    return model


def steps(forward, model, ids: torch.Tensor, cuts: list[int]) -> torch.Tensor:
    """Logits for `ids` `[B, S]` run through caches in chunks ending at `cuts`."""
    caches = model.new_caches(ids.shape[0])
    spans = zip([0, *cuts[:-1]], cuts, strict=True)
    with torch.inference_mode():
        parts = [forward(ids[:, a:b], caches) for a, b in spans]
    return torch.cat(parts, dim=1)


@pytest.mark.parametrize("batch", [1, 3])
def test_decoder_gives_the_models_logits_prompt_then_one_at_a_time(batch):
    model = random_model(torch.float64)
    ids = torch.randint(13, (batch, model.context))
    cuts = [7, *range(8, model.context + 1)]  # a 7-id prompt, then one id a step
    lean = steps(decoder(model), model, ids, cuts)
    torch.testing.assert_close(lean, steps(model, model, ids, cuts))
    # And both equal the whole window run at once, without a cache.
    with torch.no_grad():
        torch.testing.assert_close(lean, model(ids))


def test_decoder_in_float32_matches_to_rounding():
    model = random_model()
    ids = torch.randint(13, (2, model.context))
    cuts = [5, 9, *range(10, model.context + 1)]  # chunks of several ids, too
    lean = steps(decoder(model), model, ids, cuts)
    torch.testing.assert_close(lean, steps(model, model, ids, cuts))


def test_shipped_model_decoder_equals_its_forward():
    model, vocab = train.load_model(ROOT / "runs" / "cpu" / "model.pt", "cpu")
    ids = vocab.encode("ROMEO:\nWhat light through yonder window breaks?")[None]
    cuts = [6, *range(7, ids.shape[1] + 1)]
    lean = steps(decoder(model), model, ids, cuts)
    torch.testing.assert_close(lean, steps(model, model, ids, cuts))


def test_decoder_refuses_a_model_in_training_mode():
    model = random_model().train()
    with pytest.raises(ValueError, match=r"model\.eval\(\)"):
        decoder(model)


def test_decoder_refuses_another_activation():
    model = random_model()
    for block in model.blocks:
        block.ffn[1] = torch.nn.ReLU()
    with pytest.raises(TypeError, match="nn.GELU"):
        decoder(model)


def test_cache_overflow_is_still_refused():
    model = random_model()
    caches = model.new_caches(1)
    step = decoder(model)
    with torch.inference_mode():
        step(torch.zeros(1, model.context, dtype=torch.long), caches)
        with pytest.raises(ValueError, match="do not fit a context of 32"):
            step(torch.zeros(1, 1, dtype=torch.long), caches)


def test_attention_step_equals_the_module_with_its_cache():
    # bench/mha_speed.py times this step against the module; both give the same.
    torch.manual_seed(0)
    mha = MultiHeadAttention(48, 4).eval()
    x = torch.randn(2, 20, 48)
    ours, theirs = mha.new_cache(2, 20), mha.new_cache(2, 20)
    step = attention_step(mha)
    with torch.inference_mode():
        for a, b in [(0, 6), *((t, t + 1) for t in range(6, 20))]:
            got = step(x[:, a:b].flatten(0, 1), 2, ours).view(2, b - a, 48)
            chunk = x[:, a:b]
            want = mha(query=chunk, key=chunk, value=chunk, is_causal=True,
                       kv_cache=theirs)  # fmt: skip
            torch.testing.assert_close(got, want)
        full = mha(query=x, key=x, value=x, is_causal=True)
    torch.testing.assert_close(ours.keys, theirs.keys)
    torch.testing.assert_close(got, full[:, -1:])


def test_decoder_sets_no_process_wide_switch():
    # The faster path must not flip a global PyTorch switch (oneDNN,
    # denormals, ...), even for a moment: another thread could see it.
    model = random_model()
    step = decoder(model)
    caches = model.new_caches(1)

    def run():
        with torch.inference_mode():
            step(torch.zeros(1, 3, dtype=torch.long), caches)
            step(torch.zeros(1, 1, dtype=torch.long), caches)

    assert switches_set(run) == []
    # The detector sees a switch when one is set.
    enabled = torch.backends.mkldnn.enabled

    def flip():
        torch.backends.mkldnn.enabled = not enabled
        torch.backends.mkldnn.enabled = enabled

    assert switches_set(flip) == ["_set_mkldnn_enabled"] * 2
