"""Search in each language, in Chromium: the built site's search box finds
what the pages of that language say (issue 20).

Each query is typed into the theme's search box of a page of its language;
the results are read as a reader sees them (each page's group of links, its
titles and snippets). The pages that hold a query are found in the built
HTML, so the tests do not name them.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest
from test_site import (  # noqa: F401 (fixtures)
    LANGS,
    WIDE,
    Tab,
    browser,
    in_browser,
    server,
    site,
)

# The terms of issue 20, and a Latin word: each must find a page that holds it.
TERMS = [
    ("ja", "因果マスク"),
    ("ja", "キー/バリューキャッシュ"),
    ("ja", "交差エントロピー"),
    ("ja", "学習率"),
    ("zh", "键/值缓存"),
    ("zh", "词元"),
    ("zh", "因果掩码"),
    ("zh", "交叉熵"),
    # A Latin word inside Chinese or Japanese text, found whole.
    ("ja", "FlashAttention"),
    ("zh", "FlashAttention"),
]
KANA = re.compile("[\u3041-\u30ff]")
JOINER = "\u2060"
# TeX as the site's formulas write it (a JSON "\\n" in prose is not TeX).
TEX = re.compile(r"\\(sqrt|frac|mathrm|text|sum|cdot|top|left|right|partial|le|ell)\b")

# Each result group (one page) as a list of its links: href, title, snippet
# text, and whether it is folded under "more on this page".
RESULTS = """() => [...document.querySelectorAll('.md-search-result__item')].map(
  item => [...item.querySelectorAll('a.md-search-result__link')].map(link => {
    const article = link.querySelector('article').cloneNode(true);
    const heading = article.querySelector('h1, h2');
    const title = heading ? heading.textContent : '';
    if (heading) heading.remove();
    return {href: link.href, title: title, text: article.textContent.trim(),
            more: !!link.closest('details')};
  }))"""


@pytest.fixture(scope="module")
def tab(browser, server):  # noqa: F811
    opened = Tab(browser, server, WIDE)
    yield opened
    opened.close()


def results(tab: Tab, lang: str, query: str) -> list[list[dict]]:
    """The result groups for `query` typed on `lang`'s home page.

    The whole query goes into the box at once and one key press sends it,
    so no result of a shorter query can be read instead. The theme says how
    many results it found (or none) once its worker has answered.
    """
    page = tab.open(LANGS[lang] + "index.html")
    none = page.evaluate(
        "JSON.parse(document.getElementById('__config').textContent)"
        ".translations['search.result.none']"
    )
    box = page.locator(".md-search__input")
    box.click()
    box.fill(query)
    box.press("End")
    page.locator(
        f'.md-search-result__item, .md-search-result__meta:text-is("{none}")'
    ).first.wait_for(timeout=30_000)
    groups = page.evaluate(RESULTS)
    assert tab.errors == []
    for group in groups:
        for link in group:
            link["title"] = link["title"].replace(JOINER, "")
            link["text"] = link["text"].replace(JOINER, "")
    return groups


def page_of(tab: Tab, href: str) -> str:
    """`ja/mha.html` from a result's link."""
    return href.split("?")[0].split("#")[0].removeprefix(tab.base)


def holding(site: Path, lang: str, query: str) -> set[str]:  # noqa: F811
    """The pages of `lang` whose text holds `query`."""
    found = set()
    for path in (site / LANGS[lang] if LANGS[lang] else site).glob("*.html"):
        text = path.read_text(encoding="utf-8")
        text = re.sub(r"<(script|style)\b.*?</\1>", " ", text, flags=re.S)
        if query in html.unescape(re.sub(r"<[^>]+>", "", text)):
            found.add(f"{LANGS[lang]}{path.name}")
    return found


@in_browser
@pytest.mark.parametrize(("lang", "query"), TERMS)
def test_a_term_finds_the_pages_that_hold_it(tab, site, lang, query):  # noqa: F811
    groups = results(tab, lang, query)
    pages = [page_of(tab, group[0]["href"]) for group in groups]
    expected = holding(site, lang, query)
    assert expected, f"no page of {lang} holds {query!r}"
    assert pages and pages[0] in expected, f"{query!r}: first result {pages[:1]}"
    assert set(pages) & expected
    shown = " ".join(link["title"] + link["text"] for g in groups for link in g)
    assert query.replace("/", "") in shown.replace("/", "")


@in_browser
def test_a_term_finds_its_own_section_first_on_its_page(tab, site):  # noqa: F811
    query = "学習率"
    text = (site / "ja" / "train.html").read_text(encoding="utf-8")
    (anchor,) = re.findall(rf'<h\d id="([^"]+)">{query}<', text)
    groups = results(tab, "ja", query)
    (train,) = [g for g in groups if page_of(tab, g[0]["href"]) == "ja/train.html"]
    sections = [link for link in train if "#" in link["href"]]
    assert sections[0]["href"].endswith(f"#{anchor}"), sections[0]["href"]
    assert sections[0]["title"] == query


@in_browser
def test_softmax_on_the_japanese_pages_shows_a_japanese_snippet_first(tab):
    groups = results(tab, "ja", "softmax")
    snippets = [link["text"] for group in groups for link in group if link["text"]]
    assert KANA.search(snippets[0]) and "softmax" in snippets[0], snippets[0]
    assert all(page_of(tab, g[0]["href"]).startswith("ja/") for g in groups)


@in_browser
@pytest.mark.parametrize("lang", ["ja", "zh"])
def test_the_english_originals_are_searched_only_in_english(tab, lang):
    # "mixes" is in the English prose of the mha page only.
    assert results(tab, "en", "mixes"), "the English index lost the word"
    assert results(tab, lang, "mixes") == []


@in_browser
@pytest.mark.parametrize(("lang", "query"), [("en", "softmax"), ("ja", "スケール")])
def test_snippets_show_formulas_as_text_not_tex(tab, lang, query):
    texts = [
        link["title"] + link["text"] for g in results(tab, lang, query) for link in g
    ]
    assert any("√d_k" in text for text in texts)
    assert not [t for t in texts if TEX.search(t)]


@in_browser
def test_snippets_keep_table_cells_apart(tab):
    # The glossary table of the translating page: English, Japanese, Chinese.
    groups = results(tab, "ja", "学習率")
    texts = [link["text"] for g in groups for link in g]
    rows = [t for t in texts if "learning rate" in t]
    assert rows and all(re.search(r"learning rate\s+学習率\s+学习率", r) for r in rows)
