"""Chapter 5's model in the page: the weights file and the browser's forward pass.

The weights that `trainkit/web_model.py` writes are the checkpoint's, and in
Chromium the page's JavaScript (`docs/assets/js/model.js`) writes the greedy
text of `python train.py sample --top-k 1` and the attention weights of
`attention_maps`. The explorer and the generation box (model-ui.js) are
driven as a reader drives them: pointer, keyboard, buttons; they load
nothing before the reader asks, send no request off the site, pass axe, fit
a narrow window and speak the page's language.
"""

from __future__ import annotations

import json
from types import SimpleNamespace

import numpy as np
import pytest
import torch
from conftest import ROOT
from test_site import (  # noqa: F401 (fixtures)
    AXE,
    AXE_CONTRAST,
    AXE_RUN,
    LANGS,
    Tab,
    browser,
    in_browser,
    server,
    site,
)

import train
from generate import MODEL, PASSAGE, attention_maps, head_patterns
from train import load_model
from trainkit import web_model

PAGE = "generate.html"
WIDE = {"width": 1400, "height": 1000}
TEXT_64 = PASSAGE[:64]
OPEN = ".lit-model-open"
NO_SCRIPT = "JavaScript is off in this browser"


@pytest.fixture(scope="module")
def python_model():
    return load_model(MODEL, torch.device("cpu"))


def sampled_by_the_cli(capsys, *options: str) -> str:
    """What `python train.py sample` prints for `options`, run in this process."""
    threads = torch.get_num_threads()  # the command sets one thread
    try:
        train.main(["sample", "--checkpoint", str(MODEL), *options])
    finally:
        torch.set_num_threads(threads)
    return capsys.readouterr().out.removesuffix("\n")


# ## The weights file


def test_the_weights_file_holds_the_checkpoints_tensors_as_its_header_says(tmp_path):
    header, weights = web_model.export(MODEL)
    web_model.write(header, weights, tmp_path)
    read = json.loads((tmp_path / "model.json").read_text(encoding="utf-8"))
    numbers = np.frombuffer((tmp_path / "model.bin").read_bytes(), dtype="<f4")
    state = torch.load(MODEL, map_location="cpu", weights_only=True)["model"]
    assert read == header
    assert [t["name"] for t in read["tensors"]] == [
        n for n in state if n != "head.weight"
    ]
    for t in read["tensors"]:
        stored = numbers[t["offset"] : t["offset"] + t["length"]].reshape(t["shape"])
        np.testing.assert_array_equal(stored, state[t["name"]].numpy())
    assert sum(t["length"] for t in read["tensors"]) == numbers.size
    model, vocab = load_model(MODEL, torch.device("cpu"))
    assert model.head.weight is model.token.weight  # tied: stored once
    assert read["vocab"] == "".join(vocab.chars)
    assert read["checkpoint_sha256"] == web_model.sha256(MODEL)
    script = (tmp_path / "model.js").read_text(encoding="utf-8")
    assert script.startswith("literateModelFiles(") and script.endswith('");\n')


def test_the_hook_writes_the_cached_files_into_the_site(tmp_path):
    root = ROOT
    config = SimpleNamespace(
        config_file_path=str(root / "mkdocs.yml"), site_dir=str(tmp_path / "site")
    )
    web_model.on_post_build(config=config)
    target = tmp_path / "site" / web_model.SITE_FOLDER
    source = web_model.cached(
        root / web_model.CHECKPOINT, root / ".cache" / "web_model"
    )
    for name in web_model.FILES:
        assert (target / name).read_bytes() == (source / name).read_bytes()
    header = json.loads((target / "model.json").read_text(encoding="utf-8"))
    assert header["checkpoint_sha256"] == web_model.sha256(MODEL)


# ## In the browser


@pytest.fixture(scope="module")
def tab(browser, server):  # noqa: F811
    opened = Tab(browser, server, WIDE)
    yield opened
    opened.close()


def opened(tab: Tab, lang: str = "en"):
    """The chapter with its widgets opened by the button, as a reader would."""
    page = tab.open(LANGS[lang] + PAGE)
    page.click(OPEN)
    page.wait_for_selector(".lit-model-strip [role=option]")
    return page


@in_browser
def test_greedy_text_in_the_page_is_what_train_py_sample_writes(tab, capsys):
    cli_text = sampled_by_the_cli(
        capsys, "--prompt", "ROMEO:", "--tokens", "200", "--top-k", "1"
    )
    page = tab.open(PAGE)
    text = page.evaluate(
        "async () => { await literateModel.load();"
        " return await literateModel.generate('ROMEO:', 200, {topK: 1}); }"
    )
    assert "ROMEO:" + text == cli_text
    assert len(text) == 200  # past the window's edge: re-encoded on the way
    assert tab.errors == [] and tab.foreign == []


@in_browser
def test_attention_in_the_page_equals_attention_maps(tab, python_model):
    model, vocab = python_model
    expected = attention_maps(model, vocab.encode(TEXT_64)).numpy()  # [L, H, S, S]
    page = tab.open(PAGE)
    got = np.array(page.evaluate("t => literateModel.attention(t)", TEXT_64))
    assert got.shape == expected.shape == (4, 4, 64, 64)
    assert np.abs(got - expected).max() <= 1e-3
    assert tab.errors == [] and tab.foreign == []


@in_browser
def test_the_page_fetches_nothing_of_the_model_until_the_button(tab):
    requests: list[str] = []

    def seen(request) -> None:
        requests.append(request.url)

    tab.page.on("request", seen)
    page = tab.open(PAGE, until="networkidle")
    model_files = ("/model/", "js/model.js", "js/model-ui.js")
    assert [u for u in requests if any(f in u for f in model_files)] == []
    # What every reader pays: the loader, the styles, the page's data.
    loader = page.evaluate(
        """() => Promise.all(['assets/js/model-loader.js', 'assets/model.css']
          .map(u => fetch(u).then(r => r.text()).then(t => t.length)))"""
    )
    data = page.evaluate(
        "document.querySelector('script.lit-data[data-name=model]').textContent.length"
    )
    assert sum(loader) + data <= 50_000
    requests.clear()
    page.click(OPEN)
    page.wait_for_selector(".lit-model-strip [role=option]")
    loaded = [u for u in requests if any(f in u for f in model_files)]
    assert any(u.endswith("model/model.bin") for u in loaded)
    assert tab.foreign == [] and tab.errors == []
    tab.page.remove_listener("request", seen)


def shading(page) -> list[float]:
    return page.evaluate(
        """() => [...document.querySelectorAll('.lit-model-strip [role=option]')]
          .map(o => Number(o.style.getPropertyValue('--w')))"""
    )


@in_browser
def test_pointer_keys_and_selects_show_the_query_row_of_the_chosen_head(
    tab, python_model
):
    model, vocab = python_model
    maps = attention_maps(model, vocab.encode(PASSAGE)).numpy()
    page = opened(tab)
    # The pointer's event on the character itself: a real pointer may land
    # on a neighbour while the page still scrolls it into view.
    page.dispatch_event(".lit-model-strip [data-i='20']", "pointerover")
    row = np.sqrt(maps[0, 0, 20, : len(PASSAGE)])  # layer 1, head 1; square root
    np.testing.assert_allclose(shading(page), row, atol=2e-3)  # three decimals shown
    page.focus(".lit-model-strip [data-i='20']")
    page.keyboard.press("ArrowRight")
    focused = page.evaluate("document.activeElement.dataset.i")
    assert focused == "21"
    assert (
        page.get_attribute(".lit-model-strip [data-i='21']", "aria-selected") == "true"
    )
    page.select_option(".lit-model-explorer select >> nth=0", "2")  # layer 2
    page.select_option(".lit-model-explorer select >> nth=1", "1")  # head 1
    row = np.sqrt(maps[2, 1, 21, : len(PASSAGE)])
    np.testing.assert_allclose(shading(page), row, atol=2e-3)
    readout = page.inner_text(".lit-model-readout")
    assert "21" in readout and "layer 2, head 1" in readout
    page.check(".lit-model-explorer input[type=checkbox]")
    assert page.locator(".lit-model-panel").count() == 16
    page.click(".lit-model-panel >> nth=5")  # layer 1, head 1
    assert page.input_value(".lit-model-explorer select >> nth=0") == "1"
    assert page.input_value(".lit-model-explorer select >> nth=1") == "1"
    assert tab.errors == [] and tab.foreign == []


def chosen_head(page, layer: int, head: int) -> None:
    page.select_option(".lit-model-explorer select >> nth=0", str(layer))
    page.select_option(".lit-model-explorer select >> nth=1", str(head))


@in_browser
def test_the_explorer_numbers_heads_as_the_table_and_the_figures(tab, python_model):
    model, vocab = python_model
    maps = attention_maps(model, vocab.encode(PASSAGE)).numpy()
    means = head_patterns()  # the table's columns, [L, H] each
    heads = maps.shape[1]
    line_start = divmod(int(means["line start"].argmax()), heads)  # the figure's
    one_back = divmod(int(means["1 back"].argmax()), heads)
    t = PASSAGE.index("young")  # mid-line: the newline is not one back
    newline = PASSAGE.rfind("\n", 0, t)
    page = opened(tab)
    page.click(f".lit-model-strip [data-i='{t}']")
    for layer, head in (line_start, one_back):
        chosen_head(page, layer, head)
        np.testing.assert_allclose(shading(page), np.sqrt(maps[layer, head, t]),
                                   atol=2e-3)  # fmt: skip
        # Named as the table's rows name it ("2, 3"): from 0.
        assert f"layer {layer}, head {head} " in page.inner_text(".lit-model-readout")
    # What the page's Try-this says of the two heads at that character...
    assert maps[line_start][t].argmax() == newline
    assert maps[one_back][t][t - 1] > 0.9
    # ...and just after a newline, where the two read the same character.
    after = PASSAGE.index("\n") + 1
    assert maps[line_start][after].argmax() == maps[one_back][after].argmax()
    page.check(".lit-model-explorer input[type=checkbox]")  # all the heads
    panel = page.locator(".lit-model-panel >> nth=" + str(line_start[0] * heads
                                                         + line_start[1]))  # fmt: skip
    name = panel.inner_text().replace("\xa0", " ")  # a number kept with its word
    assert name == f"Layer {line_start[0]}, head {line_start[1]}"
    # A panel's bars span the keys 0..t only; a grey column under each newline.
    assert panel.locator("svg").get_attribute("viewBox") == f"0 0 {t + 1} 1"
    marks = panel.locator("svg .lit-model-nl").evaluate_all(
        "rs => rs.map(r => Number(r.getAttribute('x')))"
    )
    assert marks == [i for i, c in enumerate(PASSAGE[: t + 1]) if c == "\n"]
    assert tab.errors == [] and tab.foreign == []


@in_browser
def test_a_click_keeps_the_query_and_esc_lets_it_go(tab, python_model):
    model, vocab = python_model
    maps = attention_maps(model, vocab.encode(PASSAGE)).numpy()
    page = opened(tab)
    # Opened by the keyboard's Enter would move the focus on; by a click too.
    assert page.evaluate("document.activeElement.closest('.lit-model') !== null")
    strip = ".lit-model-strip"
    page.dispatch_event(f"{strip} [data-i='30']", "pointerover")  # a preview
    page.click(f"{strip} [data-i='20']")  # kept
    page.dispatch_event(f"{strip} [data-i='30']", "pointerover")
    page.dispatch_event(f"{strip} [data-i='40']", "pointerover")
    query = f"{strip} [aria-selected=true]"
    assert page.get_attribute(query, "data-i") == "20"
    np.testing.assert_allclose(shading(page), np.sqrt(maps[0, 0, 20]), atol=2e-3)
    page.keyboard.press("ArrowRight")  # the keyboard moves the kept query
    page.dispatch_event(f"{strip} [data-i='40']", "pointerover")
    assert page.get_attribute(query, "data-i") == "21"
    page.keyboard.press("Escape")
    page.dispatch_event(f"{strip} [data-i='40']", "pointerover")
    assert page.get_attribute(query, "data-i") == "40"
    np.testing.assert_allclose(shading(page), np.sqrt(maps[0, 0, 40]), atol=2e-3)
    assert tab.errors == [] and tab.foreign == []


@in_browser
def test_typed_text_is_explored_and_an_unknown_character_named(tab, python_model):
    model, vocab = python_model
    page = opened(tab)
    page.fill(".lit-model-explorer textarea", "ROMEO:\nHe")
    page.wait_for_function(
        "document.querySelectorAll('.lit-model-strip [role=option]').length === 9"
    )
    page.dispatch_event(".lit-model-strip [data-i='8']", "pointerover")
    maps = attention_maps(model, vocab.encode("ROMEO:\nHe")).numpy()
    np.testing.assert_allclose(shading(page), np.sqrt(maps[0, 0, 8]), atol=2e-3)
    page.fill(".lit-model-explorer textarea", "ROMEO é")
    page.wait_for_function("document.querySelector('.lit-model-problem').textContent")
    assert "é" in page.inner_text(".lit-model-problem")
    assert "6" in page.inner_text(".lit-model-problem")  # its position, from 0
    # Nothing left of the text before: no strip, no read-out.
    assert page.locator(".lit-model-strip [role=option]").count() == 0
    assert page.inner_text(".lit-model-readout") == ""


BOX = ".lit-model-generate"
WRITTEN = f"!document.querySelector('{BOX} .md-button--primary').disabled"


def write(page, tokens: int, top_k: int | None = None) -> None:
    """Generate `tokens` characters in the box (top-k `top_k`) and wait."""
    numbers = page.locator(f"{BOX} input[type=number]")
    numbers.nth(0).fill(str(tokens))
    if top_k is not None:
        numbers.nth(2).fill(str(top_k))
    page.click(f"{BOX} .md-button--primary")
    page.wait_for_function(WRITTEN)


@in_browser
def test_the_generation_box_writes_greedy_text_and_stops(tab, capsys):
    cli_text = sampled_by_the_cli(
        capsys, "--prompt", "ROMEO:", "--tokens", "150", "--top-k", "1"
    )
    page = opened(tab)
    box = ".lit-model-generate"
    assert page.input_value(f"{box} input[type=text]") == "ROMEO:"
    numbers = page.locator(f"{box} input[type=number]")
    assert [numbers.nth(i).input_value() for i in range(4)] == ["500", "0.8", "40", "0"]
    write(page, 150, top_k=1)
    assert page.inner_text(".lit-model-output") == cli_text
    # The explorer then holds the window, the newest character its query.
    query = page.get_attribute(".lit-model-strip [aria-selected=true]", "data-i")
    count = page.locator(".lit-model-strip [role=option]").count()
    assert int(query) == count - 1
    numbers.nth(0).fill("100000")
    page.click(f"{box} .md-button--primary")
    page.wait_for_function("document.querySelector('.lit-model-output')"
                           ".textContent.length > 50")  # fmt: skip
    page.click(f"{box} .md-button:not(.md-button--primary)")
    page.wait_for_function(WRITTEN)
    assert len(page.inner_text(".lit-model-output")) < 100_000
    numbers.nth(1).fill("0")
    page.click(f"{box} .md-button--primary")
    assert "0" in page.inner_text(".lit-model-progress")  # a named problem, no run
    numbers.nth(1).fill("0.8")
    page.fill(f"{box} input[type=text]", "")
    page.click(f"{box} .md-button--primary")
    assert page.inner_text(".lit-model-progress") == "The prompt is empty."
    assert tab.errors == [] and tab.foreign == []


# While the box writes, the explorer asks for the attention of typed text:
# with its own caches, so that the text being written does not change.
ASK_WHILE_WRITING = """() => {
  const output = document.querySelector('.lit-model-output');
  const go = document.querySelector('.lit-model-generate .md-button--primary');
  const text = document.querySelector('.lit-model-explorer textarea');
  window.askedAt = null;
  const seen = new MutationObserver(() => {
    // Between two slices of writing: the generator holds its caches.
    if (window.askedAt === null && go.disabled && output.textContent.length > 40) {
      window.askedAt = output.textContent.length;
      text.value = 'x';  // typed, as a reader would
      text.dispatchEvent(new Event('input'));
      literateModel.attention('ROMEO:\\nxyz');  // what the explorer then asks
    }
  });
  seen.observe(output, {childList: true, characterData: true, subtree: true});
}"""


@in_browser
def test_exploring_while_the_box_writes_leaves_the_text_alone(tab, capsys):
    cli_text = sampled_by_the_cli(
        capsys, "--prompt", "ROMEO:", "--tokens", "400", "--top-k", "1"
    )
    page = opened(tab)
    page.evaluate(ASK_WHILE_WRITING)
    write(page, 400, top_k=1)
    asked = page.evaluate("window.askedAt")
    assert asked is not None and asked < len(cli_text)  # asked while writing
    assert page.inner_text(".lit-model-output") == cli_text
    assert tab.errors == [] and tab.foreign == []


@in_browser
@pytest.mark.parametrize(
    ("lang", "scheme"),
    # Every language in the light scheme; in the dark one only the colours
    # differ (color-contrast), the same in every language.
    [*[(lang, "light") for lang in LANGS], ("en", "dark")],
)
def test_the_open_widgets_pass_axe(browser, server, lang, scheme):  # noqa: F811
    tab = Tab(browser, server, WIDE, color_scheme=scheme)
    try:
        page = opened(tab, lang)
        page.check(".lit-model-explorer input[type=checkbox]")  # all the heads
        page.add_script_tag(path=str(AXE))
        run = AXE_RUN if scheme == "light" else AXE_CONTRAST
        violations = page.evaluate(
            run.replace("axe.run(document,", "axe.run('.lit-model',")
        )
        assert violations == [], f"{lang}, {scheme}:\n" + "\n".join(violations)
    finally:
        tab.close()


@in_browser
@pytest.mark.parametrize("lang", ["ja", "zh"])
def test_the_widgets_words_are_the_pages_table(tab, lang):
    path = ROOT / "translations" / lang / "generate.json"
    table = json.loads(path.read_text(encoding="utf-8"))
    page = opened(tab, lang)
    legends = page.locator(".lit-model legend").all_inner_texts()
    assert legends == [table["Attention explorer"], table["Generation"]]
    buttons = page.locator(".lit-model-generate .md-button").all_inner_texts()
    assert buttons == [table["Generate"], table["Stop"]]
    assert table["Layer"] in page.inner_text(".lit-model-explorer")


@in_browser
def test_the_widgets_fit_a_narrow_window(browser, server):  # noqa: F811
    tab = Tab(browser, server, {"width": 400, "height": 800})
    try:
        page = opened(tab)
        page.check(".lit-model-explorer input[type=checkbox]")
        assert page.evaluate("document.documentElement.scrollWidth") <= 400
        outside = page.evaluate(
            """() => [...document.querySelectorAll('.lit-model *')].filter(e => {
              const r = e.getBoundingClientRect();
              return r.width && (r.left < 0 || r.right > 400);
            }).map(e => e.className || e.tagName)"""
        )
        assert outside == []
    finally:
        tab.close()


@in_browser
def test_the_model_loads_from_disk_too(browser, site, python_model):  # noqa: F811
    model, vocab = python_model
    tab = Tab(browser, site.as_uri() + "/", WIDE)
    try:
        page = tab.open(PAGE)
        got = np.array(page.evaluate("t => literateModel.attention(t)", "ROMEO:\nIs"))
        expected = attention_maps(model, vocab.encode("ROMEO:\nIs")).numpy()
        assert np.abs(got - expected).max() <= 1e-3
        # From disk the theme's search index fails to load; the model did not.
        assert [e for e in tab.errors if "search_index" not in e] == []
        assert tab.foreign == []
    finally:
        tab.close()


@in_browser
def test_without_javascript_the_static_figures_stay(browser, server, tab):  # noqa: F811
    context = browser.new_context(java_script_enabled=False)
    try:
        page = context.new_page()
        page.goto(server + PAGE)
        assert page.locator(OPEN).count() == 0
        alts = page.locator(".lit-code img").evaluate_all("i => i.map(e => e.alt)")
        assert any("16 attention maps" in alt for alt in alts)
        # The prose says why there is no button, where the reader looks for it.
        assert page.get_by_text(NO_SCRIPT).is_visible()
    finally:
        context.close()
    page = tab.open(PAGE)  # with JavaScript: the button, and not that line
    assert page.locator(OPEN).count() == 1
    assert not page.get_by_text(NO_SCRIPT).is_visible()
