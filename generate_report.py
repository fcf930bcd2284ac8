"""The tables, figures and data of the generating-text page (`generate.py`).

Formatting and drawing, kept out of the page's reading path: `generate.py`
computes, and calls these to show what it computed. Every word drawn or
printed goes through `tr`, so the page shows it in its own language.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from literate.words import tr
from report import markdown_table, ylabel

ROOT = Path(__file__).resolve().parent
SHOWN = {"\n": "↵", " ": "·"}  # characters that print as nothing


def char_label(c: str) -> str:
    """A character as the page shows it: `↵` for a newline, `·` for a space."""
    return SHOWN.get(c, c)


def distribution_table(
    chars: str, columns: dict[str, torch.Tensor], rows: int = 6
) -> str:
    """The `rows` likeliest characters of the first column, and the rest.

    `columns` maps a heading to a distribution `[N]` over `chars`.
    """
    first = next(iter(columns.values()))
    top = first.topk(rows).indices.tolist()
    body = [
        [char_label(chars[i])] + [f"{p[i]:.3f}" for p in columns.values()] for i in top
    ]
    rest = tr("the other {n}").format(n=len(chars) - rows)
    others = [f"{1 - p[top].sum():.3f}" for p in columns.values()]
    header = [tr("next character")] + list(columns)
    return markdown_table(header, [*body, [rest, *others]], "l" + "r" * len(columns))


def print_cache_memory(layers: int, heads: int, d_k: int, size: int, full: int,
                       context: int) -> None:  # fmt: skip
    """The formula's bytes per token, and the caches `new_caches(1)` allocated."""
    per_token = 2 * layers * heads * d_k * size
    print(
        tr("2 · L · H · Dk · bytes = 2 · {l} · {h} · {d} · {b} = {n} bytes").format(
            l=layers, h=heads, d=d_k, b=size, n=f"{per_token:,}"
        ),
        tr("= {k:g} KiB per token").format(k=per_token / 1024),
    )
    print(
        tr("allocated caches for a full window ({c} positions): {k:g} KiB").format(
            k=full / 1024, c=context
        ),
        tr("= {k:g} KiB per position").format(k=full / context / 1024),
    )


def print_same_text(texts: dict[str, list[int]], decode) -> None:
    """Whether every way wrote the text of the first, and that text."""
    (first, reference), *others = texts.items()
    for name, ids in others:
        same = tr("the same") if ids == reference else tr("different")
        print(tr("{way}: {same} ({n} characters)").format(way=name, same=same,
                                                          n=len(ids)))  # fmt: skip
    print()
    print(decode(reference))


def head_pattern_table(means: dict, names: list[str]) -> str:
    """Each head's mean weight on each pattern, with the uniform share last."""
    rows = [
        [f"{layer}, {head}"] + [f"{means[n][layer, head]:.2f}" for n in names]
        for layer, head in np.ndindex(*means[names[0]].shape)
    ]
    rows.append([tr("uniform")] + [f"{means['uniform']:.2f}" for _ in names])
    header = [tr("layer, head")] + [pattern_name(n) for n in names]
    return markdown_table(header, rows, align="l" + "r" * len(names))


def pattern_name(pattern: str) -> str:
    """A pattern's name in the page's language (each a literal for `tr`)."""
    return {
        "self": tr("self"),
        "1 back": tr("1 back"),
        "2 back": tr("2 back"),
        "3 back": tr("3 back"),
        "word start": tr("word start"),
        "line start": tr("line start"),
    }[pattern]


def _masked(weights: torch.Tensor) -> torch.Tensor:
    """`[S, S]` weights with the masked cells above the diagonal left empty."""
    s = weights.shape[0]
    above = torch.ones(s, s, dtype=torch.bool).triu(1)
    return weights.masked_fill(above, float("nan"))


def draw_head_grid(maps: torch.Tensor):
    """Every head's `[S, S]` map, `maps` `[L, H, S, S]`: layers down, heads across."""
    import matplotlib.pyplot as plt
    from matplotlib.colors import PowerNorm

    layers, heads = maps.shape[:2]
    fig, axes = plt.subplots(layers, heads, figsize=(4.4, 4.6), squeeze=False)
    for layer, head in np.ndindex(layers, heads):
        ax = axes[layer, head]
        ax.imshow(_masked(maps[layer, head]), cmap="viridis", norm=PowerNorm(0.5, 0, 1))
        ax.set_xticks([])
        ax.set_yticks([])
        if layer == 0:
            ax.set_title(tr("head {h}").format(h=head), fontsize=10)
        if head == 0:
            ylabel(ax, tr("layer {l}").format(l=layer), fontsize=10)
    fig.tight_layout(pad=0.3, h_pad=0.4, w_pad=0.4)
    return fig


def draw_chosen_heads(panels: dict[str, tuple[int, int]], maps: torch.Tensor,
                      text: str):  # fmt: skip
    """One map per pattern, `panels` {name: (layer, head)}, with the characters."""
    import matplotlib.pyplot as plt
    from matplotlib.colors import PowerNorm

    labels = [char_label(c) for c in text]
    n = len(text)
    fig, axes = plt.subplots(len(panels), 1, figsize=(4.2, 4.4 * len(panels)))
    for ax, (name, (layer, head)) in zip(axes, panels.items(), strict=True):
        shown = _masked(maps[layer, head, :n, :n])
        ax.imshow(shown, cmap="viridis", norm=PowerNorm(0.5, 0, 1))
        # 8 points: at a phone's width still 9 CSS px (tests/test_layout.py).
        ax.set_xticks(range(n), labels, fontsize=8)
        ax.set_yticks(range(n), labels, fontsize=8)
        title = tr("{name}: layer {l}, head {h}").format(name=name, l=layer, h=head)
        ax.set_title(title, fontsize=11)
        ax.set_xlabel(tr("read (key)"), fontsize=10)
        ylabel(ax, tr("reading (query)"), fontsize=10)
    fig.tight_layout()
    return fig


def validation_windows(vocab, val_fraction: float, windows: int, context: int,
                       seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:  # fmt: skip
    """`windows` random windows of the validation text, `(x, y)` `[W, S]` each.

    The text and its cut are `train.py`'s: the plays, and the last
    `val_fraction` of them held out.
    """
    from trainkit.corpus import read_text

    text, name = read_text("", ROOT / "data")
    val = vocab.encode(text[int(len(text) * (1 - val_fraction)) :], name)
    rng = torch.Generator().manual_seed(seed)
    starts = torch.randint(len(val) - context, (windows,), generator=rng)
    chunk = val[starts[:, None] + torch.arange(context + 1)]  # [W, S + 1]
    return chunk[:, :-1], chunk[:, 1:]


def loss_change_table(base: float, losses: torch.Tensor) -> str:
    """The validation loss with each head zeroed, `losses` `[L, H]`, minus `base`."""
    layers, heads = losses.shape
    rows = [
        [tr("layer {l}").format(l=layer)]
        + [f"{losses[layer, head] - base:+.3f}" for head in range(heads)]
        for layer in range(layers)
    ]
    corner = tr("rise from {l} nats").format(l=f"{base:.3f}")
    header = [corner] + [tr("head {h}").format(h=h) for h in range(heads)]
    return markdown_table(header, rows, align="l" + "r" * heads)


def print_box_defaults(defaults, prompt: str, page_seed: int, cli_seed: int) -> None:
    """The generation box's settings: the command's defaults but two."""
    print(
        tr("python train.py sample's defaults: {n} characters, temperature {t}, "
           "top-k {k}, seed {s}").format(n=defaults.tokens, t=defaults.temperature,
                                         k=defaults.top_k, s=defaults.seed)
    )  # fmt: skip
    print(
        tr("the generation box: the same, but prompt {box} (the command's: {cli}) "
           "and seeds 0 to {page} (the command's: 0 to {cli_max})").format(
            box=repr(prompt), cli=repr(defaults.prompt), page=f"{page_seed:,}",
            cli_max=f"{cli_seed:,}")
    )  # fmt: skip


def model_words() -> dict[str, str]:
    """The words of the explorer and the generation box, by the names that
    `docs/assets/js/model-ui.js` reads; `{fields}` are filled there."""
    return {
        "open": tr("Run the model in this page ({mb} MB)"),
        "loading": tr("Loading the model…"),
        "loaded": tr("The model is loaded: {mb} MB in {ms} ms."),
        "failed": tr("The model could not be loaded: {error}"),
        "explorer": tr("Attention explorer"),
        "text": tr("Text (up to {n} characters)"),
        "layer": tr("Layer"),
        "head": tr("Head"),
        "all_heads": tr("All heads"),
        "named": tr("Heads named in the figures:"),
        "named_head": tr("{name} (layer {layer}, head {head})"),
        "strip": tr("Characters of the text: the arrow keys move the query"),
        "option": tr("{char}, position {pos}"),
        "newline": tr("newline"),
        "space": tr("space"),
        "quoted": tr("“{char}”"),
        "unknown_row": tr("Its weights show when the writing stops."),
        "weight": tr("{char} ({pos}) {p}"),
        "list_separator": tr(", "),
        "query": tr("Position {pos}, {char}: layer {layer}, head {head} reads {top}."),
        "pin_hint": tr("Click or tap a character to keep it as the query."),
        "pinned": tr("Kept: Esc lets the pointer move it again."),
        "panel": tr("Layer {layer}, head {head}"),
        "grid_note": tr(
            "One bar a character, from position 0 to the query, its height the "
            "square root of the weight (the figures' scale); a grey column marks "
            "a newline."
        ),
        "empty": tr("The text is empty."),
        "empty_prompt": tr("The prompt is empty."),
        "not_in_vocab": tr("The model has no character {char} (position {pos})."),
        "generation": tr("Generation"),
        "prompt": tr("Prompt"),
        "tokens": tr("Characters"),
        "temperature": tr("Temperature"),
        "top_k": tr("Top-k (0: all)"),
        "seed": tr("Seed"),
        "generate": tr("Generate"),
        "stop": tr("Stop"),
        "follow": tr("Show the newest character's attention in the explorer"),
        "output": tr("Generated text"),
        "rng_note": tr(
            "Only top-k 1 (greedy) writes what python train.py sample writes: "
            "the page draws with its own random numbers, not PyTorch's."
        ),
        "bad_value": tr("{field}: expected {expected}, not “{typed}”."),
        "writing": tr("Writing: {n} of {total} characters."),
        "stopped": tr("Stopped after {n} characters."),
        "done": tr("{n} characters in {s} s ({rate} a second)."),
    }
