"""Device, threads and processes for one training process.

`torchrun` starts one process per device and tells each its `RANK` among
`WORLD_SIZE` processes and its `LOCAL_RANK` on this machine. Processes talk
through `torch.distributed`: NCCL between GPUs, gloo between CPU processes.
"""

from __future__ import annotations

import os
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
