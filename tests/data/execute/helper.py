"""A module that demo.py imports: a change here re-runs what uses it."""


def double(n: int) -> int:
    return 2 * n


def triple(n: int) -> int:
    return 3 * n
