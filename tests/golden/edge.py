#!/usr/bin/env python
# -*- coding: utf-8 -*-
# ruff: noqa
# fmt: off
# A leading comment, before the module docstring.
"""Edge cases: a docstring with a # hash and ''' quotes."""
# noqa: E501
x = "# not a comment"  # a trailing comment stays with its code
y = """
# still inside a string
"""

# First paragraph of one section.
#
# Its second paragraph, after an empty comment line.

# A second run after a blank line joins the same section.
#| show table(x)
z = [
    1,
    # a comment inside brackets is code
    2,
]


@property
def decorated(
    a,
    b,
):
    r"Sits beside its decorator and its two-line signature: \sqrt{x}."

    return a


class Outer:
    """Outer's docstring."""

    class Inner:
        def method(self):
            # Inside Inner.method.
            return Outer.Inner


def one_liner(): return 1  # type: ignore


# The end.
