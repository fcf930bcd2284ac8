r"""
---
title: Generating text
summary: Sampling from the trained Shakespeare model with temperature, top-k, the
  key/value cache that makes each new character cheap, and what the trained
  heads look at.
---

# Generating text

CHAPTER-5-INTRO
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import torch

import mha_report as report
from literate.words import tr  # a figure's words in the page's language
from mha import MultiHeadAttention
from train import RECORDED, CharTransformer, block_with_weights, load_model
from trainkit.decode import decoder

# **The same result.** Decode `steps` positions one at a time with a cache,
# each step passing only the newest token, and compare every output with
# attention recomputed over the whole sequence under the causal mask.


def check_cache(steps: int = 48, d_model: int = 64, heads: int = 4) -> None:
    torch.manual_seed(0)
    mha = MultiHeadAttention(d_model, heads).eval()
    x = torch.randn(2, steps, d_model)  # [B, S, D]
    cache = mha.new_cache(2, steps)
    with torch.no_grad():
        full = mha(query=x, key=x, value=x, is_causal=True)  # [B, S, D]
        step_by_step = torch.cat(
            [
                mha(query=token, key=token, value=token, kv_cache=cache)
                for token in x.split(1, dim=1)  # S times [B, 1, D]
            ],
            dim=1,
        )
    difference = (step_by_step - full).abs().max().item()
    print(f"{steps} positions decoded one at a time with the cache;")
    print(f"largest difference from recomputing the prefix: {difference:.1e}")


#| check_cache()

# **The time it saves.** `bench/kv_cache.py` times one new token with and
# without the cache at several prefix lengths and writes
# `runs/mha/kv_cache.json`. The figure is drawn from that recorded file, not
# timed while the page is built (slow, and noisy); the command and settings
# below come from the file, and `runs/mha/README.md` describes the machine.
# Both axes are on a log scale. The recomputed step grows fastest, since it
# redoes everything for the whole prefix; the cached step grows slowly,
# because only its attention over the stored keys gets longer; and the gap
# between them widens with the prefix.

KV_TIMING = Path("runs/mha/kv_cache.json")


def plot_recorded_kv_timing(path: Path = KV_TIMING) -> None:
    record = json.loads(path.read_text())
    print(f"recorded with: {record['command']}")
    print(f"d_model {record['d_model']}, {record['heads']} heads, batch", end=" ")
    print(f"{record['batch']}, PyTorch {record['torch']}, threads {record['threads']}")
    report.plot_kv_timing(record)


#| plot_recorded_kv_timing()  | alt: ms per token: recomputing grows faster than cached

# ## Sampling
#
# The model gives logits for the next character. Dividing them by a
# *temperature* below 1 sharpens the distribution (safer, duller text); above 1
# flattens it. *Top-k* keeps only the `top_k` likeliest characters, so that a
# rare slip is never drawn. The draw is made on the CPU by a seeded generator:
# the same seed writes the same text.


def next_token(logits, temperature: float, top_k: int | None, rng) -> int:
    logits = logits.float().cpu() / temperature  # [N]
    if top_k is not None and top_k < logits.numel():
        kth = torch.topk(logits, top_k).values[-1]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    return torch.multinomial(logits.softmax(-1), 1, generator=rng).item()


# Without a cache, each new character runs the model over the whole window
# again: the projections and feed-forward networks of all $S$ positions, and
# attention among them, $O(S^2)$. With the key/value caches of `mha.py`, each
# block keeps the keys and values of the positions it has seen, so a new
# character costs the work of one position and its attention over the cached
# ones, $O(S)$. The first chapter checks that [the cache](mha.html#KVCache)
# gives the same result, and shows a recorded timing of both ways.
#
# The window cannot slide one character at a time past `context`: position
# embeddings are absolute, and every cached key was computed at its old
# position. When the window is full we *re-encode*: empty the caches and run
# the last `keep` characters as a fresh prompt, at positions $0, 1, \ldots$.
# That costs `keep` positions once every `context - keep + 1` characters, a
# bounded amount per character. Without the cache the same windows are
# recomputed whole, so both ways see the same windows and, with the same seed,
# write the same text.


@torch.inference_mode()
def generate(
    model: CharTransformer,
    prompt: torch.Tensor,
    tokens: int,
    *,
    temperature: float = 1.0,
    top_k: int | None = None,
    rng: torch.Generator | None = None,
    use_cache: bool = True,
    keep: int | None = None,
) -> Iterator[int]:
    """Yield `tokens` new ids continuing `prompt` (1-D ids), one at a time."""
    if len(prompt) == 0:
        raise ValueError("generate: the prompt must hold at least one id")
    model.eval()
    device = next(model.parameters()).device
    keep = keep or max(1, model.context // 2)
    # `seq` is the text so far; the model sees its last `window` ids. With
    # the cache, only the `new` ones are run: the cache holds the rest.
    seq = prompt.tolist()[-model.context :]
    window, new = len(seq), seq
    caches = model.new_caches(1) if use_cache else None
    # The cached steps run through `decoder`: the same operations as
    # `model(ids, caches)`, with fewer Python calls (see `trainkit/decode.py`).
    forward = decoder(model) if use_cache else model
    for _ in range(tokens):
        ids = new if use_cache else seq[-window:]
        logits = forward(torch.tensor([ids], device=device), caches)[0, -1]
        token = next_token(logits, temperature, top_k, rng)
        yield token
        seq.append(token)
        # A full window restarts from its last `keep` ids; otherwise it grows
        # by the new one.
        if window == model.context:
            window, new = keep, seq[-keep:]
            for cache in caches or []:
                cache.reset()
        else:
            window, new = window + 1, [token]


# `generate` draws from the full distribution by default (temperature 1, no
# top-k); `python train.py sample` defaults to temperature 0.8 and top-k 40,
# the settings of the sample below.


# ## What the trained heads look at
#
# The first chapter said that heads can learn different things. Here is the
# recorded model reading a passage of the validation text, which it never
# trained on, with every head's attention weights. `attention_maps` runs the
# blocks one by one with `block_with_weights`.

PASSAGE = (
    "ROMEO:\nIs the day so young?\n\nBENVOLIO:\nBut new struck nine.\n\n"
    "ROMEO:\nAy me! sad hours seem long.\n"
)


@torch.no_grad()
def attention_maps(model: CharTransformer, ids: torch.Tensor) -> torch.Tensor:
    """The weights of every head for `ids` `[S]`: `[L, H, S, S]`."""
    model.eval()
    positions = torch.arange(len(ids))
    x = model.token(ids[None]) + model.position(positions)  # [1, S, D]
    maps = []
    for block in model.blocks:
        x, weights = block_with_weights(block, x)  # weights [1, H, S, S]
        maps.append(weights[0])
    return torch.stack(maps)


# The figure shows the passage's first lines: layers are rows, heads are
# columns, and each map is `[S, S]`, one row per character reading the
# characters before it (columns; above the diagonal is masked). Brighter is
# more weight; the colour scale is a square root, so that weights of a few
# percent still show.


def show_heads(path: Path = RECORDED / "model.pt", text: str = PASSAGE, n: int = 60):
    import matplotlib.pyplot as plt
    from matplotlib.colors import PowerNorm

    model, vocab = load_model(path, torch.device("cpu"))
    maps = attention_maps(model, vocab.encode(text[:n]))  # [L, H, S, S]
    layers, heads, s, _ = maps.shape
    above = torch.ones(s, s, dtype=torch.bool).triu(1)
    fig, axes = plt.subplots(layers, heads, figsize=(7, 7.4), squeeze=False)
    for layer, head in np.ndindex(layers, heads):
        ax = axes[layer, head]
        shown = maps[layer, head].masked_fill(above, float("nan"))
        ax.imshow(shown, cmap="viridis", norm=PowerNorm(0.5, 0, 1))
        ax.set_xticks([])
        ax.set_yticks([])
        ax.set_title(tr("layer {l}, head {h}").format(l=layer, h=head), fontsize=8)
    fig.tight_layout()
    return fig


#| show_heads()  | alt: 16 attention maps, 4 layers by 4 heads, over the passage's start

# Some maps are thin lines just below the diagonal, others are bright in a
# few columns, others diffuse. To put numbers on what the figure shows, for
# each head: the mean weight a character puts on itself, on the characters
# one, two and three places back, on the last space or newline before it
# (where its word starts), and on the last newline before it (where its line
# starts), over every position of the whole passage from the eighth on. A
# head that spread its weight evenly would put `uniform` on each.


def head_patterns(path: Path = RECORDED / "model.pt", text: str = PASSAGE) -> dict:
    """Each pattern's mean weight for every head, `[L, H]`, and `uniform`'s."""
    model, vocab = load_model(path, torch.device("cpu"))
    maps = attention_maps(model, vocab.encode(text))  # [L, H, S, S]
    rows = range(8, len(text))

    def last(chars: str, t: int) -> int:
        return max(text.rfind(c, 0, t) for c in chars)

    keys = {
        "self": [t for t in rows],
        "1 back": [t - 1 for t in rows],
        "2 back": [t - 2 for t in rows],
        "3 back": [t - 3 for t in rows],
        "word start": [last(" \n", t) for t in rows],
        "line start": [last("\n", t) for t in rows],
    }
    queries = torch.tensor(rows)
    # [L, H, len(rows)] -> [L, H]: the weight on the chosen key, averaged.
    means = {n: maps[:, :, queries, torch.tensor(k)].mean(-1) for n, k in keys.items()}
    means["uniform"] = sum(1 / (t + 1) for t in rows) / len(rows)
    return means


def print_head_patterns() -> None:
    means = head_patterns()
    names = [n for n in means if n != "uniform"]
    shown = {
        "self": tr("self"),
        "1 back": tr("1 back"),
        "2 back": tr("2 back"),
        "3 back": tr("3 back"),
        "word start": tr("word start"),
        "line start": tr("line start"),
    }
    rows = [
        [f"{layer}, {head}"] + [f"{means[n][layer, head]:.2f}" for n in names]
        for layer, head in np.ndindex(*means["self"].shape)
    ]
    rows.append([tr("uniform")] + [f"{means['uniform']:.2f}" for _ in names])
    header = [tr("layer, head")] + [shown[n] for n in names]
    print(report.markdown_table(header, rows, align="l" + "r" * len(names)))


#| print_head_patterns()

# The head that scores highest on each pattern, drawn larger over the
# passage's first lines, with its characters (`↵` is the newline, `·` the
# space):
#
# What the figures and the table show:
#
# * **The characters just before.** Three heads of the first layer are
#   lines at a fixed distance below the diagonal: one reads the previous
#   character, one the character two back, and one mostly the character
#   three back (the table's `1 back`, `2 back` and `3 back` columns). Between
#   them they hand each position the few characters before it, the context
#   an n-gram model would count; the later layers build on that.
# * **Where the line starts.** A few heads, most of them in the deeper
#   layers, put several times their even share on the newline that began the
#   current line (the `line start` column). In the figure, every character of
#   "Is the day so young?" looks back at the newline after "ROMEO:".
# * **The rest.** The other heads spread their weight over many earlier
#   characters, and none of the table's patterns describes them. No head
#   reads `word start` the way the first layer reads its fixed distances:
#   the highest scores there are the heads that read one, two or three back,
#   since a word's first letters sit just after its space. What the diffuse
#   heads do would take more than one passage to tell.
#
# None of this was designed: nothing in the code asks a head for a pattern.
# These are what training found useful for predicting the next character.


def show_chosen_heads(path: Path = RECORDED / "model.pt", n: int = 36):
    import matplotlib.pyplot as plt
    from matplotlib.colors import PowerNorm

    means = head_patterns(path)
    model, vocab = load_model(path, torch.device("cpu"))
    text = PASSAGE[:n]
    maps = attention_maps(model, vocab.encode(text))  # [L, H, S, S]
    labels = [{"\n": "↵", " ": "·"}.get(c, c) for c in text]
    above = torch.ones(n, n, dtype=torch.bool).triu(1)
    chosen = {"1 back": tr("1 back"), "2 back": tr("2 back")}
    chosen["line start"] = tr("line start")  # pattern -> its name on the page
    fig, axes = plt.subplots(len(chosen), 1, figsize=(4.6, 4.6 * len(chosen)))
    for ax, (pattern, name) in zip(axes, chosen.items(), strict=True):
        layer, head = divmod(means[pattern].argmax().item(), maps.shape[1])
        shown = maps[layer, head].masked_fill(above, float("nan"))
        ax.imshow(shown, cmap="viridis", norm=PowerNorm(0.5, 0, 1))
        ax.set_xticks(range(n), labels, fontsize=7)
        ax.set_yticks(range(n), labels, fontsize=7)
        title = tr("{name}: layer {l}, head {h}").format(name=name, l=layer, h=head)
        ax.set_title(title, fontsize=10)
        ax.set_xlabel(tr("read (key)"))
        ax.set_ylabel(tr("reading (query)"))
    fig.tight_layout()
    return fig


#| show_chosen_heads()  | alt: three heads over 40 characters, each named by its pattern

# `python generate.py` samples from the recorded model, as
# `python train.py sample` does.

if __name__ == "__main__":
    import sys

    from train import sample

    sample(sys.argv[1:])
