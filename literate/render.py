"""Render a parsed (and maybe translated) Page as the HTML of its body.

Each section becomes a two-column row: prose on the left (`literate.prose`),
code on the right (`literate.highlight`), and under the code what its
examples produced (`literate.outputs`). All the formulas of a page are
typeset in one KaTeX batch before any prose (`literate.page_math`), so a
LaTeX error fails the page with `path:line: KaTeX parse error: ...` before
anything is written.
"""

from __future__ import annotations

import html
import itertools
import re
from collections.abc import Mapping
from html.parser import HTMLParser

from literate.comment_math import typeset_comment_math
from literate.highlight import highlight_sections, with_translated_comments
from literate.katex import render_formulas
from literate.languages import html_lang, label
from literate.model import Page, Section
from literate.normalize import symbols
from literate.outputs import indent, output_html
from literate.page_math import render_math, warn_unclosed_math
from literate.prose import (
    MARKDOWN_EXTENSIONS,
    RenderError,
    markdown_for,
    plan,
    prose_html,
)
from literate.sanitize import attr, safe_href

__all__ = ["MARKDOWN_EXTENSIONS", "RenderError", "render_page", "render_page_tolerant"]


def render_page(
    page: Page,
    *,
    source_url: str | None = None,
    notebook_url: str | None = None,
    formulas=render_formulas,
    extensions: tuple[str, ...] = MARKDOWN_EXTENSIONS,
    links: Mapping[str, str] | None = None,
) -> str:
    """The page body: `<div class="lit-page" ...>…</div>`, deterministic.

    `source_url` and `notebook_url` (the page as a Jupyter notebook) are
    linked at the top. `formulas` renders the math (a `katex.Katex`; the
    default is a shared one); `extensions` are Python-Markdown's; `links`
    maps names the code imports from other pages to their definitions
    there (`highlight.cross_page_links`). Raises RenderError (file and
    line) on a malformed equation.
    """
    body, _ = _render(
        page,
        source_url,
        formulas,
        strict=True,
        notebook_url=notebook_url,
        extensions=extensions,
        links=links,
    )
    return body


def render_page_tolerant(
    page: Page,
    *,
    source_url: str | None = None,
    formulas=render_formulas,
    extensions: tuple[str, ...] = MARKDOWN_EXTENSIONS,
) -> tuple[str, tuple[RenderError, ...]]:
    """Like `render_page`, but a formula KaTeX rejects is shown as escaped TeX.

    For rendering foreign sources (the benchmark); returns the errors it
    tolerated. The site build always uses `render_page`.
    """
    return _render(page, source_url, formulas, strict=False, extensions=extensions)


def _render(
    page: Page,
    source_url: str | None,
    formulas,
    *,
    strict: bool,
    notebook_url: str | None = None,
    extensions: tuple[str, ...] = MARKDOWN_EXTENSIONS,
    links: Mapping[str, str] | None = None,
):
    md = markdown_for(extensions)
    if page.lang == "en":  # once per source, not once per language
        warn_unclosed_math(page)
    proses = [plan(section) for section in page.sections]
    flat = [p for plan in proses for p in plan.values()]
    typeset = render_math(page, flat, formulas, strict=strict)
    names: dict[str, str] = {}
    for section in page.sections:
        for name in section.defines:
            names.setdefault(name, section.anchor)
    code = highlight_sections(page.sections, names, links)  # while KaTeX typesets
    if page.comments:
        code = with_translated_comments(code, page.sections, page.comments)
    math, tolerated = typeset()
    code = typeset_comment_math(code, page, formulas)  # after the prose's batch
    parts = [
        f'<div class="lit-page" lang="{attr(html_lang(page.lang))}"'
        f' data-source="{attr(page.source)}"{_symbols_attr(page)}>'
    ]
    links = []
    if source_url:
        text = label(page.lang, "source") + label(page.lang, "colon") + page.source
        links.append(f"{_link_start(source_url)}{html.escape(text)}</a>")
    if notebook_url:
        # `download`: a browser would otherwise show the notebook's JSON.
        name = notebook_url.rsplit("/", 1)[-1]
        text = label(page.lang, "notebook") + label(page.lang, "colon") + name
        links.append(f"{_link_start(notebook_url, ' download')}{html.escape(text)}</a>")
    if any("original" in plan for plan in proses):
        links.append(_originals_switch(page.lang))
    if links:
        parts.append('<p class="lit-source">' + " · ".join(links) + "</p>")
    headings = _Headings(page)
    sections = [
        headings.add(
            section, {role: prose_html(p, math, md) for role, p in plan.items()}
        )
        for section, plan in zip(page.sections, proses, strict=True)
    ]
    sections = headings.with_contents(sections, label(page.lang, "contents"))
    for section, docs in zip(page.sections, sections, strict=True):
        parts.append(_section_html(page, section, docs, code))
    parts.append("</div>")
    return "\n".join(parts) + "\n", tuple(tolerated)


def _symbols_attr(page: Page) -> str:
    """The page's `%symbols` bindings for literate.js: `data-symbols` as
    `tex=name` pairs ("Q=query dk=d_k"), each symbol as the script reads it
    off KaTeX's glyphs (its letters, without `_`, `^`, braces or spaces)."""
    pairs = {}
    for section in page.sections:
        for tex, name in symbols(section.english or section.docs)[1]:
            pairs.setdefault(re.sub(r"[_^{}\s]", "", tex), name)
    if not pairs:
        return ""
    text = " ".join(f"{tex}={name}" for tex, name in pairs.items())
    return f' data-symbols="{attr(text)}"'


# --- the page --------------------------------------------------------------------


def _originals_switch(lang: str) -> str:
    """One switch for the page: while it is checked, the stylesheet shows every
    section's English original (no script needed)."""
    return (
        '<input type="checkbox" id="lit-originals" class="lit-toggle">'
        f'<label for="lit-originals">{html.escape(label(lang, "originals"))}</label>'
    )


def _section_html(page, section, docs, code) -> str:
    anchor = attr(section.anchor)
    permalink = attr(label(page.lang, "permalink"))
    parts = [
        f'<section class="lit-section" id="{anchor}" data-state="{section.state}">',
        '<div class="lit-docs">',
        f'<a class="lit-permalink" href="#{anchor}" title="{permalink}"'
        f' aria-label="{permalink}" data-search-exclude>¶</a>',
    ]
    if "original" in docs:
        # A small control beside the permalink; the English shows below the
        # prose while it is checked (CSS: no script needed).
        name = attr(label(page.lang, "original"))
        short = html.escape(label(page.lang, "original_short"))
        parts.append(
            f'<input type="checkbox" id="lit-o-{anchor}"'
            f' class="lit-toggle lit-original-toggle" aria-label="{name}">'
            f'<label class="lit-original-control" for="lit-o-{anchor}"'
            f' title="{name}" data-search-exclude>{short}</label>'
        )
    main = docs["main"]
    if section.state in ("untranslated", "stale"):
        notice = html.escape(label(page.lang, section.state))
        parts.append(f'<p class="lit-notice lit-{section.state}">{notice}</p>')
        parts.append(f'<div class="lit-prose" lang="en">{main}</div>')
    else:
        parts.append(f'<div class="lit-prose"{_block_id(main, anchor)}>{main}</div>')
    if "original" in docs:
        # Its headings are plain bold text: the page's outline is the
        # translation's alone.
        original = _HEADING_TAG_RE.sub(_heading_as_text, docs["original"])
        block = _block_id(original, anchor, "original")
        parts.append(f'<div class="lit-original"{block} lang="en">{original}</div>')
    parts.append("</div>")
    parts.append(_code_html(page, section, code))
    parts.append("</section>")
    return "\n".join(parts)


_HEADING_TAG_RE = re.compile(r"<h([1-6])([^>]*)>(.*?)</h\1>", re.S)


def _heading_as_text(match: re.Match[str]) -> str:
    return f'<p class="lit-heading"><strong>{match.group(3)}</strong></p>'


class _Headings:
    """The ids of the prose's headings, and the page's list of its sections.

    A heading's id is the slug of its English text (`## Shapes` is `#shapes`
    in every language), made unique on the page: the sections' anchors and
    the line numbers' ids come first, then a repeated slug gets `-2`, `-3`.
    The ids also let mkdocs-material's search link to the heading.
    """

    def __init__(self, page: Page):
        self.taken = {s.anchor for s in page.sections}
        self.taken |= {f"L{line.number}" for s in page.sections for line in s.code}
        self.taken |= {f"{s.anchor}-{r}" for s in page.sections for r in _ROLES}
        self.taken |= {
            f"{s.anchor}-output-{n}"
            for s in page.sections
            for n in range(len(s.outputs))
        }
        self.suffix: dict[str, int] = {}  # slug -> the last `-N` tried
        self.listed: list[tuple[str, str]] = []  # (href, heading HTML) of `##`s

    def add(self, section: Section, docs: dict[str, str]) -> dict[str, str]:
        english = _HEADING_TAG_RE.findall(docs.get("original", docs["main"]))
        found = itertools.count()

        def add_id(match: re.Match[str]) -> str:
            n = next(found)
            text = english[n][2] if n < len(english) else match.group(3)
            slug = _slug(_heading_text(text))
            unique = self._unique(slug)
            # Only the English's headings are listed: a translation that adds
            # `## …` (the check refuses it) cannot grow the section list.
            if match.group(1) == "2" and n < len(english):
                # The list links to the section where the heading opens it.
                opens = match.start() == 0 and slug == section.anchor
                href = section.anchor if opens else unique
                self.listed.append((href, match.group(3)))
            level = match.group(1)
            return f'<h{level} id="{attr(unique)}">{match.group(3)}</h{level}>'

        return {**docs, "main": _HEADING_TAG_RE.sub(add_id, docs["main"])}

    def _unique(self, slug: str) -> str:
        slug = slug or "section"
        # `taken` only grows, so the search resumes at the last suffix tried
        # for this slug: linear in the number of headings that repeat it.
        n = self.suffix.get(slug, 1)
        unique = slug if n == 1 else f"{slug}-{n}"
        while unique in self.taken:
            n += 1
            unique = f"{slug}-{n}"
        self.suffix[slug] = n
        self.taken.add(unique)
        return unique

    def with_contents(self, sections: list[dict], name: str) -> list[dict]:
        """A list of the `##` sections under the page's title (its first `h1`),
        or above the first section when there is no title."""
        if len(self.listed) < 2:
            return sections
        items = "".join(
            f'<li><a href="#{attr(href)}">{text}</a></li>' for href, text in self.listed
        )
        nav = (
            f'<nav class="lit-contents" aria-label="{attr(name)}"'
            f" data-search-exclude><ol>{items}</ol></nav>"
        )
        for i, docs in enumerate(sections):
            end = docs["main"].find("</h1>")
            if end >= 0:
                end += len("</h1>")
                main = docs["main"][:end] + nav + docs["main"][end:]
                return sections[:i] + [{**docs, "main": main}] + sections[i + 1 :]
        first = sections[0]
        return [{**first, "main": nav + first["main"]}] + sections[1:]


class _TextOf(HTMLParser):
    """The words of a heading's HTML; a formula is its TeX."""

    def __init__(self):
        super().__init__()
        self.parts: list[str] = []
        self.hidden = 0  # depth inside KaTeX's glyphs or MathML
        self.tex = False

    def handle_starttag(self, tag, attrs):
        if tag == "annotation":
            self.tex = True
        elif self.hidden or tag == "math" or ("aria-hidden", "true") in attrs:
            self.hidden += 1

    def handle_endtag(self, tag):
        if tag == "annotation":
            self.tex = False
        elif self.hidden:
            self.hidden -= 1

    def handle_data(self, data):
        if self.tex or not self.hidden:
            self.parts.append(data)


def _heading_text(heading_html: str) -> str:
    parser = _TextOf()
    parser.feed(heading_html)
    parser.close()
    return "".join(parser.parts)


def _slug(text: str) -> str:
    """`Why scale by $\\sqrt{d_k}$` -> `why-scale-by-sqrt-d_k`: lower case, the
    words (any script) joined by `-`, TeX's backslashes and braces dropped."""
    return "-".join(re.sub(r"[^\w]+", " ", text.lower()).split())


def _code_html(page, section, code) -> str:
    rows, previous = [], None
    for line in section.code:
        gap = previous is not None and line.number != previous + 1
        cls = "lit-line lit-gap" if gap else "lit-line"
        n = line.number
        rows.append(
            f'<span class="{cls}"{indent(line.text)}>'
            f'<a id="L{n}" class="lit-ln" href="#L{n}"'
            f" data-search-exclude>{n}</a>"
            f"{code.get(n, '')}</span>"
        )
        previous = n
    parts = []
    if rows:
        rows_html = "\n".join(rows)
        parts.append(
            f'<div class="highlight"><pre><code>{rows_html}</code></pre></div>'
        )
    # An image's narrow variant, the output after it, goes into its <figure>.
    outputs = [*enumerate(section.outputs), (0, None)]
    parts += [
        output_html(page, output, f"{section.anchor}-output-{n}", narrow)
        for (n, output), (_, narrow) in itertools.pairwise(outputs)
        if output.variant != "narrow"
    ]
    # Empty when there is no code: the column still holds its width (CSS).
    return '<div class="lit-code">' + "\n".join(parts) + "</div>"


_ROLES = ("prose", "original")


def _block_id(body: str, anchor: str, role: str = "prose") -> str:
    """An id for a block that holds a code block, so that the theme, which
    names each code block after its nearest id, names no two alike."""
    return f' id="{attr(anchor)}-{role}"' if "<pre" in body else ""


def _link_start(url: str, extra: str = "") -> str:
    return f'<a href="{attr(safe_href(url) or "#")}"{extra}>'
