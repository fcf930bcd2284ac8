"""Benchmark `mha.MultiHeadAttention` against PyTorch, as ratios to a reference.

    python bench/mha_speed.py [--threads N] [--repeats N] [--no-memory] [--quick]

For each shape (batch, seq, d_model, heads) it times causal self-attention
forward (eval, no grad) and forward+backward (train) for

* ours, fast path (`scaled_dot_product_attention`); in training, self-attention
  makes its three projections one product;
* ours with three products: the same call with `key`/`value` a view of the
  query (another tensor object, so the module cannot tell it is
  self-attention and projects each separately), to measure that one product;
* ours, explicit path (`need_weights=True`, the teaching function);
* `torch.nn.MultiheadAttention` (batch first, `need_weights=False`,
  `is_causal=True` with its mask);
* the reference: one fused qkv `nn.Linear`, `scaled_dot_product_attention(
  is_causal=True)`, an output `nn.Linear`;

and prints each median time as a ratio to the reference measured in the same
run, with the peak memory of one call measured in a fresh subprocess. Then it
compares decoding 512 tokens with the key/value cache against recomputing the
prefix at every step, the cached steps taken two ways: calling the module, and
through `trainkit.decode.attention_step`, the lean step sampling uses (the
same operations without the module calls and argument checks).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[0] = str(ROOT)  # the repository root: `mha`, `bench.timing`
# Before PyTorch loads: on a shared machine, waiting threads sleep, not spin.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch import nn  # noqa: E402

from bench.timing import format_table, median_ratio, peak_rss, times_each  # noqa: E402
from mha import MultiHeadAttention, causal_mask  # noqa: E402
from trainkit.decode import attention_step  # noqa: E402

SHAPES = ((12, 64, 128, 4), (16, 256, 384, 6), (4, 1024, 512, 8), (1, 4096, 512, 8))
IMPLS = ("ours, fast", "ours, 3 products", "ours, explicit", "torch MHA", "reference")
MODES = ("eval", "train")
DECODE = dict(tokens=512, d_model=384, heads=6, batches=(1, 8))
WAYS = ("kv cache", "kv cache, lean step", "recompute")


class FusedReference(nn.Module):
    """The minimal causal self-attention every other implementation is compared to."""

    def __init__(self, d_model: int, heads: int):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.out = nn.Linear(d_model, d_model)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, seq, d_model = x.shape
        # [B, S, 3 D] -> [B, S, 3, H, Dk] -> [3, B, H, S, Dk]
        qkv = self.qkv(x).view(batch, seq, 3, self.heads, d_model // self.heads)
        q, k, v = qkv.permute(2, 0, 3, 1, 4)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.out(y.transpose(1, 2).reshape(batch, seq, d_model))


def build(impl: str, seq: int, d_model: int, heads: int) -> tuple[nn.Module, Callable]:
    """The module and a function `x -> output` doing causal self-attention."""
    if impl in ("ours, fast", "ours, 3 products", "ours, explicit"):
        ours = MultiHeadAttention(d_model, heads)
        weights = impl == "ours, explicit"
        separate = impl == "ours, 3 products"

        def run(x):
            kv = x.view_as(x) if separate else x  # not `query`: three products
            out = ours(query=x, key=kv, value=kv, is_causal=True, need_weights=weights)
            return out[0] if weights else out

        return ours, run
    if impl == "torch MHA":
        ref = nn.MultiheadAttention(d_model, heads, batch_first=True)
        # PyTorch's boolean attn_mask is True where attending is NOT allowed.
        blocked = ~causal_mask(seq)

        def run(x):
            return ref(x, x, x, attn_mask=blocked, is_causal=True, need_weights=False)[
                0
            ]

        return ref, run
    if impl == "reference":
        fused = FusedReference(d_model, heads)
        return fused, fused
    raise ValueError(f"build: impl must be one of {IMPLS}, got {impl!r}")


def make_case(
    impl: str, mode: str, batch: int, seq: int, d_model: int, heads: int
) -> Callable[[], object]:
    """A zero-argument call: one forward (eval) or forward+backward (train)."""
    torch.manual_seed(0)
    module, run = build(impl, seq, d_model, heads)
    x = torch.randn(batch, seq, d_model)
    if mode == "eval":
        module.eval()

        def forward():
            with torch.no_grad():
                return run(x)

        return forward
    if mode != "train":
        raise ValueError(f"make_case: mode must be one of {MODES}, got {mode!r}")
    module.train()
    x.requires_grad_(True)
    grad = torch.randn(batch, seq, d_model)

    def forward_backward():
        module.zero_grad(set_to_none=True)
        x.grad = None
        run(x).backward(grad)

    return forward_backward


def memory_case(threads: int, *args) -> Callable[[], object]:
    """`make_case` in a fresh subprocess (see `bench.timing.peak_rss`)."""
    torch.set_num_threads(threads)
    return make_case(*args)


def decode_case(
    way: str, batch: int, tokens: int, d_model: int, heads: int
) -> Callable[[], object]:
    """Produce `tokens` outputs one step at a time, with the cache or without."""
    torch.manual_seed(0)
    mha = MultiHeadAttention(d_model, heads).eval()
    x = torch.randn(batch, tokens, d_model)
    cache = mha.new_cache(batch, tokens)

    @torch.no_grad()
    def cached():
        cache.reset()
        for t in range(tokens):
            step = x[:, t : t + 1]
            mha(query=step, key=step, value=step, is_causal=True, kv_cache=cache)

    step = attention_step(mha)

    @torch.no_grad()
    def lean():
        cache.reset()
        for t in range(tokens):
            step(x[:, t], batch, cache)  # rows [B, D]: one new position each

    @torch.no_grad()
    def recompute():
        for t in range(1, tokens + 1):
            prefix = x[:, :t]
            mha(query=prefix, key=prefix, value=prefix, is_causal=True)[:, -1]

    return dict(zip(WAYS, (cached, lean, recompute), strict=True))[way]


def mib(n_bytes: int) -> str:
    return f"{n_bytes / 2**20:.0f}"


def bench_shapes(args: argparse.Namespace) -> str:
    rows = []
    for shape in SHAPES[:2] if args.quick else SHAPES:
        # The explicit path's [B, H, S, S] matrices make the longest shape slow.
        repeats = max(3, args.repeats // 2) if shape[1] >= 1024 else args.repeats
        for mode in MODES:
            calls = {impl: make_case(impl, mode, *shape) for impl in IMPLS}
            times = times_each(calls, warmup=1, repeats=repeats)
            memory = {
                impl: peak_rss(
                    "bench.mha_speed:memory_case", args.threads, impl, mode, *shape
                )
                for impl in (IMPLS if args.memory else ())
            }
            for impl in IMPLS:
                ratio = median_ratio(times[impl], times["reference"])
                ms = statistics.median(times[impl]) * 1e3
                row = [shape, mode, impl, f"{ms:.2f}", f"{ratio:.2f}"]
                if args.memory:
                    m, m_ref = memory[impl].call, memory["reference"].call
                    row += [mib(m), f"{m / m_ref:.2f}"]
                rows.append(row)
            print(f"  measured {shape} {mode}", file=sys.stderr, flush=True)
    headers = ["(B, S, D, H)", "mode", "implementation", "median ms", "× ref"]
    if args.memory:
        headers += ["peak MiB", "mem × ref"]
    return format_table(headers, rows)


def bench_decoding(args: argparse.Namespace) -> str:
    tokens, d_model, heads = DECODE["tokens"], DECODE["d_model"], DECODE["heads"]
    rows = []
    for batch in DECODE["batches"]:
        ways = {way: decode_case(way, batch, tokens, d_model, heads) for way in WAYS}
        # Recomputing is O(T^2): a few rounds are enough at batch 1, one at 8.
        times = times_each(ways, warmup=0, repeats=3 if batch == 1 else 1)
        speed = {way: batch * tokens / statistics.median(times[way]) for way in WAYS}
        ups = [median_ratio(times["recompute"], times[way]) for way in WAYS[:2]]
        rows.append(
            [batch, *(f"{speed[way]:.0f}" for way in WAYS), *(f"{u:.1f}" for u in ups)]
        )
    headers = ["batch", *(f"{way} tok/s" for way in WAYS)]
    headers += ["speed-up", "speed-up, lean"]
    return format_table(headers, rows)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--threads", type=int, default=torch.get_num_threads())
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--no-memory", dest="memory", action="store_false")
    parser.add_argument("--quick", action="store_true", help="two small shapes")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    print(f"torch {torch.__version__}, {args.threads} thread(s), causal self-attention")
    print(f"\n{bench_shapes(args)}\n")
    print(
        f"Decoding {DECODE['tokens']} tokens, d_model={DECODE['d_model']}, "
        f"heads={DECODE['heads']}:\n"
    )
    print(bench_decoding(args))


if __name__ == "__main__":
    main()
