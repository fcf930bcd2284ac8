"""The `literate` plugin's options, as written under `plugins:` in mkdocs.yml.

Every path is relative to the folder that holds mkdocs.yml (the project's
root), so the same file works from any working directory. Only `sources` must
be given:

    plugins:
      - literate:
          sources: [labml_nn/**/*.py]
          base: labml_nn
"""

from __future__ import annotations

from mkdocs.config import config_options as opt
from mkdocs.config.base import Config, ValidationError

from literate.cache_key import PACKAGES
from literate.execute import TIMEOUT
from literate.pipeline import KATEX
from literate.render import MARKDOWN_EXTENSIONS


class Renamed(opt.BaseConfigOption):
    """An option that has a new name: given, it fails the build in one line
    that names the new one (its meaning did not change, its name did)."""

    def __init__(self, new: str):
        super().__init__()
        self.new = new
        self.default = None

    def run_validation(self, value):
        if value is None:
            return None
        raise ValidationError(f"renamed: write `{self.new}: {value!r}` instead")


class LiterateConfig(Config):
    # The literate sources: files (`mha.py`), folders (every .py file under
    # them) or globs (`pkg/**/*.py`). Each becomes one page per language,
    # whose path follows the source's: pkg/mod.py -> pkg/mod.html,
    # pkg/__init__.py -> pkg/index.html (ja/pkg/mod.html, ... with i18n).
    sources = opt.ListOfItems(opt.Type(str))

    # The folder that page paths are relative to: with `base: labml_nn`,
    # labml_nn/transformers/mha.py becomes transformers/mha.html.
    # Default "": the project's root.
    base = opt.Type(str, default="")

    # The generated page that shows the translation status tables, e.g.
    # "translation-status.md"; "" (the default) leaves it out.
    status_page = opt.Type(str, default="")

    # Where a page's "source" link points. "{path}" is replaced by the
    # source's path, e.g. "https://github.com/ORG/REPO/blob/main/{path}".
    # Empty: the sources are copied into the site under `source/` and the
    # page links to that copy, so the link works offline too.
    source_url = opt.Type(str, default="")

    # The KaTeX distribution (a folder with katex.min.js, katex.min.css and
    # fonts/) that typesets the math in-process and whose CSS and fonts are
    # copied into the site under assets/katex/, so no page loads a CDN.
    # Default "": the one shipped in the literate package (no Node needed).
    katex_dist = opt.Type(str, default=KATEX)

    # Run the `#|` examples of the sources and show their outputs.
    run_examples = opt.Type(bool, default=True)

    # Installed packages whose versions are part of every example's cache
    # key: a new version re-runs the examples.
    cache_key_packages = opt.ListOfItems(opt.Type(str), default=list(PACKAGES))

    # Seconds that all the pending examples of one page may take together.
    examples_timeout = opt.Type((int, float), default=TIMEOUT)

    # Python-Markdown extensions for the prose (raw HTML stays off).
    markdown_extensions = opt.ListOfItems(
        opt.Type(str), default=list(MARKDOWN_EXTENSIONS)
    )

    # With mkdocs-static-i18n and mkdocs-material: one search index per
    # language, each split into words the way its language needs (Japanese
    # and Chinese too), which each language's pages search; and the language
    # selector's links on home pages repaired. Set i18n's
    # `reconfigure_search: false` beside it. Default false: the themes' and
    # i18n's own search.
    per_language_search = opt.Type(bool, default=False)

    # With mkdocs-static-i18n: a 404 page per language (`404.html`,
    # `ja/404.html`, ...), each in its language's words (the heading and a
    # link home) and with its navigation; without it the last language built
    # leaves its page at the root alone. Needs a theme whose templates have a
    # `main.html` with a `content` block (material, mkdocs). Default false.
    per_language_404 = opt.Type(bool, default=False)

    # The names these options had before: a build that gives one stops and
    # says the new name.
    katex = Renamed("katex_dist")
    packages = Renamed("cache_key_packages")
    timeout = Renamed("examples_timeout")
