"""The `literate` plugin's options, as written under `plugins:` in mkdocs.yml.

Every path is relative to the folder that holds mkdocs.yml (the repository
root), so the same file works from any working directory.
"""

from __future__ import annotations

from mkdocs.config import config_options as opt
from mkdocs.config.base import Config


class LiterateConfig(Config):
    # The literate sources; each becomes one page per language, named after
    # its stem: mha.py -> mha/ (English), ja/mha/, zh/mha/.
    sources = opt.ListOfItems(opt.Type(str), default=["mha.py", "train.py"])

    # The generated page that shows the translation status tables;
    # "" leaves it out.
    status_page = opt.Type(str, default="translation-status.md")

    # Where a page's "source" link points. "{path}" is replaced by the
    # source's path, e.g. "https://github.com/ORG/REPO/blob/main/{path}".
    # Empty: the sources are copied into the site under `source/` and the
    # page links to that copy, so the link works offline too.
    source_url = opt.Type(str, default="")

    # The KaTeX distribution whose CSS and fonts the math needs; it is
    # copied into the site under assets/katex/ so no page loads a CDN.
    katex = opt.Type(str, default="node_modules/katex/dist")
