"""The n-gram baselines of the training page (`trainkit/baselines.py`)."""

import dataclasses
import math
from collections import Counter

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from conftest import ROOT

import train
from trainkit.baselines import ngram_loss, ngram_losses, split_ids, witten_bell_loss
from trainkit.corpus import cached_corpus


@pytest.fixture(scope="module")
def small_split():
    """2,000 characters of the plays, split as `train.py` splits them."""
    text = cached_corpus(ROOT / "data").read_text(encoding="utf-8")[:2000]
    vocab = train.Vocab.of(text)
    cfg = dataclasses.replace(train.PRESETS["tiny"], context=8)
    train_ids, val_ids = train.split(vocab.encode(text), cfg, "text")
    return train_ids.tolist(), val_ids.tolist(), len(vocab)


def slow_loss(train_ids, val_ids, vocab_size, n, k):
    """The add-k model of order `n`, one character at a time with dicts."""
    windows = [tuple(train_ids[i : i + n]) for i in range(len(train_ids) - n + 1)]
    counts = Counter(windows)
    totals = Counter(w[:-1] for w in windows)
    history = train_ids[len(train_ids) - (n - 1) :] + val_ids
    nats, unseen = 0.0, 0
    for i, char in enumerate(val_ids):
        context = tuple(history[i : i + n - 1])
        unseen += context not in totals
        p = (counts[(*context, char)] + k) / (totals[context] + k * vocab_size)
        nats -= math.log(p)
    return nats / len(val_ids), len(totals), unseen


@pytest.mark.parametrize("k", [1.0, 0.5])
@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_counts_and_smoothing_equal_the_slow_computation(small_split, n, k):
    train_ids, val_ids, v = small_split
    nats, contexts, unseen = slow_loss(train_ids, val_ids, v, n, k)
    got = ngram_loss(train_ids, val_ids, v, n, k)
    assert got.nats == pytest.approx(nats, rel=1e-12)
    assert (got.contexts, got.unseen) == (contexts, unseen)
    assert (got.order, got.characters, got.k) == (n, len(val_ids), k)
    if n >= 3:
        assert unseen > 0  # the smoothing of unseen contexts is exercised


def test_bigram_loss_is_pytorch_cross_entropy_of_its_table(small_split):
    train_ids, val_ids, v = small_split
    pairs = torch.tensor(train_ids).unfold(0, 2, 1)  # [T - 1, 2]
    counts = torch.zeros(v, v, dtype=torch.float64)
    counts.index_put_((pairs[:, 0], pairs[:, 1]), torch.ones(len(pairs)).double(), True)
    logits = (counts + 1).log()  # softmax normalises each row: add-one
    history = torch.tensor(train_ids[-1:] + val_ids)
    expected = F.cross_entropy(logits[history[:-1]], history[1:])
    got = ngram_losses(train_ids, val_ids, v, orders=[2])[0].nats
    assert got == pytest.approx(expected.item(), rel=1e-12)


def test_on_the_real_split_more_context_means_lower_loss():
    train_ids, val_ids, v = split_ids()
    cfg = train.PRESETS["cpu"]
    total = len(train_ids) + len(val_ids)
    assert len(train_ids) == int(total * (1 - cfg.val_fraction))
    uni, bi, tri = ngram_losses(train_ids, val_ids, v)
    assert math.log(v) > uni.nats > bi.nats > tri.nats
    assert (uni.contexts, bi.contexts) == (1, v) and v < tri.contexts < v**2
    # The unigram model with its tiny add-one is the training text's
    # character frequencies, scored on the validation text.
    freq = np.bincount(train_ids, minlength=v) / len(train_ids)
    assert uni.nats == pytest.approx(-np.log(freq[val_ids]).mean(), rel=1e-4)


def test_ids_out_of_range_and_bad_orders_are_refused():
    with pytest.raises(ValueError, match="0..2"):
        ngram_loss([0, 1, 3], [0], 3, 1)
    with pytest.raises(ValueError, match="order"):
        ngram_loss([0, 1, 2], [0], 3, 0)
    with pytest.raises(ValueError, match="k must"):
        ngram_loss([0, 1, 2], [0], 3, 1, k=0)


def slow_witten_bell(train_ids, val_ids, vocab_size, n):
    """The order-`n` Witten-Bell model, one character at a time, recursively."""
    follow: dict[tuple, Counter] = {}
    for m in range(1, n + 1):
        for i in range(len(train_ids) - m + 1):
            window = tuple(train_ids[i : i + m])
            follow.setdefault(window[:-1], Counter())[window[-1]] += 1

    def p(char, context):
        if context is None:
            return 1 / vocab_size
        shorter = p(char, context[1:] if context else None)
        seen = follow.get(context)
        if not seen:
            return shorter
        total, types = sum(seen.values()), len(seen)
        return (seen[char] + types * shorter) / (total + types)

    history = train_ids[len(train_ids) - (n - 1) :] + val_ids
    nats = -sum(
        math.log(p(char, tuple(history[i : i + n - 1])))
        for i, char in enumerate(val_ids)
    )
    return nats / len(val_ids)


@pytest.mark.parametrize("n", [1, 2, 3, 5])
def test_witten_bell_equals_the_slow_recursion(small_split, n):
    train_ids, val_ids, v = small_split
    expected = slow_witten_bell(train_ids, val_ids, v, n)
    assert witten_bell_loss(train_ids, val_ids, v, n) == pytest.approx(expected, 1e-12)


def test_witten_bell_gives_every_character_a_probability(small_split):
    train_ids, val_ids, v = small_split
    # id v: a character the training text never has (the vocabulary grows by one)
    nats = witten_bell_loss(train_ids, [v, v], v + 1, 3)
    assert math.isfinite(nats) and nats > math.log(v + 1)
