"""The mkdocs plugin: one side-by-side page per literate source and language.

A thin adapter. `literate.parse`, `.execute`, `.translate`, `.render` and
`.notebook` make a page; the plain functions in this file choose names, paths
and search settings; the plugin class only hands their results to mkdocs:

    on_files           add a page per source and language (parsed, its `#|`
                       examples run, translated), its notebook, the
                       translation status page, the KaTeX stylesheet and
                       fonts, and the sources themselves (pages link to them)
    on_page_markdown   render a generated page; give it its title,
                       description and the wide layout (no navigation or
                       table of contents)
    on_page_content    replace its empty body with the rendered sections
    on_post_page       point a translated page's search at its own index
    on_post_build      write one search index per language

mkdocs-static-i18n builds the site once per language (English at /, the
others under /<lang>/). It sorts pages by their suffix (`mha.ja.md`) and
gives each the links to its other languages, so the plugin adds its pages
under those names before i18n runs and fills in their content after it.
"""

from __future__ import annotations

import json
import re
import sys
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

import jinja2
from jinja2.utils import htmlsafe_json_dumps
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.plugins import BasePlugin, CombinedEvent, event_priority
from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page
from mkdocs.utils import get_relative_url

from literate import model
from literate.mkdocs.config import LiterateConfig
from literate.mkdocs.search_view import search_view

SOURCE_LANGUAGE = "en"  # the language the comments of the sources are in
KATEX_DIR = "assets/katex"  # where the KaTeX stylesheet and fonts go
KATEX_CSS = f"{KATEX_DIR}/katex.min.css"
CSS = "assets/literate.css"  # the side-by-side layout, shipped in the package
CSS_FILE = Path(__file__).resolve().parent.parent / "assets" / "literate.css"
SOURCE_DIR = "source"  # where the sources are copied when source_url is ""

# mkdocs-static-i18n handles files at priority -100: add pages before it,
# fill them in after it.
BEFORE_I18N = 50
AFTER_I18N = -150


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


def site_languages(config: MkDocsConfig) -> tuple[Language, ...]:
    """The languages the i18n plugin builds, else just the theme's."""
    i18n = config.plugins.get("i18n")
    if i18n is None:
        return (Language(config.theme["language"], True),)
    return tuple(
        Language(lang.locale, bool(lang.default))
        for lang in i18n.config.languages
        if lang.build
    )


def page_uri(source: str, lang: Language) -> str:
    """The docs-relative name of a source's page, with i18n's language suffix."""
    stem = Path(source).stem
    return f"{stem}.md" if lang.default else f"{stem}.{lang.code}.md"


def page_targets(
    sources: list[str], langs: tuple[Language, ...], status_page: str
) -> dict[str, Target]:
    """Every generated page by its docs-relative name."""
    targets = {
        page_uri(source, lang): Target(source, lang)
        for source in sources
        for lang in langs
    }
    if status_page:
        default = next(lang for lang in langs if lang.default)
        targets[status_page] = Target("", default)
    return targets


def load_renderer(fresh: bool) -> SimpleNamespace:
    """The pipeline's functions; `fresh` re-imports them from their files.

    `mkdocs serve` rebuilds in the same process when `literate/` changes;
    forgetting the imported modules makes the rebuild run the edited code.
    """
    if fresh:
        kept = {
            "literate",
            "literate.mkdocs",
            "literate.mkdocs.plugin",
            "literate.mkdocs.config",
            "literate.mkdocs.search_view",
        }
        for name in [n for n in sys.modules if n.startswith("literate.")]:
            if name not in kept:
                del sys.modules[name]
    import nbformat

    from literate.execute import execute_page
    from literate.notebook import notebook_name, page_to_notebook
    from literate.parse import SourceError, parse
    from literate.render import render_page
    from literate.translate import translate_page
    from literate.translations.check import load_glossary
    from literate.translations.layout import glossary_path, table_path
    from literate.translations.status import status_markdown
    from literate.translations.tables import load_table

    return SimpleNamespace(
        parse=parse,
        execute_page=execute_page,
        translate_page=translate_page,
        render_page=render_page,
        notebook_name=notebook_name,
        notebook_json=lambda page: nbformat.writes(page_to_notebook(page)),
        table_path=table_path,
        glossary_path=glossary_path,
        load_table=load_table,
        load_glossary=load_glossary,
        status_markdown=status_markdown,
        # Parse, KaTeX, example and notebook errors name the file and line.
        errors=(SourceError, ValueError, OSError),
    )


def renderer_stamp() -> int:
    """When the pipeline's code last changed: the newest of literate/*.py."""
    folder = Path(__file__).parent.parent
    return max(path.stat().st_mtime_ns for path in folder.rglob("*.py"))


def read_source(root: Path, source: str) -> str:
    """The text of a literate source; a missing file names the mkdocs option."""
    path = root / source
    try:
        return path.read_text(encoding="utf-8")
    except OSError as err:
        raise PluginError(
            f"literate: plugins.literate.sources lists {source!r}, "
            f"but {path} cannot be read: {err.strerror}"
        ) from err


def english_page(r: SimpleNamespace, root: Path, source: str) -> model.Page:
    """`source` parsed, with the outputs of its `#|` examples (run or cached)."""
    page = r.parse(read_source(root, source), source)
    return r.execute_page(page, root / source)


def translated_page(
    r: SimpleNamespace, root: Path, english: model.Page, lang: str
) -> model.Page:
    """`english` in `lang`, from its string table and the language's glossary.

    Without a table every section shows its English, marked untranslated.
    """
    if lang == SOURCE_LANGUAGE:
        return english
    table = r.table_path(root, lang, english.source)
    glossary = r.glossary_path(root, lang)
    return r.translate_page(
        english,
        lang,
        r.load_table(table) if table.exists() else {},
        r.load_glossary(glossary) if glossary.exists() else (),
    )


def search_settings(env: jinja2.Environment, lang: str) -> dict:
    """How the search of `lang` splits words, from the theme's language file.

    mkdocs-material keeps these per language: Japanese is segmented in the
    browser (TinySegmenter, `lang: ja`); Chinese is segmented at build time
    by jieba, when installed, which puts zero-width spaces between words,
    and its separator splits on them.
    """
    own = env.get_template(f"partials/languages/{lang}.html").module
    fallback = env.get_template("partials/languages/en.html").module

    def word(key: str) -> str:
        return str(own.t(key)) or str(fallback.t(key))

    pipeline = re.split(r"\s*,\s*", word("search.config.pipeline"))
    return {
        "lang": [word("search.config.lang")],
        "separator": word("search.config.separator"),
        "pipeline": [step for step in pipeline if step],
    }


def language_index(entries: list[dict], lang: Language, config: dict) -> str:
    """The search index of one language: its pages, located from its folder.

    Zero-width spaces (jieba's word breaks) are kept only where the language's
    separator splits on them; elsewhere they would glue to the words.
    """
    keep_breaks = re.fullmatch(config["separator"], "\u200b") is not None
    docs = []
    for entry in entries:
        location = entry["location"]
        if not location.startswith(lang.prefix):
            continue
        entry = dict(entry, location=location[len(lang.prefix) :])
        if not keep_breaks:
            for field in ("title", "text"):
                entry[field] = entry[field].replace("\u200b", "")
        docs.append(entry)
    return json.dumps(
        {"config": config, "docs": docs}, separators=(",", ":"), sort_keys=True
    )


CONFIG_SCRIPT = re.compile(
    r'(<script id="__config" type="application/json">)(.*?)(</script>)', re.S
)


def point_search_at(html: str, prefix: str, where: str) -> str:
    """Make the theme's scripts treat `prefix` (e.g. "ja/") as the site root.

    mkdocs-material loads `search/search_index.json` from its `base` and
    resolves the results' locations against it; a translated page thus
    searches its own language's index.
    """
    found = CONFIG_SCRIPT.search(html)
    if found is None:
        raise PluginError(
            f'literate: {where}: no <script id="__config"> in the page; the '
            "theme is expected to be mkdocs-material 9"
        )
    app = json.loads(found.group(2))
    app["base"] = f"{app['base'].rstrip('/')}/{prefix}"
    # str(): concatenating the Markup it returns would escape the whole page.
    data = str(htmlsafe_json_dumps(app))
    return html[: found.start(2)] + data + html[found.end(2) :]


def selector_links(config: MkDocsConfig) -> list[dict]:
    """The language selector's entries, as the theme's templates will see them.

    Templates read `config.extra.alternate` as an attribute first, which is
    where mkdocs-static-i18n puts its per-page copy; the mkdocs.yml value is
    the dict item underneath.
    """
    links = getattr(config.extra, "alternate", None)
    if links is None:
        links = config.extra.get("alternate")
    return links or []


def static_files(
    config: MkDocsConfig, root: Path, katex: str, sources: list[str]
) -> list[File]:
    """KaTeX's stylesheet and fonts, and (if wanted) the sources, as site files."""
    dist = root / katex
    css = dist / "katex.min.css"
    if not css.is_file():
        raise PluginError(
            f"literate: plugins.literate.katex is {katex!r}, but {css} does not "
            "exist; run `make install` (npm ci) to fetch KaTeX"
        )
    pairs = [(CSS, CSS_FILE), (KATEX_CSS, css)]
    pairs += [
        (f"{KATEX_DIR}/fonts/{font.name}", font)
        for font in sorted((dist / "fonts").iterdir())
    ]
    pairs += [(f"{SOURCE_DIR}/{source}", root / source) for source in sources]
    return [File.generated(config, uri, abs_src_path=str(path)) for uri, path in pairs]


def link_stylesheet(html: str, href: str) -> str:
    """`html` with a stylesheet link at the end of its <head>."""
    link = f'<link rel="stylesheet" href="{href}">\n'
    at = html.find("</head>")
    return html if at < 0 else html[:at] + link + html[at:]


@contextmanager
def reported(target: Target, errors: tuple[type[Exception], ...]):
    """Turn the pipeline's errors into mkdocs' PluginError, naming the page.

    The pipeline's own messages start with `file:line:`.
    """
    try:
        yield
    except errors as err:
        raise PluginError(
            f"literate: {target.source} ({target.lang.code}): {err}"
        ) from err


class LiteratePlugin(BasePlugin[LiterateConfig]):
    """Adds the literate pages to an mkdocs-material site."""

    def __init__(self) -> None:
        super().__init__()
        self.stamp: int | None = None  # renderer_stamp() of the loaded code
        self.status = ""  # the status page's markdown
        self.english: dict[str, model.Page] = {}  # executed pages, by source
        # Per language: its search settings and entries, kept as each build
        # ends, written when the last one has.
        self.indexes: dict[Language, tuple[dict, list[dict]]] = {}

    def on_startup(self, *, command: str, dirty: bool) -> None:
        # Defining on_startup keeps this object alive across `serve` rebuilds,
        # so an unchanged renderer is not imported again.
        pass

    def on_config(self, config: MkDocsConfig) -> MkDocsConfig:
        self.root = Path(config.config_file_path).resolve().parent
        if CSS not in config.extra_css:  # before the site's own stylesheets
            config.extra_css.insert(0, CSS)
        stamp = renderer_stamp()
        if stamp != self.stamp:  # first build, or literate/ was edited
            self.renderer = load_renderer(fresh=self.stamp is not None)
            self.stamp = stamp
        return config

    def on_pre_build(self, *, config: MkDocsConfig) -> None:
        # i18n sets the theme's language in its on_config, which runs last.
        self.langs = site_languages(config)
        self.lang = next(
            lang for lang in self.langs if lang.code == config.theme["language"]
        )
        self.targets = page_targets(
            self.config.sources, self.langs, self.config.status_page
        )
        self.pages: dict[str, model.Page] = {}  # this language's, by docs name
        self.bodies: dict[str, str] = {}  # their HTML
        if self.lang.default:  # i18n builds the default language first:
            self.status = ""  # made once for all languages,
            self.english = {}  # and so are the parsed and executed sources

    @event_priority(BEFORE_I18N)
    def _add_files(self, files: Files, *, config: MkDocsConfig) -> Files:
        for uri in self.targets:
            if files.get_file_from_path(uri) is not None:
                raise PluginError(
                    f"literate: docs/{uri} exists, but the plugin generates "
                    "that page; rename or remove the file"
                )
            # Named like a docs file, so i18n sorts it by language; the
            # content is filled in after i18n has made its own copies.
            files.append(
                File(uri, config.docs_dir, config.site_dir, config.use_directory_urls)
            )
        if self.lang.default:  # one copy of the assets serves every language
            sources = [] if self.config.source_url else self.config.sources
            for file in static_files(config, self.root, self.config.katex, sources):
                files.append(file)
        return files

    @event_priority(AFTER_I18N)
    def _fill_files(self, files: Files, *, config: MkDocsConfig) -> Files:
        for file in list(files.documentation_pages()):
            target = self.targets.get(file.src_uri)
            if target is None:
                continue
            if not target.source:
                if not self.status:
                    self.status = self.renderer.status_markdown(self.root)
                file.content_string = self.status
                continue
            file.content_string = ""  # the body comes from on_page_content
            with reported(target, self.renderer.errors):
                page = self.literate_page(target)
                notebook = self.renderer.notebook_json(page)
            self.pages[file.src_uri] = page
            uri = self.lang.prefix + self.renderer.notebook_name(target.source)
            files.append(File.generated(config, uri, content=notebook))
        return files

    on_files = CombinedEvent(_add_files, _fill_files)

    def literate_page(self, target: Target) -> model.Page:
        """The page of `target`: parsed, run and translated."""
        source = target.source
        if source not in self.english:
            self.english[source] = english_page(self.renderer, self.root, source)
        return translated_page(
            self.renderer, self.root, self.english[source], target.lang.code
        )

    def on_page_markdown(
        self, markdown: str, *, page: Page, config: MkDocsConfig, files: Files
    ) -> str:
        lit = self.pages.get(page.file.src_uri)
        if lit is None:
            return markdown
        target = self.targets[page.file.src_uri]
        if self.config.source_url:
            source_url = self.config.source_url.replace("{path}", lit.source)
        else:
            source_url = get_relative_url(f"{SOURCE_DIR}/{lit.source}", page.url)
        notebook = self.lang.prefix + self.renderer.notebook_name(lit.source)
        with reported(target, self.renderer.errors):
            self.bodies[page.file.src_uri] = self.renderer.render_page(
                lit,
                source_url=source_url,
                notebook_url=get_relative_url(notebook, page.url),
            )
        page.meta["title"] = lit.title
        if lit.summary:
            page.meta["description"] = lit.summary
        page.meta["hide"] = ["navigation", "toc"]  # the two columns need the width
        page.meta["literate"] = lit.source  # on_post_page links KaTeX's CSS
        return markdown

    def on_page_content(
        self, html: str, *, page: Page, config: MkDocsConfig, files: Files
    ) -> str:
        return self.bodies.pop(page.file.src_uri, html)

    def on_env(
        self, env: jinja2.Environment, *, config: MkDocsConfig, files: Files
    ) -> jinja2.Environment:
        self.env = env  # the theme's templates, compiled once per build
        return env

    @event_priority(10)
    def _hand_search_its_view(
        self, context: dict, *, page: Page, config: MkDocsConfig, nav
    ) -> dict:
        # The search plugin indexes page.content in its on_page_context
        # (priority 0): give it the text without markup, restore it after.
        if page.meta.get("literate"):
            self.full_content = page.content
            page.content = search_view(page.content)
        return context

    @event_priority(-10)
    def _restore_the_page(
        self, context: dict, *, page: Page, config: MkDocsConfig, nav
    ) -> dict:
        if page.meta.get("literate"):
            page.content = self.full_content
        return context

    @event_priority(0)
    def _point_the_language_selector(
        self, context: dict, *, page: Page, config: MkDocsConfig, nav
    ) -> dict:
        # mkdocs-static-i18n points the language selector at the same page in
        # each language, except on home pages, where it writes root paths
        # ("/ja/") that break when the site is not at a host's root.
        alternates = getattr(page.file, "alternates", {})
        for alternate in selector_links(config):
            other = alternates.get(alternate["lang"])
            if other is not None:
                alternate["link"] = other.url or "./"
        return context

    on_page_context = CombinedEvent(
        _hand_search_its_view, _point_the_language_selector, _restore_the_page
    )

    def on_post_page(self, output: str, *, page: Page, config: MkDocsConfig) -> str:
        if page.meta.get("literate"):
            output = link_stylesheet(output, get_relative_url(KATEX_CSS, page.url))
        if self.lang.default:
            return output
        return point_search_at(output, self.lang.prefix, page.file.dest_uri)

    @event_priority(100)
    def _keep_index(self, *, config: MkDocsConfig) -> None:
        # Before the search plugin writes, and before i18n merges the
        # languages into one index: these are this language's entries.
        search = config.plugins.get("material/search")
        if search is not None:
            settings = search_settings(self.env, self.lang.code)
            settings["fields"] = search.config.fields
            self.indexes[self.lang] = (settings, list(search.search_index.entries))

    @event_priority(-200)
    def _write_language_files(self, *, config: MkDocsConfig) -> None:
        site = Path(config.site_dir)
        # mkdocs-material fetches sitemap.xml from beside each page that the
        # language selector links to (the folder of ja/mha.html, say), and
        # i18n writes one only at the root: give each language its copy.
        sitemap = site / "sitemap.xml"
        for lang in self.langs:
            if not lang.default and sitemap.exists():
                (site / lang.prefix).mkdir(parents=True, exist_ok=True)
                (site / lang.prefix / "sitemap.xml").write_bytes(sitemap.read_bytes())
        # After i18n has written its merged index: replace it with one index
        # per language, each with that language's word splitting.
        for lang, (settings, entries) in self.indexes.items():
            path = site / lang.prefix / "search" / "search_index.json"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(language_index(entries, lang, settings), encoding="utf-8")

    on_post_build = CombinedEvent(_keep_index, _write_language_files)
