"""Line breaks and punctuation of the chapter pages, in Chromium (issue 20).

- No line break inside a short inline code span (`--compile`, `[B, S]`) nor
  inside a short hyphenated word (pre-LN, post-LN, top-k), on every chapter
  page, at 1400, 1000 and 400 px, in every language. A span is short when
  it fits on one line of its block; a longer one may wrap inside itself.
- No line starts with the closing mark (，。：）) after inline code or an
  inline formula, and none ends with the opening mark (（「) before one: the
  rule of Chinese and Japanese typesetting that keeps those marks with their
  words.
- Japanese headings and the list of sections break only between words. A
  break is between words when `Intl.Segmenter('ja', {granularity: 'word'})`
  puts a word boundary there and neither word beside it is a single
  katakana character: ICU's dictionary cuts the katakana words it does not
  know into pieces (ク|エリ, トーク|ン), which are not boundaries.
- Chinese and Japanese punctuation that Latin fonts also have (“ ” … — ·
  ：) is drawn by the face that draws the hanzi (Chromium's own report of
  the fonts it used, CSS.getPlatformFontsForNode), and English originals
  keep the Latin face's.
"""

from __future__ import annotations

import pytest
from test_site import (  # noqa: F401 (fixtures)
    LANGS,
    SOURCES,
    Tab,
    browser,
    in_browser,
    server,
    site,
)

WIDTHS = (1400, 1000, 400)

# What breaks where it should not, on the loaded page.
BREAKS = """() => {
  const lineTops = range => new Set([...range.getClientRects()]
    .filter(r => r.width > 0).map(r => Math.round(r.top))).size;
  const shown = el => el.offsetParent !== null;
  const found = {code: [], hyphen: [], heading: [], edge: []};
  const top = node => {  // the top of the first or last box a node draws
    const range = document.createRange();
    range.selectNodeContents(node);
    return [...range.getClientRects()].filter(r => r.width > 0).map(r => r.top);
  };
  const charTop = (node, i) => {
    const range = document.createRange();
    range.setStart(node, i);
    range.setEnd(node, i + 1);
    const box = [...range.getClientRects()].find(r => r.width > 0);
    return box ? box.top : null;
  };
  const closing = /^[、。，．：；！？）」』】》]/;
  const opening = /[（「『【《]$/;

  for (const code of document.querySelectorAll('.lit-page :not(pre) > code')) {
    if (!shown(code)) continue;
    const range = document.createRange();
    range.selectNodeContents(code);
    if (lineTops(range) < 2) continue;
    const alone = code.cloneNode(true);  // its width on one line, beside it
    alone.style.cssText = 'position: absolute; visibility: hidden; ' +
      'white-space: nowrap; max-width: none';
    code.after(alone);
    const width = alone.getBoundingClientRect().width;
    alone.remove();
    // The room it has: its block's width, less the 3 em it leaves the marks
    // it is kept with (a .lit-nobr unit, typography.py).
    const block = code.closest('p, li, td, th, dd, dt, h1, h2, h3, h4, div');
    const em = parseFloat(getComputedStyle(block).fontSize);
    const room = block.clientWidth - (code.closest('.lit-nobr') ? 3 * em : 0);
    if (width <= room) found.code.push(code.textContent);
  }

  // No line starts with the closing mark after inline code, none ends with
  // the opening mark before it (a break there leaves "，" alone at a start).
  const units = [
    ...document.querySelectorAll('.lit-page :not(pre) > code'),
    ...document.querySelectorAll('.lit-prose .katex'),
  ];
  for (const code of units) {
    if (!shown(code)) continue;
    const box = code.parentElement.matches('a') ? code.parentElement : code;
    const tops = top(box);
    if (!tops.length) continue;
    const next = box.nextSibling, before = box.previousSibling;
    if (next && next.nodeType === 3 && closing.test(next.data)) {
      const y = charTop(next, 0);
      if (y !== null && y > tops.at(-1) + 8)
        found.edge.push(code.textContent.slice(0, 40) + '|' + next.data[0]);
    }
    if (before && before.nodeType === 3 && opening.test(before.data)) {
      const y = charTop(before, before.data.length - 1);
      if (y !== null && tops[0] > y + 8)
        found.edge.push(before.data.at(-1) + '|' + code.textContent.slice(0, 40));
    }
  }

  const hyphenated =
    /(?<![\\w.\\-\\/])[A-Za-z0-9.]*[A-Za-z0-9](?:-[A-Za-z0-9][A-Za-z0-9.]*)+/g;
  const text = document.createTreeWalker(
    document.querySelector('.lit-page'), NodeFilter.SHOW_TEXT);
  for (let node = text.nextNode(); node; node = text.nextNode()) {
    const parent = node.parentElement;
    if (!shown(parent) || parent.closest('code, pre, .katex, script')) continue;
    for (const word of node.data.matchAll(hyphenated)) {
      if (word[0].length > 16) continue;
      const range = document.createRange();
      range.setStart(node, word.index);
      range.setEnd(node, word.index + word[0].length);
      if (lineTops(range) > 1) found.hyphen.push(word[0]);
    }
  }

  const words = new Intl.Segmenter('ja', {granularity: 'word'});
  const katakana = /^[\\u30a1-\\u30fa\\u30fc]$/;
  const phrased = '.lit-prose :is(h1, h2, h3, h4):lang(ja), .lit-contents:lang(ja) a';
  for (const el of document.querySelectorAll(phrased)) {
    if (!shown(el)) continue;
    const chars = [];  // each character and the top of its line
    const walk = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    for (let node = walk.nextNode(); node; node = walk.nextNode()) {
      if (node.parentElement.closest('.katex, .headerlink')) continue;
      for (let i = 0; i < node.data.length; i++) {
        const range = document.createRange();
        range.setStart(node, i);
        range.setEnd(node, i + 1);
        const box = [...range.getClientRects()].find(r => r.width > 0);
        chars.push([node.data[i], box ? Math.round(box.top) : null]);
      }
    }
    const heading = chars.map(c => c[0]).join('');
    const between = new Set();
    const cut = [...words.segment(heading)];
    for (let k = 1; k < cut.length; k++)
      if (!katakana.test(cut[k - 1].segment) && !katakana.test(cut[k].segment))
        between.add(cut[k].index);
    let top = null;
    chars.forEach(([char, y], i) => {
      if (y === null || /\\s/.test(char)) return;
      const broken = top !== null && y > top + 2 && !/\\s/.test(heading[i - 1]);
      if (broken && !between.has(i))
        found.heading.push(heading.slice(0, i) + '|' + heading.slice(i));
      top = y;
    });
  }
  return found;
}"""


@pytest.fixture(scope="module")
def tabs(browser, server):  # noqa: F811
    opened = {w: Tab(browser, server, {"width": w, "height": 900}) for w in WIDTHS}
    yield opened
    for tab in opened.values():
        tab.close()


@in_browser
@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("lang", LANGS)
def test_no_line_breaks_inside_code_hyphenated_words_or_japanese_words(
    tabs, lang, width
):
    wrong = {}
    for name in SOURCES:
        page = tabs[width].open(LANGS[lang] + name)
        found = page.evaluate(BREAKS)
        if any(found.values()):
            wrong[name] = found
    assert wrong == {}


PUNCTUATION = "“”…—·："
PROBE = """text => {
  const p = document.querySelector('.lit-prose p');
  const add = (id, content, lang) => {
    const span = document.createElement('span');
    span.id = id;
    span.textContent = content;
    if (lang) span.lang = lang;
    p.append(span);
  };
  add('probe-punctuation', text.punctuation);
  add('probe-han', '注意力');
  add('probe-latin', 'Attention');
  add('probe-english', '“”—', 'en');
}"""


LAID_OUT = """() => document.fonts.ready.then(() => new Promise(
  done => requestAnimationFrame(() => requestAnimationFrame(done))))"""


@in_browser
@pytest.mark.parametrize("lang", ["ja", "zh"])
def test_cjk_punctuation_is_drawn_by_the_cjk_face(tabs, lang):
    page = tabs[1400].open(f"{LANGS[lang]}mha.html")
    page.evaluate(PROBE, {"punctuation": PUNCTUATION})
    # The fonts a text was drawn with are known once it is laid out and its
    # faces have loaded: wait for both (on a loaded machine, not at once).
    page.evaluate(LAID_OUT)
    cdp = page.context.new_cdp_session(page)
    cdp.send("DOM.enable")
    cdp.send("CSS.enable")
    root = cdp.send("DOM.getDocument")["root"]["nodeId"]

    def faces(selector: str) -> set[str]:
        node = cdp.send("DOM.querySelector", {"nodeId": root, "selector": selector})
        fonts = cdp.send("CSS.getPlatformFontsForNode", {"nodeId": node["nodeId"]})
        return {font["familyName"] for font in fonts["fonts"]}

    han, latin = faces("#probe-han"), faces("#probe-latin")
    assert han and latin and not han & latin
    assert faces("#probe-punctuation") <= han
    assert faces("#probe-english") == latin
    cdp.detach()
