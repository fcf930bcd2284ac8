"""Where the plugin's files go in the site, and the links between its pages.

Plain functions over mkdocs' config and files, used by `plugin.py`:

- a page per source and language, its path following the source's
  (`pkg/__init__.py` -> `pkg/index.md`, `pkg/mod.py` -> `pkg/mod.md`; the
  i18n plugin's suffix names the language: `pkg/mod.ja.md`);
- the files the pages need: the plugin's stylesheet, KaTeX's stylesheet and
  fonts, and the sources themselves (the pages link to them);
- relative links in the prose: each must name a page or file of the site
  (else a warning names the source's file and line, and `--strict` fails),
  and links between generated pages follow the site's URL style.
"""

from __future__ import annotations

import logging
import os
import posixpath
import re
from contextlib import contextmanager
from dataclasses import dataclass
from html import escape
from pathlib import Path

from markupsafe import Markup
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File, Files
from mkdocs.utils import get_relative_url

from literate import figures
from literate.katex import dist_folder
from literate.languages import label
from literate.sources import page_path

log = logging.getLogger("mkdocs.plugins.literate")

KATEX_DIR = "assets/katex"  # where the KaTeX stylesheet and fonts go
KATEX_CSS = f"{KATEX_DIR}/katex.min.css"
CSS = "assets/literate.css"  # the side-by-side layout, shipped in the package
CSS_FILE = Path(__file__).resolve().parent.parent / "assets" / "literate.css"
SOURCE_DIR = "source"  # where the sources are copied when source_url is ""
FIGURE_DIR = "assets/figures"  # each figure once, named by its content

# Inline links, reference definitions and raw anchors in markdown prose.
_LINKS = re.compile(
    r"\]\(\s*<?([^)\s>]+)|^[ ]{0,3}\[[^\]\n]+\]:[ \t]*<?([^\s>]+)"
    r"|<a\s[^>]*?href=[\"']([^\"']+)",
    re.M,
)
_HREF = re.compile(r'(<a\s[^>]*?href=")([^"]*)(")')
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")
# A figure's data: URL in an output's <img src> or <source srcset>.
_FIGURE_URL = re.compile(
    r'(\s(?:src|srcset)=")(data:image/(?:svg\+xml|png);base64,[A-Za-z0-9+/=]*)'
)


@dataclass(frozen=True)
class Language:
    """A language of the site and the folder its pages go to."""

    code: str
    default: bool

    @property
    def prefix(self) -> str:
        """The folder of this language's pages, relative to the site root."""
        return "" if self.default else f"{self.code}/"


@dataclass(frozen=True)
class Target:
    """What a generated page shows: `source` in `lang`; "" = status page."""

    source: str
    lang: Language
    page: str = ""  # the page's path without extension: "pkg/index"


def site_languages(config: MkDocsConfig) -> tuple[Language, ...]:
    """The languages the i18n plugin builds, else just the theme's."""
    i18n = config.plugins.get("i18n")
    if i18n is None:
        return (Language(theme_language(config), True),)
    return tuple(
        Language(lang.locale, bool(lang.default))
        for lang in i18n.config.languages
        if lang.build
    )


def theme_language(config: MkDocsConfig) -> str:
    """material's `language`, else mkdocs' `locale`, else English."""
    theme = config.theme
    return str(theme.get("language") or theme.get("locale") or "en")


def current_language(config: MkDocsConfig) -> Language:
    """The language being built (i18n sets the theme's for each build)."""
    langs = site_languages(config)
    code = theme_language(config)
    return next((lang for lang in langs if lang.code == code), langs[0])


def page_targets(
    sources: list[str], langs: tuple[Language, ...], status_page: str, base: str
) -> dict[str, Target]:
    """Every generated page by its docs-relative name (`pkg/mod.ja.md`)."""
    targets = {}
    for source in sources:
        page = page_path(source, base)
        for lang in langs:
            uri = f"{page}.md" if lang.default else f"{page}.{lang.code}.md"
            targets[uri] = Target(source, lang, page)
    if status_page:
        default = next(lang for lang in langs if lang.default)
        targets[status_page] = Target("", default)
    return targets


def notebook_uri(page: str) -> str:
    """The notebook beside a page: `pkg/mod` -> `pkg/mod.ipynb`."""
    return f"{page}.ipynb"


def static_files(
    config: MkDocsConfig, root: Path, options, sources: list[str]
) -> list[File]:
    """The stylesheets, KaTeX's fonts and (if wanted) the sources, as files."""
    dist = dist_folder(root, options.katex_dist)
    css = dist / "katex.min.css"
    if not css.is_file():
        raise PluginError(
            f"literate: plugins.literate.katex_dist is {options.katex_dist!r}, but "
            f"{css} does not exist; install KaTeX there (`npm install katex`), or "
            "leave the option out to use the KaTeX that ships with literate"
        )
    pairs = [(CSS, CSS_FILE), (KATEX_CSS, css)]
    pairs += [
        (f"{KATEX_DIR}/fonts/{font.name}", font)
        for font in sorted((dist / "fonts").iterdir())
    ]
    pairs += [(f"{SOURCE_DIR}/{source}", root / source) for source in sources]
    return [File.generated(config, uri, abs_src_path=str(path)) for uri, path in pairs]


def figure_files(html: str, page_url: str) -> tuple[str, dict[str, bytes]]:
    """`html` with each figure's data: URL replaced by a link to its file
    under FIGURE_DIR, relative to the page; and those files' bytes by path.

    The name is a hash of the bytes: a figure that two pages (or languages)
    show is one file, and a changed figure is a new name, so a browser may
    cache them for good.
    """
    files: dict[str, bytes] = {}

    def to_file(found: re.Match) -> str:
        path = f"{FIGURE_DIR}/{figures.file_name(found.group(2))}"
        files[path] = figures.decode(found.group(2))[1]
        return found.group(1) + get_relative_url(path, page_url)

    return _FIGURE_URL.sub(to_file, html), files


def write_files(site_dir: str, files: dict[str, bytes]) -> None:
    """Write each file under `site_dir` unless it is there already."""
    for path, data in files.items():
        target = Path(site_dir) / path
        if not target.is_file() or target.stat().st_size != len(data):
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)


def source_url(option: str, source: str, page) -> str:
    """Where a page's "source" link points: the `source_url` option with
    `{path}` filled in, else the copy of the source in the site."""
    if option:
        return option.replace("{path}", source)
    return get_relative_url(f"{SOURCE_DIR}/{source}", page.url)


def head_text(text: str) -> Markup:
    """`text` (a page's title or summary) safe in an element and in a quoted
    attribute: `&`, `<`, `>`, `"` and `'` escaped. A Markup, so that a
    template's `| e` does not escape it twice (as mkdocs' own titles, it is
    HTML text)."""
    return Markup(escape(text, quote=True))


def rebuild_notice(messages: list[str], lang: str) -> str:
    """The box above a page that `mkdocs serve` could not rebuild: what is
    wrong (`file:line: ...`, one item each) under a title in the page's
    language saying what is shown instead."""
    items = "".join(
        f"<li><code>{escape(m.removeprefix('literate: '))}</code></li>"
        for m in messages
    )
    title = escape(label(lang, "rebuild_failed"))
    return (
        '<div class="admonition failure lit-rebuild-failed" role="alert">'
        f'<p class="admonition-title">{title}</p><ul lang="en">{items}</ul></div>\n'
    )


# What a page the plugin did not write still needs of its stylesheet: the
# line breaks `typography.keep_together` sets on every page.
HAND_PAGE_STYLE = (
    "<style>.lit-nobr{white-space:nowrap}.lit-nobr>code,.lit-nobr>a>code"
    "{max-width:calc(100% - 3em);white-space:normal}</style>\n"
)


def without_page_assets(html: str, css: str, js: str) -> str:
    """A hand-written page's `html` without the plugin's stylesheet `css` and
    script `js` (the side-by-side layout and the highlighting of names, which
    it has no use for), with the rules its line breaks need inline."""
    html = re.sub(rf'<link rel="stylesheet" href="[^"]*{re.escape(css)}">\n?', "", html)
    html = re.sub(rf'<script src="[^"]*{re.escape(js)}"></script>\n?', "", html)
    at = html.find("</head>")
    return html if at < 0 else html[:at] + HAND_PAGE_STYLE + html[at:]


def link_stylesheet(html: str, href: str) -> str:
    """`html` with a stylesheet link at the end of its <head>."""
    link = f'<link rel="stylesheet" href="{href}">\n'
    at = html.find("</head>")
    return html if at < 0 else html[:at] + link + html[at:]


@contextmanager
def reported(target: Target, errors: tuple[type[Exception], ...], root: Path):
    """Turn the pipeline's errors into mkdocs' PluginError, naming the page.

    The pipeline's own messages start with `file:line:`; a file under `root`
    is named relative to it.
    """
    try:
        yield
    except errors as err:
        raise PluginError(page_error(target, str(err), root)) from err


def page_error(target: Target, message: str, root: Path) -> str:
    """One line naming the page, with the paths under `root` made relative."""
    message = message.replace(f"{root}{os.sep}", "")
    return f"literate: {target.source} ({target.lang.code}): {message}"


def _relative(href: str) -> str | None:
    """The path of a relative link (no scheme, fragment or query), else None."""
    if not href or href.startswith(("#", "/")) or _SCHEME.match(href):
        return None
    path = re.split(r"[#?]", href, maxsplit=1)[0]
    return path or None


def _resolve(page: str, path: str) -> str:
    """`path` linked from the page `page` (no extension), as a flat file name."""
    joined = posixpath.normpath(posixpath.join(posixpath.dirname(page), path))
    return f"{joined}/index.html" if path.endswith("/") else joined


def _flat(file: File) -> str:
    """A file's name as a link with `use_directory_urls: false` names it."""
    if file.is_documentation_page():
        return posixpath.splitext(file.src_uri)[0] + ".html"
    return file.src_uri


def check_links(targets: dict[str, Target], pages: dict, files: Files) -> int:
    """Warn (`file:line`) about each relative link in the generated pages'
    prose that names no page or file of the site; returns how many."""
    known = {_flat(file) for file in files}
    broken = 0
    for uri, page in pages.items():
        target = targets[uri]
        for section in page.sections:
            for i, row in enumerate(section.docs.split("\n")):
                for match in _LINKS.finditer(row):
                    href = next(g for g in match.groups() if g)
                    path = _relative(href)
                    if path is None or _resolve(target.page, path) in known:
                        continue
                    line = section.docs_lines[min(i, len(section.docs_lines) - 1)]
                    log.warning(
                        f"{page.source}:{line}: link to {href!r}: no such page "
                        "or file in the site"
                    )
                    broken += 1
    return broken


def resolve_links(
    body: str, target: Target, targets: dict[str, Target], directory_urls: bool
) -> str:
    """`body` with links to other generated pages in the site's URL style.

    Authors write `mha.html` and `xl/index.html`; with directory URLs those
    pages are `mha/` and `xl/`, one folder deeper than the file names say.
    """
    if not directory_urls:
        return body
    generated = {f"{t.page}.html" for t in targets.values() if t.source}

    def url(flat: str) -> str:
        if flat == "index.html" or flat.endswith("/index.html"):
            return flat[: -len("index.html")]
        return flat[: -len(".html")] + "/"

    def fix(match: re.Match[str]) -> str:
        href = match.group(2)
        path = _relative(href)
        flat = _resolve(target.page, path) if path else ""
        if flat not in generated:
            return match.group(0)
        rest = href[len(path) :]
        link = get_relative_url(url(flat), url(f"{target.page}.html"))
        return f"{match.group(1)}{link}{rest}{match.group(3)}"

    return _HREF.sub(fix, body)


def permalink_titles(html: str, lang: str) -> str:
    """A hand-written page's heading permalinks, titled in the page's language
    (Python-Markdown's toc writes "Permanent link" for every language)."""
    title = escape(label(lang, "permalink"), quote=True)
    return html.replace('title="Permanent link"', f'title="{title}"')
