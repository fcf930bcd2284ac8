"""The mkdocs plugin: one side-by-side page per literate source and language.

An adapter: `literate.pipeline.Pipeline` makes the pages, `literate.mkdocs.
site` names their files and checks their links; this class hands them over:

    on_config         the pipeline (kept across `serve` rebuilds), the CSS
    on_files          a page per source and language (parsed, its `#|`
                      examples run, translated), its notebook, the status
                      page, the stylesheets, KaTeX's fonts and the sources
    on_page_markdown  render a generated page; its title and meta
    on_page_content   its body, links to other generated pages resolved
    on_page_context   search indexes a light view of it (no math markup)
    on_post_page      KaTeX's stylesheet in a literate page's head; a
                      hand-written page keeps of the plugin's stylesheet and
                      script only the line-break rules, inline
    on_post_build     with `per_language_search`, one index per language;
                      with `per_language_404`, one 404 page per language

With `per_language_search`, `literate.mkdocs.i18n_search` also keeps the
theme's templates (on_env), fixes the language selector's links (on_page_
context) and points each translated page's search at its index (on_post_page).
With `per_language_404`, `literate.mkdocs.not_found` gives the theme's 404
template the plugin's words and keeps each language's page (on_pre_template,
on_template_context, on_post_template).

Under `mkdocs serve` a page that fails (a table saved as invalid JSON, a
renderer module with a syntax error) does not fail the rebuild: mkdocs'
server answers no request until a rebuild succeeds, so the page a translator
is editing would stop loading. It shows its last good version (or its
English) under a notice naming the file and line instead; `mkdocs build`
still fails.

mkdocs-static-i18n builds the site once per language (English at /, the
others under /<lang>/) and sorts pages by their suffix (`mha.ja.md`): the
plugin adds its pages under those names before i18n runs and fills them in
after. It works with mkdocs' own theme and with mkdocs-material: under a
theme other than material the pages get Pygments' colours (PYGMENTS_CSS), and
under one that runs highlight.js (mkdocs, readthedocs) their code is marked
for highlight.js to leave alone (it would rewrite the lines and their links).
"""

from __future__ import annotations

import logging
import re
from html import escape
from pathlib import Path

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.plugins import BasePlugin, CombinedEvent, event_priority
from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page
from mkdocs.utils import get_relative_url
from pygments.formatters import HtmlFormatter

from literate.glossary import load_glossary
from literate.keys import glossary_path
from literate.languages import label
from literate.mkdocs import site, typography
from literate.mkdocs.config import LiterateConfig
from literate.mkdocs.i18n_search import PerLanguageSearch
from literate.mkdocs.not_found import PerLanguageNotFound
from literate.mkdocs.reload import code_stamp, load_failure, load_pipeline
from literate.mkdocs.search_view import search_view
from literate.mkdocs.site import Language, Target, current_language, site_languages

# mkdocs-static-i18n handles files at priority -100: add pages before it,
# fill them in after it.
BEFORE_I18N = 50
AFTER_I18N = -150

log = logging.getLogger("mkdocs.plugins.literate")
# The highlighting script, shipped in the package beside literate.css.
JS = "assets/literate.js"
JS_FILE = Path(__file__).resolve().parent.parent / "assets" / "literate.js"
# The code's colours where the theme has none for Pygments' classes (every
# theme but material), scoped to the literate pages.
PYGMENTS_CSS = "assets/literate-pygments.css"
# A code block of ours: highlight.js skips one whose class is `nohighlight`.
OUR_CODE = re.compile(r"<pre><code>")


def pygments_css() -> str:
    """Pygments' default colours, for the literate pages' code only."""
    rules = HtmlFormatter(style="default").get_token_style_defs(".lit-page .highlight")
    return "\n".join(rules) + "\n"


def kept_from_highlightjs(body: str) -> str:
    """`body` with its code blocks marked for highlight.js to skip."""
    return OUR_CODE.sub('<pre><code class="nohighlight">', body)


def breadcrumbs(target: Target, targets: dict[str, Target], lit, home: bool) -> str:
    """The way up from a page below the site's root (`transformers/rope/
    index`): Home (if the site has an index.md), then each folder, linked
    where it has a page of its own (its `__init__.py`), then the page; ""
    for a page at the root."""
    folders = target.page.split("/")[:-1]
    if target.page.endswith("/index"):
        folders.pop()  # a package's own page: its folder is the last crumb
    if not folders and "/" not in target.page:
        return ""
    lang = target.lang.code
    pages = {t.page for t in targets.values() if t.source}

    def link(page: str, text: str) -> str:
        href = escape(get_relative_url(f"{page}.html", f"{target.page}.html"))
        return f'<li><a href="{href}">{escape(text)}</a></li>'

    items = [link("index", label(lang, "home"))] if home else []
    for depth in range(1, len(folders) + 1):
        page, name = "/".join(folders[:depth]) + "/index", folders[depth - 1]
        items.append(link(page, name) if page in pages else f"<li>{escape(name)}</li>")
    title = lit.title if lit is not None and lit.title else target.page
    items.append(f'<li aria-current="page">{escape(title)}</li>')
    name = escape(label(lang, "breadcrumbs"), quote=True)
    return (
        f'<nav class="lit-breadcrumbs" aria-label="{name}" data-search-exclude>'
        f"<ol>{''.join(items)}</ol></nav>\n"
    )


class LiteratePlugin(BasePlugin[LiterateConfig]):
    """Adds the literate pages to an mkdocs site."""

    def __init__(self) -> None:
        super().__init__()
        self.stamp: int | None = None  # code_stamp() of the loaded code
        self.module = None  # literate.pipeline, as last (re)loaded
        self.pipeline = None  # its Pipeline for this site
        self.options: tuple = ()  # the root and options it was made with
        self.root = Path()  # the folder of mkdocs.yml
        self.sources: list[str] = []  # the `sources` option, expanded
        self.langs: tuple[Language, ...] = ()
        self.lang: Language | None = None  # the language being built
        self.targets: dict[str, Target] = {}  # every generated page by docs name
        self.pages: dict = {}  # this language's literate Pages, by docs name
        self.bodies: dict[str, str] = {}  # their HTML
        self.status = None  # the status page's rows, counted once per build
        self.full_content = ""  # a page's HTML while search reads its view
        self.serving = False  # under `mkdocs serve`: errors become notices
        self.strict = False  # --strict: a warning would fail the rebuild
        self.broken = ""  # why the edited renderer did not load (serve only)
        self.notices: dict[str, str] = {}  # this build's errors, by docs name
        self.notebooks: dict[str, str | None] = {}  # this build's, by docs name
        self.last: dict[str, tuple] = {}  # last good (page, notebook, body)
        self.terms: list[str] = []  # this language's glossary words
        self.search: PerLanguageSearch | None = None  # per_language_search
        self.not_found: PerLanguageNotFound | None = None  # per_language_404

    def on_startup(self, *, command: str, dirty: bool) -> None:
        # Defining on_startup keeps this object alive across `serve` rebuilds,
        # so an unchanged renderer is not imported again.
        self.serving = command == "serve"

    def on_config(self, config: MkDocsConfig) -> MkDocsConfig:
        self.root = Path(config.config_file_path).resolve().parent
        if site.CSS not in config.extra_css:  # before the site's own stylesheets
            config.extra_css.insert(0, site.CSS)
        if JS not in config.extra_javascript:  # click a name: its uses light up
            config.extra_javascript.append(JS)
        if config.theme.name != "material" and PYGMENTS_CSS not in config.extra_css:
            config.extra_css.insert(config.extra_css.index(site.CSS) + 1, PYGMENTS_CSS)
        options = dict(
            run_examples=self.config.run_examples,
            katex=self.config.katex_dist,
            packages=tuple(self.config.cache_key_packages),
            timeout=self.config.examples_timeout,
            extensions=tuple(self.config.markdown_extensions),
        )
        self.strict = bool(config.strict)
        self.search = self._per_language_search(config)
        if not self.config.per_language_404:
            self.not_found = None
        elif self.not_found is None:  # kept across `serve` rebuilds
            self.not_found = PerLanguageNotFound(search=self.search is not None)
        stamp = code_stamp()
        if stamp != self.stamp or (self.root, options) != self.options:
            # New code or options: a new pipeline; else its KaTeX cache stays.
            self._load(stamp, options)
        patterns = self.config.sources
        try:
            self.sources = self.module.find_sources(self.root, patterns)
        except (FileNotFoundError, ValueError) as err:
            # Which entry: a refused match of a glob names only itself.
            entry = next((p for p in patterns if not self._finds(p)), "")
            named = str(err).startswith((f"{entry}:", f"{entry!r}:"))
            where = "" if named else f"{entry!r}: "
            raise PluginError(
                f"literate: plugins.literate.sources: {where}{err}"
            ) from None
        return config

    def _per_language_search(self, config: MkDocsConfig):
        """The option's state, kept across `serve` rebuilds; None when off."""
        if not self.config.per_language_search:
            return None
        if config.theme.name != "material":
            raise PluginError(
                "literate: plugins.literate.per_language_search: needs the "
                f"theme material (mkdocs-material 9), not {config.theme.name!r}"
            )
        return self.search or PerLanguageSearch(self.root)

    def _finds(self, pattern: str) -> bool:
        """Whether `pattern` alone names sources that may be read."""
        try:
            return bool(self.module.find_sources(self.root, [pattern]))
        except (FileNotFoundError, ValueError):
            return False

    def _load(self, stamp: int, options: dict) -> None:
        """The pipeline's code, imported (again), and its Pipeline.

        Under `serve`, code that fails to load keeps the previous pipeline;
        every page says why (`broken`) until an edit makes it load.
        """
        try:
            module = load_pipeline(fresh=self.stamp is not None)
            pipeline = module.Pipeline(self.root, **options)
        except Exception as err:
            if not (self.serving and self.pipeline is not None):
                raise
            self.broken = load_failure(err)
            self._log(self.broken)
            return
        if self.pipeline is not None:
            self.pipeline.close()
        self.module, self.pipeline, self.broken = module, pipeline, ""
        self.stamp, self.options = stamp, (self.root, options)

    def on_pre_build(self, *, config: MkDocsConfig) -> None:
        # i18n sets the theme's language in its on_config, which runs last.
        self.langs = site_languages(config)
        self.lang = current_language(config)
        self.targets = site.page_targets(
            self.sources, self.langs, self.config.status_page, self.config.base
        )
        self.pages, self.bodies, self.notices, self.notebooks = {}, {}, {}, {}
        # The glossary's words, where Japanese headings may break.
        glossary = load_glossary(glossary_path(self.root, self.lang.code))
        self.terms = [t for term in glossary for t in term.render.split()]
        if self.lang.default:  # i18n builds the default language first:
            self.status = None  # counted once for all languages,
            self.pipeline.forget()  # and so are the parsed and executed sources

    @event_priority(BEFORE_I18N)
    def _add_files(self, files: Files, *, config: MkDocsConfig) -> Files:
        for uri in self.targets:
            if files.get_file_from_path(uri) is not None:
                raise PluginError(
                    f"literate: {config.docs_dir}/{uri} exists, but the plugin "
                    "generates that page; rename or remove the file"
                )
            # Named like a docs file, so i18n sorts it by language; the
            # content is filled in after i18n has made its own copies.
            files.append(
                File(uri, config.docs_dir, config.site_dir, config.use_directory_urls)
            )
        if self.lang.default:  # one copy of the assets serves every language
            sources = [] if self.config.source_url else self.sources
            for file in site.static_files(config, self.root, self.config, sources):
                files.append(file)
            files.append(File.generated(config, JS, abs_src_path=str(JS_FILE)))
            worker = self.search.worker_file(config, files) if self.search else None
            if worker is not None:
                files.append(worker)
        return files

    @event_priority(AFTER_I18N)
    def _fill_files(self, files: Files, *, config: MkDocsConfig) -> Files:
        for file in list(files.documentation_pages()):
            target = self.targets.get(file.src_uri)
            if target is None:
                continue
            if not target.source:
                if self.status is None:  # the rows are counted once a build
                    self.status = self.module.status_rows(self.root, self.sources)
                file.content_string = self.module.status_table(
                    self.status, self.lang.code
                )
                continue
            file.content_string = ""  # the body comes from on_page_content
            made = self._tolerated(file.src_uri, target, self._page_and_notebook)
            page, notebook = made or self._fallback(file.src_uri, target)
            if page is not None:
                self.pages[file.src_uri] = page
            self.notebooks[file.src_uri] = notebook
            if notebook is not None:
                uri = self.lang.prefix + site.notebook_uri(target.page)
                files.append(File.generated(config, uri, content=notebook))
        if self.lang.default:
            site.check_links(self.targets, self.pages, files)
            # Added after i18n: a file made from content has no source path,
            # which i18n's sorting of files by language cannot take.
            if PYGMENTS_CSS in config.extra_css:
                files.append(
                    File.generated(config, PYGMENTS_CSS, content=pygments_css())
                )
        return files

    on_files = CombinedEvent(_add_files, _fill_files)

    def _page_and_notebook(self, target: Target) -> tuple:
        page = self.pipeline.page(target.source, target.lang.code)
        return page, self.pipeline.notebook(page)

    def _tolerated(self, uri: str, target: Target, make):
        """`make(target)`; the pipeline's errors as a PluginError naming the page.

        Under `serve`, any error gives None and becomes the page's notice: a
        failed rebuild would leave mkdocs' server waiting for a good one
        before it answers any request.
        """
        try:
            with site.reported(target, self.module.ERRORS, self.root):
                return make(target)
        except PluginError as err:
            if not self.serving:
                raise
            self.notices[uri] = str(err)
        except Exception as err:
            if not self.serving:
                raise
            message = f"{type(err).__name__}: {err}"
            self.notices[uri] = site.page_error(target, message, self.root)
        self._log(self.notices[uri])
        return None

    def _fallback(self, uri: str, target: Target) -> tuple:
        """What a page that failed under `serve` shows: its last good version,
        else its English (untranslated), else nothing but the notice."""
        if uri in self.last:
            return self.last[uri][:2]
        try:
            from literate.translate import translate_page

            english = self.pipeline.english(target.source)
            page = english
            if not target.lang.default:
                page = translate_page(english, target.lang.code, {})
            return page, self.pipeline.notebook(english)
        except Exception:  # the notice says what failed
            return None, None

    def _shown(self, uri: str, target: Target, html) -> tuple:
        """The page and body that a page that failed under `serve` shows."""
        if uri in self.last:
            lit, _, body = self.last[uri]
            return lit, body
        lit, _ = self._fallback(uri, target)
        try:
            return lit, ("" if lit is None else html(lit))
        except Exception:  # the notice says what failed
            return lit, ""

    def _log(self, message: str) -> None:
        """Under `serve --strict` a warning would fail the rebuild too."""
        (log.info if self.strict else log.warning)(
            f"{message} (shown on the page until the file is fixed)"
        )

    def on_page_markdown(
        self, markdown: str, *, page: Page, config: MkDocsConfig, files: Files
    ) -> str:
        uri = page.file.src_uri
        target = self.targets.get(uri)
        if target is None or not target.source:
            return markdown
        notebook = self.lang.prefix + site.notebook_uri(target.page)

        def html(lit) -> str:
            return self.pipeline.html(
                lit,
                source_url=site.source_url(self.config.source_url, lit.source, page),
                notebook_url=get_relative_url(notebook, page.url),
                links=self._cross_page_links(target, lit),
            )

        lit, body = self.pages.get(uri), ""
        if uri not in self.notices:
            body = self._tolerated(uri, target, lambda _: html(lit))
            if body is not None:
                self.last[uri] = (lit, self.notebooks.get(uri), body)
        if uri in self.notices:  # serving, and the page failed
            lit, body = self._shown(uri, target, html)
        home = files.get_file_from_path("index.md") is not None
        body = breadcrumbs(target, self.targets, lit, home) + (body or "")
        body = site.resolve_links(body, target, self.targets, config.use_directory_urls)
        # Figures as files beside the pages, shared by pages and languages.
        body, figure_files = site.figure_files(body, page.url)
        site.write_files(config.site_dir, figure_files)
        if config.theme.get("highlightjs"):
            body = kept_from_highlightjs(body)
        notices = [n for n in (self.broken, self.notices.get(uri)) if n]
        if notices:
            body = site.rebuild_notice(notices, self.lang.code) + body
        self.bodies[uri] = body
        page.meta["literate"] = target.source
        page.meta["hide"] = ["navigation", "toc"]  # the two columns need the width
        if lit is None:
            return markdown
        # The theme writes these raw into <title>, the header and the
        # <meta name="description" content="..."> attribute (mkdocs renders
        # with autoescape off): escaped here, whatever `check` said of them.
        page.meta["title"] = site.head_text(lit.title)
        if lit.summary:
            page.meta["description"] = site.head_text(lit.summary)
        return markdown

    def _cross_page_links(self, target: Target, lit) -> dict[str, str]:
        """Links for the names `lit`'s code imports from the site's other
        literate pages, to the page in the same language (relative)."""
        others = {}
        for uri, other in self.pages.items():
            there = self.targets[uri]
            anchors: dict[str, str] = {}
            for section in other.sections:
                for name in section.defines:
                    anchors.setdefault(name, section.anchor)
            href = get_relative_url(f"{there.page}.html", f"{target.page}.html")
            others[there.source] = (anchors, href)
        # Through the pipeline's module: `serve` reloads it when it changes.
        return self.module.cross_page_links(lit.source, lit.sections, others)

    def on_page_content(
        self, html: str, *, page: Page, config: MkDocsConfig, files: Files
    ) -> str:
        body = self.bodies.pop(page.file.src_uri, None)
        if body is None:
            body = site.permalink_titles(html, self.lang.code)
        # Line breaks: no "pre-" | "LN"; Japanese headings break between words.
        body = typography.keep_together(body)
        if self.lang.code == "ja":
            body = typography.break_points(body, self.terms)
        return body

    @event_priority(10)
    def _hand_search_its_view(self, context: dict, *, page: Page, **kwargs) -> dict:
        # The search plugin indexes page.content in its on_page_context
        # (priority 0): give it the words in the blocks a result shows
        # (generated and hand-written pages alike), restore it after.
        if page.content is not None:
            self.full_content = page.content
            page.content = search_view(page.content)
        return context

    @event_priority(-10)
    def _restore_the_page(self, context: dict, *, page: Page, **kwargs) -> dict:
        if page.content is not None:
            page.content = self.full_content
        return context

    def _fix_language_links(self, context: dict, *, page: Page, config, **kw):
        # After i18n's on_page_context (priority 50) has set them.
        if self.search is not None:
            self.search.page_context(page, config)
        return context

    on_page_context = CombinedEvent(
        _hand_search_its_view, _fix_language_links, _restore_the_page
    )

    def on_env(self, env, *, config: MkDocsConfig, files: Files):
        if self.search is not None:
            self.search.env_ready(env)
        return env

    def on_post_page(self, output: str, *, page: Page, config: MkDocsConfig) -> str:
        if self.search is not None:
            output = self.search.post_page(output, page, config)
        if not page.meta.get("literate"):
            return site.without_page_assets(output, site.CSS, JS)
        href = get_relative_url(site.KATEX_CSS, page.url)
        return site.link_stylesheet(output, href)

    @event_priority(100)
    def _keep_search_index(self, *, config: MkDocsConfig) -> None:
        # Before the search plugin writes, and before i18n (priority -100)
        # merges the languages into one index or builds the next language.
        if self.search is not None:
            self.search.keep_index(config)

    @event_priority(-200)
    def _write_search_indexes(self, *, config: MkDocsConfig) -> None:
        # After i18n has written its merged index (and the root's 404 page).
        if self.search is not None:
            self.search.write_files(config)
        if self.not_found is not None:
            self.not_found.write_files(config)

    def on_pre_template(self, template, *, template_name: str, config: MkDocsConfig):
        if self.not_found is None:
            return template
        return self.not_found.pre_template(template, template_name, config)

    def on_template_context(self, context, *, template_name: str, config):
        if self.not_found is not None:
            context = self.not_found.template_context(context, template_name, config)
        return context

    def on_post_template(self, output: str, *, template_name: str, config):
        if template_name == "404.html":  # a page like a hand-written one
            output = site.without_page_assets(output, site.CSS, JS)
        if self.not_found is None:
            return output
        return self.not_found.post_template(output, template_name, config)

    on_post_build = CombinedEvent(_keep_search_index, _write_search_indexes)

    def on_serve(self, server, *, config: MkDocsConfig, builder):
        # Rebuild when a source or a translation changes, as on a docs page.
        watched = [self.root / source for source in self.sources]
        for path in [*watched, self.root / "translations"]:
            if path.exists():
                server.watch(str(path))
        return server

    def on_shutdown(self) -> None:
        if self.pipeline is not None:
            self.pipeline.close()
