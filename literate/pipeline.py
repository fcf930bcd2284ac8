"""The stages composed once: read, parse, execute, translate, render, notebook.

    pipeline = Pipeline(root)                  # a repository (or site) folder
    english = pipeline.english("mha.py")       # parsed, its examples' outputs
    page = pipeline.page("mha.py", "ja")       # translated with the glossary
    body = pipeline.html(page)                 # the HTML the site embeds
    notebook = pipeline.notebook(page)         # the .ipynb text

The mkdocs plugin, the command line, the benchmark and the tests all make
pages this way, so `literate render` shows what the site shows. The pipeline
owns what the stages would otherwise keep process-wide: the parsed and
executed English pages (one per source, until `forget`), the glossaries
it read, and the KaTeX renderer with its engine and cache.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import nbformat

from literate.cache_key import PACKAGES, Reach
from literate.execute import TIMEOUT, execute_page
from literate.glossary import Term, load_glossary
from literate.highlight import cross_page_links  # noqa: F401 (for the plugin)
from literate.katex import Katex, dist_folder
from literate.keys import (
    SourceKeys,
    example_reaches,
    glossary_path,
    keys_of,
    table_path,
)
from literate.model import Page, SourceError
from literate.notebook import page_to_notebook
from literate.parse import parse
from literate.render import MARKDOWN_EXTENSIONS, render_page, render_page_tolerant
from literate.sources import find_sources, page_path  # noqa: F401 (plugin)
from literate.status import status_rows, status_table  # noqa: F401 (plugin)
from literate.textfile import inside, read_utf8
from literate.translate import translate_page
from literate.translation import Translation, load_translation

SOURCE_LANGUAGE = "en"  # the language the comments of the sources are in
KATEX = ""  # the plugin's default `katex_dist` option: the packaged KaTeX
# What a stage raises about its input; the messages start with `file:line:`.
ERRORS = (SourceError, ValueError, OSError)


class Pipeline:
    """Makes the pages of the literate sources under `root`.

    `run_examples`: run the `#|` examples (else pages show no outputs);
    `katex`: the KaTeX distribution folder, relative to `root` ("": the one
    in this package); `packages`:
    installed packages whose versions count for the examples' cache key;
    `timeout`: seconds for all the pending examples of one page;
    `extensions`: the Python-Markdown extensions of the prose.
    """

    def __init__(
        self,
        root: Path | str,
        *,
        run_examples: bool = True,
        katex: str = KATEX,
        packages: tuple[str, ...] = PACKAGES,
        timeout: float = TIMEOUT,
        extensions: tuple[str, ...] = MARKDOWN_EXTENSIONS,
    ):
        self.root = Path(root).resolve()
        self.run_examples = run_examples
        self.packages = tuple(packages)
        self.timeout = timeout
        self.extensions = tuple(extensions)
        self.formulas = Katex.for_dist(dist_folder(self.root, katex))
        self._parsed: dict[str, Page] = {}
        self._reaches: dict[str, dict[int, Reach]] = {}
        self._english: dict[str, Page] = {}
        self._translations: dict[tuple[str, str], Translation] = {}
        self._executed: dict[tuple[str, str], Page] = {}
        self._glossaries: dict[str, tuple[Term, ...]] = {}

    def read(self, source: str) -> str:
        """The text of `source` (a path relative to the root).

        Raises a FileRefused (a ValueError, one line naming the source) for a
        byte that is not UTF-8 (its line and byte offset), a path or symlink
        leading out of the root, or anything but a regular file of sane size.
        """
        return read_utf8(inside(self.root, source), source)

    def parsed(self, source: str) -> Page:
        """`source` parsed, without outputs (read and parsed once)."""
        if source not in self._parsed:
            self._parsed[source] = parse(self.read(source), source)
        return self._parsed[source]

    def reaches(self, source: str) -> dict[int, Reach]:
        """What each example of `source` (by its line) can run, and the `tr`
        words among it (`cache_key.reach`): one walk of the code per
        example, for its cache key, its words and the source's keys."""
        if source not in self._reaches:
            self._reaches[source] = example_reaches(self.root, self.parsed(source))
        return self._reaches[source]

    def keys(self, source: str) -> SourceKeys:
        """The translation keys of `source` today, by kind."""
        return keys_of(self.parsed(source), self.reaches(source))

    def english(self, source: str) -> Page:
        """`source` parsed, with its examples' outputs (run or cached)."""
        if source not in self._english:
            page = self.parsed(source)
            if self.run_examples:
                page = execute_page(
                    page,
                    self.root / source,
                    root=self.root,
                    timeout=self.timeout,
                    packages=self.packages,
                    reaches=self.reaches(source),
                )
            self._english[source] = page
        return self._english[source]

    def translation(self, source: str, lang: str) -> Translation:
        """`source`'s table in `lang`, read and checked once (`Translation`)."""
        if (source, lang) not in self._translations:
            self._translations[source, lang] = load_translation(
                table_path(self.root, lang, source),
                lang,
                self.keys(source),
                self.glossary(lang),
            )
        return self._translations[source, lang]

    def page(self, source: str, lang: str = SOURCE_LANGUAGE) -> Page:
        """`source` in `lang`, from its table and the language's glossary.

        Without a table every section shows its English, marked untranslated.
        The examples that draw `tr` words run again in `lang` (see execute).
        """
        english = self.english(source)
        if lang == SOURCE_LANGUAGE:
            return english
        translation = self.translation(source, lang)
        if self.run_examples:
            english = self._in_language(source, translation)
        keys = translation.keys
        return translate_page(
            english,
            lang,
            translation.table,
            translation.glossary,
            shown=translation.shown,
            known=keys.alts + keys.words,
        )

    def _in_language(self, source: str, translation: Translation) -> Page:
        """The English page with its examples' outputs for the translation's
        language."""
        lang = translation.lang
        if (source, lang) not in self._executed:
            self._executed[source, lang] = execute_page(
                self.english(source),
                self.root / source,
                root=self.root,
                timeout=self.timeout,
                packages=self.packages,
                lang=lang,
                words=translation.shown,
                reaches=self.reaches(source),
            )
        return self._executed[source, lang]

    def glossary(self, lang: str) -> tuple[Term, ...]:
        if lang not in self._glossaries:
            path = glossary_path(self.root, lang)
            self._glossaries[lang] = load_glossary(path) if path.exists() else ()
        return self._glossaries[lang]

    def html(
        self,
        page: Page,
        *,
        source_url: str | None = None,
        notebook_url: str | None = None,
        links: Mapping[str, str] | None = None,
    ) -> str:
        """The page's body; a formula KaTeX rejects is an error (file:line).

        `links`: names the code imports from other pages, to their links."""
        return render_page(
            page,
            source_url=source_url,
            notebook_url=notebook_url,
            formulas=self.formulas,
            extensions=self.extensions,
            links=links,
        )

    def tolerant_html(self, page: Page) -> tuple[str, tuple[SourceError, ...]]:
        """The body with rejected formulas shown as TeX, and those errors."""
        return render_page_tolerant(
            page, formulas=self.formulas, extensions=self.extensions
        )

    def notebook(self, page: Page) -> str:
        """The page as the text of a Jupyter notebook.

        A translated page's notebook gives `tr` the words its examples draw
        in the page's language (see `literate.words`).
        """
        words = {}
        if page.lang != SOURCE_LANGUAGE:
            translation = self.translation(page.source, page.lang)
            reaches = self.reaches(page.source).values()
            words = translation.words(w for r in reaches for w in r.words)
        return nbformat.writes(page_to_notebook(page, words))

    def forget(self, source: str | None = None) -> None:
        """Read `source` (or every source, and the glossaries) again next time."""
        if source is None:
            for memo in self._memos():
                memo.clear()
            self._glossaries.clear()
        else:
            for memo in self._memos():
                for memo_key in [k for k in memo if _of_source(k, source)]:
                    del memo[memo_key]

    def _memos(self) -> tuple[dict, ...]:
        """What the pipeline keeps per source (and per language)."""
        return (
            self._parsed,
            self._reaches,
            self._english,
            self._translations,
            self._executed,
        )

    def close(self) -> None:
        """Stop the KaTeX process (the next formula starts another)."""
        self.formulas.close()


def _of_source(memo_key: str | tuple[str, str], source: str) -> bool:
    """Whether a memo's key (a source, or a source and a language) is `source`'s."""
    return memo_key == source or (isinstance(memo_key, tuple) and memo_key[0] == source)
