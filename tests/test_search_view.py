"""What the search index reads of a page (literate/mkdocs/search_view.py), and
a formula written as text (literate/mkdocs/tex_text.py)."""

import re

import pytest
from material.plugins.search.plugin import Parser

from literate.mkdocs.search_view import search_view
from literate.mkdocs.tex_text import tex_text, tex_words
from literate.normalize import key
from literate.parse import parse
from literate.render import render_page
from literate.translate import translate_page

SOURCE = r'''"""
# Scaled scores

Divide by $\sqrt{d_k}$ before the softmax.

A second paragraph, still under the heading.

$$
p = \mathrm{softmax}(s)
$$

| word | weight |
| --- | --- |
| cats | 0.40 |
| chase | 0.60 |
"""


def scale(scores, d_k):
    """Scores `[B, Sq, Sk]` divided by the root of the head width."""
    return scores / d_k**0.5


# ## Masks
#
# A mask says which keys a query may use.

MASK = None
'''


def sections(html: str) -> dict[str, tuple[str, str]]:
    """What mkdocs-material's search parser makes of `html`: each section's
    id (None for the page's) -> its title and text."""
    parser = Parser()
    parser.feed(html)
    parser.close()
    return {s.id: ("".join(s.title), "".join(s.text)) for s in parser.data}


def shown(text: str) -> str:
    """The text of a section outside its `<pre>` blocks, without tags."""
    text = re.sub(r"<pre>.*?</pre>", " ", text, flags=re.S)
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", text)).strip()


def english_page():
    return render_page(parse(SOURCE, "scale.py"))


def test_each_heading_holds_its_prose_and_code_and_the_first_is_the_page():
    found = sections(search_view(english_page()))
    assert list(found) == [None, "masks-2"]  # no section before the title
    title, text = found[None]
    assert title == "Scaled scores"
    assert "A second paragraph, still under the heading." in shown(text)
    assert "A mask says which keys a query may use." in shown(found["masks-2"][1])
    # The code column is a <pre>: searched, never shown.
    code = re.findall(r"<pre>(.*?)</pre>", text, re.S)
    assert any("return scores / d_k**0.5" in c for c in code)
    assert "return scores" not in shown(text)
    assert "MASK = None" in found["masks-2"][1]


def test_formulas_show_as_text_and_their_tex_words_are_kept_apart():
    view = search_view(english_page())
    assert "<span" not in view and "katex" not in view
    text = shown(sections(view)[None][1])
    assert "Divide by 1" not in text and "Divide by √d_k before the softmax." in text
    assert "p = softmax(s)" in text
    assert "\\" not in text and "mathrm" not in text
    assert "<pre>sqrt d_k</pre>" in view


def test_table_cells_stay_apart():
    text = shown(sections(search_view(english_page()))[None][1])
    assert re.search(r"cats\s+0\.40", text) and re.search(r"chase\s+0\.60", text)
    assert "cats0.40" not in text


def test_a_translated_page_indexes_its_language_not_the_english_originals():
    page = parse("# # Scores\n#\n# Hello there, reader.\n\nx = 1\n", "s.py")
    english = page.sections[0].docs
    table = {key(english): "# スコア\n\nこんにちは、読者。"}
    html = render_page(translate_page(page, "ja", table))
    assert "Hello there, reader." in html  # the original, hidden on the page
    view = search_view(html)
    assert "Hello there" not in view
    title, text = sections(view)[None]
    assert (title, shown(text)) == ("スコア", "こんにちは、読者。")
    assert re.findall(r"<pre>\s*(.*?)\s*</pre>", text) == ["x = 1"]


def test_excluded_blocks_scripts_and_permalinks_are_left_out():
    html = (
        '<h2 id="a">Title<a class="headerlink" href="#a">¶</a></h2>'
        "<p>kept <span data-search-exclude>dropped one</span></p>"
        '<nav class="lit-contents" data-search-exclude><a href="#a">dropped two</a>'
        "</nav><script>dropped(3)</script><p>also kept</p>"
    )
    view = search_view(html)
    assert "dropped" not in view and "¶" not in view
    assert sections(view)["a"] == ("Title", "<p>kept </p><p>also kept</p>")


def test_the_data_of_an_example_is_not_read():
    html = '<p>x</p><script type="application/json" class="lit-data">{"w": 1}</script>'
    assert "w" not in search_view(html)


def test_an_unclosed_formula_span_is_an_error_not_a_silent_cut():
    broken = '<p>a <span class="katex"><span>x</span> b</p>'
    with pytest.raises(ValueError, match="unclosed <span>"):
        search_view(broken)


@pytest.mark.parametrize(
    ("tex", "text"),
    [
        (r"S = Q K^\top / \sqrt{d_k}", "S = Q Kᵀ / √d_k"),
        (r"\mathrm{softmax}(s)_j = e^{s_j} / \sum_k e^{s_k}",
         "softmax(s)_j = e^(s_j) / Σ_k e^(s_k)"),
        (r"\frac{\partial L}{\partial s_j}", "∂L/∂s_j"),
        (r"\eta_t = \mathrm{lr} \cdot \frac{t + 1}{\mathrm{warmup}}",
         "η_t = lr · (t + 1)/warmup"),
        (r"W^Q = \left[\, W^Q_1 \mid \dots \mid W^Q_H \,\right]",
         "W^Q = [ W^Q_1 | … | W^Q_H ]"),
        (r"\sqrt 2", "√2"),
        (r"x \leftarrow \mathrm{LN}(x + f(x))", "x ← LN(x + f(x))"),
        (r"\begin{aligned} a &= 1 \\ b &= 2 \end{aligned}", "a = 1 ; b = 2"),
        (r"\unknown{x}", "unknownx"),
    ],
)  # fmt: skip
def test_a_formula_is_written_as_text_a_reader_can_read(tex, text):
    assert tex_text(tex) == text


def test_the_words_of_a_formula_are_what_a_reader_would_type():
    assert tex_words(r"\sqrt{d_k}") == "sqrt d_k"
    assert tex_words(r"\mathrm{softmax}(s)") == "softmax (s)"
    assert tex_words(r"\begin{aligned} a &= \frac{1}{2} \end{aligned}") == "a = 1 2"
