"""The mkdocs adapter against hostile input (issue 23, the site's part).

- a translated summary or title that would break out of the page head (a
  `<meta http-equiv="refresh">` redirect) is written as text, whether or not
  `check` ran before the build: no navigation in Chromium;
- `sources` entries that lead out of the project (`../x.py`, an absolute
  path, a symlinked file, a symlinked folder under a glob) fail the build
  with one line naming the entry, quickly, publishing nothing;
- `mkdocs serve` keeps answering while a translator's table is invalid JSON:
  the page loads with a notice naming the file and line, and the next valid
  save shows the new text; `mkdocs build --strict` still fails on it;
- a language folder named like markup runs no script on the status page.

Each project here is small and lives in a temporary folder; the browser is
test_site.py's (Debian's Chromium through playwright).
"""

from __future__ import annotations

import functools
import http.server
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import pytest
from conftest import KATEX_DIST
from mkdocs.config import load_config
from mkdocs.exceptions import PluginError
from playwright.sync_api import Error as PlaywrightError
from test_hostile_input import within
from test_site import QuietHandler, Tab, in_browser, launched_chromium

from literate.languages import label
from literate.mkdocs import plugin as plugin_module
from literate.mkdocs.plugin import LiteratePlugin
from literate.mkdocs.reload import PACKAGE, load_failure
from literate.normalize import key
from literate.parse import parse

REDIRECT = '0;url=//evil.example/phish" http-equiv="refresh" data-x="'
# A title and summary reach the head's attributes: the build's gate (the
# check's `attribute_problems`) refuses a quote or markup the English lacks,
# and what it lets through (`&`) the theme escapes.
TITLE = "小さい & ページ"
MARKUP_LANGUAGE = "<img src=x onerror=alert(document.domain)>"
WIDE = {"width": 1200, "height": 800}

SOURCE = '''r"""
---
title: Small page
summary: A small page for tests.
---

# Small page

Some prose.
"""


# Add one.
def one(x):
    return x + 1
'''


# One Playwright per module, closed when the module ends: test_site's session
# fixture starts its own afterwards, and two in one thread cannot coexist.
@pytest.fixture(scope="module")
def browser():
    yield from launched_chromium()


def table(**words: str) -> dict[str, str]:
    """The ja table of SOURCE: every section translated, then `words`
    (English -> translation) for the title and summary."""
    page = parse(SOURCE, "small.py")
    found = {key(s.docs): "【訳】" + s.docs for s in page.sections if s.docs.strip()}
    return found | {key(english): value for english, value in words.items()}


def write_table(root: Path, entries: dict[str, str], lang: str = "ja") -> Path:
    path = root / "translations" / lang / "small.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(entries, ensure_ascii=False, indent=1), "utf-8")
    return path


def small_project(root: Path, sources: str = "[small.py]", status: str = "''"):
    """A site of SOURCE in English and Japanese, with no translations yet."""
    (root / "docs").mkdir(parents=True)
    (root / "docs" / "index.md").write_text("# Home\n", encoding="utf-8")
    (root / "small.py").write_text(SOURCE, encoding="utf-8")
    (root / "mkdocs.yml").write_text(
        "site_name: t\nuse_directory_urls: false\n"
        "theme: {name: material, font: false, language: en}\n"
        "plugins:\n"
        "  - i18n:\n"
        "      docs_structure: suffix\n"
        "      fallback_to_default: true\n"
        "      reconfigure_material: true\n"
        "      reconfigure_search: false\n"
        "      languages:\n"
        "        - {locale: en, name: English, default: true}\n"
        "        - {locale: ja, name: 日本語}\n"
        "  - literate:\n"
        f"      sources: {sources}\n"
        f"      status_page: {status}\n"
        "      run_examples: false\n"
        f"      katex_dist: {json.dumps(str(KATEX_DIST))}\n",
        encoding="utf-8",
    )
    return root


def mkdocs(root: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", *args],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
    )


@contextmanager
def served(folder: Path):
    """`folder` on a free local port; yields its base URL."""
    handler = functools.partial(QuietHandler, directory=folder)
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_port}/"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


@contextmanager
def tab(browser, base: str):
    opened = Tab(browser, base, WIDE)
    try:
        yield opened
    finally:
        opened.close()


# --- the page head -----------------------------------------------------------------

HEAD_FACTS = """() => ({
  url: location.href,
  equiv: [...document.querySelectorAll('meta')].filter(
    m => m.hasAttribute('http-equiv')).map(m => m.outerHTML),
  description: [...document.querySelectorAll('meta[name=description]')].map(
    m => m.getAttribute('content')),
  title: document.title,
  header: document.querySelector('[data-md-component=header-topic] .md-ellipsis')
    .textContent.trim(),
})"""


@in_browser
def test_a_summary_that_would_break_out_of_the_head_is_refused_and_redirects_nobody(
    tmp_path,
    browser,
):
    root = small_project(tmp_path / "proj")
    write_table(
        root, table(**{"A small page for tests.": REDIRECT, "Small page": TITLE})
    )
    done = mkdocs(root, "build", "-d", "out")  # no `check` before it
    assert done.returncode == 0, done.stderr
    html = (root / "out" / "ja" / "small.html").read_text(encoding="utf-8")
    assert 'http-equiv="refresh"' not in html
    navigations = []
    with served(root / "out") as base, tab(browser, base) as opened:
        opened.page.on("framenavigated", lambda frame: navigations.append(frame.url))
        page = opened.open("ja/small.html")
        # A refresh of 0 s fires at load; give a slow one time to show itself.
        page.wait_for_timeout(1500)
        facts = page.evaluate(HEAD_FACTS)
        assert facts["url"] == base + "ja/small.html"
        assert navigations == [base + "ja/small.html"]
        assert opened.foreign == []  # nothing asked of evil.example
    assert facts["equiv"] == []
    assert facts["description"] == ["A small page for tests."]  # refused: English
    assert facts["title"] == f"{TITLE} - t"
    assert facts["header"] == TITLE


# --- sources outside the project -------------------------------------------------

SECRET = "OUTSIDE-SECRET-7f3a"


@pytest.fixture
def outside_project(tmp_path):
    """A project beside a folder `outside/` that holds a secret source; its
    package has a folder symlinked to a large tree elsewhere (this Python's
    installation: listing it takes glob seconds)."""
    root = small_project(tmp_path / "proj")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "x.py").write_text(f"# {SECRET}\nx = 1\n", encoding="utf-8")
    (root / "pkg").mkdir()
    (root / "pkg" / "__init__.py").write_text(SOURCE, encoding="utf-8")
    (root / "pkg" / "big").symlink_to(Path(sys.prefix), target_is_directory=True)
    (root / "pkg" / "secret").symlink_to(outside, target_is_directory=True)
    (root / "evil.py").symlink_to(outside / "x.py")
    (root / "alias.py").symlink_to("small.py")  # inside: fine
    return root


def set_sources(root: Path, entry: str) -> None:
    config = root / "mkdocs.yml"
    lines = config.read_text(encoding="utf-8").split("\n")
    lines = [
        f"      sources: [{json.dumps(entry)}]"
        if line.startswith("      sources:")
        else line
        for line in lines
    ]
    config.write_text("\n".join(lines), encoding="utf-8")


OUTSIDE_ENTRIES = [
    ("../outside/x.py", "../outside/x.py: leads outside the project"),
    ("{outside}/x.py", "{outside}/x.py: leads outside the project"),
    ("evil.py", "evil.py: leads outside the project"),
    ("pkg/**/*.py", "'pkg/**/*.py': pkg/big: leads outside the project"),
    ("pkg/*/x.py", "'pkg/*/x.py': pkg/big: leads outside the project"),
]


@pytest.mark.slow
@pytest.mark.parametrize(("entry", "message"), OUTSIDE_ENTRIES)
def test_a_source_entry_leading_outside_fails_the_build_publishing_nothing(
    outside_project, entry, message
):
    outside = str(outside_project.parent / "outside")
    entry, message = entry.format(outside=outside), message.format(outside=outside)
    set_sources(outside_project, entry)
    done = mkdocs(outside_project, "build", "-d", "out")
    assert done.returncode != 0
    errors = [line for line in done.stderr.split("\n") if line.startswith("ERROR")]
    assert len(errors) == 1, done.stderr
    assert f"  literate: plugins.literate.sources: {message}" in errors[0]
    assert "Traceback" not in done.stderr
    assert SECRET not in done.stderr + done.stdout
    assert not (outside_project / "out").exists()  # no page, notebook or copy


@pytest.mark.parametrize(("entry", "message"), OUTSIDE_ENTRIES)
def test_a_source_entry_leading_outside_is_refused_within_a_second(
    outside_project, entry, message
):
    entry = entry.format(outside=outside_project.parent / "outside")
    set_sources(outside_project, entry)
    config = load_config(str(outside_project / "mkdocs.yml"))
    with within(1), pytest.raises(PluginError) as caught:
        config.plugins["literate"].on_config(config)
    assert "\n" not in str(caught.value) and SECRET not in str(caught.value)


@pytest.mark.slow
def test_a_symlink_to_a_source_inside_the_project_builds(outside_project):
    set_sources(outside_project, "alias.py")
    done = mkdocs(outside_project, "build", "--strict", "-d", "out")
    assert done.returncode == 0, done.stderr
    assert "lit-page" in (outside_project / "out" / "alias.html").read_text("utf-8")
    assert (outside_project / "out" / "source" / "alias.py").read_text() == SOURCE


# --- mkdocs serve while a translator saves ---------------------------------------


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextmanager
def mkdocs_serve(root: Path, seconds: float = 60):
    """`mkdocs serve` of `root` on a free port, once it answers; yields its
    base URL and ends the server's process group afterwards."""
    port = free_port()
    log = (root / "serve.log").open("w", encoding="utf-8")
    server = subprocess.Popen(
        [sys.executable, "-m", "mkdocs", "serve", "-a", f"127.0.0.1:{port}"],
        cwd=root,
        env=dict(os.environ, NO_MKDOCS_2_WARNING="1"),
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + seconds
        while True:
            assert server.poll() is None, (root / "serve.log").read_text("utf-8")
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "mkdocs serve never answered"
                time.sleep(0.2)
        yield f"http://127.0.0.1:{port}/"
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)
        log.close()


def shows(page, url: str, text: str, seconds: float = 60) -> dict:
    """Load `url` until its content holds `text` (a rebuild takes a moment);
    each load must finish (the tab's 10 s timeout): a hung server fails."""
    deadline = time.monotonic() + seconds
    while True:
        page.goto(url, wait_until="load")
        try:
            facts = page.evaluate(
                """() => ({
                  text: document.querySelector('.md-content').innerText,
                  notice: [...document.querySelectorAll('.lit-rebuild-failed')]
                    .map(n => n.innerText),
                })"""
            )
        except PlaywrightError as error:  # the live reload navigated away
            assert "context was destroyed" in str(error), error
            facts = {"text": "", "notice": []}
        if text in facts["text"]:
            return facts
        assert time.monotonic() < deadline, f"{text!r} never shown:\n{facts}"
        page.wait_for_timeout(300)


@in_browser
def test_serve_keeps_answering_while_a_table_is_invalid_json(
    tmp_path,
    browser,
):
    root = small_project(tmp_path / "proj")
    path = write_table(root, table())
    fresh = json.dumps(table() | {"Add one.": "【新訳】一を足す。"}, ensure_ascii=False)
    with mkdocs_serve(root) as base, tab(browser, base) as opened:
        url = base + "ja/small.html"
        first = shows(opened.page, url, "【訳】Add one.")
        assert first["notice"] == []
        # Saved in two halves: the first is not yet valid JSON.
        path.write_text(fresh[: len(fresh) // 2], encoding="utf-8")
        broken = shows(opened.page, url, label("ja", "rebuild_failed"))
        assert "【訳】Add one." in broken["text"]  # the last good page
        [notice] = broken["notice"]
        assert "translations/ja/small.json:1:" in notice
        assert str(root) not in notice
        path.write_text(fresh, encoding="utf-8")
        fixed = shows(opened.page, url, "【新訳】一を足す。")
        assert fixed["notice"] == []
    path.write_text(fresh[: len(fresh) // 2], encoding="utf-8")
    strict = mkdocs(root, "build", "--strict", "-d", "out")
    assert strict.returncode != 0
    [error] = [e for e in strict.stderr.split("\n") if e.startswith("ERROR")]
    assert "literate: small.py (ja): translations/ja/small.json:1:" in error
    assert not (root / "out" / "ja" / "small.html").exists()


def test_a_renderer_that_fails_to_load_under_serve_keeps_the_last_pipeline(
    monkeypatch,
):
    source = PACKAGE / "render.py"

    def broken(fresh: bool):
        raise SyntaxError("invalid syntax", (str(source), 3, 1, "def (", 3, 5))

    monkeypatch.setattr(plugin_module, "load_pipeline", broken)
    plugin = LiteratePlugin()
    plugin.on_startup(command="serve", dirty=False)
    last = object()
    plugin.stamp, plugin.pipeline = 1, last
    plugin._load(2, {})
    assert plugin.pipeline is last and plugin.stamp == 1  # tried again next time
    assert plugin.broken == (
        "literate/render.py:3: cannot load the renderer: SyntaxError: invalid syntax"
    )
    built = LiteratePlugin()
    built.on_startup(command="build", dirty=False)
    built.stamp, built.pipeline = 1, object()
    with pytest.raises(SyntaxError):
        built._load(2, {})


def test_a_load_failure_names_the_line_of_literate_it_was_raised_at():
    code = compile(
        "\n\nraise ImportError('no module named nope')", str(PACKAGE / "x.py"), "exec"
    )
    try:
        exec(code)
    except ImportError as err:
        assert load_failure(err) == (
            "literate/x.py:3: cannot load the renderer: ImportError: "
            "no module named nope"
        )


# --- the status page ---------------------------------------------------------------

SCRIPT_FACTS = """() => ({
  handlers: [...document.querySelectorAll('*')].filter(
    e => [...e.attributes].some(a => a.name.startsWith('on'))).map(e => e.outerHTML),
  images: document.querySelectorAll('.md-content img').length,
  text: document.querySelector('.md-content').innerText,
})"""


@in_browser
@pytest.mark.parametrize("lang", ["", "ja/"])
def test_a_language_folder_named_like_markup_runs_no_script_on_the_status_page(
    tmp_path,
    browser,
    lang,
):
    root = small_project(tmp_path / "proj", status="translation-status.md")
    write_table(root, table())
    (root / "translations" / MARKUP_LANGUAGE).mkdir()
    (root / "translations" / MARKUP_LANGUAGE / "small.json").write_text("{}")
    done = mkdocs(root, "build", "-d", "out")  # no `check` before it
    assert done.returncode == 0, done.stderr
    dialogs = []
    with served(root / "out") as base, tab(browser, base) as opened:

        def dialog(shown) -> None:
            dialogs.append(shown.message)
            shown.dismiss()

        opened.page.on("dialog", dialog)
        page = opened.open(lang + "translation-status.html")
        page.wait_for_timeout(500)  # an image that fails to load fires late
        facts = page.evaluate(SCRIPT_FACTS)
    assert dialogs == []
    assert facts["handlers"] == []
    assert facts["images"] == 0
