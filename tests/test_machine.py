"""trainkit/machine.py: the thread count around the optimizer's update, and
what a training step does with it."""

from __future__ import annotations

import copy

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


def test_train_step_is_one_adamw_update_and_keeps_the_thread_count(two_threads):
    # What a step does, not how many threads it uses for which part: the
    # loss and the weights of the same step written out, and the process's
    # thread count as it was. (Adam's first step hardly depends on the
    # gradient's scale, so this cannot tell whether it was clipped.)
    cfg = train.PRESETS["tiny"]  # no dropout: both forwards see the same net
    torch.manual_seed(0)
    model = train.CharTransformer(cfg, 11)
    twin, before = copy.deepcopy(model), copy.deepcopy(model)
    optimizer = train.make_optimizer(model, cfg)
    reference = train.make_optimizer(twin, cfg)
    x, y = torch.randint(11, (2, 4, cfg.context)).unbind(0)
    loss = train.train_step(model, optimizer, x, y, cfg)
    expected = train.cross_entropy(twin(x), y)
    expected.backward()
    torch.nn.utils.clip_grad_norm_(twin.parameters(), cfg.grad_clip)
    reference.step()
    torch.testing.assert_close(loss, expected.detach())
    for ours, theirs in zip(model.parameters(), twin.parameters(), strict=True):
        torch.testing.assert_close(ours, theirs)
    moved = [not torch.equal(a, b) for a, b in zip(model.parameters(),
             before.parameters(), strict=True)]  # fmt: skip
    assert all(moved)  # every weight took the step
    assert torch.get_num_threads() == 2
