"""The renderer: golden HTML, links, math, translation states and escaping.

Golden files: `tests/golden/NAME.py` renders to `NAME.html` (KaTeX 0.16.47,
Pygments and Python-Markdown as pinned); LITERATE_UPDATE_GOLDEN=1 rewrites
them after a deliberate change.
"""

from __future__ import annotations

import base64
import dataclasses
import re

import pytest
from conftest import GOLDEN, KATEX_DIST, Tree, compare_golden
from hypothesis import given, settings
from hypothesis import strategies as st

from literate import highlight, katex
from literate.model import Output
from literate.parse import parse
from literate.render import RenderError, render_page, render_page_tolerant


def render_source(source: str, path: str = "m.py", **kwargs) -> str:
    return render_page(parse(source, path), **kwargs)


@pytest.mark.parametrize("name", sorted(p.stem for p in GOLDEN.glob("*.py")))
def test_golden_html(name):
    source = GOLDEN / f"{name}.py"
    page = parse(source.read_text(encoding="utf-8"), source.name)
    html = render_page(page, source_url=f"https://example.org/{source.name}")
    compare_golden(GOLDEN / f"{name}.html", html)


# --- structure ------------------------------------------------------------------


def test_every_code_line_has_a_self_link_with_its_number():
    source = (GOLDEN / "edge.py").read_text()
    page = parse(source, "edge.py")
    tree = Tree(render_page(page))
    numbers = [line.number for s in page.sections for line in s.code]
    for n in numbers:
        assert tree.find("a", id=f"L{n}", href=f"#L{n}", class_="lit-ln"), n
    assert len(tree.find("a", class_="lit-ln")) == len(numbers)


def test_sections_have_their_anchor_and_a_permalink():
    page = parse((GOLDEN / "basic.py").read_text(), "basic.py")
    tree = Tree(render_page(page))
    for section in page.sections:
        assert tree.find("section", id=section.anchor, class_="lit-section")
        assert tree.find("a", href=f"#{section.anchor}", class_="lit-permalink")


def test_the_page_links_to_its_source_file():
    tree = Tree(render_source("x = 1\n", source_url="../src/m.py"))
    assert tree.find("a", href="../src/m.py")
    no_link = Tree(render_source("x = 1\n"))
    assert not no_link.find("p", class_="lit-source")  # no link, not an empty one
    assert not [a for t, a in no_link.tags if t == "a" and a.get("href") == ""]


NAMES_SOURCE = '''\
class Model:
    """A model."""

    def forward(self, x):
        """Forward."""
        return self.helper(x) + Model.scale + unknown.helper(x)

    def helper(self, x):
        """Helper."""
        return x


def build():
    """Build one."""
    return Model()
'''


def test_defined_names_link_to_their_section():
    html = render_source(NAMES_SOURCE)
    refs = [a["href"] for a in Tree(html).find("a") if a.get("class") == "lit-ref"]
    # self.helper -> Model.helper; Model -> Model; Model() -> Model.
    assert refs == ["#Model.helper", "#Model", "#Model"]
    # The names being defined are not links to themselves.
    assert '<span class="nf">forward</span>' in html


def fresh_render(source: str, formulas: katex.Katex | None = None) -> str:
    """A render with no cache warm: highlighting redone, and the formulas
    typeset by `formulas` with its cache emptied (by default, a new KaTeX
    process)."""
    highlight._COLUMNS.clear()
    if formulas is not None:
        formulas.cache.clear()
        return render_source(source, formulas=formulas)
    formulas = katex.Katex.for_dist(KATEX_DIST)
    try:
        return render_source(source, formulas=formulas)
    finally:
        formulas.close()


@pytest.fixture(scope="module")
def engine():
    """One KaTeX process for the generated sources: starting one per example
    would cost more than the rest of the test."""
    formulas = katex.Katex.for_dist(KATEX_DIST)
    yield formulas
    formulas.close()


def test_rendering_is_byte_identical_and_independent_of_the_caches():
    source = (GOLDEN / "basic.py").read_text()
    first = fresh_render(source)
    assert render_source(source) == first  # math and highlighting cached
    assert fresh_render(source) == first


@settings(max_examples=30, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                "# Prose with $x_1$ and `code`.",
                "x = 1",
                "",
                "def f(a):\n    return a",
                "# Link to [docs](https://example.org) and *emphasis*.",
                'class C:\n    """Doc $\\frac{a}{b}$."""',
                "y = f(2)  # trailing",
            ]
        ),
        max_size=10,
    )
)
def test_render_is_deterministic_for_generated_sources(engine, parts):
    source = "\n".join(parts) + "\n"
    assert fresh_render(source, engine) == render_source(source)


# --- math -----------------------------------------------------------------------


def test_math_is_rendered_with_mathml_and_no_dollar_left():
    html = render_source(
        "# Inline $d_k$ and display:\n#\n# $$\n# \\frac{a}{b}\n# $$\nx = 1\n"
    )
    tree = Tree(html)
    assert len(tree.find("math")) == 2
    assert tree.find("math", display="block")
    prose = "".join(tree.text)
    assert "$" not in prose.replace("$d_k$", "")  # only the TeX annotation keeps it


def test_a_plain_docstring_shows_its_math_as_written():
    # In a plain (not raw) string Python reads \f, \t, \b and \n as control
    # characters; the page shows the source text instead.
    source = (
        "def f():\n"
        '    """$\\frac{a}{b} \\times \\beta$, then $$\\nabla f \\neq 0$$"""\n'
        "    return 1\n"
    )
    html = render_source(source)
    assert not re.search("[\x00-\x08\x0b-\x1f]", html)
    annotations = re.findall(r'<annotation encoding="application/x-tex">(.*?)<', html)
    assert annotations == ["\\frac{a}{b} \\times \\beta", "\\nabla f \\neq 0"]
    tree = Tree(html)
    assert len(tree.find("mfrac")) == 1
    text = "".join(tree.text)
    assert all(symbol in text for symbol in "×β∇≠")


def test_a_latex_error_names_file_and_line():
    source = "x = 1\n\n# Fine $a$.\n#\n# Broken $\\frac{a}{$ here.\ny = 2\n"
    with pytest.raises(RenderError) as caught:
        render_source(source, "mha.py")
    assert str(caught.value).startswith("mha.py:5: KaTeX parse error:")


def test_a_latex_error_in_a_docstring_names_its_line():
    source = 'def f():\n    """One.\n\n    Two $\\left( x$.\n    """\n'
    with pytest.raises(RenderError) as caught:
        render_source(source, "d.py")
    assert caught.value.line == 4


def test_tolerant_mode_shows_bad_tex_escaped_and_counts_it():
    html, errors = render_page_tolerant(parse("# $\\frac{<b>}{$ ok\nx = 1\n", "m.py"))
    assert [e.line for e in errors] == [1]
    assert '<code class="lit-tex">$\\frac{&lt;b&gt;}{$</code>' in html


def test_one_katex_process_for_many_pages_and_no_batch_when_cached():
    formulas = katex.Katex.for_dist(KATEX_DIST)
    source = "# $a_1$, $a_2$ and $a_3$.\nx = 1\n# $$b$$\ny = 2\n"
    first = render_source(source, formulas=formulas)
    assert formulas.batches == 1 and len(formulas.cache) == 4  # one per page
    assert render_source(source, formulas=formulas) == first
    assert formulas.batches == 1  # all cached: nothing sent
    render_source("# $c$ and $a_1$\nx = 1\n", formulas=formulas)
    assert formulas.batches == 2 and len(formulas.cache) == 5  # only $c$ is new
    assert formulas.starts == 1  # one node process served every page
    formulas.close()
    render_source("# $d$\nx = 1\n", formulas=formulas)
    assert formulas.starts == 2
    formulas.close()


def test_a_reply_nobody_waited_for_is_not_taken_for_the_next():
    formulas = katex.Katex.for_dist(KATEX_DIST)
    formulas.send([("a", False)])  # sent, then abandoned (the page failed)
    results = formulas([("b", True)])
    assert 'display="block"' in results[("b", True)].html
    assert "<mi>a</mi>" in formulas.cache[("a", False)].html
    formulas.close()


def test_missing_node_is_a_render_error(monkeypatch):
    monkeypatch.setattr(katex.shutil, "which", lambda name: None)
    with pytest.raises(RenderError) as caught:
        render_source(
            "x = 1\n# $q_{new}$\ny = 2\n", "m.py", formulas=katex.Katex(node=True)
        )
    assert caught.value.line == 2
    assert "node not found" in str(caught.value)


# --- translation states and escaping ----------------------------------------------

ENGLISH = "Weights $w_i$, see [docs](https://example.org/a) and `w`.<br>"


def translated(docs: str, state: str = "translated", english: str = ENGLISH):
    page = parse(f"# {english}\nx = 1\n", "m.py")
    section = dataclasses.replace(
        page.sections[0], docs=docs, english=english, state=state
    )
    return dataclasses.replace(page, sections=(section,), lang="ja")


def test_translated_section_shows_translation_and_english_original():
    docs = "重み $w_i$、[資料](https://example.org/a)、`w`。<br>"
    tree = Tree(render_page(translated(docs)))
    assert tree.find("div", class_="lit-original", lang="en")
    toggle = {"class": "lit-toggle lit-original-toggle", "aria-label": "英語の原文"}
    assert tree.find("input", **toggle)  # the control that shows the original
    assert len(tree.find("math")) == 2  # in the translation and in the original
    assert len(tree.find("a", href="https://example.org/a")) == 2
    assert len(tree.find("br")) == 2


@pytest.mark.parametrize(
    ("state", "notice"),
    [("untranslated", "未翻訳です"), ("stale", "翻訳が古くなっています")],
)
def test_untranslated_and_stale_show_the_english_marked(state, notice):
    tree = Tree(render_page(translated(ENGLISH, state=state)))
    assert tree.find("p", class_=f"lit-notice lit-{state}")
    assert any(notice in text for text in tree.text)
    assert tree.find("div", class_="lit-prose", lang="en")
    assert not tree.find("details")


HOSTILE = [
    "<script>alert(1)</script>",
    '<img src="x" onerror="alert(1)">',
    "[click](javascript:alert(1))",
    "[click](JaVa&#115;cript:alert(1))",
    "<a href='javascript:alert(1)'>x</a>",
    "<iframe src='https://evil.example'></iframe>",
    "<!-- hidden --> visible",
    "<style>body { display: none }</style>",
    "<svg onload=alert(1)>",
    "<div onclick='alert(1)'>x</div>",
    "<javascript:alert(1)>",
    "[ref]\n\n[ref]: javascript:alert(1)",
    "![x](https://evil.example/pixel.png)",
]


@pytest.mark.parametrize("hostile", HOSTILE)
def test_a_translation_never_yields_markup_it_was_not_given(hostile):
    html = render_page(translated(f"訳 {hostile} 訳"))
    tree = Tree(html)
    tags = {tag for tag, _ in tree.tags}
    assert not tags & {"script", "iframe", "style", "img", "svg"}
    for tag, attrs in tree.tags:
        assert not any(name.startswith("on") for name in attrs), (tag, attrs)
        for name in ("href", "src"):
            value = (attrs.get(name) or "").replace("\x00", "").strip().lower()
            assert not value.startswith(("javascript", "data", "vbscript")), attrs
            assert "evil.example" not in value, attrs
    # What was refused is still there for the reader, as text.
    assert "訳" in "".join(tree.text)


def test_hostile_text_in_a_translation_is_shown_escaped():
    html = render_page(translated("訳 <script>alert(1)</script>"))
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_english_html_is_rebuilt_from_allowed_tags_and_attributes():
    source = (
        '# A <span class="x" onclick="evil()">span</span> <b>bold\n# <u>u</u>\nx = 1\n'
    )
    tree = Tree(render_source(source))
    assert tree.find("span", class_="x") == [{"class": "x"}]
    assert tree.find("u")
    html = render_source(source)
    # <b> was never closed: the renderer closes it at the end of the prose.
    assert html.count("<b>") == html.count("</b>") == 1


def test_english_links_are_checked_too():
    html = render_source("# [a](javascript:alert(1)) [b](../c.html) [c](#top)\nx = 1\n")
    hrefs = [a.get("href") for a in Tree(html).find("a") if "lit-" not in str(a)]
    assert hrefs == [None, "../c.html", "#top"]


def test_placeholder_lookalikes_in_prose_stay_text():
    html = render_source("# Literal _^_0_^_ then $x$ and _^_7_^_.\ny = 1\n")
    text = "".join(Tree(html).text)
    assert "Literal _^_0_^_ then" in text and "and _^_7_^_." in text
    assert html.count("<math") == 1


def test_cli_writes_a_standalone_page(tmp_path):
    from literate.__main__ import main

    out = tmp_path / "basic.html"
    assert main(["render", str(GOLDEN / "basic.py"), "-o", str(out)]) == 0
    text = out.read_text()
    assert text.startswith("<!doctype html>") and 'class="lit-page"' in text
    assert "katex.min.css" in text
    bad = tmp_path / "bad.py"
    bad.write_text("# $\\frac{$\nx = 1\n")
    assert main(["render", str(bad), "-o", str(tmp_path / "bad.html")]) == 1
    assert not (tmp_path / "bad.html").exists()


def test_label_languages_fall_back_to_english():
    page = dataclasses.replace(parse("x = 1\n", "m.py"), lang="xx")
    html = render_page(page, source_url="m.py")
    assert "Source file: m.py" in html


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(HOSTILE + ["訳", "`x`", "**b**", "\n\n"]), max_size=6))
def test_no_mix_of_hostile_fragments_yields_markup(fragments):
    tree = Tree(render_page(translated(" ".join(fragments))))
    assert not {tag for tag, _ in tree.tags} & {
        "script",
        "iframe",
        "style",
        "img",
        "svg",
    }
    for _, attrs in tree.tags:
        assert not any(name.startswith("on") for name in attrs)
        assert "javascript" not in (attrs.get("href") or "").lower()


def test_a_code_span_wrapped_over_two_comment_lines_survives_translation():
    from literate.normalize import key, normalize
    from literate.spans import extract
    from literate.translate import translate_page

    source = (
        "# Combine them: `causal_mask(s) &\n# padding_mask(ids)` keeps both.\nx = 1\n"
    )
    page = parse(source, "m.py")
    english = page.sections[0].docs
    spans = extract(normalize(english)).spans
    table = {key(english): "両方を組み合わせる: _^_0_^_ は両方を保つ。"}
    html = render_page(translate_page(page, "ja", table))
    assert spans[0].text == "`causal_mask(s) & padding_mask(ids)`"
    assert "両方を組み合わせる" in html
    assert "`causal_mask" not in html  # shown as code, not as escaped backticks
    assert "<code>causal_mask(s) &amp; padding_mask(ids)</code>" in html


def test_math_a_translation_adds_is_shown_as_text():
    html = render_page(translated("訳 $w_i$ と $\\href{javascript:alert(1)}{x}$"))
    assert "$\\href{javascript:alert(1)}{x}$" in html.replace("&#x27;", "'")
    assert "javascript" not in "".join(a.get("href") or "" for _, a in Tree(html).tags)


def test_fenced_code_in_prose_is_highlighted():
    source = "# Run it:\n#\n# ```python\n# x = [1]  # <b>\n# ```\ny = 1\n"
    html = render_source(source)
    assert '<div class="highlight"><pre><code><span class="n">x</span>' in html
    assert "&lt;b&gt;" in html and "<b>" not in html


def with_outputs(*outputs):
    page = parse("# Table.\nx = 1\n#| show(x)\n", "m.py")
    section = dataclasses.replace(page.sections[0], outputs=outputs)
    return dataclasses.replace(page, sections=(section,))


def test_outputs_show_under_the_code_text_escaped():
    svg = "data:image/svg+xml;base64," + base64.b64encode(b"<svg/>").decode()
    html = render_page(
        with_outputs(
            Output(3, "text", text="| a | <b> |\n"),
            Output(3, "image", image=svg, alt='weights "w"'),
        )
    )
    tree = Tree(html)
    assert '<div class="lit-output" id="table-output-0" data-directive="3">' in html
    line = '<span class="lit-line">| a | &lt;b&gt; |</span>'  # one span a line
    assert f"<pre><code>{line}</code></pre>" in html
    assert tree.find("img", src=svg, alt='weights "w"')
    code = html.index('class="lit-code"')
    assert code < html.index("lit-output") < html.index("</section>")


def test_an_output_image_must_be_a_data_url():
    page = with_outputs(Output(3, "image", image="https://evil.example/x.svg"))
    with pytest.raises(RenderError) as caught:
        render_page(page)
    assert str(caught.value).startswith("m.py:3: output of kind 'image'")


def test_links_never_nest():
    html = render_source(
        "# [https://a.org](https://a.org) [<a id='x'>b</a>](https://b.org)\nx = 1\n"
    )
    depth = 0
    for piece in re.findall(r"</?a\b", html):
        depth += 1 if piece == "<a" else -1
        assert depth <= 1


def test_cli_renders_other_languages_and_runs_translations(capsys):
    from literate.__main__ import main

    assert main(["render", str(GOLDEN / "basic.py"), "--lang", "ja", "--fragment"]) == 0
    fragment = capsys.readouterr().out
    assert fragment.startswith('<div class="lit-page" lang="ja"')
    assert "未翻訳です" in fragment
    assert main(["translations", "check", "xx"]) == 1
    assert "translations/xx: no such language folder" in capsys.readouterr().out


def test_an_inline_formula_keeps_the_punctuation_after_it_on_its_line():
    html = render_source(
        '"""# T\n\nMean $0$ and variance $1$, then $x$。 and $y$ alone."""\n'
    )
    assert html.count('class="lit-nobr"') == 2  # after "1" and "x", not "0"/"y"
    assert html.count('class="katex"') == 4
    assert re.search(r"</span>,</span> then", html)
    assert re.search(r"</span>。</span> and", html)


def test_an_inline_formula_keeps_the_bracket_before_it_on_its_line():
    html = render_source('"""# T\n\n和の後で正規化する（$x$）。次に $y$ だけ。"""\n')
    assert html.count('class="lit-nobr"') == 1
    glued = r'<span class="lit-nobr">（<span class="katex".*?</span>）。</span>'
    assert re.search(glued, html)
