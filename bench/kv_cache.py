"""Time one generated token with and without the key/value cache, by prefix length.

    python bench/kv_cache.py [--threads N] [--repeats N] [--out FILE]

For each prefix length t it times producing the output of token t + 1 with
one `mha.MultiHeadAttention` in eval mode, batch 1:

* recompute: causal self-attention over all t + 1 tokens, the last row kept;
* cache: one step with a key/value cache that already holds t positions.

It prints the median milliseconds of each and their ratio, and writes them to
`runs/mha/kv_cache.json`, which the mha.py page plots. Rounds alternate between
the two ways, so that load on a shared machine hits both alike.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[0] = str(ROOT)  # the repository root: `mha`, `bench.timing`
# Before PyTorch loads: on a shared machine, waiting threads sleep, not spin.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import torch  # noqa: E402

from bench.timing import format_table, times_each  # noqa: E402
from mha import MultiHeadAttention  # noqa: E402

PREFIXES = (16, 32, 64, 128, 256, 512, 1024, 2048)
D_MODEL, HEADS = 384, 6  # the width of train.py's gpu preset


def cases(prefix: int, mha: MultiHeadAttention) -> dict[str, object]:
    """Two zero-argument calls producing the output of token `prefix + 1`."""
    x = torch.randn(1, prefix + 1, D_MODEL)  # [B, S, D]
    cache = mha.new_cache(1, prefix + 1)
    with torch.no_grad():
        head = x[:, :prefix]
        mha(query=head, key=head, value=head, is_causal=True, kv_cache=cache)
    token = x[:, prefix:]  # [B, 1, D]

    @torch.no_grad()
    def recompute():
        return mha(query=x, key=x, value=x, is_causal=True)[:, -1]

    @torch.no_grad()
    def cached():
        cache.length = prefix  # forget the token this call added last time
        return mha(query=token, key=token, value=token, kv_cache=cache)[:, -1]

    return {"recompute": recompute, "cache": cached}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=21)
    parser.add_argument("--out", type=Path, default=ROOT / "runs/mha/kv_cache.json")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    mha = MultiHeadAttention(D_MODEL, HEADS).eval()
    record = {
        "command": f"python bench/kv_cache.py --threads {args.threads} "
        f"--repeats {args.repeats}",
        "d_model": D_MODEL,
        "heads": HEADS,
        "batch": 1,
        "threads": args.threads,
        "torch": torch.__version__,
        "machine": platform.machine(),
        "prefix": list(PREFIXES),
        "recompute_ms": [],
        "cache_ms": [],
    }
    rows = []
    for prefix in PREFIXES:
        times = times_each(cases(prefix, mha), warmup=3, repeats=args.repeats)
        ms = {way: 1e3 * statistics.median(t) for way, t in times.items()}
        record["recompute_ms"].append(round(ms["recompute"], 4))
        record["cache_ms"].append(round(ms["cache"], 4))
        ratio = ms["recompute"] / ms["cache"]
        rows.append(
            [prefix, f"{ms['recompute']:.3f}", f"{ms['cache']:.3f}", f"{ratio:.1f}x"]
        )
    header = ["prefix", "recompute ms", "cache ms", "recompute / cache"]
    print(format_table(header, rows))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(record, indent=2) + "\n")
    out = args.out.resolve()
    print(f"wrote {out.relative_to(ROOT) if out.is_relative_to(ROOT) else out}")


if __name__ == "__main__":
    main()
