"""Math, docstring fields, links across pages, click-to-highlight, breadcrumbs.

Render-level tests run a page through the renderer (fast, no browser). The
labml test builds labml's `transformers/` tree from the installed `labml-nn`
and counts its formulas against labml's published pages (the counts of
../shared/reviews/labml-compare-3.md, measured there in Chromium). The
browser tests open the site that tests/test_site.py builds.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT, Tree
from test_site import SHOTS, in_browser, server, site  # noqa: F401 (fixtures)

from literate.check import check_entry
from literate.highlight import cross_page_links, highlight_sections
from literate.normalize import key, normalize, symbols
from literate.parse import parse
from literate.render import render_page
from literate.spans import CODE_JOINER, extract, fill


def page_of(source: str, name: str = "t.py"):
    return parse(source, name)


def prose_text(html: str) -> str:
    """The prose a reader sees as text: no typeset math, no code."""
    html = re.sub(r'<span class="katex".*?</math></span>', "", html, flags=re.S)
    html = re.sub(r'<span class="katex-html".*?</span></span></span>', "", html)
    html = re.sub(r"<code>.*?</code>|<pre>.*?</pre>", "", html, flags=re.S)
    return re.sub(r"<[^>]+>", "", html)


# --- math -------------------------------------------------------------------

ALIGN = '''"""A page.

The encoding is

\\begin{align}
PE_{p,2i} &= \\sin\\Bigg(\\frac{p}{10000^{\\frac{2i}{d}}}\\Bigg) \\\\
PE_{p,2i + 1} &= \\cos\\Bigg(\\frac{p}{10000^{\\frac{2i}{d}}}\\Bigg)
\\end{align}

for $2 * i$ and $0 < d < D$.
"""
'''


def test_a_bare_align_environment_is_typeset_as_a_display():
    page = page_of(ALIGN)
    spans = extract(page.sections[0].docs).spans
    assert [s.kind for s in spans] == ["display_math", "math", "math"]
    assert spans[0].text.startswith("\\begin{align}")
    assert spans[0].text.endswith("\\end{align}")
    html = render_page(page)
    assert html.count('class="katex-display"') == 1
    assert html.count('class="katex"') == 3
    text = prose_text(html)
    assert "\\begin" not in text and "\\frac" not in text and "$" not in text


def test_an_unclosed_environment_stays_text_and_every_supported_one_is_math():
    assert extract("a \\begin{align} b").spans == ()
    for name in ("align*", "aligned", "equation", "equation*", "gather", "split"):
        text = f"x\n\\begin{{{name}}}a\\end{{{name}}}\ny"
        assert [s.kind for s in extract(text).spans] == ["display_math"], name
    # A `\end` of another environment does not close it.
    assert extract("\\begin{align}a\\end{gather}").spans == ()


# --- docstring fields, remote images, shape stars -----------------------------

FIELDS = '''"""A page."""


def f(q, k):
    """
    Forward pass.

    :param q: the queries, `[B, S, D]`
    :param k: the keys,
        on two lines
    :return: the output $O$
    """
    return q
'''


def test_param_and_return_fields_are_a_definition_list():
    html = render_page(page_of(FIELDS))
    tree = Tree(html)
    assert len(tree.find("dl")) == 1
    terms = re.findall(r"<dt><code>(\w+)</code></dt>", html)
    assert terms == ["q", "k", "return"]
    assert "<dd>the keys,\non two lines</dd>" in html
    assert ":param" not in html


BADGE = '''"""A page.

[![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/x)

![a chart](https://example.org/chart.png)
"""
'''


def test_a_remote_image_is_never_loaded_and_its_alt_text_is_the_link():
    html = render_page(page_of(BADGE))
    assert "<img" not in html
    badge = re.search(r'<a href="https://colab.research.google.com/x">(.*?)</a>', html)
    assert badge and prose_text(badge.group(1)) == "Open In Colab"
    chart = re.search(r'<a href="https://example.org/chart.png">(.*?)</a>', html)
    assert chart and prose_text(chart.group(1)) == "a chart"


SHAPES = '"""A page.\n\nFlatten [B*S, N] and [B*S] here, and *this* is emphasis."""\n'


@pytest.mark.parametrize("lang", ["en", "ja", "zh"])
def test_a_star_in_shape_notation_is_never_emphasis(lang):
    from literate.translate import translate_page

    page = page_of(SHAPES)
    if lang != "en":
        docs = page.sections[0].docs
        value = {
            "ja": "ページ。\n\n[B*S, N] と [B*S] に平らにする。*これ* は強調。",
            "zh": "页面。\n\n展平为 [B*S, N] 和 [B*S]。*这* 是强调。",
        }[lang]
        page = translate_page(page, lang, {key(docs): value})
        assert page.sections[0].state == "translated"
    html = render_page(page).split('class="lit-original"')[0]  # the shown prose
    assert "[B*S, N]" in prose_text(html) and "[B*S]" in prose_text(html)
    assert len(re.findall("<em>", html)) == 1  # only the real emphasis


# --- adjacent placeholders ----------------------------------------------------


def test_two_code_spans_side_by_side_in_a_translation_stay_two_spans():
    english = "The shapes `[B, S]` and `[B]` go in."
    spans = extract(english).spans
    filled = fill("形は_^_0_^__^_1_^_です。", spans)
    assert filled == f"形は`[B, S]`{CODE_JOINER}`[B]`です。"
    assert extract(filled).spans == spans
    assert check_entry(key(english), "形は_^_0_^__^_1_^_です。") == []
    source = f'"""A page.\n\n{english}\n"""\n'
    page = page_of(source)
    from literate.translate import translate_page

    value = "ページ。\n\n形は_^_0_^__^_1_^_です。"
    page = translate_page(page, "ja", {key(page.sections[0].docs): value})
    assert page.sections[0].state == "translated"
    html = render_page(page)
    assert "<code>[B, S]</code>\u2060<code>[B]</code>" in html
    assert "`" not in prose_text(html.split('class="lit-original"')[0])


@pytest.mark.parametrize(
    "value",
    [
        "形は`_^_0_^_ _^_1_^_です。",
        "形は_^_0_^_` _^_1_^_です。",
        "形は$_^_0_^_ _^_1_^_。",
    ],
)
def test_check_refuses_a_placeholder_written_against_a_joining_character(value):
    problems = check_entry("The shapes _^_0_^_ and _^_1_^_ go in.", value)
    assert any("right" in p and "put a space" in p for p in problems), problems


# --- definition links -----------------------------------------------------------

KWARGS = '''"""A page."""


def split(data, val=0.1):
    return data


def train(split=None, train=True):
    return None


def run(data):
    x = split(data, val=0.2)
    return train(split=x, train=False)
'''


def test_keyword_arguments_are_never_links():
    html = render_page(page_of(KWARGS))
    linked = re.findall(r'<a class="lit-ref" href="#\w+"><span class="n">(\w+)', html)
    # `split(data, …)` and `train(…)` are calls: linked; `split=`, `train=`
    # and `val=` are keyword arguments or parameters: never.
    assert sorted(linked) == ["split", "train"]


def test_a_name_imported_from_another_page_links_to_its_definition_there():
    train = parse((ROOT / "train.py").read_text(encoding="utf-8"), "train.py")
    mha = parse((ROOT / "mha.py").read_text(encoding="utf-8"), "mha.py")
    anchors = {}
    for section in mha.sections:
        for name in section.defines:
            anchors.setdefault(name, section.anchor)
    links = cross_page_links(
        "train.py", train.sections, {"mha.py": (anchors, "mha.html")}
    )
    assert links["KVCache"] == "mha.html#KVCache"
    assert links["MultiHeadAttention"] == "mha.html#MultiHeadAttention"
    names = {}
    for section in train.sections:
        for name in section.defines:
            names.setdefault(name, section.anchor)
    code = "".join(highlight_sections(train.sections, names, links).values())
    assert '<a class="lit-ref" href="mha.html#KVCache">' in code
    assert '<a class="lit-ref" href="mha.html#MultiHeadAttention">' in code


def test_relative_imports_resolve_in_a_package_tree():
    page = parse(
        "from ..mha import MultiHeadAttention as MHA\nx = MHA()\n", "p/xl/r.py"
    )
    pages = {"p/mha.py": ({"MultiHeadAttention": "MultiHeadAttention"}, "../mha.html")}
    links = cross_page_links("p/xl/r.py", page.sections, pages)
    assert links == {"MHA": "../mha.html#MultiHeadAttention"}


# --- symbols --------------------------------------------------------------------


def test_a_symbols_line_binds_symbols_is_hidden_and_in_no_key():
    docs = "Scores $S = Q K^\\top$.\n\n%symbols Q=query S=scores d_k=d_k"
    text, pairs = symbols(docs)
    assert pairs == (("Q", "query"), ("S", "scores"), ("d_k", "d_k"))
    assert key(docs) == key(text) == "Scores _^_0_^_."
    assert "%symbols" not in normalize(docs)
    page = page_of(f'"""A page.\n\n{docs}\n"""\nquery = 1\n')
    html = render_page(page)
    assert 'data-symbols="Q=query S=scores dk=d_k"' in html
    assert "%symbols" not in html


def test_the_chapters_bind_their_main_symbols():
    for source, expected in (("attention.py", "Q=query"), ("mha.py", "dk=d_k")):
        page = parse((ROOT / source).read_text(encoding="utf-8"), source)
        html = render_page(page)
        assert re.search(rf'data-symbols="[^"]*\b{re.escape(expected)}\b', html)


# --- labml's tree ---------------------------------------------------------------

# labml's published pages: formulas typeset, counted in Chromium
# (../shared/reviews/labml-compare-3.md, section 2).
LABML_FORMULAS = {
    "mha.html": 12,
    "models.html": 0,
    "feed_forward.html": 21,
    "positional_encoding.html": 7,
    "xl/relative_mha.html": 24,
    "rope/index.html": 34,
    "flash/index.html": 161,
    "switch/index.html": 6,
    "gpt/index.html": 9,
    "alibi/index.html": 27,
    "basic/autoregressive_experiment.html": 3,
    "index.html": 0,
}
RAW_TEX = re.compile(r"\\begin\{|\\end\{|\\frac|\\sum_|\\sqrt")


@pytest.fixture(scope="module")
def labml_site(tmp_path_factory) -> Path:
    labml_nn = pytest.importorskip("labml_nn")
    folder = tmp_path_factory.mktemp("labml")
    shutil.copytree(
        Path(labml_nn.__file__).parent,
        folder / "labml_nn",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    (folder / "node_modules").symlink_to(ROOT / "node_modules")
    (folder / "docs").mkdir()
    (folder / "docs" / "index.md").write_text("# Home\n", encoding="utf-8")
    (folder / "mkdocs.yml").write_text(
        "site_name: t\nuse_directory_urls: false\n"
        "theme: {name: material, font: false}\nplugins:\n  - literate:\n"
        "      sources: [labml_nn/transformers/**/*.py]\n      base: labml_nn\n"
        "      run_examples: false\n",
        encoding="utf-8",
    )
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "-d", "out"],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    return folder / "out"


def page_prose(html: str) -> str:
    return "".join(re.findall(r'<div class="lit-prose"[^>]*>(.*?)</div>\n', html, re.S))


def code_column(html: str) -> str:
    """The code of the page's code column (its comments' math included)."""
    return "".join(re.findall(r"<pre><code>(.*?)</code></pre>", html, re.S))


@pytest.mark.slow
def test_labml_transformers_leave_no_tex_raw_and_typeset_what_labml_does(labml_site):
    tree = labml_site / "transformers"
    raw = {}
    for path in sorted(tree.rglob("*.html")):
        left = RAW_TEX.findall(prose_text(page_prose(path.read_text(encoding="utf-8"))))
        if left:
            raw[str(path.relative_to(tree))] = len(left)
    assert raw == {}
    for page, labml in LABML_FORMULAS.items():
        html = (tree / page).read_text(encoding="utf-8")
        ours = (page_prose(html) + code_column(html)).count('<span class="katex"')
        assert ours >= labml, page  # a comment's math too (comment_math)


@pytest.mark.slow
def test_labml_pages_have_breadcrumbs_and_links_across_pages(labml_site):
    tree = labml_site / "transformers"
    rope = (tree / "rope" / "index.html").read_text(encoding="utf-8")
    crumbs = re.search(r'<nav class="lit-breadcrumbs".*?</nav>', rope, re.S).group(0)
    hrefs = re.findall(r'href="([^"]*)"', crumbs)
    assert hrefs == ["../../index.html", "../index.html"]
    assert 'aria-current="page"' in crumbs
    assert "lit-breadcrumbs" not in (labml_site / "index.html").read_text("utf-8")
    relative = (tree / "xl" / "relative_mha.html").read_text(encoding="utf-8")
    assert 'class="lit-ref" href="../mha.html#MultiHeadAttention"' in relative
    for href in set(re.findall(r'class="lit-ref" href="([^"#]+)#', relative)):
        assert (tree / "xl" / href).resolve().is_file(), href


# --- in the browser ---------------------------------------------------------------


@pytest.fixture(scope="module")
def tab(browser, server):  # noqa: F811
    from test_site import Tab

    opened = Tab(browser, server, {"width": 1400, "height": 900})
    yield opened
    opened.close()


@pytest.fixture(scope="module")
def browser():
    from test_site import launched_chromium

    yield from launched_chromium()


@in_browser
@pytest.mark.parametrize("lang", ["", "ja/", "zh/"])
def test_a_name_from_another_page_opens_it_in_the_same_language(tab, lang):
    page = tab.open(f"{lang}train.html")
    link = page.locator('.lit-code a.lit-ref[href="mha.html#KVCache"]').first
    link.scroll_into_view_if_needed()
    link.click()
    page.wait_for_url(re.compile(rf"/{lang}mha\.html#KVCache$"), timeout=30_000)
    assert page.evaluate("!!document.getElementById('KVCache')")
    assert not tab.errors and not tab.foreign


@in_browser
@pytest.mark.parametrize("lang", ["", "ja/"])
def test_clicking_a_name_lights_its_uses_in_code_prose_and_equations(tab, lang):
    page = tab.open(f"{lang}mha.html")
    name = page.locator("#MinimalMHA .lit-code span.n", has_text="x_q").nth(1)
    name.scroll_into_view_if_needed()
    name.click()
    lit = page.locator(".lit-hl")
    assert page.locator(".lit-code .lit-hl").count() >= 3
    assert page.locator(".lit-prose .lit-sym.lit-hl").count() >= 1  # X_q
    assert all(t == "x_q" for t in page.locator(".lit-code .lit-hl").all_inner_texts())
    if not lang:
        page.evaluate("window.scrollBy(0, -300)")
        page.screenshot(path=SHOTS / "links-highlight-x_q-1400.png")
    # The equation's symbol lights the code name back.
    symbol = page.locator(".lit-prose .lit-sym").filter(has_text="X").first
    symbol.click()
    assert page.locator(".lit-code .lit-hl").count() >= 3
    page.keyboard.press("Escape")
    assert lit.count() == 0


@in_browser
def test_the_keyboard_reaches_names_and_formulas(tab):
    page = tab.open("attention.html")
    code = page.locator("#attention .lit-code pre")
    first = code.locator('[tabindex="0"]')
    assert first.count() == 1  # one Tab stop per code block
    first.focus()
    assert page.locator(".lit-hl-here").count() == 1
    page.keyboard.press("ArrowRight")
    here = page.locator(".lit-hl-here")
    assert here.count() == 1
    outline = here.evaluate("e => getComputedStyle(e).outlineStyle")
    assert outline != "none"  # a visible focus
    formula = page.locator(".lit-sym-formula").first
    formula.focus()
    assert page.locator(".lit-code .lit-hl").count() >= 1
