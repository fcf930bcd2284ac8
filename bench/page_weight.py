"""Page weight: the bytes a reader's browser loads for a page of a built site.

    python bench/page_weight.py SITE [--reference OTHER_SITE]

Each page opens in a fresh headless Chromium context (nothing cached) from a
local server. The network log names every file the page loads; the bytes of
each are its size on disk (the local server sends files as they are) and,
for text files, its gzip size too (what a static host that compresses would
send; images and fonts are already compressed). Two readings per page:

    opened  the page loaded, nothing done: what the first screen costs
    read    then scrolled to the end, a screen at a time, so every lazily
            loaded figure is fetched: what reading the whole page costs

Neither opens search. `bench/site.py` prints the table; `--reference` adds a
second build (say, the site before a change) measured in the same run, and
the ratio of each page's bytes to it.
"""

from __future__ import annotations

import argparse
import functools
import gzip
import http.server
import sys
import threading
import time
from collections import defaultdict
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import unquote, urlsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path[0] = str(ROOT)

from bench.timing import format_table  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
VIEWPORT = {"width": 1400, "height": 900}
CHAPTERS = ("attention", "mha", "layers", "train", "generate")
PAGES = tuple(
    f"{folder}{name}.html"
    for folder in ("", "ja/", "zh/")
    for name in ("index", *CHAPTERS)
)
KINDS = {
    ".html": "HTML",
    ".css": "CSS",
    ".js": "JS",
    ".json": "data",
    ".xml": "data",
    ".svg": "images",
    ".png": "images",
    ".woff2": "fonts",
    ".woff": "fonts",
    ".ttf": "fonts",
}
COLUMNS = ("HTML", "CSS", "JS", "images", "fonts", "data")
# Sent as they are: already compressed (an SVG is text, and is gzipped).
COMPRESSED = {".png", ".woff2", ".woff"}
# labml's published mha page, as measured in the comparison of labml's tree
# (shared/reviews/labml-compare-3.md, section 2.8): cited, not run here.
LABML_MHA_BYTES = 74_000
QUIET_SECONDS = 1.5  # no request for this long: the page has settled


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args) -> None:
        pass


@contextmanager
def served(folder: Path):
    """`folder` on a free local port; yields its base URL."""
    handler = functools.partial(_Quiet, directory=folder)
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_port}/"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


def file_bytes(path: Path) -> tuple[int, int]:
    """(size, size as a compressing host sends it) of one file of the site."""
    data = path.read_bytes()
    if path.suffix in COMPRESSED:
        return len(data), len(data)
    return len(data), len(gzip.compress(data, 6, mtime=0))


def kind_of(url: str) -> str:
    return KINDS.get(Path(urlsplit(url).path).suffix, "data")


class Log:
    """The requests one page made, and when the last one started or ended."""

    def __init__(self, page):
        self.urls: list[str] = []
        self.pending = 0
        self.last = time.monotonic()
        page.on("request", self._start)
        page.on("requestfinished", self._end)
        page.on("requestfailed", self._end)

    def _start(self, request) -> None:
        self.urls.append(request.url)
        self.pending += 1
        self.last = time.monotonic()

    def _end(self, request) -> None:
        self.pending -= 1
        self.last = time.monotonic()

    def settle(self, page) -> None:
        """Wait until nothing is in flight and nothing started for a while."""
        while self.pending > 0 or time.monotonic() - self.last < QUIET_SECONDS:
            page.wait_for_timeout(100)


SCROLL_AND_WAIT = """async () => {
  const loaded = () => [...document.images].filter(img => {
    const r = img.getBoundingClientRect();
    return r.bottom > 0 && r.top < innerHeight && !img.complete;
  }).length === 0;
  for (let y = 0; ; y += innerHeight) {
    scrollTo(0, y);
    while (!loaded()) await new Promise(r => setTimeout(r, 50));
    if (y + innerHeight >= document.documentElement.scrollHeight) break;
  }
}"""


def weigh(browser, base: str, folder: Path, page_name: str) -> dict[str, dict]:
    """{"opened"|"read": {kind: [bytes, gzip bytes], ...}} for one page."""
    context = browser.new_context(viewport=VIEWPORT)
    page = context.new_page()
    log = Log(page)
    page.goto(base + page_name, wait_until="load")
    log.settle(page)
    readings = {"opened": _sizes(log.urls, base, folder)}
    page.evaluate(SCROLL_AND_WAIT)
    log.settle(page)
    readings["read"] = _sizes(log.urls, base, folder)
    context.close()
    return readings


def _sizes(urls: list[str], base: str, folder: Path) -> dict[str, list[int]]:
    sizes: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for url in dict.fromkeys(urls):  # a file fetched twice is counted once
        if not url.startswith(base):
            raise SystemExit(f"page_weight: a request left the site: {url}")
        path = folder / unquote(urlsplit(url).path.removeprefix("/"))
        if not path.is_file():
            continue  # a 404: no body worth counting
        raw, packed = file_bytes(path)
        total = sizes[kind_of(url)]
        total[0] += raw
        total[1] += packed
    return dict(sizes)


def measure(folder: Path, pages=PAGES) -> dict[str, dict]:
    """Every page of the built site `folder` that it has, weighed (an older
    build may lack a chapter: its row then has no ratio)."""
    from playwright.sync_api import sync_playwright

    pages = [name for name in pages if (folder / name).is_file()]

    with served(folder) as base, sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, args=CHROMIUM_ARGS
        )
        try:
            return {name: weigh(browser, base, folder, name) for name in pages}
        finally:
            browser.close()


def total(reading: dict, packed: bool = False) -> int:
    return sum(v[int(packed)] for v in reading.values())


def kb(n: int) -> str:
    return f"{n / 1000:.0f}"


def table(weights: dict[str, dict], reference: dict[str, dict] | None = None) -> str:
    """The table `bench/site.py` prints: kB per page, by kind, and ratios."""
    headers = ["page", *(f"{c} kB" for c in COLUMNS), "opened kB", "read kB"]
    headers += ["read gzip kB", "read / labml mha"]
    if reference:
        headers += ["before: read kB", "opened / before", "read / before"]
        headers += ["gzip / before"]
    rows = []
    for name, readings in weights.items():
        read = readings["read"]
        row = [name, *(kb(read.get(c, [0, 0])[0]) for c in COLUMNS)]
        row += [kb(total(readings["opened"])), kb(total(read))]
        row += [kb(total(read, True)), f"{total(read) / LABML_MHA_BYTES:.1f}"]
        if reference and name in reference:
            before = reference[name]["read"]
            row += [
                kb(total(before)),
                f"{total(readings['opened']) / total(reference[name]['opened']):.2f}",
                f"{total(read) / total(before):.2f}",
                f"{total(read, True) / total(before, True):.2f}",
            ]
        elif reference:
            row += ["", "", "", ""]
        rows.append(row)
    return format_table(headers, rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("site", type=Path, help="a built site (mkdocs build -d)")
    parser.add_argument("--reference", type=Path, help="another build to compare")
    args = parser.parse_args()
    weights = measure(args.site)
    reference = measure(args.reference) if args.reference else None
    print(table(weights, reference))


if __name__ == "__main__":
    main()
