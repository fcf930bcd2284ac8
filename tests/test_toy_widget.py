"""The four-token widget of the attention page (docs/assets/js/toy.js).

Driven like a reader would (buttons, sliders and the keyboard), it must give
what the page's Python gives for the same queries: `toy_weights(queries=...)`
to 1e-6, the scores `Q Kᵀ` and `Q Kᵀ / √d_k`, the output `A V`, and the
queries and keys it shows; Reset brings back the page's queries; its words
are the page's table's in ja and zh; with the widget in use the page passes
axe's WCAG 2 A and AA rules (in the dark scheme, its contrast rule), and
nothing leaves the page, served or read from disk. Without JavaScript the
page is as before but for a line of its prose saying so, and pages
without the toy's data get no widget. At 400 px no table of the page
scrolls sideways.
"""

from __future__ import annotations

import json
import math

import pytest
import torch
from test_site import (  # noqa: F401 (fixtures)
    AXE,
    AXE_CONTRAST,
    AXE_RUN,
    LANGS,
    ROOT,
    SCREENSHOTS,
    Tab,
    browser,
    in_browser,
    save_screenshot,
    server,
    site,
)

from attention import TOY_KEYS, TOY_QUERIES, TOY_VALUES, WORDS, toy_weights

READY = "window.literateToy !== undefined"
FACTS = """() => {
  const toy = document.querySelector('.lit-toy');
  const t = window.literateToy;
  return {
    queries: t.queries(), scores: t.scores(), scaled: t.scaled(),
    weights: t.weights(), output: t.output(),
    cells: [...toy.querySelectorAll('table')].map(table =>
      [...table.tBodies[0].rows].map(r =>
        [...r.cells].slice(1).map(c => c.textContent))),
    captions: [...toy.querySelectorAll('caption')].map(c => c.textContent),
    pressed: [...toy.querySelectorAll('.lit-toy-pick button')].map(
      b => b.getAttribute('aria-pressed')),
    sliders: [...toy.querySelectorAll('input[type=range]')].map(i => ({
      value: +i.value, label: i.getAttribute('aria-label')})),
    reset: toy.querySelector('.lit-toy-reset').textContent,
    title: toy.querySelector('.lit-toy-title').textContent,
    width: document.documentElement.scrollWidth,
    window: innerWidth,
    // The page's own tables (outputs), each as wide as it is shown.
    clipped: [...document.querySelectorAll('.lit-table')].filter(
      t => t.scrollWidth > t.clientWidth + 1).map(t => t.textContent.slice(0, 40)),
  };
}"""

# Whether every part of the widget lies within its box (nothing spills out).
INSIDE = """() => {
  const box = document.querySelector('.lit-toy').getBoundingClientRect();
  return [...document.querySelectorAll('.lit-toy *')].every(e => {
    const r = e.getBoundingClientRect();
    return r.width === 0 || (r.left >= box.left - 1 && r.right <= box.right + 1);
  });
}"""


def table(lang: str) -> dict[str, str]:
    if lang == "en":
        return {}
    path = ROOT / "translations" / lang / "attention.json"
    return json.loads(path.read_text("utf-8"))


def word(lang: str, english: str) -> str:
    return table(lang).get(english) or english


def toy_tab(browser, server, width: int, colours: str = "light") -> Tab:  # noqa: F811
    """A tab `width` px wide; the attention page is the site's largest, and
    on a busy machine loading it can take longer than a `Tab`'s 10 s."""
    tab = Tab(browser, server, {"width": width, "height": 900}, color_scheme=colours)
    tab.context.set_default_timeout(30_000)
    return tab


def open_toy(tab: Tab, lang: str = "en"):
    # The widget is made by then (the theme's scripts end the body); the
    # page's figures may still be loading.
    page = tab.open(LANGS[lang] + "attention.html", until="domcontentloaded")
    page.wait_for_function(READY)
    return page


def double(rows: list) -> torch.Tensor:
    return torch.tensor(rows, dtype=torch.float64)


def assert_matches_python(facts: dict) -> None:
    """The widget's numbers and cells are the page's Python on its queries:
    the queries and keys it shows, Q Kᵀ, Q Kᵀ / √d_k, the weights with their
    row sums and A V."""
    queries = torch.tensor(facts["queries"], dtype=torch.float32)
    weights = toy_weights(queries=queries).double()
    torch.testing.assert_close(double(facts["weights"]), weights, atol=1e-6, rtol=0)
    scores = (queries @ TOY_KEYS.T).double()
    torch.testing.assert_close(double(facts["scores"]), scores, atol=1e-5, rtol=0)
    scaled = scores / math.sqrt(TOY_KEYS.shape[-1])
    torch.testing.assert_close(double(facts["scaled"]), scaled, atol=1e-5, rtol=0)
    output = weights @ TOY_VALUES.double()
    torch.testing.assert_close(double(facts["output"]), output, atol=1e-6, rtol=0)
    sums = weights.sum(-1, keepdim=True)
    inputs = [queries.double(), TOY_KEYS.double()]
    shown = inputs + [scores, scaled, torch.cat([weights, sums], -1), output]
    for cells, numbers in zip(facts["cells"], shown, strict=True):
        expected = [[f"{x:.2f}".replace("-0.00", "0.00") for x in r] for r in numbers]
        assert cells == expected


@pytest.fixture(scope="module")
def wide(browser, server):  # noqa: F811
    tab = toy_tab(browser, server, 1400)
    yield tab
    tab.close()


@in_browser
def test_changing_a_query_reruns_toy_weights_in_the_page(wide):
    page = open_toy(wide)
    before = page.evaluate(FACTS)
    assert before["queries"] == TOY_QUERIES.tolist()
    assert not page.locator(".lit-nojs").is_visible()  # for readers without JS
    assert_matches_python(before)
    toy = page.locator(".lit-toy")
    toy.get_by_role("button", name="small", exact=True).click()
    sliders = toy.locator("input[type=range]")
    sliders.nth(0).fill("-1.3")
    toy.locator(".lit-toy-number").nth(1).fill("2.7")
    after = page.evaluate(FACTS)
    small = WORDS.index("small")
    assert after["queries"][small] == [-1.3, 2.7]
    assert after["pressed"] == [str(i == small).lower() for i in range(len(WORDS))]
    assert_matches_python(after)
    assert after["weights"][small] != before["weights"][small]
    assert wide.errors == [] and wide.foreign == []


@in_browser
def test_the_keyboard_reaches_and_moves_every_control(wide):
    page = open_toy(wide)
    page.locator(".lit-toy-pick button").first.focus()
    page.keyboard.press("Tab")  # to chase's button
    page.keyboard.press("Enter")
    page.locator(".lit-toy-reset").focus()
    page.keyboard.press("Shift+Tab")  # back: the action feature's number
    page.keyboard.press("Shift+Tab")  # its slider
    start = page.evaluate(FACTS)["sliders"][1]["value"]
    for _ in range(3):
        page.keyboard.press("ArrowRight")
    facts = page.evaluate(FACTS)
    chase = WORDS.index("chase")
    assert facts["pressed"][chase] == "true"
    assert facts["queries"][chase][1] == pytest.approx(start + 0.3)
    assert_matches_python(facts)
    page.keyboard.press("Tab")  # the number: typing a value
    page.keyboard.press("Control+a")
    page.keyboard.type("-0.5")
    facts = page.evaluate(FACTS)
    assert facts["queries"][chase][1] == -0.5
    assert_matches_python(facts)


@in_browser
def test_reset_restores_the_pages_queries(wide):
    page = open_toy(wide)
    page.evaluate("literateToy.set(0, [3, -3]); literateToy.set(3, [-2, 0.5])")
    assert page.evaluate(FACTS)["queries"] != TOY_QUERIES.tolist()
    page.locator(".lit-toy-reset").click()
    facts = page.evaluate(FACTS)
    assert facts["queries"] == TOY_QUERIES.tolist()
    torch.testing.assert_close(
        double(facts["weights"]), toy_weights().double(), atol=1e-6, rtol=0
    )


@in_browser
@pytest.mark.parametrize("lang", ["ja", "zh"])
def test_the_widgets_words_are_the_pages_language(wide, lang):
    facts = open_toy(wide, lang).evaluate(FACTS)
    assert facts["title"] == word(lang, "Change what one word looks for")
    assert facts["reset"] == word(lang, "Reset")
    captions = ["queries Q", "keys K (fixed)", "scores Q Kᵀ"]
    captions += ["scaled Q Kᵀ / √{d_k}", "weights A", "output A V"]
    d_k = TOY_KEYS.shape[-1]
    assert facts["captions"] == [word(lang, c).format(d_k=d_k) for c in captions]
    template = word(lang, "{feature} of the query of {word}")
    names = [word(lang, "noun feature"), word(lang, "action feature")]
    assert [s["label"] for s in facts["sliders"]] == [
        template.format(feature=f, word="cats") for f in names
    ]
    translated = ("Reset", "weights A", "queries Q", "scaled Q Kᵀ / √{d_k}")
    assert all(v != k for k, v in table(lang).items() if k in translated)


@in_browser
@pytest.mark.parametrize("colours", ["light", "dark"])
def test_the_page_with_the_widget_in_use_passes_axe(browser, server, colours):  # noqa: F811
    tab = toy_tab(browser, server, 1400, colours)
    try:
        page = open_toy(tab)
        page.locator(".lit-toy-pick button").nth(1).click()
        page.evaluate("literateToy.set(1, [0.7, 3.1])")
        page.add_script_tag(path=str(AXE))
        # In the dark scheme only the colours differ: color-contrast.
        assert page.evaluate(AXE_RUN if colours == "light" else AXE_CONTRAST) == []
        assert tab.foreign == [] and tab.errors == []
    finally:
        tab.close()


@in_browser
@pytest.mark.parametrize("width", [1400, 1000, 400])
@pytest.mark.parametrize("lang", list(LANGS))
def test_the_widget_fits_the_window(browser, server, lang, width):  # noqa: F811
    tab = toy_tab(browser, server, width)
    try:
        page = open_toy(tab, lang)
        page.evaluate("literateToy.set(0, [1.5, 0.5])")
        facts = page.evaluate(FACTS)
        assert facts["width"] <= facts["window"]
        assert facts["clipped"] == []  # no table of the page scrolls sideways
        inside = page.evaluate(INSIDE)
        assert inside
        if SCREENSHOTS:
            page.add_style_tag(content=".md-header { visibility: hidden }")  # sticky
        save_screenshot(page.locator(".lit-toy"), f"{lang}-attention-toy-{width}.png")
    finally:
        tab.close()


@in_browser
def test_the_widget_works_from_disk_with_no_request_leaving(browser, site):  # noqa: F811
    context = browser.new_context()
    try:
        foreign = []
        context.route(
            "**/*",
            lambda r: (
                r.continue_()
                if r.request.url.startswith("file:")
                else (foreign.append(r.request.url), r.abort())
            ),
        )
        page = context.new_page()
        page.goto((site / "attention.html").as_uri(), wait_until="domcontentloaded")
        page.wait_for_function(READY)
        page.evaluate("literateToy.set(2, [0, 1])")
        assert_matches_python(page.evaluate(FACTS))
        assert foreign == []
    finally:
        context.close()


@in_browser
def test_without_javascript_the_page_is_as_before_and_other_pages_have_none(
    browser,  # noqa: F811
    server,  # noqa: F811
):
    context = browser.new_context(java_script_enabled=False)
    try:
        page = context.new_page()
        page.goto(server + "attention.html", wait_until="domcontentloaded")
        assert page.locator(".lit-toy").count() == 0
        assert page.locator("script.lit-data[data-name=toy]").count() == 1
        note = page.locator(".lit-nojs")  # the prose says there is no widget
        assert note.count() == 1 and note.is_visible()
        assert "without JavaScript" in note.text_content()
        assert page.locator(".lit-output img").count() >= 2  # the figures
    finally:
        context.close()
    tab = toy_tab(browser, server, 1400)
    try:
        page = tab.open("mha.html", until="domcontentloaded")
        assert page.evaluate("window.literateToy === undefined")
        assert page.locator(".lit-toy").count() == 0 and tab.errors == []
    finally:
        tab.close()
