"""Page weight: figures as files the pages share, search loaded on demand.

The figures of a page are files under `assets/figures/`, named by their
bytes, with the size they show at and their alt text on the `<img>`; a page
holds no `data:` figure. Search's index (and its worker) are fetched only
when the reader opens search. `bench/page_weight.py` measures the bytes.
"""

from __future__ import annotations

import base64
import hashlib
import re

import matplotlib
import numpy as np
import pytest
import test_site
from conftest import CHAPTERS, ROOT, Tree
from test_site import (
    LANGS,
    WIDE,
    assert_reads_on_the_page,
    in_browser,
    search,
)

from literate import figures
from literate.directives import Example
from literate.example_process import RASTER_DPI
from literate.example_process import figures as _figures
from literate.execute import _outputs
from literate.figures import figure_url
from literate.mkdocs.site import FIGURE_DIR, figure_files
from literate.pipeline import Pipeline

# The built site, its server and Chromium: test_site's session fixtures.
site, server, browser = test_site.site, test_site.server, test_site.browser
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

PAGES = [(lang, source) for lang in LANGS for source in CHAPTERS]
FIGURE_NAME = re.compile(r"[0-9a-f]{16}\.(svg|png)")


def figure_links(html: str) -> list[str]:
    """The figure files a page links to: each <img> and each narrow variant's
    <source srcset>."""
    tree = Tree(html)
    links = [a["src"] for a in tree.find("img")]
    links += [a["srcset"] for a in tree.find("source") if a.get("srcset")]
    return [link for link in links if FIGURE_DIR in link]


def drawn(draw) -> tuple[str, str]:
    """(SVG, base64 PNG) of the figure `draw(axes)` makes, as examples do."""
    fig, axes = plt.subplots(figsize=(3, 2))
    draw(axes)
    svgs, pngs, _ = _figures(fig)
    return svgs[0], pngs[0]


def test_a_figure_shows_at_its_own_size_as_svg_and_as_png():
    """3 x 2 inches: 288 x 192 CSS px either way; the PNG has twice the pixels."""
    svg, png = drawn(lambda ax: ax.plot([0, 1], [1, 0]))
    as_svg = "data:image/svg+xml;base64," + figure_url(svg).split(",")[1]
    as_png = "data:image/png;base64," + png
    assert figures.shown_size(as_svg) == (288, 192)
    assert figures.shown_size(as_png) == (288, 192)
    _, data = figures.decode(as_png)
    assert (int.from_bytes(data[16:20]), int.from_bytes(data[20:24])) == (
        288 * RASTER_DPI // 96,
        192 * RASTER_DPI // 96,
    )


def test_a_heatmap_of_cells_is_a_png_and_a_line_plot_an_svg():
    rng = np.random.default_rng(0)
    cells = drawn(lambda ax: ax.pcolormesh(rng.random((40, 40))))
    line = drawn(lambda ax: ax.plot(np.sin(np.linspace(0, 6, 50))))
    assert figure_url(*cells).startswith("data:image/png;base64,")
    assert figure_url(*line).startswith("data:image/svg+xml;base64,")


def test_an_entry_cached_before_rasters_shows_its_svg():
    """Results cached by an older build hold no PNGs: the SVG is shown."""
    svg, _ = drawn(lambda ax: ax.plot([0, 1]))
    example = Example(3, "plot()", alt="a line")
    result = {"text": "", "figures": [svg]}
    (image,) = _outputs(example, result, "x.py")
    assert image.image.startswith("data:image/svg+xml;base64,")
    assert image.alt == "a line"


def test_a_figure_two_pages_show_is_one_file_linked_from_each():
    svg, png = drawn(lambda ax: ax.plot([0, 1]))
    url = figure_url(svg, png)
    img = figures.img_tag(url, "a line")
    en, en_files = figure_files(f"<figure>{img}</figure>", "mha.html")
    ja, ja_files = figure_files(f"<figure>{img}</figure>", "ja/mha.html")
    assert en_files == ja_files and len(en_files) == 1
    (path,) = en_files
    assert f'src="{path}"' in en and f'src="../{path}"' in ja
    assert hashlib.sha256(en_files[path]).hexdigest()[:16] in path
    assert "data:" not in en + ja
    assert 'alt="a line"' in en and 'loading="lazy"' in en


def test_the_single_page_command_keeps_its_figures_inside_the_page():
    """`literate render` writes one file that needs no other: data: URLs."""
    pipeline = Pipeline(ROOT)
    try:
        html = pipeline.html(pipeline.page("attention.py", "en"))
    finally:
        pipeline.close()
    imgs = Tree(html).find("img")
    assert imgs and all(i["src"].startswith("data:image/") for i in imgs)
    assert all(i["width"] and i["height"] and i["alt"] for i in imgs)


@pytest.fixture(scope="module")
def pages():
    """The literate pages' Page objects (examples cached by the build)."""
    pipeline = Pipeline(ROOT)
    try:
        yield {(lang, s): pipeline.page(s, lang) for lang, s in PAGES}
    finally:
        pipeline.close()


@pytest.mark.slow
@pytest.mark.parametrize(("lang", "source"), PAGES)
def test_figures_are_files_with_their_size_and_alt_text(site, pages, lang, source):
    html = (site / LANGS[lang] / source.replace(".py", ".html")).read_text("utf-8")
    assert not re.search(r"""(src|srcset|href)=["']?data:""", html)
    imgs = [a for a in Tree(html).find("img") if FIGURE_DIR in a["src"]]
    alts = [
        output.alt
        for section in pages[lang, source].sections
        for output in section.outputs
        if output.kind == "image" and getattr(output, "variant", "") != "narrow"
    ]
    assert [img["alt"] for img in imgs] == alts
    for img in imgs:
        path = (site / LANGS[lang] / img["src"]).resolve()
        assert path.parent == (site / FIGURE_DIR).resolve()
        assert FIGURE_NAME.fullmatch(path.name), path.name
        data = path.read_bytes()
        assert hashlib.sha256(data).hexdigest()[:16] == path.stem
        head = {".svg": figures.SVG_URL, ".png": figures.PNG_URL}[path.suffix]
        url = head + base64.b64encode(data).decode()
        assert (int(img["width"]), int(img["height"])) == figures.shown_size(url)
        assert img["loading"] == "lazy"


@pytest.mark.slow
def test_each_figure_is_one_file_and_every_file_is_shown(site):
    shown: dict[str, set[str]] = {}
    for lang, source in PAGES:
        page = site / LANGS[lang] / source.replace(".py", ".html")
        for link in figure_links(page.read_text("utf-8")):
            path = (page.parent / link).resolve()
            shown.setdefault(path.name, set()).add(f"{lang}/{source}")
    files = sorted((site / FIGURE_DIR).iterdir())
    assert {f.name for f in files} == set(shown)
    contents = [hashlib.sha256(f.read_bytes()).digest() for f in files]
    assert len(set(contents)) == len(contents)  # no two files alike
    # The heaviest figures, the heatmaps, are rasters; some line plots stay SVG.
    assert {f.suffix for f in files} == {".png", ".svg"}


@pytest.mark.slow
@pytest.mark.parametrize(("lang", "source"), PAGES)
def test_a_page_and_its_figures_keep_to_a_budget(site, lang, source):
    """Generous budgets from the files on disk (the heaviest page was 813 kB
    of HTML with its figures inside): HTML at most 600 kB, the figures it
    shows (each counted once) at most 400 kB."""
    page = site / LANGS[lang] / source.replace(".py", ".html")
    html = page.read_text("utf-8")
    shown = {(page.parent / link).resolve() for link in figure_links(html)}
    assert len(html.encode()) <= 600_000
    assert sum(path.stat().st_size for path in shown) <= 400_000


@in_browser
@pytest.mark.parametrize("lang", LANGS)
def test_search_index_is_fetched_only_once_search_opens(browser, server, lang):
    context = browser.new_context(viewport=WIDE)
    try:
        page = context.new_page()
        asked: list[str] = []
        page.on("request", lambda request: asked.append(request.url))
        page.goto(server + LANGS[lang] + "mha.html", wait_until="networkidle")
        held = [u for u in asked if "search" in u or u.endswith("sitemap.xml")]
        assert held == []
        index = server + LANGS[lang] + "search/search_index.json"
        with page.expect_request(index):
            search(page, "softmax")
        hrefs = page.eval_on_selector_all(
            ".md-search-result__item a", "as => as.map(a => a.href)"
        )
        assert any(h.startswith(server + LANGS[lang] + "mha.html") for h in hrefs)
        assert any("/workers/search." in u for u in asked)
    finally:
        context.close()


@in_browser
def test_a_page_opened_from_a_search_result_highlights_the_words(browser, server):
    """`?h=` (what a search result links to) loads the index at once."""
    context = browser.new_context(viewport=WIDE)
    try:
        page = context.new_page()
        page.goto(server + "mha.html?h=softmax", wait_until="load")
        page.locator("mark").first.wait_for()
        assert "softmax" in page.locator("mark").first.inner_text().lower()
    finally:
        context.close()


@in_browser
def test_raster_figures_read_in_the_dark_theme(browser, server):
    """A PNG figure, like an SVG one, lets the dark page show through."""
    context = browser.new_context(viewport=WIDE, color_scheme="dark")
    try:
        page = context.new_page()
        page.goto(server + "generate.html", wait_until="load")
        rasters = page.locator(f'.lit-output img[src*="{FIGURE_DIR}/"][src$=".png"]')
        assert rasters.count() >= 1
        for n in range(rasters.count()):
            shot = f"en-generate-dark-raster-{n}.png"
            assert_reads_on_the_page(rasters.nth(n), shot)
    finally:
        context.close()


WIDGET_FILES = {
    "toy": ("assets/toy.css", "assets/js/toy.js"),
    "model": ("assets/model.css", "assets/js/model-loader.js"),
}


@pytest.mark.slow
def test_a_widget_s_files_load_only_on_the_page_that_holds_it(site):
    """The toy's and the model's stylesheet and script are linked from the
    pages with their data island and from no other page (the home page, the
    hand-written guides and the other chapters carry none of them)."""
    pages = sorted(site.rglob("*.html"))
    assert len(pages) > 20
    holders = {name: [] for name in WIDGET_FILES}
    for page in pages:
        html = page.read_text("utf-8")
        for name, files in WIDGET_FILES.items():
            island = '<script type="application/json" class="lit-data"'
            has_data = f'{island} data-name="{name}"' in html
            linked = [f for f in files if re.search(rf'"(\.\./)*{f}"', html)]
            assert linked == (list(files) if has_data else []), (page, name)
            if has_data:
                holders[name].append(page.relative_to(site).as_posix())
    assert holders == {
        "toy": ["attention.html", "ja/attention.html", "zh/attention.html"],
        "model": ["generate.html", "ja/generate.html", "zh/generate.html"],
    }


@pytest.mark.slow
def test_a_hand_written_page_carries_only_the_line_break_rules_of_the_plugin(site):
    """The home page, the guides and the 404 pages load neither the side-by-side
    stylesheet nor the name-highlighting script; their line breaks keep their
    rule, inline. Every literate page loads both."""
    hand = [site / "index.html", site / "ja" / "translating.html", site / "404.html"]
    for page in hand:
        html = page.read_text("utf-8")
        assert "assets/literate.css" not in html and "assets/literate.js" not in html
        assert "<style>.lit-nobr{white-space:nowrap}" in html, page
    for lang in LANGS:
        for source in CHAPTERS:
            page = site / LANGS[lang] / source.replace(".py", ".html")
            html = page.read_text("utf-8")
            assert "assets/literate.css" in html and "assets/literate.js" in html
