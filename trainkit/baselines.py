"""Counting baselines for the training page: n-gram models of characters.

An order-`n` model predicts a character from the `n - 1` before it (its
*context*) by counting, in the training text, how often each character
followed that context. Order 1 has an empty context: it is the characters'
frequencies. The model is fitted on the training split of `train.py` and
scored on its validation split, so its loss sits beside the transformer's:
the mean cross-entropy of the validation characters, in nats per character.

Smoothing: add-k (Lidstone), with k = 1 unless told (Laplace's rule, chosen
before looking at any loss, not tuned). With `c(h, x)` the number of times
character `x` followed context `h` in the training text, and `c(h)` the
number of times `h` was followed by any character,

    p(x | h) = (c(h, x) + k) / (c(h) + k N)

for a vocabulary of `N` characters. A context never seen in training
(`c(h) = 0`) gives the uniform 1 / N; no probability is ever 0.

Every validation character is scored, the first ones too: their context is
the end of the training text, which comes just before the validation text.
All counting is one `np.bincount` per order over the windows' combined
indices (a window of `n` characters read as a number in base `N`).

A better counter, `witten_bell_loss`: a context seen only a few times, or
followed by many different characters, says less than its counts, so its
estimate leans on the next shorter context's (Witten and Bell, 1991):

    p(x | h) = (c(h, x) + T(h) p(x | h')) / (c(h) + T(h))

with `T(h)` the number of different characters that followed `h`, `h'` the
context `h` without its first character, the order-0 estimate uniform, and
a context never seen in training giving `p(x | h')`. Its windows of up to
five characters are too many for a dense table, so they are counted by
sorting (`np.unique`) and looked up by binary search.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

# The largest count table built: N**n cells of 8 bytes (order 4 of 71
# characters is 25 M cells, 203 MB).
MAX_CELLS = 2**25
ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class NgramLoss:
    order: int  # n: the character and the n - 1 before it
    nats: float  # mean validation cross-entropy, nats per character
    contexts: int  # distinct contexts (n - 1 characters) in the training text
    unseen: int  # validation characters whose context training never saw
    characters: int  # validation characters scored
    k: float  # the add-k smoothing constant


def windows(ids: np.ndarray, n: int, vocab_size: int) -> np.ndarray:
    """Each window of `n` ids as one number in base `vocab_size`, first id
    most significant: `len(ids) - n + 1` of them."""
    count = len(ids) - n + 1
    codes = np.zeros(count, dtype=np.int64)
    for j in range(n):
        codes = codes * vocab_size + ids[j : j + count]
    return codes


def ngram_loss(
    train_ids: Sequence[int] | np.ndarray,
    val_ids: Sequence[int] | np.ndarray,
    vocab_size: int,
    order: int,
    k: float = 1.0,
    per_character: bool = False,
) -> NgramLoss | np.ndarray:
    """The order-`order` model's validation loss (see the module's docstring);
    with `per_character`, the loss of each validation character instead, so
    that it can be averaged over the characters a model scored."""
    train = _ids(train_ids, vocab_size, "train_ids")
    val = _ids(val_ids, vocab_size, "val_ids")
    n, v = order, vocab_size
    if n < 1:
        raise ValueError(f"order must be >= 1, got {n}")
    if not k > 0:
        raise ValueError(f"k must be > 0, got {k}")
    if v**n > MAX_CELLS:
        raise ValueError(f"order {n}: {v}**{n} counts is more than {MAX_CELLS:,}")
    if len(train) < n or not len(val):
        raise ValueError(f"order {n} needs {n} training ids and 1 validation id")
    # counts[h, x] = c(h, x); a context h is the number its n - 1 ids make.
    counts = np.bincount(windows(train, n, v), minlength=v**n).reshape(-1, v)
    totals = counts.sum(axis=1)  # c(h)
    # The validation text after the n - 1 training ids that precede it: one
    # window ends at each validation character.
    scored = windows(np.concatenate([train[len(train) - (n - 1) :], val]), n, v)
    context, char = np.divmod(scored, v)
    p = (counts[context, char] + k) / (totals[context] + k * v)
    if per_character:
        return -np.log(p)
    return NgramLoss(
        order=n,
        nats=float(-np.log(p).mean()),
        contexts=int(np.count_nonzero(totals)),
        unseen=int(np.count_nonzero(totals[context] == 0)),
        characters=len(val),
        k=k,
    )


def ngram_losses(
    train_ids: Sequence[int] | np.ndarray,
    val_ids: Sequence[int] | np.ndarray,
    vocab_size: int,
    orders: Iterable[int] = (1, 2, 3),
    k: float = 1.0,
) -> list[NgramLoss]:
    """`ngram_loss` for each order: unigram, bigram, trigram by default."""
    train = _ids(train_ids, vocab_size, "train_ids")
    val = _ids(val_ids, vocab_size, "val_ids")
    return [ngram_loss(train, val, vocab_size, n, k) for n in orders]


def witten_bell_loss(
    train_ids: Sequence[int] | np.ndarray,
    val_ids: Sequence[int] | np.ndarray,
    vocab_size: int,
    order: int,
    per_character: bool = False,
) -> float | np.ndarray:
    """The mean validation cross-entropy, nats per character, of the
    order-`order` Witten-Bell model (see the module's docstring); with
    `per_character`, each validation character's instead."""
    train = _ids(train_ids, vocab_size, "train_ids")
    val = _ids(val_ids, vocab_size, "val_ids")
    n, v = order, vocab_size
    if n < 1 or v**n >= 2**62:
        raise ValueError(f"order must be >= 1 with {v}**order < 2**62, got {n}")
    if len(train) < n or not len(val):
        raise ValueError(f"order {n} needs {n} training ids and 1 validation id")
    text = np.concatenate([train[len(train) - (n - 1) :], val])
    p = np.full(len(val), 1.0 / v)  # order 0
    for m in range(1, n + 1):
        grams, counts = np.unique(windows(train, m, v), return_counts=True)
        contexts, which = np.unique(grams // v, return_inverse=True)
        c_h = np.bincount(which, weights=counts)  # c(h)
        t_h = np.bincount(which)  # T(h)
        scored = windows(text[n - m :], m, v)  # the m characters ending at each
        c_hx = _lookup(grams, scored, counts)
        seen = _lookup(contexts, scored // v, np.arange(len(contexts)) + 1)
        k = np.maximum(seen - 1, 0)
        mixed = (c_hx + t_h[k] * p) / (c_h[k] + t_h[k])
        p = np.where(seen > 0, mixed, p)
    return -np.log(p) if per_character else float(-np.log(p).mean())


def _lookup(keys: np.ndarray, wanted: np.ndarray, values: np.ndarray) -> np.ndarray:
    """`values[i]` where `keys[i] == wanted` (`keys` sorted), else 0."""
    at = np.minimum(np.searchsorted(keys, wanted), len(keys) - 1)
    return np.where(keys[at] == wanted, values[at], 0)


def split_ids(cfg=None) -> tuple[np.ndarray, np.ndarray, int]:
    """`(train_ids, val_ids, vocab_size)` exactly as `train.py` makes them for
    `cfg` (its `cpu` preset unless given): its text, vocabulary and split."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    import train

    cfg = train.PRESETS["cpu"] if cfg is None else cfg
    text, name = train.read_text(cfg.data, ROOT / "data")
    vocab = train.Vocab.of(text)
    train_ids, val_ids = train.split(vocab.encode(text, name), cfg, name)
    return train_ids.numpy(), val_ids.numpy(), len(vocab)


def _ids(ids: Sequence[int] | np.ndarray, vocab_size: int, what: str) -> np.ndarray:
    array = np.asarray(ids)
    if array.ndim != 1 or not np.issubdtype(array.dtype, np.integer):
        raise ValueError(f"{what}: expected a 1-d sequence of integer ids")
    if array.size and not (0 <= array.min() and array.max() < vocab_size):
        raise ValueError(f"{what}: ids must lie in 0..{vocab_size - 1}")
    return array.astype(np.int64, copy=False)


if __name__ == "__main__":
    for row in ngram_losses(*split_ids()):
        print(
            f"order {row.order}: {row.nats:.4f} nats/char, {row.contexts:,} "
            f"contexts, {row.unseen:,} of {row.characters:,} unseen"
        )
    loss = witten_bell_loss(*split_ids(), 5)
    print(f"order 5, Witten-Bell: {loss:.4f} nats/char")
