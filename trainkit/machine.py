"""Device, threads and processes for one training process.

`torchrun` starts one process per device and tells each its `RANK` among
`WORLD_SIZE` processes and its `LOCAL_RANK` on this machine. Processes talk
through `torch.distributed`: NCCL between GPUs, gloo between CPU processes.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import torch
import torch.distributed as dist

from trainkit import RunError


@dataclass(frozen=True)
class Processes:
    rank: int  # this process among all of them
    world: int  # how many processes train together
    device: torch.device

    @property
    def main(self) -> bool:
        """The process that prints and writes files."""
        return self.rank == 0


def cpu_threads(requested: int, processes: int = 1) -> int:
    """`requested` if positive, else an equal share of the idle cores.

    A core counts as idle if it was less than half busy over half a second.
    """
    if requested > 0:
        return requested
    import psutil

    busy = psutil.cpu_percent(interval=0.5, percpu=True)
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1
    idle = min(usable, sum(b < 50 for b in busy))
    return max(1, idle // processes)


@contextmanager
def one_thread(device: torch.device) -> Iterator[None]:
    """Run the block on one CPU thread, then restore the thread count.

    For elementwise work spread over many small tensors, such as the
    optimizer's update: with `OMP_WAIT_POLICY=PASSIVE` each parallel region
    wakes the sleeping threads, which can cost more than the work. Measured
    once on an idle 2-core machine, the fused AdamW update of the `cpu` preset
    took 4.8 ms with 2 threads and 1.0 ms with 1 (`torch.profiler`); a later
    measurement on a loaded machine found the reverse, so the page claims no
    speed for it. Other devices, and a process already on one thread, are
    left as they are.
    """
    threads = torch.get_num_threads()
    if device.type != "cpu" or threads == 1:
        yield
        return
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


def start_processes(device: str, threads: int, batch_size: int) -> Processes:
    """Pick the device and thread count; join the other processes, if any."""
    rank = int(os.environ.get("RANK", 0))
    world = int(os.environ.get("WORLD_SIZE", 1))
    local = int(os.environ.get("LOCAL_RANK", 0))
    if device == "cuda" and not torch.cuda.is_available():
        raise RunError("--device cuda: no CUDA device is available")
    if batch_size % world:
        raise RunError(
            f"--batch_size {batch_size} cannot be split evenly among {world} processes"
        )
    cuda = device == "cuda" or (device == "auto" and torch.cuda.is_available())
    if cuda:
        torch.cuda.set_device(local)
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True
    else:
        local_world = int(os.environ.get("LOCAL_WORLD_SIZE", world))
        torch.set_num_threads(cpu_threads(threads, local_world))
    if world > 1:
        dist.init_process_group("nccl" if cuda else "gloo")
    return Processes(rank, world, torch.device(f"cuda:{local}" if cuda else "cpu"))


def mean_over_processes(value: torch.Tensor, world: int) -> float:
    """The mean of a scalar tensor over all processes, as a Python float."""
    if world > 1:
        value = value.clone()
        dist.all_reduce(value)
        value = value / world
    return value.item()


# Bytes per position of one block's activations kept for the backward pass, in
# units of `d_model` float32 numbers: LayerNorm inputs and outputs (4), the
# query, key, value and attention output (4), the output projection's input
# (1), the feed-forward network's wide hidden layer before and after the GELU
# (8). A rough lower bound: the allocator and temporaries add to it.
_BLOCK_WIDTHS = 17


def parameter_count(cfg, vocab_size: int) -> int:
    """The parameters of `train.CharTransformer(cfg, vocab_size)`, exactly.

    The token embedding (shared with the output layer), the positions, per
    block two LayerNorms (4 d), four projections (4 d^2 + 4 d) and the
    feed-forward network (8 d^2 + 5 d), and the final LayerNorm. Arithmetic
    only: it sizes a configuration before any model is built from it.
    """
    d, n = cfg.d_model, vocab_size
    return n * d + cfg.context * d + cfg.n_layer * (12 * d * d + 13 * d) + 2 * d


def memory_estimate(cfg, vocab_size: int, world: int = 1) -> int:
    """Bytes one process needs to train `cfg`: a lower bound.

    Parameters, gradients and AdamW's two averages (4 copies), and the
    activations of `batch_size / world` windows of `context` positions:
    `_BLOCK_WIDTHS * d_model` numbers per block, and the logits with their
    softmax and gradient (3 * vocabulary) per position.
    """
    d, n = cfg.d_model, vocab_size
    params = parameter_count(cfg, vocab_size)
    positions = cfg.batch_size // world * cfg.context
    per_position = cfg.n_layer * _BLOCK_WIDTHS * d + 3 * n + 2 * d
    return 4 * (4 * params + positions * per_position)


def check_memory(cfg, vocab_size: int, world: int, device: torch.device, say) -> None:
    """Refuse a run that cannot fit in memory; warn about one that may not."""
    need = memory_estimate(cfg, vocab_size, world)
    if device.type == "cuda":
        free, total = torch.cuda.mem_get_info(device)
        where = "GPU"
    else:
        import psutil

        memory = psutil.virtual_memory()
        free, total = memory.available, memory.total
        where = "memory"
    gib = 2**30
    sizes = (
        f"--batch_size {cfg.batch_size} --context {cfg.context} --d_model "
        f"{cfg.d_model} --n_layer {cfg.n_layer}"
    )
    if need > total:
        raise RunError(
            f"{sizes} need at least {need / gib:.1f} GiB per process, more than "
            f"the {total / gib:.1f} GiB of {where} here; make them smaller"
        )
    if need > free:
        say(
            f"warning: {sizes} need at least {need / gib:.1f} GiB per process; "
            f"{free / gib:.1f} GiB of {where} is free now"
        )
