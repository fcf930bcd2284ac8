"""Render a parsed (and maybe translated) Page as the HTML of its body.

Each section becomes a two-column row: prose on the left, code on the right.
Prose goes through four steps so that markdown never sees, and can never
mangle, the spans that `spans.extract` protects:

1. `extract(docs)`: math, code, link targets and raw HTML become `_^_N_^_`;
2. each placeholder becomes a private-use token (`\\ue000N\\ue001`), which
   markdown leaves alone (the `_` and `^` of `_^_N_^_` could turn into
   emphasis);
3. Python-Markdown renders the rest, with its raw-HTML handling removed so
   any `<` left in the text is escaped;
4. the tokens are put back as rendered spans: KaTeX for math, escaped
   `<code>` for code, a checked `href` for link targets, an allowed and
   rebuilt tag for raw HTML.

A translated section may only use spans that its English original has; any
other span is shown as escaped text. All the formulas of a page are rendered
in one KaTeX batch before any prose, so a LaTeX error fails the page with
`path:line: KaTeX parse error: ...` before anything is written.
"""

from __future__ import annotations

import functools
import html
import itertools
import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass
from html.parser import HTMLParser

import markdown

from literate.data import script_text
from literate.figures import img_tag, shown_size
from literate.highlight import (
    highlight_block,
    highlight_sections,
    with_translated_comments,
)
from literate.katex import KatexUnavailable, Rendered, render_formulas
from literate.labels import label
from literate.model import Output, Page, Section
from literate.narrow import NARROW_DEFAULT_PX, narrow_below
from literate.parse import SourceError
from literate.sanitize import VOID, clean_tag, link_target, safe_href, safe_src
from literate.spans import PLACEHOLDER_RE, Span, extract, normalize, symbols
from literate.unclosed import unclosed_math

# mkdocs counts the warnings of its loggers (`--strict` fails on any); outside
# mkdocs, logging prints them on stderr.
LOG = logging.getLogger("mkdocs.plugins.literate")


class RenderError(SourceError):
    """A page cannot be rendered: names the source file and line."""


MATH = ("math", "display_math")
IMAGE_URLS = ("data:image/svg+xml;base64,", "data:image/png;base64,")
MARKDOWN_EXTENSIONS = ("tables", "sane_lists", "admonition", "def_list")
# Characters the pipeline uses as markers; stray ones in prose become U+FFFD.
_RESERVED = re.compile("[\ue000\ue001\x02\x03]")
_TOKEN_RE = re.compile("\ue000(\\d+)\ue001")
_BLOCK_TOKEN_RE = re.compile("<p>\ue000(\\d+)\ue001</p>")
# A token and the punctuation right after it: an inline formula keeps the
# comma or full stop that follows it on its line ("1," never "1⏎,").
_TOKEN_PUNCT_RE = re.compile("\ue000(\\d+)\ue001([,.;:!?)，。、；：！？）」』]*)")
_SPLIT_TAGS_RE = re.compile(r"(<[^>]*>)")
_URL_ATTR_RE = re.compile(r'\s(href|src)="([^"]*)"')
# Search indexes the prose, not KaTeX's glyph boxes or the line numbers.
_KATEX_OPEN = '<span class="katex">'
_KATEX_OPEN_EXCLUDED = '<span class="katex" data-search-exclude>'


@dataclass(frozen=True)
class _Prose:
    """One piece of markdown to render, and which of its spans it may use."""

    section: Section
    text: str
    spans: tuple[Span, ...]
    template: str  # the markdown with `_^_N_^_` placeholders
    allowed: frozenset[Span] | None  # None: the English source, all spans allowed
    # For span i: where its placeholder is in `template` and where the span
    # starts in `text`.
    places: tuple[tuple[int, int, int], ...]

    def permits(self, span: Span) -> bool:
        return self.allowed is None or span in self.allowed


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
    md = _markdown(extensions)
    if page.lang == "en":  # once per source, not once per language
        _warn_unclosed_math(page)
    proses = [_plan(section) for section in page.sections]
    flat = [p for plan in proses for p in plan.values()]
    typeset = _render_math(page, flat, formulas, strict=strict)
    names: dict[str, str] = {}
    for section in page.sections:
        for name in section.defines:
            names.setdefault(name, section.anchor)
    code = highlight_sections(page.sections, names, links)  # while KaTeX typesets
    if page.comments:
        code = with_translated_comments(code, page.sections, page.comments)
    math, tolerated = typeset()
    parts = [
        f'<div class="lit-page" lang="{_attr(html_lang(page.lang))}"'
        f' data-source="{_attr(page.source)}"{_symbols_attr(page)}>'
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
            section, {role: _prose_html(p, math, md) for role, p in plan.items()}
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
    return f' data-symbols="{_attr(text)}"'


def _plan(section: Section) -> dict[str, _Prose]:
    """The prose a section shows: "main", and "original" for a translation."""
    english = _clean(symbols(section.english or section.docs)[0])
    if section.state == "translated":
        # The translate stage fills placeholders from the normalised English,
        # where a code span wrapped over two comment lines has a space for
        # the line break: both spellings of a span are the English's own.
        allowed = frozenset(extract(english).spans + extract(normalize(english)).spans)
        return {
            "main": _prose(section, _clean(symbols(section.docs)[0]), allowed),
            "original": _prose(section, english, None),
        }
    if section.state in ("untranslated", "stale"):
        return {"main": _prose(section, english, None)}
    return {"main": _prose(section, english, None)}


def _prose(section: Section, text: str, allowed) -> _Prose:
    template = extract(text)
    places = _places(text, template.text, template.spans)
    return _Prose(section, text, template.spans, template.text, allowed, places)


def _places(text: str, template: str, spans: tuple[Span, ...]):
    """Match each span to its placeholder by walking text and template together.

    A `_^_N_^_` typed in the prose itself is text: it is a placeholder only
    where the text holds span N at that point.
    """
    places, shift = [], 0
    for match in PLACEHOLDER_RE.finditer(template):
        index, start = int(match.group(1)), match.start() + shift
        if index == len(places) and text.startswith(spans[index].text, start):
            places.append((match.start(), match.end(), start))
            shift += len(spans[index].text) - len(match.group(0))
    return tuple(places)


def _clean(text: str) -> str:
    return _RESERVED.sub("\ufffd", text)


def _formula(span: Span) -> tuple[str, bool]:
    if span.kind == "display_math" and span.text.startswith("$$"):
        return (span.text[2:-2].strip(), True)
    if span.kind == "display_math":  # a bare `\begin{align}…\end{align}`
        return (span.text, True)
    return (span.text[1:-1], False)


def _render_math(page: Page, flat: list[_Prose], formulas, *, strict: bool):
    """Send every permitted formula of the page as one batch; the returned
    function waits for it and gives (results, tolerated errors).

    A `formulas` with `send` (a `katex.Katex`) typesets while the caller
    works; a plain function is called at once.
    """
    wanted = [
        (prose, i, _formula(span))
        for prose in flat
        for i, span in enumerate(prose.spans)
        if span.kind in MATH and prose.permits(span)
    ]
    if not wanted:
        return lambda: ({}, [])
    send = getattr(formulas, "send", None)
    try:
        if send is not None:
            waiting = send(formula for _, _, formula in wanted)
        else:
            done = formulas(formula for _, _, formula in wanted)
            waiting = lambda: done  # noqa: E731
    except KatexUnavailable as error:
        prose, i, _ = wanted[0]
        raise RenderError(page.source, _line_of(prose, i), str(error)) from None
    return lambda: _check_math(page, wanted, waiting, strict=strict)


def _check_math(page: Page, wanted: list, waiting, *, strict: bool):
    try:
        results = waiting()
    except KatexUnavailable as error:
        prose, i, _ = wanted[0]
        raise RenderError(page.source, _line_of(prose, i), str(error)) from None
    tolerated, warned = [], set()
    for prose, i, formula in wanted:
        if results[formula].error:
            error = RenderError(page.source, _line_of(prose, i), results[formula].error)
            if strict:
                raise error
            tolerated.append(error)
        refused = (_line_of(prose, i), results[formula].refused_message())
        if refused[1] and refused not in warned:
            warned.add(refused)
            LOG.warning("%s:%d: %s", page.source, *refused)
    return results, tolerated


def _warn_unclosed_math(page: Page) -> None:
    """A warning (file:line) for each `$$` or TeX `$` that is never closed."""
    for section in page.sections:
        lines = section.docs_lines
        for index, opener in unclosed_math(section.docs):
            line = lines[min(index, len(lines) - 1)] if lines else 1
            LOG.warning(
                "%s:%d: unclosed %s: the math is shown as raw text; close it "
                "with %s (or write \\%s for a literal dollar)",
                page.source, line, opener, opener, opener[0],
            )  # fmt: skip


def _line_of(prose: _Prose, index: int) -> int:
    """The source line of span `index` of `prose` (via the English text)."""
    section = prose.section
    english = _clean(section.english or section.docs)
    start = prose.places[index][2] if index < len(prose.places) else 0
    if prose.text != english:
        found = english.find(prose.spans[index].text)
        start = found if found >= 0 else 0
    lines = section.docs_lines
    if not lines:
        return section.code[0].number if section.code else 1
    return lines[min(english[:start].count("\n"), len(lines) - 1)]


# --- prose: markdown with the spans put back ------------------------------------


@functools.cache
def _markdown(extensions: tuple[str, ...]) -> markdown.Markdown:
    """A Python-Markdown instance (one per set of extensions), with every
    raw-HTML path removed; it is reset before each use."""
    md = markdown.Markdown(extensions=list(extensions), output_format="html")
    md.preprocessors.deregister("html_block")
    md.inlinePatterns.deregister("html")
    return md


def _prose_html(prose: _Prose, math: dict, md: markdown.Markdown) -> str:
    parts, last = [], 0
    for index, (start, end, _) in enumerate(prose.places):
        mark = f"\ue000{index}\ue001"
        if prose.spans[index].kind == "code_block":
            mark = f"\n\n{mark}\n\n"  # a block of its own, never inside a <p>
        parts += [prose.template[last:start], mark]
        last = end
    parts.append(prose.template[last:])
    md.reset()
    body = md.convert(_shape_stars(_fields_as_list("".join(parts))))
    return _put_back(_FIELD_TERM_RE.sub(_field_term, body), prose, math)


# `:param name: text`, `:return: text` (reST docstring fields, as labml
# writes them): a definition list, the name as code.
_FIELD_RE = re.compile(
    r"[ ]{0,3}:(?:param|parameter|arg|argument|key|keyword)[ \t]+"
    r"(?P<name>\*{0,2}\w+)[ \t]*:[ \t]*(?P<text>.*)"
    r"|[ ]{0,3}:(?P<field>returns?|yields?|raises?(?:[ \t]+\w+)?)[ \t]*:[ \t]*"
    r"(?P<text2>.*)"
)
_FIELD_TERM_RE = re.compile("<dt>\ue000F(.*?)\ue001</dt>")


def _fields_as_list(text: str) -> str:
    """Each run of field lines as Markdown's definition list: the term marked
    (`\ue000Fname\ue001`), its text and continuation lines indented below it."""
    if ":" not in text:
        return text
    out: list[str] = []
    in_fields = False
    for line in text.split("\n"):
        m = _FIELD_RE.fullmatch(line)
        if m:
            name = m.group("name") or m.group("field")
            body = m.group("text") if m.group("name") else m.group("text2")
            term = name.replace("*", "\\*")
            out += ["", f"\ue000F{term}\ue001", f":   {body}"]
            in_fields = True
        elif in_fields and line.strip():
            out.append("    " + line.strip())
        else:
            in_fields = False
            out.append(line)
    return "\n".join(out)


def _field_term(match: re.Match[str]) -> str:
    return f"<dt><code>{match.group(1).replace(chr(92) + '*', '*')}</code></dt>"


# `[B*S, N] and [B*S]`: shape notation, not a link, whose `*` Markdown would
# read as emphasis (`S, N] and [B` in italics); escaped, it stays a `*`.
_SHAPE_RE = re.compile(r"(?<!!)\[[^\[\]\n]*\*[^\[\]\n]*\](?![(\[:])")


def _shape_stars(text: str) -> str:
    if "*" not in text:
        return text
    return _SHAPE_RE.sub(
        lambda m: re.sub(r"(?<![*\\])\*(?!\*)", r"\\*", m.group(0)), text
    )


def _put_back(body: str, prose: _Prose, math: dict) -> str:
    """Replace each token in markdown's HTML by its rendered span."""

    def block(match: re.Match[str]) -> str:
        span = prose.spans[int(match.group(1))]
        if span.kind == "code_block" and prose.permits(span):
            return _code_block(span.text)
        return match.group(0)

    body = _BLOCK_TOKEN_RE.sub(block, body)
    out, open_tags, in_pre, in_link = [], [], 0, 0
    for piece in _SPLIT_TAGS_RE.split(body):
        if piece.startswith("<"):
            in_pre += piece.startswith("<pre") - piece.startswith("</pre")
            in_link += piece.startswith("<a ") or piece == "<a>"
            in_link -= piece == "</a>"
            out.append(_fix_tag(piece, prose, in_link > 0))
        elif in_pre:
            out.append(_TOKEN_RE.sub(lambda m: _escaped(prose, m), piece))
        else:
            # Inside a link's text, a URL or an <a> is text: links do not nest.
            spans = _Spans(prose, math, open_tags, in_link > 0)
            out.append(_TOKEN_PUNCT_RE.sub(spans.inline_then_punctuation, piece))
    # Raw tags the prose opened and never closed end with it.
    out.extend(f"</{name}>" for name in reversed(open_tags))
    return "".join(out)


def _escaped(prose: _Prose, match: re.Match[str]) -> str:
    return html.escape(prose.spans[int(match.group(1))].text)


def _fix_tag(tag: str, prose: _Prose, in_link: bool = False) -> str:
    """Check the URL attributes markdown wrote; tokens elsewhere become text."""

    def url(match: re.Match[str]) -> str:
        attr, value = match.group(1), match.group(2)
        token = _TOKEN_RE.fullmatch(value)
        if token:
            span = prose.spans[int(token.group(1))]
            value = link_target(span.text) if prose.permits(span) else None
        else:
            value = html.unescape(value)
        if value is not None:
            value = (safe_href if attr == "href" else safe_src)(value)
        return "" if value is None else f' {attr}="{_attr(value)}"'

    if tag.startswith("<img") and (refused := _refused_image(tag, prose, in_link)):
        return refused
    tag = _URL_ATTR_RE.sub(url, tag)
    return _TOKEN_RE.sub(lambda m: _escaped(prose, m), tag)


_ALT_RE = re.compile(r'\salt="([^"]*)"')
_SRC_RE = re.compile(r'\ssrc="([^"]*)"')


def _refused_image(tag: str, prose: _Prose, in_link: bool) -> str:
    """An image from another site is never loaded: its alt text (else its
    address) stands in, as the text of the link it is in (labml's "Open in
    Colab" badge), else as a link to the image; "" for an image the page
    may load."""
    src = _SRC_RE.search(tag)
    if src is None:
        return '<span class="lit-image-refused"></span>'
    token = _TOKEN_RE.fullmatch(src.group(1))
    if token:
        span = prose.spans[int(token.group(1))]
        value = link_target(span.text) if prose.permits(span) else None
    else:
        value = html.unescape(src.group(1))
    if value is not None and safe_src(value) is not None:
        return ""
    alt = _ALT_RE.search(tag)
    text = html.unescape(alt.group(1)) if alt and alt.group(1).strip() else ""
    text = _TOKEN_RE.sub(lambda m: prose.spans[int(m.group(1))].text, text)
    shown = f'<span class="lit-image-refused">{html.escape(text or value or "")}</span>'
    target = None if in_link or value is None else safe_href(value)
    return shown if target is None else f'<a href="{_attr(target)}">{shown}</a>'


@dataclass
class _Spans:
    """Renders the tokens of one run of text between tags."""

    prose: _Prose
    math: dict
    open_tags: list[str]  # raw tags opened by the prose and not yet closed
    in_link: bool

    def inline_then_punctuation(self, match: re.Match[str]) -> str:
        rendered, punctuation = self.inline(match), match.group(2)
        if punctuation and rendered.startswith(_KATEX_OPEN_EXCLUDED):
            return f'<span class="lit-nobr">{rendered}{punctuation}</span>'
        return rendered + punctuation

    def inline(self, match: re.Match[str]) -> str:
        span = self.prose.spans[int(match.group(1))]
        escaped = html.escape(span.text)
        if span.kind == "literal" or not self.prose.permits(span):
            return escaped  # placeholder-like text typed in the prose is text
        if span.kind in MATH:
            rendered: Rendered = self.math[_formula(span)]
            if not rendered.html:
                return f'<code class="lit-tex">{escaped}</code>'
            return rendered.html.replace(_KATEX_OPEN, _KATEX_OPEN_EXCLUDED, 1)
        if span.kind == "code":
            return f"<code>{html.escape(_code_text(span.text))}</code>"
        if span.kind == "code_block":
            return f"<code>{escaped}</code>"
        if span.kind == "url":
            target = safe_href(link_target(span.text))
            if target is None or self.in_link:
                return escaped
            shown = html.escape(link_target(span.text))
            return f'<a href="{_attr(target)}">{shown}</a>'
        if self.in_link and re.match(r"</?a[\s>]", span.text, re.IGNORECASE):
            return escaped
        return _raw_html(span.text, self.open_tags)


def _raw_html(text: str, open_tags: list[str]) -> str:
    """An allowed tag, rebuilt; a comment vanishes; anything else is text."""
    if text.startswith("<!--"):
        return ""
    cleaned = clean_tag(text)
    if cleaned is None:
        return html.escape(text)
    tag, name, closing = cleaned
    if closing:
        if name not in open_tags:
            return ""
        while open_tags:  # close what was opened inside it, then it
            if (inner := open_tags.pop()) == name:
                break
            tag = f"</{inner}>" + tag
        return tag
    if name not in VOID:
        open_tags.append(name)
    return tag


def _code_text(text: str) -> str:
    """The content of an inline code span: backticks and one edge space off."""
    inner = text.strip("`")
    if len(inner) > 1 and inner[0] == " " and inner[-1] == " " and inner.strip():
        inner = inner[1:-1]
    return inner


def _code_block(text: str) -> str:
    """A fenced code block of prose: its info string names the language."""
    lines = text.split("\n")
    fence = lines[0].strip()
    language = fence.lstrip("`~").strip().split(" ")[0] if fence else ""
    char = fence[0] if fence else "`"
    end = (
        len(lines) - 1
        if len(lines) > 1 and lines[-1].strip().startswith(char * 3)
        else len(lines)
    )
    return highlight_block("\n".join(lines[1:end]) + "\n", language)


# --- the page --------------------------------------------------------------------


def html_lang(lang: str) -> str:
    """The `lang` attribute for a site language: one that picks the right glyphs
    (`zh` alone lets a browser draw Chinese with Japanese or Traditional forms)."""
    return {"zh": "zh-Hans"}.get(lang, lang)


def _originals_switch(lang: str) -> str:
    """One switch for the page: while it is checked, the stylesheet shows every
    section's English original (no script needed)."""
    return (
        '<input type="checkbox" id="lit-originals" class="lit-toggle">'
        f'<label for="lit-originals">{html.escape(label(lang, "originals"))}</label>'
    )


def _section_html(page, section, docs, code) -> str:
    anchor = _attr(section.anchor)
    permalink = _attr(label(page.lang, "permalink"))
    parts = [
        f'<section class="lit-section" id="{anchor}" data-state="{section.state}">',
        '<div class="lit-docs">',
        f'<a class="lit-permalink" href="#{anchor}" title="{permalink}"'
        f' aria-label="{permalink}" data-search-exclude>¶</a>',
    ]
    if "original" in docs:
        # A small control beside the permalink; the English shows below the
        # prose while it is checked (CSS: no script needed).
        name = _attr(label(page.lang, "original"))
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
            return f'<h{level} id="{_attr(unique)}">{match.group(3)}</h{level}>'

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
            f'<li><a href="#{_attr(href)}">{text}</a></li>'
            for href, text in self.listed
        )
        nav = (
            f'<nav class="lit-contents" aria-label="{_attr(name)}"'
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
            f'<span class="{cls}"{_indent(line.text)}>'
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
        _output_html(page, output, f"{section.anchor}-output-{n}", narrow)
        for (n, output), (_, narrow) in itertools.pairwise(outputs)
        if output.variant != "narrow"
    ]
    # Empty when there is no code: the column still holds its width (CSS).
    return '<div class="lit-code">' + "\n".join(parts) + "</div>"


def _indent(text: str) -> str:
    """A line's indentation, for the stylesheet: a line too long for the
    column wraps, and its continuation starts a step further in than the
    line itself."""
    spaces = len(text) - len(text.lstrip(" "))
    return f' style="--lit-indent:{spaces}"' if spaces else ""


_ROLES = ("prose", "original")


def _block_id(body: str, anchor: str, role: str = "prose") -> str:
    """An id for a block that holds a code block, so that the theme, which
    names each code block after its nearest id, names no two alike."""
    return f' id="{_attr(anchor)}-{role}"' if "<pre" in body else ""


def _output_html(
    page: Page, output: Output, name: str, narrow: Output | None = None
) -> str:
    """What a `#>` directive produced (the build's, trusted): a table, text or
    an image. Text that is a Markdown table is shown as an HTML table. An
    image followed by its `narrow` variant shows that one on narrow windows."""
    line = output.directive
    if output.kind == "text" and (rows := table_rows(output.text)):
        # Focusable: a table wider than a narrow window scrolls on its own.
        name = _attr(label(page.lang, "table"))
        return (
            f'<div class="lit-output lit-table" data-directive="{line}"'
            f' tabindex="0" role="region" aria-label="{name}">'
            f"{_table_html(rows)}</div>"
        )
    if output.kind == "text":
        # One span a line, as in the code: a long line wraps (CSS).
        text = "\n".join(
            f'<span class="lit-line"{_indent(row)}>{html.escape(row)}</span>'
            for row in output.text.rstrip("\n").split("\n")
        )
        return (
            f'<div class="lit-output" id="{_attr(name)}" data-directive="{line}">'
            f"<pre><code>{text}</code></pre></div>"
        )
    if output.kind == "image" and output.image.startswith(IMAGE_URLS):
        img = img_tag(output.image, output.alt)
        if narrow is not None and narrow.variant == "narrow":
            img = f"<picture>{_narrow_source(page, output, narrow)}{img}</picture>"
        return (
            f'<figure class="lit-output" data-directive="{line}"'
            f' data-text-size="{output.text_size:.4f}">{img}</figure>'
        )
    if output.kind == "data":  # for the page's scripts; readers see nothing
        try:
            body = script_text(output.text)
        except ValueError as err:
            raise RenderError(page.source, line, f"data output: {err}") from None
        return (
            f'<script type="application/json" class="lit-data"'
            f' data-name="{_attr(output.name)}" data-directive="{line}">{body}</script>'
        )
    raise RenderError(
        page.source,
        line,
        f"output of kind {output.kind!r}: expected text, data, or an image as a"
        f" data:image/svg+xml or data:image/png base64 URL",
    )


def _narrow_source(page: Page, wide: Output, narrow: Output) -> str:
    """The `<source>` of a figure's narrow variant: taken on a window too
    narrow for the wide figure's smallest text to stay readable
    (`literate.narrow`)."""
    if not narrow.image.startswith(IMAGE_URLS):
        raise RenderError(
            page.source,
            narrow.directive,
            "a narrow variant: expected an image as a data:image/svg+xml or"
            " data:image/png base64 URL",
        )
    below = narrow_below(wide.text_size) or NARROW_DEFAULT_PX
    size = shown_size(narrow.image)
    box = f' width="{size[0]}" height="{size[1]}"' if size else ""
    return (
        f'<source media="(max-width: {below}px)" srcset="{_attr(narrow.image)}"'
        f' data-text-size="{narrow.text_size:.4f}"{box}>'
    )


_TABLE_RULE = re.compile(r"\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?")
_CELL_SPLIT = re.compile(r"(?<!\\)\|")
_NUMBER = re.compile(r"[-+−]?(\d[\d,_]*(\.\d*)?|\.\d+)([eE][-+]?\d+)?\s*%?")


def table_rows(text: str) -> list[list[str]] | None:
    """The cells of a Markdown table (header, rule, rows), or None for text.

    A table: every line has a `|`, the second line is the rule (`| --: |`),
    and every line has as many cells as the header. The rule's row is kept,
    as the alignment of each column (`left`, `right`, `center` or "").
    """
    lines = text.strip("\n").split("\n")
    if len(lines) < 2 or not all("|" in line for line in lines):
        return None
    if not _TABLE_RULE.fullmatch(lines[1].strip()):
        return None
    rows = [_cells(line) for line in lines]
    if any(len(row) != len(rows[0]) for row in rows):
        return None
    rows[1] = [_alignment(cell) for cell in rows[1]]
    return rows


def _cells(line: str) -> list[str]:
    line = line.strip()
    line = line[1:] if line.startswith("|") else line
    line = line[:-1] if line.endswith("|") and not line.endswith("\\|") else line
    return [cell.strip().replace("\\|", "|") for cell in _CELL_SPLIT.split(line)]


def _alignment(rule: str) -> str:
    left, right = rule.startswith(":"), rule.endswith(":")
    return {(True, True): "center", (False, True): "right"}.get((left, right), "")


def _table_html(rows: list[list[str]]) -> str:
    """Escaped cells; a column of numbers with no stated alignment is right-aligned."""
    header, rule, body = rows[0], rows[1], rows[2:]
    align = [
        stated
        or ("right" if body and all(_NUMBER.fullmatch(r[i]) for r in body) else "")
        for i, stated in enumerate(rule)
    ]

    def cell(tag: str, text: str, i: int) -> str:
        scope = ' scope="col"' if tag == "th" else ""
        cls = f' class="lit-{align[i]}"' if align[i] else ""
        return f"<{tag}{scope}{cls}>{html.escape(text)}</{tag}>"

    head = "".join(cell("th", text, i) for i, text in enumerate(header))
    rows_html = "".join(
        "<tr>" + "".join(cell("td", text, i) for i, text in enumerate(row)) + "</tr>"
        for row in body
    )
    # A class: the stylesheet draws it, not the theme's prose-table style.
    return (
        f'<table class="lit-grid"><thead><tr>{head}</tr></thead>'
        f"<tbody>{rows_html}</tbody></table>"
    )


def _link_start(url: str, extra: str = "") -> str:
    return f'<a href="{_attr(safe_href(url) or "#")}"{extra}>'


def _attr(value: str) -> str:
    return html.escape(value, quote=True)
