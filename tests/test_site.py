"""The built site in a real browser: every page, in every language.

The run builds the site once (`mkdocs build --strict`) into a temporary
folder that its workers share, serves it from a local port and opens it in
Debian's Chromium through playwright (one per worker). Every request is
routed through the test: one that leaves the local server is recorded and
refused. With LITERATE_SCREENSHOTS=1, screenshots of every page, wide and
narrow, go to test-artifacts/screenshots/ for a person to look at.
"""

from __future__ import annotations

import functools
import http.server
import os
import re
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest
from conftest import CHAPTERS, made_once
from playwright.sync_api import TimeoutError as PlaywrightTimeout
from playwright.sync_api import sync_playwright

from literate.languages import label
from literate.parse import parse
from literate.pipeline import Pipeline
from literate.spans import extract


def in_browser(test):
    """Marks a test that needs the built site in Chromium (slow, browser)."""
    return pytest.mark.slow(pytest.mark.browser(test))


ROOT = Path(__file__).resolve().parent.parent
SHOTS = ROOT / "test-artifacts" / "screenshots"
# Screenshots for a person to look at cost a second or two each: taken only
# when asked for. A check that reads a screenshot's pixels takes its own.
SCREENSHOTS = os.environ.get("LITERATE_SCREENSHOTS") == "1"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
# Screenshots stop this far down a page: capturing a whole side-by-side page
# (13,000 px and more) takes seconds, and the top shows the layout.
SHOT_HEIGHT = 4000
WIDE = {"width": 1600, "height": 1000}
NARROW = {"width": 400, "height": 800}

LANGS = {"en": "", "ja": "ja/", "zh": "zh/"}  # language -> folder in the site
# The `lang` attribute of each language's pages: one that picks the glyphs.
HTML_LANG = {"en": "en", "ja": "ja", "zh": "zh-Hans"}
SOURCES = {source.replace(".py", ".html"): source for source in CHAPTERS}
PAGES = (
    "index.html",
    *SOURCES,
    "how-it-is-made.html",
    "outputs.html",
    "translating.html",
    "translation-status.html",
)
ALL_PAGES = [(lang, name) for lang in LANGS for name in PAGES]
GENERATED = [(lang, name) for lang in LANGS for name in SOURCES]
TRANSLATED = [(lang, name) for lang in ("ja", "zh") for name in SOURCES]

# `$…$` left in the prose once typeset math and code are taken out.
RAW_MATH = re.compile(r"\$[^$\s][^$]*\$")

# Everything the checks need from a loaded page, read in one call.
PAGE_FACTS = """() => {
  const box = el => {
    if (!el) return null;
    const r = el.getBoundingClientRect();
    if (r.height === 0) return null;
    return {left: r.left, right: r.right, top: r.top + scrollY,
            bottom: r.bottom + scrollY};
  };
  const text = el => {  // the prose, without the list of sections; the
    if (!el) return '';   // code as written (a translated comment's English)
    const copy = el.cloneNode(true);
    copy.querySelectorAll('.lit-contents, .lit-comment-tr').forEach(
      e => e.remove());
    return copy.textContent;
  };
  const bare = el => {  // prose without typeset math or code
    if (!el) return '';
    const copy = el.cloneNode(true);
    copy.querySelectorAll('.katex, code, pre, .lit-contents').forEach(
      e => e.remove());
    return copy.textContent;
  };
  const links = sel => [...document.querySelectorAll(sel)].map(l => l.href);
  return {
    notebooks: links('.lit-source a[download]'),
    lang: document.documentElement.lang,
    alternates: Object.fromEntries([...document.querySelectorAll(
      'link[rel=alternate][hreflang]')].map(l => [l.hreflang, l.href])),
    canonical: links('link[rel=canonical]'),
    selector: Object.fromEntries([...document.querySelectorAll(
      '.md-select__link[hreflang]')].map(a => [a.hreflang, a.href])),
    width: document.documentElement.scrollWidth,
    math: document.querySelectorAll(  // the list of sections repeats some
      '.lit-prose .katex:not(.lit-contents .katex)').length,
    tex: document.querySelectorAll('.lit-tex').length,
    sections: [...document.querySelectorAll('.lit-section')].map(s => {
      const prose = s.querySelector('.lit-docs .lit-prose');
      return {
        id: s.id,
        state: s.dataset.state,
        prose: text(prose),
        bare: bare(prose),
        code: text(s.querySelector('.lit-code .highlight')),  // not outputs
        comments: [...s.querySelectorAll('.lit-comment-tr')].filter(
          c => c.checkVisibility()).length,
        docsBox: text(prose).trim() ? box(s.querySelector('.lit-docs')) : null,
        codeBox: box(s.querySelector('.lit-code .highlight')),
        codeHidden: [...s.querySelectorAll('.lit-code pre')].reduce(
          (most, pre) => Math.max(most, pre.scrollWidth - pre.clientWidth), 0),
      };
    }),
  };
}"""


def build_site(out: Path) -> None:
    """`mkdocs build --strict` into `out`; a failed build fails with its log."""
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    command = [sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(out)]
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
    assert done.returncode == 0, f"mkdocs build failed:\n{done.stderr}"


@pytest.fixture(scope="session")
def site(tmp_path_factory) -> Path:
    """The site, built once per run: the first worker (or module importing
    this fixture) that needs it builds it, the others wait and share it."""
    return made_once(tmp_path_factory, "site", build_site)


def save_screenshot(target, name: str, **options) -> None:
    """A screenshot of `target` (a page or a locator) as SHOTS/`name`, when
    LITERATE_SCREENSHOTS=1 asks for them."""
    if SCREENSHOTS:
        SHOTS.mkdir(parents=True, exist_ok=True)
        target.screenshot(path=SHOTS / name, **options)


def save_page_screenshot(page, name: str) -> None:
    """The top of `page` (at most SHOT_HEIGHT px) as SHOTS/`name`, when asked."""
    if SCREENSHOTS:
        height = page.evaluate("document.documentElement.scrollHeight")
        width = page.viewport_size["width"]
        clip = {"x": 0, "y": 0, "width": width, "height": min(height, SHOT_HEIGHT)}
        save_screenshot(page, name, full_page=True, clip=clip)


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args) -> None:
        pass  # the browser's view is what the tests check


def serving(folder: Path):
    """`folder` on a free local port: yields its base URL, then stops (the
    body of a server fixture)."""
    handler = functools.partial(QuietHandler, directory=folder)
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_port}/"
    httpd.shutdown()
    httpd.server_close()
    thread.join()


@pytest.fixture(scope="session")
def server(site):
    """The built site on a free local port; yields its base URL."""
    yield from serving(site)


_OPEN: list = []  # the Chromium this process has running, if any


def launched_chromium():
    """Debian's Chromium under Playwright, closed when the generator ends (the
    body of a browser fixture). Playwright allows one instance per thread at
    a time, and each module that imports a fixture gets its own copy of it:
    while one is open, the others share it."""
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} is missing: apt-get install -y chromium")
    if _OPEN:  # its owner, opened earlier, closes it
        yield _OPEN[0]
        return
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=CHROMIUM, args=CHROMIUM_ARGS
        )
        _OPEN.append(chromium)
        try:
            yield chromium
        finally:
            _OPEN.clear()
            chromium.close()


@pytest.fixture(scope="session")
def browser():
    yield from launched_chromium()


class Tab:
    """A browser tab that records errors and requests leaving the server."""

    def __init__(self, browser, base: str, viewport: dict, color_scheme="light"):
        self.base = base
        self.context = browser.new_context(viewport=viewport, color_scheme=color_scheme)
        self.context.set_default_timeout(10_000)
        self.errors: list[str] = []
        self.foreign: list[str] = []
        self.context.route("**/*", self._route)
        self.page = self.context.new_page()
        self.page.on("console", self._console)
        self.page.on("pageerror", lambda err: self.errors.append(f"page: {err}"))

    def _route(self, route) -> None:
        url = route.request.url
        if url.startswith(self.base):
            route.continue_()
        else:
            self.foreign.append(url)
            route.abort()

    def _console(self, message) -> None:
        if message.type == "error":
            self.errors.append(f"console: {message.text} ({message.location})")

    def open(self, path: str, until: str = "load"):
        self.errors.clear()
        self.foreign.clear()
        self.page.goto(self.base + path, wait_until=until)
        return self.page

    def close(self) -> None:
        self.context.close()


@pytest.fixture(scope="session")
def tabs(browser, server):
    """One tab per window size, shared by the whole module."""
    opened = {
        "wide": Tab(browser, server, WIDE),
        "narrow": Tab(browser, server, NARROW),
    }
    yield opened
    for tab in opened.values():
        tab.close()


@pytest.fixture(scope="session")
def visit(tabs):
    """visit(lang, name, size): the facts of one page, loaded once per session.

    A wide visit waits until the network is idle, so the errors and requests
    of the search index and the sitemaps are in, and also reads the page's
    interface words (UI_WORDS) and, on a chapter, its headings
    (HEADING_FACTS); a narrow one, which loads the same files, waits for the
    load event. With LITERATE_SCREENSHOTS=1 each visit saves a screenshot.
    """
    seen: dict[tuple[str, str, str], dict] = {}

    def facts(lang: str, name: str, size: str) -> dict:
        if (lang, name, size) not in seen:
            tab = tabs[size]
            until = "networkidle" if size == "wide" else "load"
            page = tab.open(LANGS[lang] + name, until=until)
            save_page_screenshot(page, f"{lang}-{Path(name).stem}-{size}.png")
            found = page.evaluate(PAGE_FACTS)
            if size == "wide":  # what the words, heading and notebook tests read
                found["words"] = page.evaluate(UI_WORDS)
                if name in SOURCES:
                    found["headings"] = page.evaluate(HEADING_FACTS)
            found.update(errors=list(tab.errors), foreign=list(tab.foreign))
            seen[lang, name, size] = found
        return seen[lang, name, size]

    return facts


def english_math_count(source: str) -> int:
    """How many formulas the English page of `source` must show, by the parser."""
    page = parse((ROOT / source).read_text(encoding="utf-8"), source)
    kinds = ("math", "display_math")
    return sum(
        span.kind in kinds
        for section in page.sections
        for span in extract(section.docs).spans
    )


@pytest.mark.slow
def test_the_site_has_exactly_the_pages_under_test(site):
    built = sorted(
        str(path.relative_to(site))
        for path in site.rglob("*.html")
        if path.name != "404.html"
    )
    assert built == sorted(f"{LANGS[lang]}{name}" for lang, name in ALL_PAGES)


@in_browser
@pytest.mark.parametrize("size", ["wide", "narrow"])
@pytest.mark.parametrize(("lang", "name"), ALL_PAGES)
def test_page_loads_without_errors_or_outside_requests(visit, lang, name, size):
    page = visit(lang, name, size)
    assert page["errors"] == []
    assert page["foreign"] == []
    assert page["lang"] == HTML_LANG[lang]


@in_browser
@pytest.mark.parametrize(("lang", "name"), ALL_PAGES)
def test_page_names_itself_in_every_language(visit, server, lang, name):
    page = visit(lang, name, "wide")
    everywhere = {other: server + folder + name for other, folder in LANGS.items()}
    assert page["alternates"] == everywhere  # <link rel=alternate hreflang>
    assert page["selector"] == everywhere  # the header's language selector
    assert page["canonical"] == [server + LANGS[lang] + name]


@in_browser
@pytest.mark.parametrize(("lang", "name"), ALL_PAGES)
def test_page_does_not_scroll_sideways_on_a_narrow_window(visit, lang, name):
    assert visit(lang, name, "narrow")["width"] <= NARROW["width"]


def paired(page: dict) -> list[dict]:
    """The sections that have both prose and code."""
    pairs = [s for s in page["sections"] if s["docsBox"] and s["codeBox"]]
    assert len(pairs) >= 5, "too few sections with both prose and code"
    return pairs


@in_browser
@pytest.mark.parametrize(("lang", "name"), GENERATED)
def test_prose_stands_left_of_its_code_with_tops_aligned(visit, lang, name):
    for s in paired(visit(lang, name, "wide")):
        docs, code = s["docsBox"], s["codeBox"]
        assert docs["right"] <= code["left"] + 1, f"#{s['id']}: prose overlaps code"
        assert abs(docs["top"] - code["top"]) <= 2, f"#{s['id']}: tops not level"
        assert s["codeHidden"] <= 1, f"#{s['id']}: code scrolls sideways"


@in_browser
@pytest.mark.parametrize(("lang", "name"), GENERATED)
def test_prose_stacks_above_its_code_on_a_narrow_window(visit, lang, name):
    for s in paired(visit(lang, name, "narrow")):
        docs, code = s["docsBox"], s["codeBox"]
        assert docs["bottom"] <= code["top"] + 1, f"#{s['id']}: not stacked"
        assert code["right"] <= NARROW["width"], f"#{s['id']}: code sticks out"


@in_browser
@pytest.mark.parametrize(("lang", "name"), GENERATED)
def test_math_is_typeset(visit, lang, name):
    page = visit(lang, name, "wide")
    raw = [
        RAW_MATH.search(s["bare"]).group()
        for s in page["sections"]
        if RAW_MATH.search(s["bare"])
    ]
    assert raw == [], "math left as TeX"
    assert page["tex"] == 0, "KaTeX could not typeset a formula"
    expected = english_math_count(SOURCES[name])
    if lang == "en":
        assert page["math"] == expected
    else:
        assert (page["math"] > 0) == (expected > 0)


@in_browser
@pytest.mark.parametrize(("lang", "name"), TRANSLATED)
def test_translated_prose_stands_beside_the_same_code(visit, lang, name):
    english = {s["id"]: s for s in visit("en", name, "wide")["sections"]}
    sections = visit(lang, name, "wide")["sections"]
    assert [s["id"] for s in sections] == list(english)
    for s in sections:
        assert s["code"] == english[s["id"]]["code"], f"#{s['id']}: code differs"
    # Its code's prose comments are shown in the page's language.
    assert sum(s["comments"] for s in sections) >= len(
        reference_page(SOURCES[name], lang).comments
    )
    # A translation may equal its English (a shape like `[B, S, D]`), but
    # the translated page as a whole must read differently.
    changed = [
        s
        for s in sections
        if s["state"] == "translated" and s["prose"] != english[s["id"]]["prose"]
    ]
    assert len(changed) >= len(sections) / 2, f"{lang}/{name} is mostly English"


def search(page, query: str, seconds: float = 20) -> None:
    """Type `query` into the theme's search box until results are listed.

    The search worker answers only once it has built its index (seconds, for
    Japanese): retype, as an impatient reader would, until it does.
    """
    box = page.locator(".md-search__input")
    results = page.locator(".md-search-result__item a")
    for _ in range(int(seconds / 0.5)):
        box.fill("")
        box.press_sequentially(query)
        try:
            results.first.wait_for(timeout=500)
            return
        except PlaywrightTimeout:
            continue
    raise AssertionError(f"no search results for {query!r} in {seconds} s")


@in_browser
@pytest.mark.parametrize("lang", LANGS)
def test_search_finds_softmax_in_the_same_language(tabs, lang):
    tab = tabs["wide"]
    page = tab.open(LANGS[lang] + "index.html")
    search(page, "softmax")
    hrefs = page.eval_on_selector_all(
        ".md-search-result__item a", "as => as.map(a => a.href)"
    )
    pages = {href.split("#")[0].split("?")[0] for href in hrefs}
    folder = tab.base + LANGS[lang]
    assert folder + "mha.html" in pages
    assert all(p.startswith(folder) for p in pages)
    if lang == "en":
        translated = (tab.base + "ja/", tab.base + "zh/")
        assert not any(p.startswith(translated) for p in pages)
    assert tab.errors == []


@in_browser
@pytest.mark.parametrize("name", SOURCES)
def test_a_defined_name_in_the_code_leads_to_its_definition(tabs, name):
    page = tabs["wide"].open(name)
    refs = page.locator('.lit-code a.lit-ref[href^="#"]')  # this page's own
    assert refs.count() > 0, "no defined name is linked"
    ref = refs.last  # usually far below its definition
    target = ref.get_attribute("href")
    ref.scroll_into_view_if_needed()
    ref.click()
    page.wait_for_function(f"location.hash === {target!r}")
    top = page.evaluate(
        "id => document.getElementById(id).getBoundingClientRect().top", target[1:]
    )
    assert 0 <= top < WIDE["height"], f"{target} is not scrolled into view"


@in_browser
@pytest.mark.parametrize(("lang", "name"), TRANSLATED)
def test_english_original_reveals_and_selector_switches_language(
    tabs, visit, lang, name
):
    english = {s["id"]: s["prose"] for s in visit("en", name, "wide")["sections"]}
    tab = tabs["wide"]
    page = tab.open(LANGS[lang] + name)
    sections = page.locator(".lit-section[data-state=translated]")
    section = sections.first
    anchor = section.get_attribute("id")
    original = section.locator(".lit-original")
    assert not original.is_visible()
    # The control sits beside the permalink, at the top of the section.
    control = section.locator(".lit-original-control")
    box, top = control.bounding_box(), section.bounding_box()
    assert box["y"] - top["y"] < 40 and box["height"] < 40
    control.click()
    assert original.is_visible() and original.get_attribute("lang") == "en"
    shown = " ".join(original.evaluate("d => d.textContent").split())
    assert " ".join(english[anchor].split()) in shown
    assert original.locator("h1, h2, h3, h4, h5, h6").count() == 0  # no outline
    # By keyboard: the section's control is reached with Tab, Space toggles.
    toggle = section.locator("input.lit-original-toggle")
    toggle.focus()
    page.keyboard.press("Space")
    assert not original.is_visible()
    # The page's switch shows every original at once, and hides them again.
    switch = page.locator("#lit-originals")
    switch.check()
    assert sections.count() > 5
    hidden = page.eval_on_selector_all(
        ".lit-section[data-state=translated] .lit-original",
        "els => els.filter(e => e.getBoundingClientRect().height === 0).length",
    )
    assert hidden == 0
    switch.uncheck()
    assert not sections.nth(sections.count() - 1).locator(".lit-original").is_visible()
    # The selector, opened by hovering, leads to the English of this page.
    page.hover(".md-header__option .md-select")
    page.click(".md-select__link[hreflang=en]")
    page.wait_for_url(tab.base + name)
    assert tab.errors == []


def slug(text: str) -> str:
    """A heading's expected id: its words, lower case, joined by `-`."""
    return "-".join(re.sub(r"[^\w]+", " ", text.lower()).split())


# The page's headings and ids, and the list under its title.
HEADING_FACTS = """() => {
  const words = el => {  // a formula counts by its TeX
    const copy = el.cloneNode(true);
    copy.querySelectorAll('.katex').forEach(k => k.replaceWith(
      ' ' + k.querySelector('annotation').textContent.replace(/\\\\/g, ' ') + ' '));
    return copy.textContent.split(/\\s+/).join(' ').trim();
  };
  const title = document.querySelector('.lit-prose h1').getBoundingClientRect();
  return {
    ids: [...document.querySelectorAll('[id]')].map(e => e.id),
    headings: [...document.querySelectorAll('.lit-prose h2')].map(
      h => ({id: h.id, text: words(h)})),
    contents: [...document.querySelectorAll('.lit-contents a')].map(a => ({
      href: a.getAttribute('href'),
      text: words(a),
      target: (document.getElementById(a.getAttribute('href').slice(1)) || {}).id,
      below: a.getBoundingClientRect().top > title.bottom,
    })),
  };
}"""


@in_browser
@pytest.mark.parametrize(("lang", "name"), GENERATED)
def test_a_list_of_sections_under_the_title_and_anchors_by_heading(visit, lang, name):
    facts = visit(lang, name, "wide")["headings"]
    ids = facts["ids"]
    assert len(ids) == len(set(ids)), "an id is used twice on the page"
    headings, contents = facts["headings"], facts["contents"]
    assert len(contents) == len(headings) >= 5
    for heading, item in zip(headings, contents, strict=True):
        assert item["below"], f"{item['href']} is not under the title"
        assert item["target"], f"{item['href']} leads nowhere"
        assert item["text"] == heading["text"]
    english = visit("en", name, "wide")["headings"]["headings"]
    for heading, source in zip(headings, english, strict=True):
        # The slug of the English heading, in every language; `-2` when
        # another id on the page (a section's anchor) has it already.
        assert heading["id"] == source["id"]
        assert re.sub(r"-\d+$", "", heading["id"]) == slug(source["text"])


# Each element of the prose column that could stick out of it or scroll
# sideways: display math, code blocks, tables and figures.
CLIPPED = """() => {
  const found = [];
  const wide = 'pre, pre > code, table, img, figure, .katex-display, '
             + '.md-typeset__scrollwrap, .lit-contents';
  for (const column of document.querySelectorAll('.lit-docs')) {
    const edge = column.getBoundingClientRect().right;
    for (const el of column.querySelectorAll(wide)) {
      const box = el.getBoundingClientRect();
      if (box.width === 0) continue;  // not shown (an English original)
      const hidden = el.scrollWidth - el.clientWidth;
      const out = box.right - edge;
      if (hidden > 1 || out > 1) {
        found.push(`${el.tagName.toLowerCase()}.${el.classList[0] || ''}`
          + ` (${hidden > 1 ? hidden + ' px hidden' : out + ' px out'}):`
          + ` ${el.textContent.trim().replace(/\\s+/g, ' ').slice(0, 60)}`);
      }
    }
  }
  return found;
}"""


# px at 1400 px: a chapter a learner finishes (test_layout checks both).
MAX_PAGE_HEIGHT = 15_000


@pytest.fixture(scope="session")
def schemes(browser, server):
    """A wide tab whose reader prefers the light scheme, and one the dark."""
    opened = {
        colours: Tab(browser, server, WIDE, color_scheme=colours)
        for colours in ("light", "dark")
    }
    yield opened
    for tab in opened.values():
        tab.close()


AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
AXE_RUN = """() => axe.run(document, {
  runOnly: {type: 'tag', values: ['wcag2a', 'wcag2aa']},
}).then(result => result.violations.map(v =>
  `${v.id}: ${v.nodes.length} (${v.nodes[0].target.join(' ')}) ${v.help}`))"""
# In the dark scheme only the colours differ from the light one.
AXE_CONTRAST = AXE_RUN.replace(
    "{type: 'tag', values: ['wcag2a', 'wcag2aa']}",
    "{type: 'rule', values: ['color-contrast']}",
)
assert AXE_CONTRAST != AXE_RUN

# axe where our markup is. Every chapter in every language; with the English
# originals shown too in Japanese (Chinese pages have the same markup); the
# status page the plugin writes, in every language; and one hand-written page
# per language (the others are the theme's plain Markdown pages, like it).
HAND_WRITTEN = {"en": "translating.html", "ja": "index.html", "zh": "outputs.html"}
AXE_PAGES = [
    *GENERATED,
    *[(lang, "translation-status.html") for lang in LANGS],
    *HAND_WRITTEN.items(),
]
# In the dark scheme, color-contrast on a set of pages that holds every
# component: the chapters in English, a Japanese one with its originals
# shown, the status page and a hand-written page.
CONTRAST_PAGES = [
    *[("en", name) for name in SOURCES],
    ("ja", "attention.html"),
    ("en", "translation-status.html"),
    ("en", HAND_WRITTEN["en"]),
]
ORIGINALS_CHECKED = "ja"  # the language whose originals axe sees shown


def axe_violations(tab: Tab, lang: str, name: str, run: str) -> list[str]:
    """What axe's `run` finds on the page; on a Japanese chapter, also with
    its English originals shown."""
    assert AXE.exists(), "axe-core is missing: npm ci"
    page = tab.open(LANGS[lang] + name)
    page.add_script_tag(path=str(AXE))
    violations = page.evaluate(run)
    if lang == ORIGINALS_CHECKED and name in SOURCES:
        page.check("#lit-originals")
        violations += [f"(originals shown) {v}" for v in page.evaluate(run)]
    return violations


@in_browser
@pytest.mark.parametrize(("lang", "name"), AXE_PAGES)
def test_page_passes_axe_wcag2_a_and_aa(schemes, lang, name):
    violations = axe_violations(schemes["light"], lang, name, AXE_RUN)
    assert violations == [], f"{LANGS[lang]}{name}, light:\n" + "\n".join(violations)


@in_browser
@pytest.mark.parametrize(("lang", "name"), CONTRAST_PAGES)
def test_dark_page_passes_axe_color_contrast(schemes, lang, name):
    violations = axe_violations(schemes["dark"], lang, name, AXE_CONTRAST)
    assert violations == [], f"{LANGS[lang]}{name}, dark:\n" + "\n".join(violations)


# The words the site writes around the prose, and the headings' anchors.
UI_WORDS = """() => ({
  permalinks: [...document.querySelectorAll('.headerlink')].map(a => a.title),
  headings: [...document.querySelectorAll('.md-content th')].map(
    th => th.textContent.trim()),
  source: (document.querySelector('.lit-source a') || {}).textContent || '',
  anchors: [...document.querySelectorAll(
    '.md-content :is(h1, h2, h3, h4)[id]')].map(h => h.id),
  text: document.querySelector('.md-content').innerText,
})"""


@in_browser
@pytest.mark.parametrize(("lang", "name"), ALL_PAGES)
def test_interface_words_are_in_the_pages_language(visit, lang, name):
    facts = visit(lang, name, "wide")["words"]
    assert set(facts["permalinks"]) <= {label(lang, "permalink")}
    # Anchors are words (`#翻訳の仕組み`), never toc's `#_1` for CJK headings.
    assert not [a for a in facts["anchors"] if re.fullmatch(r"_\d*", a)]
    if name in SOURCES:  # `源文件：mha.py`, with the language's own colon
        assert facts["source"].startswith(label(lang, "source") + label(lang, "colon"))
    if name == "translation-status.html":
        assert facts["headings"] == label(lang, "status_headings").split(" | ")
        if lang != "en":
            assert " %" not in facts["text"] and "%" in facts["text"]


# --- outputs of the `#|` examples, and the notebooks --------------------------

# Every `.lit-output` of a page: where it is, what it shows, and whether its
# image loaded.
OUTPUT_FACTS = """() => [...document.querySelectorAll('.lit-output')].map(o => {
  const section = o.closest('.lit-section');
  const code = section.querySelector('.lit-code .highlight');
  const img = o.querySelector('img');
  const table = o.querySelector('table');
  const bottom = el => el.getBoundingClientRect().bottom + scrollY;
  const rows = () => [...table.rows].map(r => [...r.cells].map(c => c.textContent));
  return {
    section: section.id,
    kind: img ? 'image' : table ? 'table' : 'text',
    shown: img ? img.alt : table ? rows() : o.textContent.trim(),
    loaded: img ? img.complete && img.naturalWidth > 0 : true,
    top: o.getBoundingClientRect().top + scrollY,
    codeBottom: code ? bottom(code) : null,
  };
})"""


# Resolves once an image has arrived (a broken one never does: a timeout).
LOADED = """img => (img.complete && img.naturalWidth > 0) ||
  new Promise(done => img.addEventListener('load', done, {once: true}))"""

PIPELINE = Pipeline(ROOT)  # makes pages as the plugin does


@functools.cache
def reference_page(source: str, lang: str):
    """`source` in `lang` as the plugin makes it: parsed, run (cached), translated."""
    return PIPELINE.page(source, lang)


@in_browser
@pytest.mark.parametrize(("lang", "name"), GENERATED)
def test_outputs_appear_under_the_code_that_made_them(site, tabs, lang, name):
    """What each example showed, in order, below its section's code."""
    expected = [
        (s.anchor, *shown(o))
        for s in reference_page(SOURCES[name], lang).sections
        for o in s.outputs
        if o.kind != "data"  # for the page's scripts: no `.lit-output`
        and o.variant != "narrow"  # shown inside the figure before it
    ]
    page = tabs["wide"].open(LANGS[lang] + name)
    # A figure loads as the reader nears it (loading=lazy): go past each one.
    for img in page.locator(".lit-output img").all():
        img.scroll_into_view_if_needed()
        img.evaluate(LOADED)
    found = page.evaluate(OUTPUT_FACTS)
    assert [(f["section"], f["kind"], f["shown"]) for f in found] == expected
    for n, output in enumerate(found):
        assert output["loaded"], f"#{output['section']}: image did not load"
        if output["codeBottom"] is not None:
            assert output["top"] >= output["codeBottom"] - 1, "output above code"
        shot = f"{lang}-{Path(name).stem}-output-{n}.png"
        save_screenshot(page.locator(".lit-output").nth(n), shot)
    if name == "mha.html":  # the issue asks for tables and figures there
        assert {f["kind"] for f in found} >= {"table", "image"}
        assert len(found) >= 3


def shown(output) -> tuple[str, object]:
    """What an output should show: its image's alt text; a Markdown table's
    cells, row by row (its rule line left out); or its text."""
    if output.kind == "image":
        return "image", output.alt
    lines = output.text.strip().split("\n")
    if len(lines) > 1 and set(lines[1]) <= set("|:- ") and "|" in lines[1]:
        return "table", [
            [cell.strip() for cell in line.strip().strip("|").split("|")]
            for line in lines[:1] + lines[2:]
        ]
    return "text", output.text.strip()


# The colour behind an element: that of its first ancestor that has one.
BACKGROUND = """el => {
  for (; el; el = el.parentElement) {
    const colour = getComputedStyle(el).backgroundColor;
    if (colour !== 'transparent' && !/rgba\\(.*, 0\\)$/.test(colour)) return colour;
  }
  return 'rgb(255, 255, 255)';
}"""


def luminance(rgb) -> np.ndarray:
    """Relative brightness (0 to 1) of RGB values in the last axis."""
    return np.asarray(rgb, dtype=float)[..., :3] @ [0.2126, 0.7152, 0.0722] / 255


@in_browser
def test_figures_read_in_the_dark_theme(browser, server):
    """On the dark page a figure has no light box: the page shows through."""
    context = browser.new_context(viewport=WIDE, color_scheme="dark")
    try:
        page = context.new_page()
        page.goto(server + "attention.html", wait_until="load")
        assert page.evaluate("document.body.dataset.mdColorScheme") == "slate"
        figures = page.locator(".lit-output img")
        assert figures.count() >= 2
        for n in range(figures.count()):
            assert_reads_on_the_page(
                figures.nth(n), f"en-attention-dark-figure-{n}.png"
            )
    finally:
        context.close()


def assert_reads_on_the_page(figure, shot: str) -> None:
    """The figure, once loaded, shows the page's background through (most of
    it) and draws something clearly brighter on it, as its screenshot shows
    (kept as SHOTS/`shot` with LITERATE_SCREENSHOTS=1)."""
    import io

    from PIL import Image

    figure.scroll_into_view_if_needed()
    figure.evaluate(LOADED)
    behind = luminance(
        [int(v) for v in re.findall(r"\d+", figure.evaluate(BACKGROUND))][:3]
    )
    png = figure.screenshot()
    if SCREENSHOTS:
        SHOTS.mkdir(parents=True, exist_ok=True)
        (SHOTS / shot).write_bytes(png)
    light = luminance(np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))).ravel()
    # Most of a figure is its background: it must be the page's own.
    assert np.median(light) == pytest.approx(behind, abs=0.05), shot
    # And something is drawn on it, clearly brighter than the page.
    assert np.mean(light > behind + 0.2) > 0.01, f"{shot} looks empty"


@in_browser
@pytest.mark.parametrize(("lang", "name"), GENERATED)
def test_the_notebook_link_downloads_the_pages_notebook(tabs, visit, lang, name):
    import nbformat

    from literate.notebook import page_to_notebook

    links = visit(lang, name, "wide")["notebooks"]  # the page's download links
    assert len(links) == 1
    response = tabs["wide"].context.request.get(links[0])
    assert response.ok
    notebook = nbformat.reads(response.text(), as_version=4)
    nbformat.validate(notebook)
    expected = PIPELINE.notebook(reference_page(SOURCES[name], lang))
    assert notebook == nbformat.reads(expected, as_version=4)
    if lang != "en":  # translated prose, the same code
        english = page_to_notebook(reference_page(SOURCES[name], "en"))
        markdown = [c.source for c in notebook.cells if c.cell_type == "markdown"]
        assert markdown != [
            c.source for c in english.cells if c.cell_type == "markdown"
        ]


def build_small_site(folder: Path, name: str, source: str, out: str = "out"):
    """Build a site of one literate source (no translations) in `folder`."""
    (folder / "docs").mkdir(exist_ok=True)
    (folder / "docs" / "index.md").write_text("# Home\n", encoding="utf-8")
    (folder / name).write_text(source, encoding="utf-8")
    katex = ROOT / "node_modules" / "katex" / "dist"
    (folder / "mkdocs.yml").write_text(
        "site_name: t\ntheme: {name: material, font: false}\n"
        f"plugins:\n  - literate:\n      sources: [{name}]\n"
        f"      status_page: ''\n      katex_dist: {katex}\n",
        encoding="utf-8",
    )
    command = [sys.executable, "-m", "mkdocs", "build", "--strict", "-d", out]
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    return subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True)


@pytest.mark.slow
def test_a_broken_source_fails_the_build_naming_file_and_line(tmp_path):
    done = build_small_site(
        tmp_path, "broken.py", '"""A page."""\n\n# Prose.\nx = (1,\n'
    )
    assert done.returncode != 0
    assert re.search(r"broken\.py:\d+", done.stderr), done.stderr
    assert not (tmp_path / "out" / "broken.html").exists()


# Each example writes its name to ran.log when it runs.
EXAMPLES = """\"\"\"Two examples.\"\"\"


def note(name):
    with open("ran.log", "a") as f:
        f.write(name + "\\n")


# The first.
def one():
    note("one")
    return 1


#| one()

# The second.
def two():
    note("two")
    return 2


#| two()
"""


# The number an example printed, in its output block (one line per output line).
OUTPUT_NUMBER = re.compile(
    r'lit-output.*?<code><span class="lit-line">(\d+)</span>', re.S
)


@pytest.mark.slow
def test_builds_run_only_the_examples_whose_code_changed(tmp_path):
    def build(source: str, out: str = "out") -> str:
        done = build_small_site(tmp_path, "ex.py", source, out)
        assert done.returncode == 0, done.stderr
        return (tmp_path / out / "ex" / "index.html").read_text(encoding="utf-8")

    def ran() -> list[str]:
        return (tmp_path / "ran.log").read_text().split()

    html = build(EXAMPLES)
    assert ran() == ["one", "two"]
    assert OUTPUT_NUMBER.findall(html) == ["1", "2"]
    assert build(EXAMPLES) == html  # nothing ran, the same page
    assert ran() == ["one", "two"]
    html = build(EXAMPLES.replace("return 2", "return 2 + 20"))
    assert ran() == ["one", "two", "two"]
    assert OUTPUT_NUMBER.findall(html) == ["1", "22"]
    # A failing example fails the build with its line and traceback.
    broken = EXAMPLES.replace("return 1", "return 1 / 0")
    done = build_small_site(tmp_path, "ex.py", broken, "broken")
    assert done.returncode != 0
    line = broken.split("\n").index("#| one()") + 1
    assert f"ex.py:{line}: `one()` raised" in done.stderr
    assert "ZeroDivisionError" in done.stderr
    assert not (tmp_path / "broken" / "ex" / "index.html").exists()
