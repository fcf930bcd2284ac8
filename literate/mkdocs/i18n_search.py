"""One search index per language, for mkdocs-static-i18n with mkdocs-material.

The literate plugin's `per_language_search` option (literate/mkdocs/
plugin.py calls `PerLanguageSearch`): it gives each language its own search
index, split into words the way that language needs, points each translated
page's search at its language's index, repairs the language selector's links
on home pages, and copies the sitemap into each language folder.

    env           keep the theme's templates (they hold the search words)
    page_context  point the language selector at the page's alternates
    post_page     a page searches its own language's index, through the
                  worker that cuts Chinese and Japanese queries
    keep_index    as each language's build ends: keep its entries
    write_files   after the last language: one index (and one sitemap) per
                  language folder

Each entry of an index (a section of a page) has the text a result shows,
and a field `hidden` that is searched but never shown: the code, outputs
and formulas' TeX that `search_view` set apart as `<pre>`, and the parts of
its compound words. Chinese and Japanese text is cut into words at build
time (`search_words`), with a dictionary of the site's glossary and
headings; the browser's worker (`literate/assets/search-worker.js`) cuts
queries into the same words.
"""

from __future__ import annotations

import json
import posixpath
import re
from pathlib import Path

import jinja2
from jinja2.utils import htmlsafe_json_dumps
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page

from literate.glossary import load_glossary
from literate.keys import glossary_path
from literate.mkdocs import search_words
from literate.mkdocs.site import Language, current_language, site_languages

CONFIG_SCRIPT = re.compile(
    r'(<script id="__config" type="application/json">)(.*?)(</script>)', re.S
)
# The worker that the pages start, beside the theme's (see search-worker.js).
WORKER = "literate-search.js"
WORKER_FILE = Path(__file__).resolve().parent.parent / "assets" / "search-worker.js"
THEME_WORKER = re.compile(r"(?:.*/)?workers/search\.[\w.-]+\.js")
# The field of an index entry that is searched but not shown, and its weight
# beside the shown text's 1 (code and parts count, less than prose).
HIDDEN = "hidden"
HIDDEN_BOOST = 0.5
_PRE = re.compile(r"<pre>(.*?)</pre>", re.S)
_TAGS = re.compile(r"<[^>]*>")


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
    settings = {
        "lang": [word("search.config.lang")],
        "separator": word("search.config.separator"),
        "pipeline": [step for step in pipeline if step],
    }
    if search_words.cut_language(lang):
        # Cut at build time: the browser needs no segmenter of its own (the
        # theme's Japanese one would cut the words again), only the
        # separator that splits on the joiner and the scripts' punctuation.
        # English's lunr, with no trimmer (it would strip every CJK letter)
        # and no stemmer: English's would cut the index's FlashAttention to
        # flashattent, which the theme's prefix query (flashattention*, not
        # stemmed: lunr leaves a wildcard term alone) then never finds.
        settings["lang"] = ["en"]
        settings["separator"] = search_words.SEPARATOR
        dropped = ("trimmer", "stemmer")
        settings["pipeline"] = [s for s in settings["pipeline"] if s not in dropped]
    return settings


def language_index(
    entries: list[dict],
    lang: Language,
    config: dict,
    cutter: search_words.Cutter | None = None,
) -> str:
    """The search index of one language: its pages, located from its folder,
    each entry's unseen blocks in its `hidden` field, and its words cut by
    `cutter` (Chinese, Japanese) with the parts of its compounds.

    Zero-width spaces (the theme's jieba word breaks) are kept only where the
    language's separator splits on them and no cutter cuts anew; elsewhere
    they would glue to the words.
    """
    keep_breaks = cutter is None and re.fullmatch(config["separator"], "\u200b")
    docs, words = [], []
    for entry in entries:
        location = entry["location"]
        if not location.startswith(lang.prefix):
            continue
        entry = dict(entry, location=location[len(lang.prefix) :])
        unseen: list[str] = []
        for field in ("title", "text"):
            value = entry[field] if keep_breaks else entry[field].replace("\u200b", "")
            entry[field] = _set_apart(value, unseen)
        hidden = " ".join(unseen)
        found: set[str] = set()
        if cutter is not None:
            for field in ("title", "text"):
                entry[field] = cutter.mark(entry[field], found)
            hidden = cutter.mark(hidden, found)
        if hidden.strip():
            entry[HIDDEN] = hidden
        docs.append(entry)
        words.append(found)
    if cutter is not None:
        parts = cutter.parts(set().union(*words))
        for entry, found in zip(docs, words, strict=True):
            extra = sorted({p for w in found for p in parts.get(w, ())})
            if extra:
                entry[HIDDEN] = " ".join([entry.get(HIDDEN, ""), *extra]).strip()
    return json.dumps(
        {"config": config, "docs": docs}, separators=(",", ":"), sort_keys=True
    )


def _set_apart(html: str, unseen: list[str]) -> str:
    """`html` without its `<pre>` blocks, whose text goes to `unseen`."""

    def take(found: re.Match) -> str:
        unseen.append(_TAGS.sub(" ", found.group(1)))
        return " "

    return _PRE.sub(take, html)


def language_cutter(root: Path, lang: str, titles: list[str]):
    """The cutter of `lang`'s index (None for a language whose words are
    apart), its dictionary made of the glossary under `root` and `titles`."""
    cut = search_words.cut_language(lang)
    if not cut:
        return None
    renderings = [term.render for term in load_glossary(glossary_path(root, lang))]
    return search_words.Cutter(cut, search_words.dictionary(cut, renderings, titles))


def point_search_at(html: str, prefix: str, where: str, worker: bool = False) -> str:
    """Make the theme's scripts treat `prefix` (e.g. "ja/") as the site root,
    and (with `worker`) start the literate worker in place of the theme's.

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
    if prefix:
        app["base"] = f"{app['base'].rstrip('/')}/{prefix}"
    if worker and THEME_WORKER.fullmatch(app.get("search") or ""):
        folder, _, name = app["search"].rpartition("/")
        app["search"] = f"{folder}/{WORKER}?worker={name}"
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

    def __init__(self, root: Path) -> None:
        self.root = root  # the project's: translations/<lang>/glossary.json
        self.env: jinja2.Environment | None = None
        # Per language: its search settings and entries, kept as each build
        # ends, written when the last one has.
        self.indexes: dict[Language, tuple[dict, list[dict]]] = {}

    def env_ready(self, env: jinja2.Environment) -> None:
        self.env = env  # the theme's templates, compiled once per build

    def worker_file(self, config: MkDocsConfig, files: Files) -> File | None:
        """The worker the pages start, beside the theme's (whose relative
        imports of its language scripts then resolve as they would)."""
        theme = next((f for f in files if THEME_WORKER.fullmatch(f.src_uri)), None)
        if theme is None:
            return None
        uri = posixpath.join(posixpath.dirname(theme.src_uri), WORKER)
        return File.generated(config, uri, abs_src_path=str(WORKER_FILE))

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
        return point_search_at(output, lang.prefix, page.file.dest_uri, worker=True)

    def keep_index(self, config: MkDocsConfig) -> None:
        # Before the search plugin writes, and before i18n merges the
        # languages into one index: these are this language's entries.
        search = config.plugins.get("material/search")
        lang = current_language(config)
        if lang.default:  # i18n builds the default language first
            self.indexes = {}
        if search is not None and self.env is not None:
            settings = search_settings(self.env, lang.code)
            settings["fields"] = dict(search.config.fields)
            settings["fields"][HIDDEN] = {"boost": HIDDEN_BOOST}
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
            mine = [e for e in entries if e["location"].startswith(lang.prefix)]
            titles = [e["title"] for e in mine]
            cutter = language_cutter(self.root, lang.code, titles)
            index = language_index(entries, lang, settings, cutter)
            path = site / lang.prefix / "search" / "search_index.json"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(index, encoding="utf-8")
