"""generate.py: the draw, the sampler with and without its cache, the heads."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from functools import partial
from pathlib import Path

import pytest
import torch

import generate
import train
from trainkit.corpus import cached_corpus

ROOT = Path(__file__).resolve().parent.parent
MODEL = ROOT / "runs" / "cpu" / "model.pt"


def tiny_model(dtype=torch.float64, vocab: int = 11):
    torch.manual_seed(0)
    model = train.CharTransformer(train.PRESETS["tiny"], vocab).to(dtype).eval()
    with torch.no_grad():  # non-zero biases, so that a forgotten one shows
        for p in model.parameters():
            if p.dim() == 1:
                p.add_(0.1 * torch.randn_like(p))
    return model


def switches_set(call) -> list[str]:
    """The `torch._C._set_*` functions (process-wide switches) `call()` calls."""
    seen = []

    def profile(frame, event, arg):
        name = getattr(arg, "__name__", "")
        if event == "c_call" and name.startswith("_set_"):
            if getattr(arg, "__module__", "") == "torch._C":
                seen.append(name)

    sys.setprofile(profile)
    try:
        call()
    finally:
        sys.setprofile(None)
    return seen


# ----------------------------------------------------------------- the draw


@pytest.mark.parametrize("temperature", [0.5, 1.0, 1.5])
def test_distribution_is_the_softmax_of_the_logits_over_the_temperature(
    temperature,
):
    logits = torch.randn(40, generator=torch.Generator().manual_seed(1))
    torch.testing.assert_close(
        generate.distribution(logits, temperature, None),
        torch.softmax(logits / temperature, dim=-1),
    )


def test_top_k_keeps_the_k_likeliest_in_their_proportions():
    logits = torch.tensor([0.0, 5.0, 4.0, -1.0, 3.0, 2.5])
    p = generate.distribution(logits, 0.8, 3)
    kept = torch.tensor([1, 2, 4])
    assert (p[[0, 3, 5]] == 0).all()
    torch.testing.assert_close(p[kept], torch.softmax(logits[kept] / 0.8, -1))
    # k as large as the vocabulary changes nothing.
    torch.testing.assert_close(
        generate.distribution(logits, 1.0, 6), torch.softmax(logits, -1)
    )


def test_next_token_draws_as_multinomial_does():
    logits = torch.randn(9, generator=torch.Generator().manual_seed(2))
    ours = torch.Generator().manual_seed(5)
    theirs = torch.Generator().manual_seed(5)
    p = torch.softmax(logits / 0.7, -1)
    for _ in range(50):
        want = torch.multinomial(p, 1, generator=theirs).item()
        assert generate.next_token(logits, 0.7, None, ours) == want


# ------------------------------------------------------------------ sampling


def test_top_k_one_writes_the_argmax_of_the_full_forward():
    model = tiny_model()
    prompt = torch.randint(11, (4,), generator=torch.Generator().manual_seed(0))
    tokens = model.context - len(prompt)  # within one window
    got = list(generate.generate(model, prompt, tokens, top_k=1))
    seq = prompt.tolist()
    with torch.no_grad():
        for _ in range(tokens):
            seq.append(model(torch.tensor([seq]))[0, -1].argmax().item())
    assert got == seq[len(prompt) :]


@pytest.mark.parametrize("options", [{"use_cache": False}, {"fast": True}])
def test_the_cache_and_the_faster_path_write_the_recomputed_text(options):
    # float64, so rounding cannot tip a draw; three windows' worth, so the
    # window is re-encoded on the way.
    model = tiny_model()
    prompt = torch.randint(11, (5,), generator=torch.Generator().manual_seed(0))

    def text(**kwargs) -> list[int]:
        rng = torch.Generator().manual_seed(3)
        return list(
            generate.generate(
                model,
                prompt,
                3 * model.context,
                temperature=0.9,
                top_k=8,
                rng=rng,
                **kwargs,
            )  # fmt: skip
        )

    cached = text()
    assert cached == text(**options)
    assert len(cached) == 3 * model.context and len(set(cached)) > 3


def test_the_taught_path_runs_the_model_and_fast_runs_the_decoder(monkeypatch):
    model = tiny_model()
    calls = []
    real = generate.decoder

    def counting(m):
        calls.append(m)
        return real(m)

    monkeypatch.setattr(generate, "decoder", counting)
    prompt = torch.tensor([1, 2, 3])
    list(generate.generate(model, prompt, 5))
    list(generate.generate(model, prompt, 5, use_cache=False))
    assert calls == []
    list(generate.generate(model, prompt, 5, fast=True))
    assert calls == [model]


def test_sampling_sets_no_process_wide_switch():
    model = tiny_model(torch.float32)
    prompt = torch.tensor([1, 2, 3])
    for options in ({}, {"use_cache": False}, {"fast": True}):
        run = partial(list, generate.generate(model, prompt, 40, **options))
        assert switches_set(run) == [], options
    # The detector sees a switch when one is set.
    enabled = torch.backends.mkldnn.enabled

    def flip():
        torch.backends.mkldnn.enabled = not enabled
        torch.backends.mkldnn.enabled = enabled

    assert switches_set(flip) == ["_set_mkldnn_enabled"] * 2


def test_bad_requests_are_refused():
    model = tiny_model()
    with pytest.raises(ValueError, match="at least one id"):
        next(generate.generate(model, torch.tensor([], dtype=torch.long), 3))
    with pytest.raises(ValueError, match="fast=True"):
        next(generate.generate(model, torch.tensor([1]), 3, fast=True,
                               use_cache=False))  # fmt: skip


@pytest.mark.parametrize("script", ["generate.py", "train.py sample"])
def test_both_commands_sample_the_recorded_text(script):
    run = json.loads((ROOT / "runs" / "cpu" / "run.json").read_text())
    args = run["sample_args"]
    tokens = args.index("--tokens") + 1
    args = [*args[:tokens], "60", *args[tokens + 1 :]]
    result = subprocess.run(
        [sys.executable, *script.split(), *args],
        cwd=ROOT, capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    recorded = (ROOT / "runs" / "cpu" / "sample.txt").read_text(encoding="utf-8")
    prompt = args[args.index("--prompt") + 1]
    assert result.stdout == recorded[: len(prompt) + 60] + "\n"


def test_generate_py_defaults_to_the_shipped_model_and_names_itself(tmp_path):
    # A fresh clone has no out/: `python generate.py` reads runs/cpu/model.pt.
    command = [sys.executable, str(ROOT / "generate.py"), "--tokens", "5"]
    plain = subprocess.run(
        [*command, "--seed", "3"], cwd=tmp_path, capture_output=True,
        text=True, timeout=120, check=True,
    )  # fmt: skip
    given = subprocess.run(
        [*command, "--seed", "3", "--checkpoint", str(MODEL)], cwd=tmp_path,
        capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    assert plain.stdout == given.stdout and len(plain.stdout) == 1 + 5 + 1
    missing = subprocess.run(
        [*command, "--checkpoint", "nope.pt"], cwd=tmp_path,
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert missing.returncode != 0
    assert missing.stderr.startswith("generate.py: error: ")


# ------------------------------------------------------------- the cache size


def test_cache_memory_formula_is_what_new_caches_allocates():
    model, _ = train.load_model(MODEL, torch.device("cpu"))
    attn = model.blocks[0].attn
    caches = model.new_caches(1)
    allocated = sum(c.keys.nbytes + c.values.nbytes for c in caches)
    per_token = 2 * len(model.blocks) * attn.heads * attn.d_k * 4  # float32
    assert allocated == per_token * model.context
    assert per_token == 4096  # the page's "4 KiB per token"


# ----------------------------------------------------------------- the heads


def test_attention_maps_are_the_causal_softmax_of_the_first_block():
    model = tiny_model()
    ids = torch.randint(11, (9,), generator=torch.Generator().manual_seed(0))
    maps = generate.attention_maps(model, ids)
    assert maps.shape == (2, 2, 9, 9)
    with torch.no_grad():
        x = model.token(ids[None]) + model.position(torch.arange(9))
        h = model.blocks[0].ln1(x)
        q, k = model.blocks[0].attn.query(h), model.blocks[0].attn.key(h)
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])  # [1, H, S, S]
        causal = torch.ones(9, 9, dtype=torch.bool).tril()
        want = scores.masked_fill(~causal, float("-inf")).softmax(-1)[0]
    torch.testing.assert_close(maps[0], want)


def test_head_patterns_back_the_pages_reading():
    means = generate.head_patterns(MODEL)
    text = generate.PASSAGE
    rows = range(8, len(text))
    assert means["uniform"] == pytest.approx(sum(1 / (t + 1) for t in rows) / len(rows))
    heads = means["self"].shape[1]
    best = {p: divmod(means[p].argmax().item(), heads) for p in means if p != "uniform"}
    # "Three heads of the first layer": 1, 2 and 3 back, three different heads.
    back = [best[p] for p in ("1 back", "2 back", "3 back")]
    assert {layer for layer, _ in back} == {0} and len(set(back)) == 3
    # "most of them in the deeper layers": the best line-start head is not in
    # the first layer, and neither are most heads above twice the uniform share.
    assert best["line start"][0] > 0
    above = (means["line start"] > 2 * means["uniform"]).nonzero().tolist()
    assert sum(layer > 0 for layer, _ in above) > len(above) / 2
    # "the highest scores there are the heads that read one, two or three back"
    assert best["word start"] in back


def test_zeroing_a_heads_output_columns_silences_that_head():
    # The Try-this box's intervention: zeroing head h's Dk columns of W^O
    # gives the output with head h's attention output replaced by zeros.
    torch.manual_seed(0)
    mha = generate.MultiHeadAttention(12, 3).eval()
    x = torch.randn(2, 5, 12)
    h, d_k = 1, mha.d_k
    with torch.no_grad():
        q, k, v = mha.query(x), mha.key(x), mha.value(x)  # [B, H, S, Dk]
        heads = torch.nn.functional.scaled_dot_product_attention(
            q, k, v, is_causal=True
        )
        heads[:, h] = 0
        want = mha.output(heads.transpose(1, 2).reshape(2, 5, 12))
        mha.output.weight[:, h * d_k : (h + 1) * d_k] = 0
        got = mha(query=x, key=x, value=x, is_causal=True)
    torch.testing.assert_close(got, want)


def test_heads_passage_is_validation_text():
    text = cached_corpus(ROOT / "data").read_text(encoding="utf-8")
    cfg = train.PRESETS["cpu"]
    cut = int(len(text) * (1 - cfg.val_fraction))
    assert generate.PASSAGE in text[cut:] and generate.PASSAGE not in text[:cut]
    assert len(generate.PASSAGE) <= cfg.context
