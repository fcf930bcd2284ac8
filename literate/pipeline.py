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

import glob
from collections.abc import Mapping
from pathlib import Path, PurePosixPath

import nbformat

from literate.cache_key import PACKAGES, example_words
from literate.directives import page_examples
from literate.execute import TIMEOUT, execute_page
from literate.highlight import cross_page_links  # noqa: F401 (for the plugin)
from literate.katex import Katex, dist_folder
from literate.model import Page, SourceError
from literate.notebook import page_to_notebook
from literate.parse import parse
from literate.render import MARKDOWN_EXTENSIONS, render_page, render_page_tolerant
from literate.textfile import inside, project_glob, read_utf8
from literate.translate import translate_page
from literate.translations.check import Term, load_glossary
from literate.translations.layout import figure_keys, glossary_path, table_path
from literate.translations.status import status_in, status_markdown
from literate.translations.tables import load_table
from literate.words import checked

SOURCE_LANGUAGE = "en"  # the language the comments of the sources are in
KATEX = ""  # the plugin's default `katex` option: the packaged KaTeX
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
        self._english: dict[str, Page] = {}
        self._executed: dict[tuple[str, str], Page] = {}
        self._glossaries: dict[str, tuple[Term, ...]] = {}

    def read(self, source: str) -> str:
        """The text of `source` (a path relative to the root).

        Raises a FileRefused (a ValueError, one line naming the source) for a
        byte that is not UTF-8 (its line and byte offset), a path or symlink
        leading out of the root, or anything but a regular file of sane size.
        """
        return read_utf8(inside(self.root, source), source)

    def english(self, source: str) -> Page:
        """`source` parsed, with its examples' outputs (run or cached)."""
        if source not in self._english:
            page = parse(self.read(source), source)
            if self.run_examples:
                page = execute_page(
                    page,
                    self.root / source,
                    root=self.root,
                    timeout=self.timeout,
                    packages=self.packages,
                )
            self._english[source] = page
        return self._english[source]

    def page(self, source: str, lang: str = SOURCE_LANGUAGE) -> Page:
        """`source` in `lang`, from its table and the language's glossary.

        Without a table every section shows its English, marked untranslated.
        The examples that draw `tr` words run again in `lang` (see execute).
        """
        english = self.english(source)
        if lang == SOURCE_LANGUAGE:
            return english
        path = table_path(self.root, lang, source)
        table = load_table(path) if path.exists() else {}
        if self.run_examples:
            english = self._in_language(source, lang, table)
        # The figures' words and alt texts are not prose (nor old prose).
        figures = set(figure_keys(self.root, english))
        prose = {k: v for k, v in table.items() if k not in figures}
        return translate_page(english, lang, prose, self.glossary(lang))

    def _in_language(self, source: str, lang: str, table: dict[str, str]) -> Page:
        """The English page with its examples' outputs for `lang`."""
        if (source, lang) not in self._executed:
            words = checked(table, self.glossary(lang))
            self._executed[source, lang] = execute_page(
                self.english(source),
                self.root / source,
                root=self.root,
                timeout=self.timeout,
                packages=self.packages,
                lang=lang,
                words=words,
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
            path = table_path(self.root, page.lang, page.source)
            table = checked(load_table(path), self.glossary(page.lang))
            words = (
                {
                    w: table[w]
                    for e in page_examples(page)
                    if not e.notebook_only
                    for w in example_words(self.root, page.source, e.expr)
                    if w in table
                }
                if path.exists()
                else {}
            )
        return nbformat.writes(page_to_notebook(page, words))

    def forget(self, source: str | None = None) -> None:
        """Read `source` (or every source, and the glossaries) again next time."""
        if source is None:
            self._english.clear()
            self._executed.clear()
            self._glossaries.clear()
        else:
            self._english.pop(source, None)
            for lang_key in [k for k in self._executed if k[0] == source]:
                del self._executed[lang_key]

    def close(self) -> None:
        """Stop the KaTeX process (the next formula starts another)."""
        self.formulas.close()


def status_page(root: Path, sources: list[str]) -> str:
    """The translation status tables as markdown (the site's status page)."""
    return status_markdown(root, tuple(sources))


def status_page_in(status: str, lang: str) -> str:
    """The status page's markdown with its words in `lang`."""
    return status_in(status, lang)


def find_sources(root: Path, patterns: list[str]) -> list[str]:
    """The sources that `patterns` name under `root`, in order, each once.

    A pattern is a file (`mha.py`), a folder (every `.py` file under it) or
    a glob (`labml_nn/**/*.py`). Raises FileNotFoundError naming a pattern
    that matches nothing, and OutsideProject (a ValueError) naming a pattern,
    or a file it matches, that leads out of `root`: `../x.py`, an absolute
    path, a symlinked file or folder whose target is elsewhere. Nothing of
    the outside target is read or quoted.
    """
    found: dict[str, None] = {}
    for pattern in patterns:
        path = inside(root, pattern)
        if glob.has_magic(pattern):
            matches = project_glob(root, pattern)
        elif path.is_dir():
            matches = sorted(p.relative_to(root).as_posix() for p in path.rglob("*.py"))
        else:
            matches = [pattern] if path.is_file() else []
        matches = [m for m in matches if inside(root, m, m).is_file()]
        if not matches:
            raise FileNotFoundError(f"{pattern!r}: no such source under {root}")
        found.update((PurePosixPath(m).as_posix(), None) for m in matches)
    return list(found)


def page_path(source: str, base: str = "") -> str:
    """A source's page, without extension, relative to the site root.

    The path follows the source's, relative to `base`: `pkg/mod.py` is
    `pkg/mod`, and a package's `pkg/__init__.py` is its `pkg/index`.
    """
    path = PurePosixPath(source)
    if base:
        path = path.relative_to(base)
    if path.name == "__init__.py":
        return (path.parent / "index").as_posix()
    return path.with_suffix("").as_posix()
