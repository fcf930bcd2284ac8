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
    on_post_page      KaTeX's stylesheet in its head

mkdocs-static-i18n builds the site once per language (English at /, the
others under /<lang>/) and sorts pages by their suffix (`mha.ja.md`): the
plugin adds its pages under those names before i18n runs and fills them in
after. It works with mkdocs' own theme and with mkdocs-material.
"""

from __future__ import annotations

from pathlib import Path

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.plugins import BasePlugin, CombinedEvent, event_priority
from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page
from mkdocs.utils import get_relative_url

from literate.mkdocs import site
from literate.mkdocs.config import LiterateConfig
from literate.mkdocs.reload import code_stamp, load_pipeline
from literate.mkdocs.search_view import search_view
from literate.mkdocs.site import Language, Target, current_language, site_languages

# mkdocs-static-i18n handles files at priority -100: add pages before it,
# fill them in after it.
BEFORE_I18N = 50
AFTER_I18N = -150


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
        self.status = ""  # the status page's markdown, made once per build
        self.full_content = ""  # a page's HTML while search reads its view

    def on_startup(self, *, command: str, dirty: bool) -> None:
        # Defining on_startup keeps this object alive across `serve` rebuilds,
        # so an unchanged renderer is not imported again.
        pass

    def on_config(self, config: MkDocsConfig) -> MkDocsConfig:
        self.root = Path(config.config_file_path).resolve().parent
        if site.CSS not in config.extra_css:  # before the site's own stylesheets
            config.extra_css.insert(0, site.CSS)
        options = dict(
            run_examples=self.config.run_examples,
            katex=self.config.katex,
            packages=tuple(self.config.packages),
            timeout=self.config.timeout,
            extensions=tuple(self.config.markdown_extensions),
        )
        stamp = code_stamp()
        if stamp != self.stamp or (self.root, options) != self.options:
            # New code or options: a new pipeline; else its KaTeX cache stays.
            if self.pipeline is not None:
                self.pipeline.close()
            self.module = load_pipeline(fresh=self.stamp is not None)
            self.pipeline = self.module.Pipeline(self.root, **options)
            self.stamp, self.options = stamp, (self.root, options)
        try:
            self.sources = self.module.find_sources(self.root, self.config.sources)
        except FileNotFoundError as err:
            raise PluginError(f"literate: plugins.literate.sources: {err}") from err
        return config

    def on_pre_build(self, *, config: MkDocsConfig) -> None:
        # i18n sets the theme's language in its on_config, which runs last.
        self.langs = site_languages(config)
        self.lang = current_language(config)
        self.targets = site.page_targets(
            self.sources, self.langs, self.config.status_page, self.config.base
        )
        self.pages, self.bodies = {}, {}
        if self.lang.default:  # i18n builds the default language first:
            self.status = ""  # made once for all languages,
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
        return files

    @event_priority(AFTER_I18N)
    def _fill_files(self, files: Files, *, config: MkDocsConfig) -> Files:
        for file in list(files.documentation_pages()):
            target = self.targets.get(file.src_uri)
            if target is None:
                continue
            if not target.source:
                if not self.status:
                    self.status = self.module.status_page(self.root, self.sources)
                file.content_string = self.module.status_page_in(
                    self.status, self.lang.code
                )
                continue
            file.content_string = ""  # the body comes from on_page_content
            with site.reported(target, self.module.ERRORS):
                page = self.pipeline.page(target.source, target.lang.code)
                notebook = self.pipeline.notebook(page)
            self.pages[file.src_uri] = page
            uri = self.lang.prefix + site.notebook_uri(target.page)
            files.append(File.generated(config, uri, content=notebook))
        if self.lang.default:
            site.check_links(self.targets, self.pages, files)
        return files

    on_files = CombinedEvent(_add_files, _fill_files)

    def on_page_markdown(
        self, markdown: str, *, page: Page, config: MkDocsConfig, files: Files
    ) -> str:
        lit = self.pages.get(page.file.src_uri)
        if lit is None:
            return markdown
        target = self.targets[page.file.src_uri]
        notebook = self.lang.prefix + site.notebook_uri(target.page)
        with site.reported(target, self.module.ERRORS):
            body = self.pipeline.html(
                lit,
                source_url=site.source_url(self.config.source_url, lit.source, page),
                notebook_url=get_relative_url(notebook, page.url),
            )
        self.bodies[page.file.src_uri] = site.resolve_links(
            body, target, self.targets, config.use_directory_urls
        )
        page.meta["title"] = lit.title
        if lit.summary:
            page.meta["description"] = lit.summary
        page.meta["hide"] = ["navigation", "toc"]  # the two columns need the width
        page.meta["literate"] = lit.source
        return markdown

    def on_page_content(
        self, html: str, *, page: Page, config: MkDocsConfig, files: Files
    ) -> str:
        body = self.bodies.pop(page.file.src_uri, None)
        return site.permalink_titles(html, self.lang.code) if body is None else body

    @event_priority(10)
    def _hand_search_its_view(self, context: dict, *, page: Page, **kwargs) -> dict:
        # The search plugin indexes page.content in its on_page_context
        # (priority 0): give it the text without markup, restore it after.
        if page.meta.get("literate"):
            self.full_content = page.content
            page.content = search_view(page.content)
        return context

    @event_priority(-10)
    def _restore_the_page(self, context: dict, *, page: Page, **kwargs) -> dict:
        if page.meta.get("literate"):
            page.content = self.full_content
        return context

    on_page_context = CombinedEvent(_hand_search_its_view, _restore_the_page)

    def on_post_page(self, output: str, *, page: Page, config: MkDocsConfig) -> str:
        if not page.meta.get("literate"):
            return output
        href = get_relative_url(site.KATEX_CSS, page.url)
        return site.link_stylesheet(output, href)

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
