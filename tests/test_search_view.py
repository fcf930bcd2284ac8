"""The lighter view of a generated page that the search index reads."""

import re

import pytest
from material.plugins.search.plugin import Parser

from literate.mkdocs.search_view import search_view
from literate.parse import parse
from literate.render import render_page

SOURCE = '''"""
# Scaled scores

Divide by $\\\\sqrt{d_k}$ before the softmax:

$$
p = \\\\mathrm{softmax}(s)
$$
"""


def scale(scores, d_k):
    """Scores `[B, Sq, Sk]` divided by the root of the head width."""
    return scores / d_k**0.5
'''


def indexed_text(html: str) -> str:
    """The words mkdocs-material's search parser keeps from `html`."""
    parser = Parser()
    parser.feed(html)
    parser.close()
    text = " ".join("".join(s.title) + " " + "".join(s.text) for s in parser.data)
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", text)).strip()


def test_formulas_become_their_tex_and_no_span_is_left():
    html = render_page(parse(SOURCE, "scale.py"))
    view = search_view(html)
    assert "<span" not in view and "</span>" not in view
    assert "katex" not in view
    assert r"\sqrt{d_k}" in view and r"\mathrm{softmax}(s)" in view
    assert len(view) < len(html) / 2


def test_the_index_keeps_every_word_of_prose_and_code():
    html = render_page(parse(SOURCE, "scale.py"))
    words = indexed_text(search_view(html))
    for expected in ["Scaled scores", "Divide by", "before the softmax",
                     "def scale(scores, d_k):", "return scores / d_k**0.5",
                     "divided by the root of the head width"]:  # fmt: skip
        assert expected in words, expected


def test_an_unclosed_formula_span_is_an_error_not_a_silent_cut():
    broken = '<p>a <span class="katex"><span>x</span> b</p>'
    with pytest.raises(ValueError, match="unclosed <span>"):
        search_view(broken)
