"""A 404 page per language (the literate plugin's `per_language_404`): each
in its language's folder, in its words, with its language's navigation and
search, its language selector leading to each language's home page."""

from __future__ import annotations

import json
import re

import pytest
from conftest import Tree
from test_site import HTML_LANG, LANGS, site  # noqa: F401 (a fixture)

from literate.languages import label

TAB = re.compile(r'<a href="([^"]*)" class="md-tabs__link">\s*(.*?)\s*</a>', re.S)
SEARCH_BOX = re.compile(r'class="md-search__input"[^>]*placeholder="([^"]*)"')
CONFIG = re.compile(r'<script id="__config" type="application/json">(.*?)</script>')
SELECTOR = re.compile(r'<a href="([^"]*)" hreflang="([^"]*)" class="md-select__link"')


@pytest.mark.slow
@pytest.mark.parametrize("lang", LANGS)
def test_each_language_has_its_own_404_page(site, lang):  # noqa: F811
    folder = LANGS[lang]
    page = (site / folder / "404.html").read_text(encoding="utf-8")
    home = (site / folder / "index.html").read_text(encoding="utf-8")
    (html,) = Tree(page).find("html")
    assert html["lang"] == HTML_LANG[lang]
    heading = re.search(r'<h1 id="not-found">(.*?)</h1>', page)
    assert heading and heading.group(1) == label(lang, "not_found")
    assert label(lang, "not_found_text") in page
    assert f'<a href="/{folder}">{label(lang, "home")}</a>' in page
    # The navigation of its language: the same tabs as its home page, with
    # the absolute links an error page needs (it is served at any depth).
    here, there = TAB.findall(page), TAB.findall(home)
    assert [name for _, name in here] == [name for _, name in there]
    assert [link for link, _ in here] == [f"/{folder}{link}" for link, _ in there]
    # Its search: the placeholder of its language, its language's index.
    assert SEARCH_BOX.findall(page) == SEARCH_BOX.findall(home)
    assert json.loads(CONFIG.search(page).group(1))["base"] == f"/{folder}"
    # Its language selector leads to each language's home page.
    selector = {code: link for link, code in SELECTOR.findall(page)}
    assert selector == {code: f"/{prefix}" for code, prefix in LANGS.items()}
