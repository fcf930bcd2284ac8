"""The side-by-side layout in Chromium: code that never scrolls sideways, and
figures whose text a phone can read.

On every chapter in every language, and on two of labml's pages built by the
plugin: at 1400 and 1000 px no code block (code, outputs, commands in the
prose) hides its end behind a sideways scroll; a line too long for the column
wraps, keeps its number on its first row and marks its continuation; the
prose column is at least 480 px wide at 1400 px; copying a block gives its
lines as written. At 400 px every figure's smallest text is at least 9 CSS
px at the size it is shown (`literate.narrow`). At every width nothing in a
chapter's prose column sticks out or scrolls sideways, English originals
shown or not, and at 1400 px no chapter is taller than 15,000 px. With
LITERATE_SCREENSHOTS=1, screenshots of every chapter at 1400, 1000 and
400 px go to test-artifacts/screenshots/layout-*.png.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import subprocess
import sys
from pathlib import Path

import matplotlib
import pytest
from conftest import ROOT

# The built site, its server and the browser are test_site's fixtures (the
# functions below take them by name: hence noqa F811).
from test_site import (  # noqa: F401 (fixtures)
    CLIPPED,
    LANGS,
    MAX_PAGE_HEIGHT,
    SOURCES,
    Tab,
    browser,
    in_browser,
    save_page_screenshot,
    server,
    serving,
    site,
)

from literate.directives import read_directive
from literate.example_process import figures as _figures
from literate.execute import ExecuteError, _outputs
from literate.model import Directive, Page, Section
from literate.narrow import READABLE_PX, narrow, narrow_below, smallest_text
from literate.notebook import page_to_notebook
from literate.parse import parse
from literate.render import render_page

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

CHAPTERS = [(lang, name) for lang in LANGS for name in SOURCES]
PROSE_PX = 480  # the prose column at 1400 px, at least
CODE_FONT_PX = 12.5  # the code's font size, at least

# Every code block of the page that scrolls sideways, the narrowest prose
# column, the smallest code font.
LAYOUT = """() => {
  const blocks = [...document.querySelectorAll('.lit-page pre')];
  const hidden = blocks.flatMap(pre => [pre, ...pre.querySelectorAll('code')])
    .filter(el => el.scrollWidth > el.clientWidth + 1)
    .map(el => (el.closest('[id]') || {}).id + ': ' + el.textContent.slice(0, 60));
  const docs = [...document.querySelectorAll('.lit-section .lit-docs')]
    .map(d => d.getBoundingClientRect().width);
  const fonts = [...document.querySelectorAll('.lit-code .highlight code')]
    .map(c => parseFloat(getComputedStyle(c).fontSize));
  return {blocks: blocks.length, hidden, prose: Math.min(...docs),
          font: Math.min(...fonts)};
}"""

# Each figure: the text size (a fraction of the width) of the image the
# browser chose, and the width it is shown at.
FIGURES = """() => [...document.querySelectorAll('figure.lit-output')].map(f => {
  const img = f.querySelector('img');
  const source = [...f.querySelectorAll('source')].find(
    s => new URL(s.getAttribute('srcset'), document.baseURI).href === img.currentSrc);
  const text = parseFloat((source || f).dataset.textSize);
  const width = img.getBoundingClientRect().width;
  return {alt: img.alt, narrow: !!source, text, width, px: text * width};
})"""


def open_tab(chromium, base: str, width: int, scheme: str = "light") -> Tab:
    """A tab `width` px wide. Its waits (load, screenshots of pages 4000 px
    tall) get a minute: a loaded machine took more than test_site's 10 s."""
    tab = Tab(chromium, base, {"width": width, "height": 900}, color_scheme=scheme)
    tab.context.set_default_timeout(60_000)
    return tab


def screenshot(page, name: str) -> None:
    """The top of the page as layout-`name`.png, with LITERATE_SCREENSHOTS=1."""
    save_page_screenshot(page, f"layout-{name}.png")


def load_figures(page) -> None:
    """Scroll each figure into view and wait until its image is in (they load
    lazily)."""
    for figure in page.query_selector_all("figure.lit-output"):
        figure.scroll_into_view_if_needed()
        img = figure.query_selector("img")
        page.wait_for_function("img => img.complete && img.naturalWidth > 0", arg=img)


@pytest.fixture(scope="module", params=[1400, 1000, 400])
def window(request, browser, server):  # noqa: F811
    tab = open_tab(browser, server, request.param)
    yield request.param, tab
    tab.close()


@in_browser
@pytest.mark.parametrize("lang, name", CHAPTERS)
def test_nothing_scrolls_sideways_or_is_clipped_and_the_chapter_fits(
    window, lang, name
):
    """At each width: no code block scrolls sideways (at 1000 and 1400 px),
    the figures' text is readable (400 px), nothing in the prose column
    sticks out or scrolls sideways, with the English originals shown too on
    a translated page; at 1400 px the prose has room and the chapter is
    short enough to finish in a sitting."""
    width, tab = window
    page = tab.open(LANGS[lang] + name)
    screenshot(page, f"{lang}-{Path(name).stem}-{width}")
    if width == 1400:
        height = page.evaluate("document.documentElement.scrollHeight")
        assert height <= MAX_PAGE_HEIGHT, f"{LANGS[lang]}{name}: {height} px tall"
    if width == 400:
        load_figures(page)
        for figure in page.evaluate(FIGURES):
            assert figure["px"] >= READABLE_PX, (name, figure)
    else:
        found = page.evaluate(LAYOUT)
        assert found["blocks"] > 10
        assert found["hidden"] == [], found["hidden"][:5]
        assert found["font"] >= CODE_FONT_PX
        if width == 1400:
            assert found["prose"] >= PROSE_PX
    if lang != "en":
        page.check("#lit-originals")  # the English originals shown too
    clipped = page.evaluate(CLIPPED)
    assert clipped == [], f"{LANGS[lang]}{name} at {width} px:\n" + "\n".join(clipped)


# A line of mha.py longer than the code column at 1000 px, and the section
# whose code holds it.
WRAPPED = """(n) => {
  const line = document.getElementById('L' + n).parentElement;
  const number = line.querySelector('.lit-ln').getBoundingClientRect();
  const box = line.getBoundingClientRect();
  const rows = parseFloat(getComputedStyle(line).lineHeight);
  const mark = getComputedStyle(line, '::after');
  const next = document.getElementById('L' + (n + 1)).getBoundingClientRect();
  const code = [...line.childNodes].slice(1).map(c => c.getBoundingClientRect ?
    c.getBoundingClientRect() : null).filter(Boolean);
  return {rows: Math.round(box.height / rows), numberTop: number.top - box.top,
          markHeight: parseFloat(mark.height), markColour: mark.backgroundColor,
          nextBelow: next.top >= box.bottom - 1,
          codeLeft: Math.min(...code.map(r => r.left)) - box.left};
}"""


def longest_line(source: str) -> int:
    lines = (ROOT / source).read_text(encoding="utf-8").splitlines()
    code = [n for n, text in enumerate(lines, 1) if not text.lstrip().startswith("#")]
    return max(code, key=lambda n: len(lines[n - 1]))


@in_browser
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_a_long_line_wraps_with_a_mark(browser, server, scheme):  # noqa: F811
    tab = open_tab(browser, server, 1000, scheme)
    try:
        n = longest_line("mha.py")
        page = tab.open(f"mha.html#L{n}")
        line = page.evaluate(WRAPPED, n)
        screenshot(page, f"en-mha-1000-wrapped-{scheme}")
        assert line["rows"] >= 2  # wrapped
        assert abs(line["numberTop"]) < 2  # the number on the first row
        assert line["markHeight"] > 0  # the mark on the rows after it
        colour = {"light": "rgb(102, 102, 102)", "dark": "rgb(155, 161, 173)"}
        assert line["markColour"] == colour[scheme]  # the line numbers'
        assert line["nextBelow"]
        assert page.evaluate("location.hash") == f"#L{n}"
    finally:
        tab.close()


COPY = """(anchor) => {
  const code = document.getElementById(anchor).querySelector('.lit-code pre code');
  const range = document.createRange();
  range.selectNodeContents(code);
  getSelection().removeAllRanges();
  getSelection().addRange(range);
  return getSelection().toString();
}"""


@in_browser
def test_copying_gives_the_lines_as_written(browser, server):  # noqa: F811
    source = "mha.py"
    n = longest_line(source)
    page_model = parse((ROOT / source).read_text(encoding="utf-8"), source)
    section = next(s for s in page_model.sections if any(c.number == n for c in s.code))
    expected = "\n".join(line.text for line in section.code)
    tab = open_tab(browser, server, 1000)
    try:
        tab.context.grant_permissions(["clipboard-read", "clipboard-write"])
        page = tab.open("mha.html")
        selected = page.evaluate(COPY, section.anchor)
        page.keyboard.press("Control+C")
        copied = page.evaluate("navigator.clipboard.readText()")
    finally:
        tab.close()
    assert selected.rstrip("\n") == expected
    assert copied.rstrip("\n") == expected


# --- labml's pages, built by the plugin -----------------------------------

LABML_PAGES = ("transformers/mha.py", "transformers/flash/__init__.py")


@pytest.fixture(scope="module")
def labml_site(tmp_path_factory):
    """labml's mha and flash pages, built with mkdocs-material and the plugin
    (no examples run), served; yields the base URL."""
    labml_nn = Path(pytest.importorskip("labml_nn").__file__).parent
    folder = tmp_path_factory.mktemp("labml")
    for name in LABML_PAGES:
        (folder / "labml_nn" / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(labml_nn / name, folder / "labml_nn" / name)
    (folder / "node_modules").symlink_to(ROOT / "node_modules")
    (folder / "docs").mkdir()
    sources = ", ".join(f"labml_nn/{name}" for name in LABML_PAGES)
    (folder / "mkdocs.yml").write_text(
        "site_name: t\nuse_directory_urls: false\ntheme:\n  name: material\n"
        f"plugins:\n  - literate:\n      sources: [{sources}]\n"
        "      base: labml_nn\n      run_examples: false\n",
        encoding="utf-8",
    )
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    command = [sys.executable, "-m", "mkdocs", "build", "-d", "out"]
    done = subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    yield from serving(folder / "out")


@in_browser
@pytest.mark.parametrize("width", [1400, 1000])
def test_labmls_long_lines_wrap_too(browser, labml_site, width):  # noqa: F811
    tab = open_tab(browser, labml_site, width)
    try:
        for name in ("transformers/mha.html", "transformers/flash/index.html"):
            page = tab.open(name)
            found = page.evaluate(LAYOUT)
            shot = name.replace("/", "-").removesuffix(".html")
            screenshot(page, f"labml-{shot}-{width}")
            assert found["blocks"] > 10, name
            assert found["hidden"] == [], (name, found["hidden"][:5])
            if width == 1400:
                assert found["prose"] >= PROSE_PX, name
    finally:
        tab.close()


# --- the narrow variant and the text size, without a browser ------------------


def svg_of(fig) -> str:
    svgs, *_ = _figures(fig)
    return svgs[0]


@pytest.mark.parametrize("fonttype", ["path", "none"])
def test_smallest_text_is_read_from_the_svg_at_its_drawn_size(fonttype):
    """A 4-inch figure (288 pt) with 12 pt text and a 9 pt label whose
    subscript matplotlib draws at 70 %: 6.3 pt, so 6.3 / 288 of the width."""
    with plt.rc_context({"svg.fonttype": fonttype}):
        fig, ax = plt.subplots(figsize=(4, 3))
        ax.set_title("a title", fontsize=12)
        ax.set_xlabel("$x_2$", fontsize=9)
        ax.tick_params(labelsize=12)
        svg = svg_of(fig)
    assert smallest_text(svg) == pytest.approx(9 * 0.7 / 288, rel=0.01)
    assert smallest_text("<svg></svg>") == 0.0


def outputs_of(*figs, alt="a plot"):
    svgs = [svg_of(fig) for fig in figs]
    example = read_directive(Directive(3, f"draw()  | alt: {alt}"), "page.py")
    result = {"text": "", "figures": svgs}
    return _outputs(example, result, "page.py")


def test_a_narrow_variant_shares_its_figures_number_and_alt_text():
    wide, phone = plt.figure(figsize=(8, 3)), plt.figure(figsize=(4, 6))
    other = plt.figure(figsize=(4, 3))
    for fig in (wide, phone, other):
        fig.text(0.5, 0.5, "weight", fontsize=10)
    outputs = outputs_of(wide, narrow(phone), other)
    assert [(o.variant, o.alt) for o in outputs] == [
        ("", "a plot (1/2)"),
        ("narrow", "a plot (1/2)"),
        ("", "a plot (2/2)"),
    ]
    assert outputs[0].text_size == pytest.approx(10 / (8 * 72), rel=0.01)
    assert outputs[1].text_size == pytest.approx(10 / (4 * 72), rel=0.01)


def test_a_narrow_variant_with_no_figure_before_it_is_refused():
    lone = narrow(plt.figure(figsize=(4, 3)))
    with pytest.raises(ExecuteError, match=r"page\.py:3: .*narrow variant"):
        outputs_of(lone)


def test_the_page_takes_the_narrow_variant_below_the_width_it_needs():
    wide, phone = plt.figure(figsize=(8, 3)), plt.figure(figsize=(4, 6))
    for fig in (wide, phone):
        fig.text(0.5, 0.5, "weight", fontsize=10)
    outputs = outputs_of(wide, narrow(phone))
    section = Section("draw", "A plot.", (1,), (), outputs=outputs)
    html = render_page(Page("page.py", "Page", "", (section,)))
    below = narrow_below(outputs[0].text_size)
    # 10 pt text on an 8-inch (576 pt) figure is 9 px once the figure shows
    # at 9 / 10 * 576 = 518.4 px; the page's margins come on top.
    assert below == 519 + 32
    assert html.count("<figure") == 1 and html.count("<img") == 1
    assert f'<source media="(max-width: {below}px)"' in html
    assert html.index("<source") < html.index("<img") < html.index("</picture>")


def test_the_notebook_keeps_only_the_wide_figure():
    wide, phone = plt.figure(figsize=(8, 3)), plt.figure(figsize=(4, 6))
    outputs = outputs_of(wide, narrow(phone))
    page = parse('"""A plot."""\n\nx = 1\n#| draw()  | alt: a plot\n', "page.py")
    section = page.sections[-1]
    page = dataclasses.replace(
        page,
        sections=(
            *page.sections[:-1],
            dataclasses.replace(
                section,
                outputs=tuple(
                    dataclasses.replace(o, directive=section.directives[0].number)
                    for o in outputs
                ),
            ),
        ),
    )
    cells = page_to_notebook(page).cells
    shown = [o for cell in cells for o in cell.get("outputs", [])]
    assert len(shown) == 1 and shown[0]["data"]["text/plain"] == "a plot"
