"""trainkit/machine.py: the thread count around the optimizer's update."""

from __future__ import annotations

import pytest
import torch

import train
from trainkit.machine import one_thread


@pytest.fixture
def two_threads():
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    yield
    torch.set_num_threads(before)


def test_one_thread_inside_and_the_count_restored_after(two_threads):
    with one_thread(torch.device("cpu")):
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == 2
    with pytest.raises(RuntimeError), one_thread(torch.device("cpu")):
        raise RuntimeError("inside")
    assert torch.get_num_threads() == 2


def test_other_devices_keep_their_threads(two_threads):
    with one_thread(torch.device("meta")):
        assert torch.get_num_threads() == 2


def test_train_step_updates_on_one_thread_and_restores_the_count(two_threads):
    cfg = train.PRESETS["tiny"]
    model = train.CharTransformer(cfg, 11)
    optimizer = train.make_optimizer(model, cfg)
    seen = []
    optimizer.register_step_pre_hook(lambda *_: seen.append(torch.get_num_threads()))
    x, y = torch.randint(11, (2, 4, cfg.context)).unbind(0)
    train.train_step(model, optimizer, x, y, cfg)
    assert seen == [1]
    assert torch.get_num_threads() == 2
