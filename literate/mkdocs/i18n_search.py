"""One search index per language, for mkdocs-static-i18n with mkdocs-material.

The literate plugin's `per_language_search` option (literate/mkdocs/
plugin.py calls `PerLanguageSearch`): it gives each language its own search
index, split into words the way that language needs, points each translated
page's search at its language's index, repairs the language selector's links
on home pages, and copies the sitemap into each language folder.

    env           keep the theme's templates (they hold the search words)
    page_context  point the language selector at the page's alternates
    post_page     a translated page searches its own language's index
    keep_index    as each language's build ends: keep its entries
    write_files   after the last language: one index (and one sitemap) per
                  language folder
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import jinja2
from jinja2.utils import htmlsafe_json_dumps
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.structure.pages import Page

from literate.mkdocs.site import Language, current_language, site_languages

CONFIG_SCRIPT = re.compile(
    r'(<script id="__config" type="application/json">)(.*?)(</script>)', re.S
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


def point_search_at(html: str, prefix: str, where: str) -> str:
    """Make the theme's scripts treat `prefix` (e.g. "ja/") as the site root.

    mkdocs-material loads `search/search_index.json` from its `base` and
    resolves the results' locations against it; a translated page thus
    searches its own language's index.
    """
    found = CONFIG_SCRIPT.search(html)
    if found is None:
        raise PluginError(
            f"literate: per_language_search: {where}: no "
            '<script id="__config"> in the page; the theme is expected to be '
            "mkdocs-material 9"
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


class PerLanguageSearch:
    """What the plugin does for per-language search, and what it keeps
    between events and between the languages' builds."""

    def __init__(self) -> None:
        self.env: jinja2.Environment | None = None
        # Per language: its search settings and entries, kept as each build
        # ends, written when the last one has.
        self.indexes: dict[Language, tuple[dict, list[dict]]] = {}

    def env_ready(self, env: jinja2.Environment) -> None:
        self.env = env  # the theme's templates, compiled once per build

    def page_context(self, page: Page, config: MkDocsConfig) -> None:
        # mkdocs-static-i18n points the language selector at the same page
        # in each language, except on home pages, where it writes root paths
        # ("/ja/") that break when the site is not at a host's root.
        alternates = getattr(page.file, "alternates", {})
        for alternate in selector_links(config):
            other = alternates.get(alternate["lang"])
            if other is not None:
                alternate["link"] = other.url or "./"

    def post_page(self, output: str, page: Page, config: MkDocsConfig) -> str:
        lang = current_language(config)
        if lang.default:
            return output
        return point_search_at(output, lang.prefix, page.file.dest_uri)

    def keep_index(self, config: MkDocsConfig) -> None:
        # Before the search plugin writes, and before i18n merges the
        # languages into one index: these are this language's entries.
        search = config.plugins.get("material/search")
        lang = current_language(config)
        if lang.default:  # i18n builds the default language first
            self.indexes = {}
        if search is not None and self.env is not None:
            settings = search_settings(self.env, lang.code)
            settings["fields"] = search.config.fields
            self.indexes[lang] = (settings, list(search.search_index.entries))

    def write_files(self, config: MkDocsConfig) -> None:
        site = Path(config.site_dir)
        # mkdocs-material fetches sitemap.xml from beside each page that the
        # language selector links to (the folder of ja/mha.html, say), and
        # i18n writes one only at the root: give each language its copy.
        sitemap = site / "sitemap.xml"
        for lang in site_languages(config):
            if not lang.default and sitemap.exists():
                (site / lang.prefix).mkdir(parents=True, exist_ok=True)
                (site / lang.prefix / "sitemap.xml").write_bytes(sitemap.read_bytes())
        # After i18n has written its merged index: replace it with one index
        # per language, each with that language's word splitting.
        for lang, (settings, entries) in self.indexes.items():
            path = site / lang.prefix / "search" / "search_index.json"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(language_index(entries, lang, settings), encoding="utf-8")
