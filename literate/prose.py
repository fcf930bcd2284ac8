"""A section's prose as HTML: Markdown that never sees the protected spans.

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
other span is shown as escaped text (`Prose.permits`).
"""

from __future__ import annotations

import functools
import html
import logging
import re
from dataclasses import dataclass

import markdown

from literate.highlight import highlight_block
from literate.katex import Rendered
from literate.model import Section, SourceError
from literate.normalize import normalize, symbols
from literate.sanitize import (
    VOID,
    attr,
    clean_tag,
    link_target,
    safe_href,
    safe_src,
)
from literate.spans import PLACEHOLDER_RE, Span, extract

# mkdocs counts the warnings of its loggers (`--strict` fails on any); outside
# mkdocs, logging prints them on stderr.
LOG = logging.getLogger("mkdocs.plugins.literate")


class RenderError(SourceError):
    """A page cannot be rendered: names the source file and line."""


MATH = ("math", "display_math")
MARKDOWN_EXTENSIONS = ("tables", "sane_lists", "admonition", "def_list")
# Characters the pipeline uses as markers; stray ones in prose become U+FFFD.
_RESERVED = re.compile("[\ue000\ue001\x02\x03]")
_TOKEN_RE = re.compile("\ue000(\\d+)\ue001")
_BLOCK_TOKEN_RE = re.compile("<p>\ue000(\\d+)\ue001</p>")
# A token and the punctuation around it: an inline formula keeps the comma
# or full stop after it on its line ("1," never "1⏎,"), and the bracket
# before it ("（⏎x" never: Chinese and Japanese type keep it with its word).
_TOKEN_PUNCT_RE = re.compile(
    "([(（「『【《]*)\ue000(\\d+)\ue001([,.;:!?)，。、；：！？）」』】》]*)"
)
_SPLIT_TAGS_RE = re.compile(r"(<[^>]*>)")
_URL_ATTR_RE = re.compile(r'\s(href|src)="([^"]*)"')
# Search indexes the prose, not KaTeX's glyph boxes or the line numbers.
_KATEX_OPEN = '<span class="katex">'
_KATEX_OPEN_EXCLUDED = '<span class="katex" data-search-exclude>'


@dataclass(frozen=True)
class Prose:
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


def plan(section: Section) -> dict[str, Prose]:
    """The prose a section shows: "main", and "original" for a translation."""
    english = clean(symbols(section.english or section.docs)[0])
    if section.state == "translated":
        # The translate stage fills placeholders from the normalised English,
        # where a code span wrapped over two comment lines has a space for
        # the line break: both spellings of a span are the English's own.
        allowed = frozenset(extract(english).spans + extract(normalize(english)).spans)
        return {
            "main": _prose(section, clean(symbols(section.docs)[0]), allowed),
            "original": _prose(section, english, None),
        }
    if section.state in ("untranslated", "stale"):
        return {"main": _prose(section, english, None)}
    return {"main": _prose(section, english, None)}


def _prose(section: Section, text: str, allowed) -> Prose:
    template = extract(text)
    places = _places(text, template.text, template.spans)
    return Prose(section, text, template.spans, template.text, allowed, places)


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


def clean(text: str) -> str:
    return _RESERVED.sub("\ufffd", text)


def formula(span: Span) -> tuple[str, bool]:
    if span.kind == "display_math" and span.text.startswith("$$"):
        return (span.text[2:-2].strip(), True)
    if span.kind == "display_math":  # a bare `\begin{align}…\end{align}`
        return (span.text, True)
    return (span.text[1:-1], False)


# --- prose: markdown with the spans put back ------------------------------------


@functools.cache
def markdown_for(extensions: tuple[str, ...]) -> markdown.Markdown:
    """A Python-Markdown instance (one per set of extensions), with every
    raw-HTML path removed; it is reset before each use."""
    md = markdown.Markdown(extensions=list(extensions), output_format="html")
    md.preprocessors.deregister("html_block")
    md.inlinePatterns.deregister("html")
    return md


def prose_html(prose: Prose, math: dict, md: markdown.Markdown) -> str:
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


def _put_back(body: str, prose: Prose, math: dict) -> str:
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


def _escaped(prose: Prose, match: re.Match[str]) -> str:
    return html.escape(prose.spans[int(match.group(1))].text)


def _fix_tag(tag: str, prose: Prose, in_link: bool = False) -> str:
    """Check the URL attributes markdown wrote; tokens elsewhere become text."""

    def url(match: re.Match[str]) -> str:
        name, value = match.group(1), match.group(2)
        token = _TOKEN_RE.fullmatch(value)
        if token:
            span = prose.spans[int(token.group(1))]
            value = link_target(span.text) if prose.permits(span) else None
        else:
            value = html.unescape(value)
        if value is not None:
            value = (safe_href if name == "href" else safe_src)(value)
        return "" if value is None else f' {name}="{attr(value)}"'

    if tag.startswith("<img") and (refused := _refused_image(tag, prose, in_link)):
        return refused
    tag = _URL_ATTR_RE.sub(url, tag)
    return _TOKEN_RE.sub(lambda m: _escaped(prose, m), tag)


_ALT_RE = re.compile(r'\salt="([^"]*)"')
_SRC_RE = re.compile(r'\ssrc="([^"]*)"')


def _refused_image(tag: str, prose: Prose, in_link: bool) -> str:
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
    return shown if target is None else f'<a href="{attr(target)}">{shown}</a>'


@dataclass
class _Spans:
    """Renders the tokens of one run of text between tags."""

    prose: Prose
    math: dict
    open_tags: list[str]  # raw tags opened by the prose and not yet closed
    in_link: bool

    def inline_then_punctuation(self, match: re.Match[str]) -> str:
        opening, number, closing = match.groups()
        rendered = self.inline(int(number))
        if (opening or closing) and rendered.startswith(_KATEX_OPEN_EXCLUDED):
            return f'<span class="lit-nobr">{opening}{rendered}{closing}</span>'
        return opening + rendered + closing

    def inline(self, number: int) -> str:
        span = self.prose.spans[number]
        escaped = html.escape(span.text)
        if span.kind == "literal" or not self.prose.permits(span):
            return escaped  # placeholder-like text typed in the prose is text
        if span.kind in MATH:
            rendered: Rendered = self.math[formula(span)]
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
            return f'<a href="{attr(target)}">{shown}</a>'
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
