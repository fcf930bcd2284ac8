r"""
---
title: Generating text
summary: Sampling from the trained Shakespeare model one character at a time,
  temperature and top-k, the key/value cache that makes each new character
  cheap, what the trained heads look at, and where to go next.
---

# Generating text

[Chapter 4](train.html) trained a small transformer on Shakespeare's plays
and saved it as `runs/cpu/model.pt`, which ships with the repository. This
chapter writes text with it. At every position the model gives a score, a
*logit*, for each character that could come next. To write, we give it a
prompt, turn the logits at the last position into probabilities, draw one
character, append it to the text, and repeat: one character at a time, each
drawn given everything before it.

The page follows that loop: how the draw is made (temperature and top-k);
the key/value cache, which lets each new character cost the work of one
position instead of the whole text; what happens when the text outgrows the
model's window; `generate`, which does all of it; then what the trained
model's heads look at, and where to go from here.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path

import torch
import torch.nn.functional as F

import generate_report as report
from literate.data import Data  # JSON for the page's scripts
from literate.words import tr  # a figure's words in the page's language
from mha import MultiHeadAttention
from train import RECORDED, CharTransformer, load_model
from trainkit import cli
from trainkit.config import SEEDS  # python train.py sample's seeds
from trainkit.decode import decoder

MODEL = RECORDED / "model.pt"  # the model chapter 4 trained
CPU = torch.device("cpu")
PAGE_SEEDS = range(2**32)  # the page's generator takes a 32-bit seed (model.js)

# ## Temperature and top-k
#
# After the prompt `ROMEO:` and a newline, a speech begins. Here is what the
# model expects as its first character: the six characters it finds likeliest
# and, in the last row, the share of all the others, at three temperatures
# `T`, and at `T = 1` with only the five likeliest kept.

PROMPT = "ROMEO:\n"


def next_char_table(path: Path = MODEL, prompt: str = PROMPT) -> None:
    model, vocab = load_model(path, CPU)
    with torch.no_grad():
        logits = model(vocab.encode(prompt)[None])[0, -1]  # [N]
    columns = {f"T = {t}": distribution(logits, t, None) for t in (0.5, 1, 1.5)}
    columns["T = 1, top-k 5"] = distribution(logits, 1.0, 5)
    print(report.distribution_table(vocab.chars, columns))


#| next_char_table()

# Every column comes from the same logits $z$. The temperature divides them
# before the softmax,
#
# $$
# p_i = \frac{e^{z_i / T}}{\sum_j e^{z_j / T}}.
# $$
#
# Below 1 it stretches the gaps between the logits, so the likeliest
# characters take more of the probability (compare the first rows of the
# `T = 0.5` and `T = 1` columns): safer text, and duller. Above 1 it shrinks
# the gaps and flattens the distribution towards uniform (the last row
# grows): more surprising text, and more misspelt words. At `T = 1` the
# distribution is the model's own.
#
# *Top-k* keeps the `top_k` likeliest characters (and any tied with the
# last of them) and sets the logits of the
# others to $-\infty$, so that the softmax gives them exactly 0 and the kept
# ones share all the probability, in the same proportions as before: the
# last column. A rare slip is then never drawn.
#
# Try both in the generation box of
# [the model in this page](#the-model-in-this-page), below.


def distribution(logits, temperature: float, top_k: int | None):
    """The next character's probabilities `[N]` from its logits `[N]`."""
    logits = logits.float().cpu() / temperature  # z / T
    if top_k is not None and top_k < logits.numel():
        kth = torch.topk(logits, top_k).values[-1]  # the k-th largest
        logits = logits.masked_fill(logits < kth, float("-inf"))
    return logits.softmax(-1)


# The draw picks character $i$ with probability $p_i$. It is made on the CPU
# by a seeded generator `rng`, so the same seed writes the same text.


def next_token(logits, temperature: float, top_k: int | None, rng) -> int:
    p = distribution(logits, temperature, top_k)  # [N]
    return torch.multinomial(p, 1, generator=rng).item()


# !!! tip "Try this"
#     Draw 200 characters after `ROMEO:` at `T = 0.5` and at `T = 1.5`, with
#     the same seed. The function below does it with `generate` (defined
#     further down) and prints both: compare how many of the words are
#     English in each.


def try_temperatures(seed: int = 0, tokens: int = 200) -> None:
    model, vocab = load_model(MODEL, CPU)
    for temperature in (0.5, 1.5):
        rng = torch.Generator().manual_seed(seed)
        ids = generate(model, vocab.encode("ROMEO:"), tokens,
                       temperature=temperature, rng=rng)  # fmt: skip
        print(f"T = {temperature}:\nROMEO:{vocab.decode(list(ids))}\n")


#| try_temperatures()

# !!! tip "Try this"
#     Set `top_k=1`: only the likeliest character survives, so every draw is
#     the *greedy* choice and the seed no longer matters. The function below
#     writes 200 characters that way. Look at the output for the phrases that
#     come back again and again: once the text is in a loop, the likeliest
#     next character keeps it there.


def try_greedy(tokens: int = 200) -> None:
    model, vocab = load_model(MODEL, CPU)
    ids = generate(model, vocab.encode("ROMEO:"), tokens, top_k=1)
    print("ROMEO:" + vocab.decode(list(ids)))


#| try_greedy()

# ## The key/value cache
#
# Each new character needs the logits at one position, the last. For one
# attention layer alone that is one row of attention: the newest query
# against the keys and values of all the positions. Those keys and values
# are projections of the layer's input, and the input at an old position
# does not change when a character is added.
#
# In a stack of layers it is different. The keys and values of block $l+1$
# are projections of the *outputs* of block $l$ at every position. Without
# a cache the only way to have them is to run every position through block
# $l$ again, and through every block below it: for each new character the
# whole prefix is recomputed through every layer, $S$ positions and
# $S \times S$ attention scores a layer.
#
# The causal mask is what saves the work. An old position's output never
# depends on the characters after it, so once a block has computed the key
# and value of a position, they stay right however long the text grows. A
# *key/value cache* keeps them, one per block. For a new character each block
# computes one position, the new one: it appends that position's key and
# value to its cache and attends from its query over everything cached. Per
# character that is the projections and feed-forward network of one
# position, and attention over $S$ stored keys, in each of the $L$ blocks,
# instead of $S$ positions' projections and $S \times S$ scores.
#
# The class is [`KVCache`](mha.html#KVCache), from chapter 2:
# `MultiHeadAttention` takes it as `kv_cache`, and
# [`CharTransformer`](train.html#CharTransformer) hands each block its own
# (`model(ids, caches)`, with `model.new_caches(1)`).
#
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
    print(tr("{n} positions decoded one at a time with the cache;").format(n=steps))
    print(tr("largest difference from recomputing the prefix: {d}").format(
        d=f"{difference:.1e}"))  # fmt: skip


#| check_cache()

# **The time it saves.** `bench/kv_cache.py` times one new token with and
# without the cache at several prefix lengths, for one attention module, and
# writes `runs/mha/kv_cache.json`. Its *recompute* way runs full causal
# attention over the whole prefix and keeps the last row: the work each
# block of a stack must do without a cache (one layer alone would need only
# that row). Its *cache* way is one step with a cache that already holds the
# prefix. The figure is drawn from the recorded file, not timed while the
# page is built (slow, and noisy); the command and settings below come from
# the file, and `runs/mha/README.md` describes the machine. Both axes are on
# a log scale. The recomputed step grows fastest, since it redoes all the
# prefix; the cached step grows slowly, because only its attention over the
# stored keys gets longer; and the gap between them widens with the prefix.
# The module timed is not chapter 4's model: it is wider, with more heads
# (the settings line below), and its prefixes run past that model's window.

KV_TIMING = Path("runs/mha/kv_cache.json")


def plot_recorded_kv_timing(path: Path = KV_TIMING) -> None:
    import mha_report

    record = json.loads(path.read_text())
    print(tr("recorded with: {command}").format(command=record["command"]))
    print(tr("d_model {d}, {h} heads, batch {b}, PyTorch {v}, threads {t}").format(
        d=record["d_model"], h=record["heads"], b=record["batch"],
        v=record["torch"], t=record["threads"]))  # fmt: skip
    mha_report.plot_kv_timing(record)


#| plot_recorded_kv_timing()  | alt: ms per token: recomputing grows faster than cached

# **What it costs in memory.** Each block stores a key and a value of
# $H \cdot D_k$ numbers for every position, so the caches hold
# $2 \cdot L \cdot H \cdot D_k$ numbers per token, each of some bytes. For
# the model of chapter 4 (its sizes are read from the model file):


def cache_memory(path: Path = MODEL) -> None:
    model, _ = load_model(path, CPU)
    attn = model.blocks[0].attn
    size = attn.key.linear.weight.element_size()  # bytes a number: 4 in float32
    caches = model.new_caches(1)  # one per block, [1, H, M, Dk] twice each
    full = sum(c.keys.nbytes + c.values.nbytes for c in caches)
    layers, context = len(model.blocks), model.context
    report.print_cache_memory(layers, attn.heads, attn.d_k, size, full, context)


#| cache_memory()

# Only keys and values are cached, not queries, so what shrinks the cache is
# fewer key/value heads. *Multi-query attention*
# ([Shazeer, 2019](https://arxiv.org/abs/1911.02150)) gives all $H$ query
# heads one shared key head and one value head, which divides the cache by
# $H$; *grouped-query attention*
# ([Ainslie et al., 2023](https://arxiv.org/abs/2305.13245)) shares one pair
# among each group of query heads, between the two.
#
# ## Re-encoding at the window's edge
#
# With the cache, the window cannot slide one character at a time past
# `context`: position embeddings are absolute, and every cached key was
# computed at its old position. When the window is full we *re-encode*:
# empty the caches and run the last `keep` characters as a fresh prompt, at
# positions $0, 1, \ldots$. That costs `keep` positions once every
# `context - keep + 1` characters, a bounded amount per character. Its
# price is context: after each re-encoding the model sees only `keep`
# characters, not `context`. Without the cache a window could slide,
# recomputed whole at every step; `use_cache=False` recomputes the same
# re-encoded windows instead, so both ways see the same windows and, with the
# same seed, write the same text.
#
# ## `generate`
#
# `generate` puts it together. With the cache, each step runs
# `model(ids, caches)` on the new ids only: the prompt at first, then one
# character at a time, and the last `keep` characters after a re-encoding.
# Without it (`use_cache=False`), each step runs `model(ids)` on the whole
# window.
#
# `fast=True` is a faster path for the same cached steps, for benchmarks:
# `trainkit/decode.py` reads the weights once and runs the same operations
# with fewer Python calls than the modules make (`bench/train_speed.py` times
# both). `tests/test_decode.py` checks that it gives the logits of
# `model(ids, caches)`. The sampling on this page, and
# `python train.py sample`, use the path taught here.


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
    fast: bool = False,
) -> Iterator[int]:
    """Yield `tokens` new ids continuing `prompt` (1-D ids), one at a time."""
    if len(prompt) == 0:
        raise ValueError("generate: the prompt must hold at least one id")
    if fast and not use_cache:
        raise ValueError("generate: fast=True is a path for the cache only")
    model.eval()
    device = next(model.parameters()).device
    keep = keep or max(1, model.context // 2)
    # `seq` is the text so far; the model sees its last `window` ids. With
    # the cache, only the `new` ones are run: the cache holds the rest.
    seq = prompt.tolist()[-model.context :]
    window, new = len(seq), seq
    caches = model.new_caches(1) if use_cache else None
    forward = decoder(model) if fast else model
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


# `generate` draws from the full distribution by default (`T = 1`, no
# top-k); `python train.py sample` has its own defaults, the settings of the
# recorded sample that [chapter 4](train.html) prints.
#
# !!! tip "Try this"
#     Turn the cache off. The function below writes 300 characters after
#     `ROMEO:` three ways with the same seed: with the cache, recomputing the
#     window at every step (`use_cache=False`), and through the faster path
#     (`fast=True`). It prints whether the other two wrote the same text as
#     the first, then the text. That is more than twice the model's window
#     (its `context`, printed above), so the text is re-encoded on the way.


def try_without_cache(tokens: int = 300, seed: int = 0) -> None:
    model, vocab = load_model(MODEL, CPU)
    ways = {
        tr("with the cache"): {},
        tr("recomputing the window"): {"use_cache": False},
        tr("the faster path"): {"fast": True},
    }
    texts = {}
    for name, options in ways.items():
        rng = torch.Generator().manual_seed(seed)
        ids = generate(model, vocab.encode("ROMEO:"), tokens, temperature=0.8,
                       top_k=40, rng=rng, **options)  # fmt: skip
        texts[name] = list(ids)
    report.print_same_text(texts, lambda ids: "ROMEO:" + vocab.decode(ids))


#| try_without_cache()

# ## What the trained heads look at
#
# Multi-head attention gives each head its own projections, so that heads
# can learn different things ([chapter 2](mha.html)). Here is the model of
# chapter 4 reading a passage of the validation text, which it never trained
# on, with every head's attention weights. `attention_maps` runs the blocks
# one by one, each with `need_weights=True`, so that it returns its weights.

PASSAGE = (
    "ROMEO:\nIs the day so young?\n\nBENVOLIO:\nBut new struck nine.\n\n"
    "ROMEO:\nAy me! sad hours seem long.\n"
)


@torch.no_grad()
def attention_maps(model: CharTransformer, ids: torch.Tensor) -> torch.Tensor:
    """The weights of every head for `ids` `[S]`: `[L, H, S, S]`."""
    model.eval()
    x = model.token(ids[None])  # [1, S, D], as CharTransformer.forward
    if model.positions:
        x = x + model.position(torch.arange(len(ids)))
    maps = []
    for block in model.blocks:
        x, weights = block(x, need_weights=True)  # weights [1, H, S, S]
        maps.append(weights[0])
    return torch.stack(maps)


# The figure shows the passage's first lines: layers are rows,
# heads are columns, and each map is `[S, S]`, one row per character reading
# the characters before it (columns; above the diagonal is masked). Brighter
# is more weight; the colour scale is a square root, so that weights of a
# few percent still show.


def show_heads(path: Path = MODEL, text: str = PASSAGE, n: int = 60):
    model, vocab = load_model(path, CPU)
    maps = attention_maps(model, vocab.encode(text[:n]))  # [L, H, S, S]
    return report.draw_head_grid(maps)


#| show_heads()  | alt: 16 attention maps, 4 layers by 4 heads, over the passage's start

# Some maps are thin lines just below the diagonal, others are bright in a
# few columns, others diffuse. To put numbers on what the figure shows, for
# each head: the mean weight a character puts on itself, on the characters
# one, two and three places back, on the last space or newline before it
# (where its word starts), and on the last newline before it (where its line
# starts), over every position of the whole passage from the ninth character
# on. A head that spread its weight evenly would put the *uniform* share on
# each.


def head_patterns(path: Path = MODEL, text: str = PASSAGE) -> dict:
    """Each pattern's mean weight for every head, `[L, H]`, and `uniform`'s."""
    model, vocab = load_model(path, CPU)
    maps = attention_maps(model, vocab.encode(text))  # [L, H, S, S]
    rows = range(8, len(text))  # the ninth character on

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
    print(report.head_pattern_table(means, names))


#| print_head_patterns()

# The heads that score highest on three of the patterns (*1 back*, *2 back*
# and *line start*), drawn larger over the passage's first characters, with
# the characters themselves (`↵` is the newline, `·` the space):


def chosen_heads(path: Path = MODEL) -> dict[str, tuple[int, int]]:
    """The pattern's name on the page -> (layer, head) of its best head."""
    means = head_patterns(path)  # [L, H] per pattern
    heads = means["self"].shape[1]
    return {
        report.pattern_name(p): divmod(means[p].argmax().item(), heads)
        for p in ("1 back", "2 back", "line start")
    }


def show_chosen_heads(path: Path = MODEL, n: int = 36):
    model, vocab = load_model(path, CPU)
    maps = attention_maps(model, vocab.encode(PASSAGE[:n]))  # [L, H, S, S]
    return report.draw_chosen_heads(chosen_heads(path), maps, PASSAGE[:n])


#| show_chosen_heads()  | alt: three heads, named by pattern, over 36 characters

# What the figures and the table show:
#
# * **The characters just before.** Three heads of the first layer are
#   lines at a fixed distance below the diagonal: one reads the previous
#   character, one the character two back, and one puts about half its
#   weight on the character three back (the table's *1 back*, *2 back* and
#   *3 back* columns). Between them they hand each position the few
#   characters before it, the context an n-gram model would count. The
#   model leans on them: the box below zeroes each head in turn.
# * **Where the line starts.** A few heads, most of them in the deeper
#   layers, put several times their even share on the newline that began the
#   current line (the *line start* column; for a line's first character
#   that newline is also the one back). In the figure, most characters
#   of "Is the day so young?" look back at the newline after "ROMEO:".
# * **The rest.** The other heads spread their weight over many earlier
#   characters, and none of the table's patterns describes them. No head
#   reads *word start* the way the first layer reads its fixed distances:
#   the highest scores there are the heads that read one, two or three back,
#   since a word's first letters sit just after its space, and those that
#   read the line start, where a line's first word begins: the *word start*
#   column overlaps those. What the diffuse heads do would take more than one
#   passage to tell.
#
# None of this was designed: nothing in the code asks a head for a pattern;
# training found it. How much the model uses each head is measured below.
#
# !!! tip "Try this"
#     Silence one head: zero its $D_k$ columns of the output projection
#     $W^O$, so that nothing it reads reaches the residual stream, and
#     measure the validation loss again. The function below does that for
#     each head in turn, on a copy of the model and on `windows` random
#     windows of the validation text, and prints how much the loss rises
#     from the intact model's (the corner of the table). The first layer's
#     look-back heads carry most of it; any one head of the deeper layers,
#     the line-start heads among them, costs little when silenced alone.


def try_zeroing_heads(path: Path = MODEL, windows: int = 32) -> None:
    model, vocab = load_model(path, CPU)
    run = json.loads((path.parent / "run.json").read_text(encoding="utf-8"))
    x, y = report.validation_windows(
        vocab, run["config"]["val_fraction"], windows, model.context
    )  # [W, S] each

    def loss(m: CharTransformer) -> float:
        with torch.no_grad():
            return F.cross_entropy(m(x).flatten(0, 1), y.flatten()).item()

    base = loss(model)
    layers, heads = len(model.blocks), model.blocks[0].attn.heads
    d_k = model.blocks[0].attn.d_k
    losses = torch.zeros(layers, heads)  # [L, H]
    for layer in range(layers):
        for head in range(heads):
            silenced = copy.deepcopy(model)
            attn = silenced.blocks[layer].attn
            with torch.no_grad():  # head h is columns [h Dk, (h + 1) Dk)
                attn.output.weight[:, head * d_k : (head + 1) * d_k] = 0
            losses[layer, head] = loss(silenced)
    print(report.loss_change_table(base, losses))


#| try_zeroing_heads()

# ## The model in this page
#
# The figures above are fixed: one passage, drawn when the page was built.
# Below the code of this section, a button runs the same model in your
# browser, from the weights of `runs/cpu/model.pt`, so that you can ask it
# your own questions. Nothing is fetched until you press it; the line under
# the code says how much it loads.
# <span class="lit-nojs">JavaScript is off in this browser, so the button
# is not there; the figures above stay as they are.</span>
#
# * **The attention explorer** starts with the passage above; type any text
#   of at most `context` characters instead. Point at a character to shade
#   what it reads in the chosen layer and head (on the figures' square-root
#   scale); click, tap or use the arrow keys to keep it, Esc to let it go.
#   Layers, heads and positions count from 0, as in the code and the
#   figures. *All heads* draws that character's weights in every head as
#   small bar charts. Try the `y` of `young` with the *line start* head and
#   then the *1 back* head of the larger figure: the first puts more weight
#   on the newline that began the line than on any other character, the
#   second nearly all of it on the character before. (Just after a newline
#   the two look alike: that newline is also one back.)
# * **The generation box** has the options of `python train.py sample` and
#   its defaults, but for the prompt and the seed's range (the last line
#   under the code): the page draws with a generator of its own, so only
#   top-k 1 writes Python's text. With its box ticked, the explorer follows
#   the writing: the window the model read, and the weights of the position
#   that drew the newest character.
#
# `docs/assets/js/model.js` is the forward pass of
# [`CharTransformer`](train.html#CharTransformer) with its caches, and the
# loop of `generate` above, in plain JavaScript loops over the same float32
# weights (no library): embeddings, pre-LN blocks, causal attention over a
# key/value cache, the feed-forward network, the final LayerNorm and the
# tied output layer. `tests/test_model_in_page.py` checks in Chromium that
# its greedy text (top-k 1) is Python's and that its attention weights are
# `attention_maps`'s.


def model_in_page(path: Path = MODEL) -> Data:
    """What the page's scripts need: the passage, the sampling defaults, the
    model's sizes and the widgets' words (`trainkit/web_model.py` writes the
    weights into the site)."""
    model, vocab = load_model(path, CPU)
    weights = sum(p.numel() for p in model.parameters())  # the tied one once
    defaults = cli.sample_parser().parse_args([])  # python train.py sample's
    prompt = "ROMEO:"  # the box's; the command's is a newline
    print(tr("{n} weights in float32: {mb} MB, loaded by the button").format(
        n=f"{weights:,}", mb=f"{4 * weights / 1e6:.1f}"))  # fmt: skip
    report.print_box_defaults(defaults, prompt, PAGE_SEEDS[-1], SEEDS[-1])
    return Data("model", {
        "passage": PASSAGE, "prompt": prompt, "vocab": "".join(vocab.chars),
        "layers": len(model.blocks), "heads": model.blocks[0].attn.heads,
        "context": model.context, "bytes": 4 * weights, "tokens": defaults.tokens,
        "temperature": defaults.temperature, "top_k": defaults.top_k,
        "seed": defaults.seed, "seed_max": PAGE_SEEDS[-1],
        "named": [[name, *head] for name, head in chosen_heads(path).items()],
        "words": report.model_words(),
    })  # fmt: skip


#| model_in_page()

# ## What next
#
# The model of these chapters is small, and every part of it has a larger
# successor. One line each on what they change:
#
# * **Relative positions.** The model learns one embedding per absolute
#   position, which is why the cache is re-encoded at the window's edge.
#   RoPE ([Su et al., 2021](https://arxiv.org/abs/2104.09864)) rotates each
#   query and key by angles that grow with its position, so that a score
#   depends on the two positions only through their distance; ALiBi
#   ([Press et al., 2022](https://arxiv.org/abs/2108.12409)) adds no position
#   vectors at all and subtracts from each score a penalty proportional to
#   that distance, with a slope of its own for each head. With either,
#   cached keys stay valid when the oldest are dropped.
# * **A smaller cache.** Grouped-query attention, above, divides the cache's
#   $2 \cdot L \cdot H \cdot D_k$ numbers per token by the number of query
#   heads that share a key/value head.
# * **Attention that never stores its weights.** FlashAttention
#   ([Dao et al., 2022](https://arxiv.org/abs/2205.14135)) computes attention
#   in tiles that fit in the GPU's on-chip memory, with a softmax updated tile
#   by tile, so the `[S, S]` weights are never written out: a kernel built
#   this way has no weights to return, which is why the heads figure above
#   asks `mha.py` for its explicit path (`need_weights=True`).
# * **Tokens larger than characters.** Byte-pair encoding
#   ([Sennrich et al., 2016](https://arxiv.org/abs/1508.07909)) merges
#   frequent pairs of symbols into tokens, so a window of the same length
#   holds more text; GPT-2 uses a byte-level version
#   ([Radford et al., 2019](https://cdn.openai.com/better-language-models/language_models_are_unsupervised_multitask_learners.pdf)).
# * **A real GPT.** Andrej Karpathy's
#   [nanoGPT](https://github.com/karpathy/nanoGPT), whose recipe chapter 4
#   follows, trains the same kind of model at GPT-2's size and reproduces
#   GPT-2 (124M) on OpenWebText; his
#   [build-nanogpt](https://github.com/karpathy/build-nanogpt) builds that
#   reproduction step by step.
#
# `python generate.py` samples from `runs/cpu/model.pt` (or `--checkpoint`),
# with the options of `python train.py sample`.

if __name__ == "__main__":
    import os
    import sys

    from trainkit import RunError

    cli.utf8_output()
    try:
        cli.sample(sys.argv[1:], load_model, "generate.py", os.path.relpath(MODEL))
    except RunError as e:
        sys.exit(f"generate.py: error: {e}")
