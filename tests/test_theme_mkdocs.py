"""A small site built with MkDocs' own theme (`theme: mkdocs`), in Chromium.

That theme runs highlight.js on every `pre code` block; it loads it from a
CDN, which the tests never reach, so the tab answers that request with a
stand-in that does what highlight.js 11's `highlightAll` does to a block it
highlights (its text put back as plain text, the links in it lost) and skips
the blocks it skips (class `nohighlight` on the block or its `pre`). The
checks: line and definition links (on the page and to the other page) work,
line numbers stand apart from the code, Pygments' colours apply, and the
code column uses the content's width.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from test_site import Tab, browser, in_browser, serving  # noqa: F401

SOURCES = {
    "pkg/first.py": r'''"""# First page

Scores $s = q \cdot k$ of a query against a key.
"""


# Twice a number, used by [the second page](second.html).
def double(x):
    return 2 * x


# Each value that is not None, doubled.
def doubled(values):
    for v in values:
        if v is not None:
            yield double(v)
''',
    "pkg/second.py": '''"""# Second page

It imports `double` from the first page.
"""

from first import double


# Four times a number.
def quadruple(x):
    return double(double(x))
''',
}

MKDOCS_YML = """site_name: mkdocs theme
use_directory_urls: false
theme: mkdocs
plugins:
  - search
  - literate:
      sources: [pkg]
      base: pkg
      run_examples: false
"""

# What highlight.js 11 does to the blocks `highlightAll` selects: a block (or
# its `pre`) whose class is `nohighlight` or `no-highlight` is skipped; any
# other has its markup replaced by its text (then by highlight.js's spans).
# Called before the page has loaded, it waits for the document, as it does.
# It counts the blocks it skipped and highlighted in `window.hljsRan`.
HLJS_STAND_IN = """window.hljs = {highlightAll() {
  if (document.readyState === 'loading') {  // called from <head>: wait
    document.addEventListener('DOMContentLoaded', () => hljs.highlightAll());
    return;
  }
  const ran = {skipped: 0, highlighted: 0};
  for (const code of document.querySelectorAll('pre code')) {
    const classes = `${code.className} ${code.parentNode.className}`;
    if (classes.split(/\\s+/).some(c => /^no-?highlight$/i.test(c))) {
      ran.skipped += 1;
      continue;
    }
    code.textContent = code.textContent;
    code.classList.add('hljs');
    ran.highlighted += 1;
  }
  window.hljsRan = ran;
}};"""


def build(folder: Path, mkdocs_yml: str) -> subprocess.CompletedProcess:
    for name, text in SOURCES.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text, encoding="utf-8")
    (folder / "docs").mkdir(exist_ok=True)
    (folder / "mkdocs.yml").write_text(mkdocs_yml, encoding="utf-8")
    command = [sys.executable, "-m", "mkdocs", "build", "--strict", "-d", "out"]
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    return subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    folder = tmp_path_factory.mktemp("theme-mkdocs")
    done = build(folder, MKDOCS_YML)
    assert done.returncode == 0, done.stderr
    yield from serving(folder / "out")


@pytest.fixture(scope="module")
def tab(browser, server):  # noqa: F811
    """A 1400 px wide tab whose highlight.js is the stand-in."""
    opened = Tab(browser, server, {"width": 1400, "height": 900})

    def stand_in(route) -> None:
        route.fulfill(body=HLJS_STAND_IN, content_type="text/javascript")

    def no_style(route) -> None:  # the theme's highlight.js colours
        route.fulfill(body="", content_type="text/css")

    # Before the tab's own route, which refuses every request off the server.
    opened.context.route("**/highlight.min.js", stand_in)
    opened.context.route("**/highlight.js/*/styles/*.css", no_style)
    yield opened
    opened.close()


def open_page(tab: Tab, name: str):
    """`name`, loaded, once highlight.js has run over it."""
    page = tab.open(name)
    page.wait_for_function("window.hljsRan !== undefined")
    return page


@in_browser
def test_highlightjs_leaves_the_code_column_and_its_links(tab):
    page = open_page(tab, "first.html")
    blocks = page.locator(".lit-code pre code").count()
    assert blocks == 2
    assert page.evaluate("window.hljsRan") == {"skipped": 2, "highlighted": 0}
    lines = page.locator(".lit-code a.lit-ln")
    assert lines.count() == 6
    line = page.locator(".lit-code a.lit-ln", has_text="16")
    line.click()
    page.wait_for_function("location.hash === '#L16'")
    ref = page.locator('.lit-code a.lit-ref[href="#double"]')
    ref.click()
    page.wait_for_function("location.hash === '#double'")
    page = open_page(tab, "second.html")
    page.locator('.lit-code a.lit-ref[href="first.html#double"]').first.click()
    page.wait_for_url("**/first.html#double")
    assert tab.errors == []


@in_browser
def test_line_numbers_stand_apart_from_the_code(tab):
    page = open_page(tab, "first.html")
    gaps = page.evaluate("""() => [...document.querySelectorAll(
        '.lit-code .lit-line')].map(line => {
      const number = line.querySelector('.lit-ln').getBoundingClientRect();
      const code = line.getBoundingClientRect();
      const next = line.querySelector('.lit-ln').nextSibling;
      const text = document.createRange();
      text.selectNodeContents(next);
      const box = next.nodeType === 1 ? next : text;
      return {numberLeft: number.left - code.left,
              codeLeft: box.getBoundingClientRect().left - number.right};
    })""")
    # Every number starts its line at the column's edge, and its code starts
    # a margin after it (not at its right edge).
    assert len({round(g["numberLeft"]) for g in gaps}) == 1, gaps
    assert all(g["codeLeft"] >= 4 for g in gaps), gaps


@in_browser
def test_keywords_take_pygments_colours_and_the_code_has_the_width(tab):
    page = open_page(tab, "first.html")
    facts = page.evaluate("""() => ({
      keyword: getComputedStyle(document.querySelector('.lit-code .k')).color,
      code: getComputedStyle(document.querySelector('.lit-code pre code')).color,
      body: getComputedStyle(document.body).color,
      column: document.querySelector('.lit-code').getBoundingClientRect().width,
      toc: document.querySelector('.col-md-3') === null ? 0 :
        document.querySelector('.col-md-3').getBoundingClientRect().width,
    })""")
    assert facts["keyword"] not in (facts["body"], facts["code"]), facts
    assert facts["column"] > 400, facts
    assert facts["toc"] == 0, facts


def test_per_language_search_names_the_theme_it_needs(tmp_path):
    yml = MKDOCS_YML + "      per_language_search: true\n"
    done = build(tmp_path, yml)
    assert done.returncode != 0
    assert "plugins.literate.per_language_search: needs the theme material" in (
        done.stderr
    ), done.stderr
    assert "not 'mkdocs'" in done.stderr
