"""A training run's plumbing, behind the few calls `train.train` makes.

`train.py` shows the loop: a batch, a step, now and then an evaluation. What
a run does besides is here:

* `start`: the `--out` folder checked (not a file, not held by another run),
  and the processes joined (one, or those `torchrun` started;
  `trainkit.machine`);
* `Session.text_ready`: one line about the text, and the memory check;
* `Session.begin`: a new run evaluates the untrained model (step 0); one
  with `--resume` restores the weights, the optimizer's averages, the step,
  the metrics and the random generators from `out/ckpt.pt`
  (`trainkit.resume`); then the model is wrapped for DDP (several
  processes) and `torch.compile` (`--compile`);
* `Session.steps`: the steps still to run, with `out/train.lock` held and
  labml's progress loop around them (`trainkit.files`, `trainkit.tracking`);
* `Session.log`, `Session.evaluated`: records in `out/metrics.jsonl` and
  labml, and at each evaluation the checkpoint and the loss curve, written
  by the main process only;
* `Session.finish`: no process leaves while another still writes.

`train.train` holds the session in a `with` block, so an error in the loop
still leaves labml's run and frees the lock on its way out.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import asdict
from pathlib import Path

import torch
from labml import monit, tracker
from torch import nn

from trainkit import RunError
from trainkit.checkpoints import random_states, save_checkpoint
from trainkit.files import check_unlocked, out_lock
from trainkit.machine import check_memory, mean_over_processes, start_processes
from trainkit.metrics import Metrics, plot_losses
from trainkit.resume import resume_run
from trainkit.tracking import labml_run

# A checkpoint can continue only a run of the same model on the same text.
SAME_MODEL = ("data", "n_layer", "n_head", "d_model", "context")


def check_out_folder(out: Path) -> None:
    if out.exists() and not out.is_dir():
        raise RunError(f"--out {out}: is a file; expected a folder (new or a run's)")
    check_unlocked(out)


def checkpoint(model, optimizer, cfg, vocab, step, seconds, rng) -> dict:
    """All that the rest of a run depends on (see train.py's appendix)."""
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


def model_file(state: dict) -> dict:
    """What sampling needs of a checkpoint: weights, configuration, vocabulary."""
    return {k: state[k] for k in ("model", "config", "vocab", "step")}


def wrap(model: nn.Module, cfg, world: int) -> nn.Module:
    """The model that trains: DDP over several processes, compiled if asked."""
    if world > 1:
        from torch.nn.parallel import DistributedDataParallel

        model = DistributedDataParallel(model)
    return torch.compile(model) if cfg.compile else model


def start(cfg) -> Session:
    """Check `--out`, join the processes: the session of one training run."""
    out = Path(cfg.out)
    check_out_folder(out)
    procs = start_processes(cfg.device, cfg.threads, cfg.batch_size)
    return Session(cfg, procs, out)


class Session:
    def __init__(self, cfg, procs, out: Path):
        self.cfg, self.procs, self.out = cfg, procs, out
        self.rank, self.world, self.device = procs.rank, procs.world, procs.device
        self.say = print if procs.main else lambda *args: None
        self.metrics = Metrics(out / "metrics.jsonl")
        self.start, self.elapsed = 0, 0.0
        self.label = "shakespeare"
        self._steps: Iterator[int] | None = None

    def text_ready(self, name: str, characters: int, vocab_size: int) -> None:
        """Say what the text is; refuse a run whose memory cannot fit."""
        self.say(f"{name}: {characters:,} characters, a vocabulary of {vocab_size}")
        check_memory(self.cfg, vocab_size, self.world, self.device, self.say)
        self.label = Path(name).stem if self.cfg.data else "shakespeare"

    def begin(
        self,
        model: nn.Module,
        optimizer: torch.optim.Optimizer,
        batches: torch.Generator,
        vocab,
        evaluate: Callable[[], dict],
    ) -> nn.Module:
        """Step 0's evaluation, or `--resume`'s restore; the model to train."""
        cfg, out = self.cfg, self.out
        self.model, self.optimizer, self.batches, self.vocab = (
            model,
            optimizer,
            batches,
            vocab,
        )
        ckpt = out / "ckpt.pt"
        if cfg.resume:
            self.start, self.elapsed, self.metrics = resume_run(
                out, cfg, SAME_MODEL, vocab.chars, model, optimizer, batches, self.procs
            )
            if self.start > cfg.steps:
                raise RunError(
                    f"--steps {cfg.steps}: {ckpt} is already at step "
                    f"{self.start}; give --steps above {self.start} to train further"
                )
            if self.start == cfg.steps:
                self.say(f"{ckpt}: already at step {self.start}; nothing to do")
                return model
            self.say(f"resuming from {ckpt} at step {self.start}")
        else:
            if ckpt.exists():
                self.say(f"{ckpt}: replaced by this run (--resume would continue it)")
            self.metrics.add(step=0, **evaluate(), time=0.0)
        self.say(
            f"{sum(p.numel() for p in model.parameters()):,} parameters on "
            f"{self.device}, {torch.get_num_threads()} thread(s) per process, "
            f"{self.world} process(es)"
        )
        return wrap(model, cfg, self.world)

    def steps(self) -> Iterator[int]:
        """The steps still to run, `--out`'s lock and labml's run held."""
        self._steps = self._run()
        return self._steps

    def _run(self) -> Iterator[int]:
        cfg, main = self.cfg, self.procs.main
        if self.start >= cfg.steps:
            return
        with (
            out_lock(self.out, main),
            labml_run(self.label, asdict(cfg), silent=not main),
        ):
            self.began = time.perf_counter() - self.elapsed
            self.running = torch.zeros((), device=self.device)
            yield from monit.loop(range(self.start, cfg.steps))

    def log(self, done: int, loss: torch.Tensor, lr: float) -> None:
        """Every `log_interval` steps, record the mean of the last
        `log_interval` batch losses. Reading a number off the device waits
        for it, so it happens only here."""
        self.running += loss
        if done % self.cfg.log_interval == 0:
            mean = mean_over_processes(self.running / self.cfg.log_interval, self.world)
            self.running.zero_()
            self.metrics.add(step=done, loss=mean, lr=lr)
            tracker.save(done, {"loss": mean})

    def evaluated(self, done: int, losses: dict) -> None:
        """Record an evaluation; the main process writes the checkpoint, the
        metrics and the loss curve."""
        seconds = time.perf_counter() - self.began
        self.metrics.add(step=done, **losses, time=round(seconds, 2))
        rng = random_states(self.batches, self.world)
        if self.procs.main:
            state = checkpoint(
                self.model, self.optimizer, self.cfg, self.vocab, done, seconds, rng
            )
            save_checkpoint(self.out / "ckpt.pt", state)
            self.metrics.write()
            title = f"{self.label}: {self.cfg.out}"
            plot_losses(self.metrics, self.out / "loss.png", title)
        tracker.save(done, losses)
        tracker.new_line()

    def __enter__(self) -> Session:
        return self

    def __exit__(self, kind, error, traceback) -> bool:
        """Leave labml's run and free `--out`'s lock, whatever happened: an
        error in the loop reaches them as it would a `with` around it."""
        steps, self._steps = self._steps, None
        if steps is not None and error is None:
            steps.close()
        elif steps is not None:
            try:
                steps.throw(error)
            except BaseException:  # the error goes on from `with` itself
                pass
            else:
                steps.close()
        return False

    def finish(self) -> dict:
        """Wait for every process; the last evaluation's losses."""
        if self._steps is not None:
            self._steps.close()  # leaves labml's run, frees the lock
            self._steps = None
        if self.world > 1:
            torch.distributed.barrier()
            torch.distributed.destroy_process_group()
        evaluations = self.metrics.evaluations()
        return evaluations[-1] if evaluations else {}
