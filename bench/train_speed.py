"""How fast `train.py` trains and samples on this machine's CPU.

    python bench/train_speed.py [--threads 1 2] [--repeats 30] [--compile]

For the `cpu` preset and the reference configuration (n_layer 4, n_head 4,
d_model 128, context 64, batch 12, no dropout) it times `train.train_step`,
the step `train.py` runs, on batches of the real corpus, and prints:

* ms per step (median) and tokens per second;
* the model's FLOPs per token, counted as `6 N + 12 L T D` for `N` parameters
  (the position table left out; the output layer shares the token table),
  `L` blocks, context `T` and width `D`: multiply-adds of the weights,
  forward and backward, plus the attention scores and their weighted sums;
* utilisation: the FLOP/s achieved divided by the fp32 matrix-product FLOP/s
  measured in the same process with the same threads. Both fall when another
  program takes the cores, so the ratio holds on a busy machine far better
  than a time does.

Then sampling speed at batch 1 for each configuration, over three windows'
worth of characters (so the window is re-encoded on the way): with the
key/value cache through the model's own forward (what `generate.generate`
does by default), with the cache through the faster decoder of
`trainkit/decode.py` (`fast=True`), and recomputing the whole window for each
character; the ratios are to the last.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[0] = str(ROOT)
# As train.py does, before PyTorch loads: waiting threads sleep, not spin.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import torch  # noqa: E402

import generate  # noqa: E402
import train  # noqa: E402
from bench.timing import format_table, median_seconds  # noqa: E402
from trainkit.corpus import read_text  # noqa: E402

REFERENCE = replace(
    train.PRESETS["cpu"],
    n_layer=4,
    n_head=4,
    d_model=128,
    context=64,
    batch_size=12,
    dropout=0.0,
)


def flops_per_token(model: train.CharTransformer, cfg: train.Config) -> int:
    """Training FLOPs per token: `6 N + 12 L T D` (see the module docstring)."""
    n = sum(p.numel() for p in model.parameters()) - model.position.weight.numel()
    return 6 * n + 12 * cfg.n_layer * cfg.context * cfg.d_model


def matmul_peak(n: int = 1024, repeats: int = 10) -> float:
    """FLOP/s of an `n x n` by `n x n` fp32 matrix product."""
    a, b = torch.randn(n, n), torch.randn(n, n)
    return 2 * n**3 / median_seconds(lambda: a @ b, warmup=3, repeats=repeats)


def step_timing(cfg, data, vocab_size: int, repeats: int, compile_: bool):
    """(seconds per step, model) for `cfg`, on batches of `data`."""
    torch.manual_seed(cfg.seed)
    model = train.CharTransformer(cfg, vocab_size)
    optimizer = train.make_optimizer(model, cfg)
    trained = torch.compile(model) if compile_ else model
    rng = torch.Generator().manual_seed(cfg.seed)

    def step():
        x, y = train.get_batch(data, cfg, rng, 0, 1)
        train.train_step(trained, optimizer, x, y, cfg)

    warmup = 20 if compile_ else 5
    return median_seconds(step, warmup=warmup, repeats=repeats), model


def sampling_speed(
    model: train.CharTransformer, use_cache: bool, fast: bool = False
) -> float:
    """Characters per second at batch 1 over three windows' worth."""
    tokens = 3 * model.context
    prompt = torch.zeros(1, dtype=torch.long)

    def run():
        rng = torch.Generator().manual_seed(0)
        for _ in generate.generate(
            model, prompt, tokens, rng=rng, use_cache=use_cache, fast=fast
        ):
            pass

    return tokens / median_seconds(run, warmup=1, repeats=3)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--repeats", type=int, default=30, help="steps timed")
    parser.add_argument("--compile", action="store_true", help="also compiled")
    parser.add_argument("--no-sampling", action="store_true")
    args = parser.parse_args()

    text, _ = read_text("", ROOT / "data")
    vocab = train.Vocab.of(text)
    data = vocab.encode(text)
    configs = {"cpu preset": train.PRESETS["cpu"], "reference": REFERENCE}
    print(f"OMP_WAIT_POLICY={os.environ['OMP_WAIT_POLICY']}, {os.cpu_count()} cores")
    print(f"load average at start: {os.getloadavg()[0]:.2f}\n")
    rows, models = [], {}
    for threads in args.threads:
        torch.set_num_threads(threads)
        for name, cfg in configs.items():
            for compiled in (False, True) if args.compile else (False,):
                peak = matmul_peak()
                seconds, model = step_timing(
                    cfg, data, len(vocab), args.repeats, compiled
                )
                peak = max(peak, matmul_peak())
                models[name] = model
                flops = flops_per_token(model, cfg)
                tokens = cfg.batch_size * cfg.context / seconds
                rows.append(
                    [
                        name + (" (compiled)" if compiled else ""),
                        threads,
                        f"{seconds * 1e3:.1f}",
                        f"{tokens:,.0f}",
                        f"{flops / 1e6:.2f}",
                        f"{flops * tokens / 1e9:.1f}",
                        f"{peak / 1e9:.1f}",
                        f"{flops * tokens / peak:.0%}",
                    ]
                )
                print(f"  measured {rows[-1][0]}, {threads} thread(s)", flush=True)
    headers = ["config", "threads", "ms/step", "tokens/s", "MFLOP/token"]
    headers += ["GFLOP/s", "matmul peak GFLOP/s", "utilisation"]
    print("\nTraining step\n")
    print(format_table(headers, rows))
    if args.no_sampling:
        return
    torch.set_num_threads(1)
    rows = []
    for name, model in models.items():
        model.eval()
        cached = sampling_speed(model, use_cache=True)
        fast = sampling_speed(model, use_cache=True, fast=True)
        recomputed = sampling_speed(model, use_cache=False)
        rows.append(
            [name, model.context, f"{recomputed:,.0f}", f"{cached:,.0f}",
             f"{cached / recomputed:.1f}x", f"{fast:,.0f}",
             f"{fast / recomputed:.1f}x"]
        )  # fmt: skip
    print("\nSampling at batch 1, 1 thread (characters/s)\n")
    headers = [
        "config", "context", "recompute window", "KV cache", "ratio",
        "cache + fast decoder", "ratio",
    ]  # fmt: skip
    print(format_table(headers, rows))
    print(f"\nload average at end: {os.getloadavg()[0]:.2f} ({time.ctime()})")


if __name__ == "__main__":
    main()
