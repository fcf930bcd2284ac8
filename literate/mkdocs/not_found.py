"""A 404 page per language, for sites built by mkdocs-static-i18n.

mkdocs writes the theme's `404.html` at the site's root in every build, and
mkdocs-static-i18n builds once per language into the same folder: the last
language's page is the only one left, with its navigation, while its heading
is the theme's English ("404 - Not found"). With the plugin's option
`per_language_404`, each language gets its own page, in its own folder
(`404.html`, `ja/404.html`), in its own words and with its own navigation:

    pre_template      the theme's 404 template is replaced by one with the
                      plugin's words (`literate.labels`: not_found, home),
                      which extends the theme's `main.html` as its own does
    template_context  the language selector of that page leads to each
                      language's home page
    post_template     the page is kept (and its search pointed at its
                      language's index, with `per_language_search`)
    write_files       after the last language: each page in its folder

An error page is served at any depth of the site, so its links are absolute
(mkdocs gives it the path of `site_url`, or `/`, as its base).
"""

from __future__ import annotations

from html import escape
from pathlib import Path

import jinja2
from mkdocs.config.defaults import MkDocsConfig

from literate.languages import label
from literate.mkdocs.i18n_search import point_search_at, selector_links
from literate.mkdocs.site import Language, current_language, site_languages

TEMPLATE = "404.html"


def not_found_template(env: jinja2.Environment, lang: Language) -> jinja2.Template:
    """The 404 page of `lang`: its heading, a sentence and a link to its home
    page, inside the theme's page (its header, navigation and search)."""
    heading = escape(label(lang.code, "not_found"))
    text = escape(label(lang.code, "not_found_text"))
    link = escape(label(lang.code, "home"))
    home = "{{ base_url }}" + escape(lang.prefix, quote=True)
    return env.from_string(
        '{% extends "main.html" %}\n'
        "{% block content %}\n"
        f'<h1 id="not-found">{heading}</h1>\n'
        f'<p>{text}</p>\n<p><a href="{home}">{link}</a></p>\n'
        "{% endblock %}\n"
    )


def home_of(base_url: str, lang: Language) -> str:
    """The absolute address of `lang`'s home page on an error page."""
    return f"{base_url.rstrip('/')}/{lang.prefix}"


class PerLanguageNotFound:
    """What the plugin does for `per_language_404`, across the languages'
    builds: each language's 404 page, kept until the last build ends."""

    def __init__(self, search: bool) -> None:
        self.search = search  # point each page's search at its language
        self.pages: dict[Language, str] = {}

    def pre_template(
        self, template: jinja2.Template, name: str, config: MkDocsConfig
    ) -> jinja2.Template:
        if name != TEMPLATE:
            return template
        lang = current_language(config)
        if lang.default:  # i18n builds the default language first
            self.pages = {}
        return not_found_template(template.environment, lang)

    def template_context(self, context: dict, name: str, config: MkDocsConfig):
        if name != TEMPLATE:
            return context
        base = str(context.get("base_url") or "/")
        codes = {lang.code: lang for lang in site_languages(config)}
        for alternate in selector_links(config):
            lang = codes.get(alternate.get("lang"))
            if lang is not None:
                alternate["link"] = home_of(base, lang)
        return context

    def post_template(self, output: str, name: str, config: MkDocsConfig) -> str:
        if name != TEMPLATE:
            return output
        lang = current_language(config)
        if self.search:
            output = point_search_at(output, lang.prefix, lang.prefix + name, True)
        self.pages[lang] = output
        return output

    def write_files(self, config: MkDocsConfig) -> None:
        """Each language's page in its folder (the root's is the default
        language's, which the later builds wrote over)."""
        site = Path(config.site_dir)
        for lang, page in self.pages.items():
            path = site / lang.prefix / TEMPLATE
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(page, encoding="utf-8")
