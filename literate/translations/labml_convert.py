"""labml's keys and values read, and converted to our Markdown.

Our side: a key's markers (formulas, code, images, what labml writes as
`_^_N_^_`), link targets and raw HTML, and its skeleton of words (`Ours`).
labml's side: its HTML key read the same way (`Labml`), and a value
converted from HTML to Markdown with our placeholders (`convert`), or
refused (`ConvertError`). `literate.translations.labml` pairs the keys and
imports the tables.
"""

from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass, field
from html.parser import HTMLParser

from literate.normalize import normalize
from literate.spans import PLACEHOLDER_RE, Template, extract

# `_%5e_3_%5e_`: a placeholder whose carets a translation service URL-escaped.
_ESCAPED_PLACEHOLDER = re.compile(r"_%5[eE]_(\d+)_%5[eE]_")
_WORD = re.compile(r"\w+")
MARK = "\0"
_HEADINGS = {f"h{n}": n for n in range(1, 7)}
_INLINE = {"strong": "**", "b": "**", "em": "*", "i": "*", "code": "`"}
# Characters that would start Markdown syntax in plain translated text.
_SPECIAL = re.compile(r"([\\`*_\[\]$])")
_BLOCK_START = re.compile(r"^(#|>|[-+*] |\d{1,9}[.)] )")
# Text that the renderer would take for a tag; refused (not HTML-escaped).
_TAG_LIKE = re.compile(r"<[A-Za-z/!?]")
_IMAGE = re.compile(r"!\[[^\]\n]*\]\(_\^_(\d+)_\^_\)")
_ANY_PIECE = re.compile(rf"{_IMAGE.pattern}|{PLACEHOLDER_RE.pattern}")
_MARKER_KINDS = {"math", "display_math", "code", "code_block"}
_VOID = {"br", "img", "hr", "wbr"}


class ConvertError(ValueError):
    """A labml value that cannot be written as our Markdown."""


# --- our keys: pieces and skeletons ---------------------------------------------


@dataclass(frozen=True)
class Ours:
    """One of our keys, read for pairing: its markers (formulas, code, images:
    what labml writes as `_^_N_^_`), link targets and raw HTML, in order."""

    template: Template
    text: str  # the part of the key this covers (the whole key, or blocks)
    markers: tuple[str, ...]  # the Markdown each marker stands for
    targets: tuple[tuple[str, str], ...]  # (URL, our placeholder)
    html: tuple[tuple[str, str], ...]  # (tag as written, our placeholder)
    bare: tuple[tuple[str, str], ...]  # (bare URL, our placeholder)
    skeleton: tuple[str, ...]


def read_ours(text: str) -> Ours:
    """Our key for a section's Markdown `text`, with its pieces."""
    template = extract(normalize(text))
    return pieces(template.text, template)


def pieces(text: str, template: Template) -> Ours:
    markers, targets, html, bare, words = [], [], [], [], []
    last = 0
    for match in _ANY_PIECE.finditer(text):
        words += _WORD.findall(text[last : match.start()])
        last = match.end()
        if match.group(1) is not None:  # an image: one marker for labml
            markers.append(match.group(0))
            words.append(MARK)
            continue
        index = int(match.group(2))
        span = template.spans[index]
        if span.kind in _MARKER_KINDS:
            markers.append(match.group(0))
            words.append(MARK)
        elif span.kind == "url" and text.endswith("](", 0, match.start()):
            targets.append((span.text.strip("<>"), match.group(0)))
        elif span.kind == "url":
            bare.append((span.text.strip("<>"), match.group(0)))
            words += _WORD.findall(span.text)
        elif span.kind == "html":
            html.append((span.text, match.group(0)))
        else:  # a literal placeholder typed in the prose
            words += _WORD.findall(span.text)
    words += _WORD.findall(text[last:])
    return Ours(
        template, text, tuple(markers), tuple(targets), tuple(html), tuple(bare),
        tuple(words),
    )  # fmt: skip


def blocks(text: str) -> list[str]:
    """A key's top-level blocks as labml splits them: paragraphs, lists (one
    block each) and headings (a heading line is a block of its own)."""
    out = []
    for part in text.split("\n\n"):
        lines = part.split("\n")
        if len(lines) > 1 and re.match(r" {0,3}#{1,6}[ \t]", lines[0]):
            out += [lines[0], "\n".join(lines[1:])]
        else:
            out.append(part)
    return [b for b in out if b.strip()]


# --- labml's HTML -------------------------------------------------------------


@dataclass
class _Block:
    kind: str  # "p", "h2", "ul", "ol", "quote"
    lines: list[list[str]] = field(default_factory=lambda: [[]])


class _Converter(HTMLParser):
    """labml's HTML to Markdown, with placeholders renumbered to ours.

    `markers[N]` is what labml's `_^_N_^_` becomes; `targets[url]` the
    placeholders (in order) for links to `url`; `html` our raw HTML tags.
    With `mapping=False` (reading labml's own key) placeholders, links and
    tags are kept as they are, for the skeleton and the block structure.
    """

    def __init__(self, markers=None, targets=None, html=(), bare=(), mapping=True):
        super().__init__(convert_charrefs=True)
        self.mapping = mapping
        self.markers = markers or {}
        self.targets = {url: deque(p) for url, p in (targets or {}).items()}
        self.html = list(html)
        self.bare = dict(bare)
        self.blocks: list[_Block] = []
        self.open: _Block | None = None
        self.inline: list[tuple[str, str]] = []  # (tag, closer)
        self.lists: list[list] = []  # [kind, next number]
        self.repairs: list[str] = []
        self.words: list[str] = []
        self.hrefs: list[str] = []
        self.labml_marks: list[int] = []

    # -- output ---------------------------------------------------------------

    def _emit(self, text: str) -> None:
        if self.open is None:
            if self.blocks and text.strip():
                self.open = self.blocks.pop()  # text after `</p>`: fold it in
                self._repair("text after the end of its paragraph folded into it")
            else:
                self.open = _Block("p")
        self.open.lines[-1].append(text)

    def _close_block(self) -> None:
        if self.open is None:
            return
        self._close_inline(upto=0, why="unclosed")
        self.blocks.append(self.open)
        self.open = None

    def _close_inline(self, upto: int, why: str) -> None:
        while len(self.inline) > upto:
            tag, closer = self.inline.pop()
            self._repair(f"{why} <{tag}> closed")
            if self.open is not None:
                self.open.lines[-1].append(self._closer(tag, closer))

    def _closer(self, tag: str, closer: str | None) -> str:
        """What closes an inline tag: its Markdown, or our raw `</tag>`."""
        return self._raw(f"</{tag}>") if closer is None else closer

    def _repair(self, what: str) -> None:
        if what not in self.repairs:
            self.repairs.append(what)

    # -- events ---------------------------------------------------------------

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        if tag == "p" or tag in _HEADINGS or tag == "blockquote":
            if self.lists:  # a paragraph inside a list item: same line
                self._emit(" ")
                return
            self._close_block()
            kind = "quote" if tag == "blockquote" else tag
            self.open = _Block(kind)
        elif tag in ("ul", "ol"):
            if not self.lists:
                self._close_block()
                self.open = _Block(tag, [])
            self.lists.append([tag, 1])
        elif tag == "li":
            if (
                not self.lists
                and self.open is None
                and self.blocks
                and (self.blocks[-1].kind in ("ul", "ol"))
            ):  # `</ul><li>…`: the item belongs to the list just closed
                self.open = self.blocks.pop()
                self.lists.append([self.open.kind, len(self.open.lines) + 1])
                self._repair("list item after the end of its list moved into it")
            if not self.lists or self.open is None:
                raise ConvertError("<li> outside a list")
            kind, number = self.lists[-1]
            self.lists[-1][1] += 1
            marker = "*" if kind == "ul" else f"{number}."
            indent = "    " * (len(self.lists) - 1)
            self.open.lines.append([f"{indent}{marker} "])
        elif tag in _INLINE:
            self._emit(_INLINE[tag])
            self.inline.append((tag, _INLINE[tag]))
        elif tag == "a" and "href" in attributes:
            if any(t == "a" for t, _ in self.inline):
                raise ConvertError("a link inside another link's text")
            href = attributes["href"] or ""
            self.hrefs.append(href)
            self._emit("[")
            self.inline.append(("a", f"]({self._target(href)})"))
        elif tag == "span" and attributes.get("translate") == "no":
            self.inline.append(("span", ""))
        else:
            self._emit(self._raw(self.get_starttag_text() or f"<{tag}>"))
            if tag not in _VOID:
                self.inline.append((tag, None))  # closed by our `</tag>`

    def handle_startendtag(self, tag, attrs):
        self._emit(self._raw(self.get_starttag_text() or f"<{tag}/>"))

    def handle_endtag(self, tag):
        if tag in ("p", "blockquote") or tag in _HEADINGS:
            if self.lists:
                return
            if self.open is None or self.open.kind != (
                "quote" if tag == "blockquote" else tag
            ):
                self._repair(f"stray </{tag}> dropped")
                return
            self._close_block()
        elif tag in ("ul", "ol"):
            if not self.lists:
                self._repair(f"stray </{tag}> dropped")
                return
            self.lists.pop()
            if not self.lists:
                self._close_block()
        elif tag == "li":
            if self.open is not None:
                self._close_inline(upto=0, why="unclosed")
        else:
            depth = next(
                (i for i in range(len(self.inline) - 1, -1, -1)
                 if self.inline[i][0] == tag), None,
            )  # fmt: skip
            if depth is None:
                self._repair(f"stray </{tag}> dropped")
                return
            self._close_inline(upto=depth + 1, why="misnested")
            _, closer = self.inline.pop()
            text = self._closer(tag, closer)
            if text:
                self._emit(text)

    def handle_data(self, data):
        if not data.strip() and self.open is None:
            return
        data = re.sub(r"\s+", " ", data)
        if _ESCAPED_PLACEHOLDER.search(data):
            data = _ESCAPED_PLACEHOLDER.sub(r"_^_\1_^_", data)
            self._repair("URL-escaped placeholder _%5e_N_%5e_ restored")
        last = 0
        for match in PLACEHOLDER_RE.finditer(data):
            self._text(data[last : match.start()])
            self._emit(self._marker(int(match.group(1))))
            last = match.end()
        self._text(data[last:])

    def _text(self, text: str) -> None:
        if not text:
            return
        self.words += _WORD.findall(text)
        if not self.mapping:
            self._emit(text)
            return
        if _TAG_LIKE.search(text):
            raise ConvertError(f"text that reads as an HTML tag: {text.strip()!r}")
        for url, placeholder in self.bare.items():
            text = text.replace(url, f"\1{placeholder}\1")
        parts = text.split("\1")
        for i, part in enumerate(parts):
            self._emit(part if i % 2 else _SPECIAL.sub(r"\\\1", part))

    # -- lookups --------------------------------------------------------------

    def _marker(self, number: int) -> str:
        self.words.append(MARK)
        self.labml_marks.append(number)
        if not self.mapping:
            return f"_^_{number}_^_"
        if number not in self.markers:
            raise ConvertError(f"placeholder _^_{number}_^_ is not in labml's English")
        return self.markers[number]

    def _target(self, href: str) -> str:
        if not self.mapping:
            return href
        waiting = self.targets.get(href)
        if waiting:
            return waiting.popleft() if len(waiting) > 1 else waiting[0]
        if href in self.bare:
            return self.bare[href]
        raise ConvertError(f"link target {href!r} is not in the English")

    def _raw(self, tag: str) -> str:
        if not self.mapping:
            return tag  # a block of tags alone is a block all the same
        want = _signature(tag)
        for i, (text, placeholder) in enumerate(self.html):
            if _signature(text) == want:
                del self.html[i]
                return placeholder
        raise ConvertError(f"HTML {tag!r} is not in the English")

    # -- result ---------------------------------------------------------------

    def markdown(self) -> str:
        self._close_block()
        return "\n\n".join(_block_text(b) for b in self.blocks if _block_text(b))

    def structure(self) -> list[str]:
        """The kinds of the blocks, list items counted: `["h2", "p", "ul:3"]`."""
        return [
            f"{b.kind}:{len(b.lines)}" if b.kind in ("ul", "ol") else b.kind
            for b in self.blocks
            if _block_text(b)
        ]


def _block_text(block: _Block) -> str:
    lines = []
    for parts in block.lines:
        line = re.sub(r"[ \t]+", " ", "".join(parts)).strip()
        if block.kind in ("ul", "ol"):
            indent = re.match(r" *", "".join(parts)).group(0)
            line = indent + line
        if line.strip():
            lines.append(line)
    if not lines:
        return ""
    if block.kind in _HEADINGS:
        return "#" * _HEADINGS[block.kind] + " " + " ".join(lines)
    if block.kind == "quote":
        return "> " + " ".join(lines)
    if block.kind == "p":
        text = " ".join(lines)
        return "\\" + text if _BLOCK_START.match(text) else text
    return "\n".join(lines)


def _signature(tag: str) -> tuple:
    """A tag as a comparable value: name, closing or not, sorted attributes."""
    parsed: list = []

    class _One(HTMLParser):
        def handle_starttag(self, name, attrs):
            parsed.append((name, False, tuple(sorted(attrs))))

        handle_startendtag = handle_starttag

        def handle_endtag(self, name):
            parsed.append((name, True, ()))

    one = _One(convert_charrefs=True)
    one.feed(tag)
    one.close()
    return parsed[0] if parsed else (tag,)


@dataclass(frozen=True)
class Labml:
    """A labml key, read: its skeleton, placeholders and link targets in
    order, and its blocks' structure."""

    skeleton: tuple[str, ...]
    marks: tuple[int, ...]
    hrefs: tuple[str, ...]
    structure: tuple[str, ...]


def read_labml(html: str) -> Labml:
    """labml's key `html`, read for pairing."""
    converter = _run(html, _Converter(mapping=False))
    return Labml(
        tuple(converter.words), tuple(converter.labml_marks),
        tuple(converter.hrefs), tuple(converter.structure()),
    )  # fmt: skip


def _run(html: str, converter: _Converter) -> _Converter:
    converter.feed(html)
    converter.close()
    converter.markdown()
    return converter


@dataclass(frozen=True)
class Converted:
    markdown: str
    repairs: tuple[str, ...]


def convert(ours: Ours, labml: Labml, value: str) -> Converted:
    """labml's `value` for the key `labml`, as Markdown for our key `ours`.

    Raises ConvertError when it cannot be written faithfully.
    """
    if len(labml.marks) != len(ours.markers):
        raise ConvertError(
            f"labml's English has {len(labml.marks)} formulas or code spans, "
            f"ours {len(ours.markers)}"
        )
    markers = dict(zip(labml.marks, ours.markers, strict=True))
    targets: dict[str, list[str]] = {}
    if len(labml.hrefs) == len(ours.targets):
        pairs = zip(labml.hrefs, (p for _, p in ours.targets), strict=True)
    else:
        pairs = iter(ours.targets)
    for href, placeholder in pairs:
        targets.setdefault(href, []).append(placeholder)
    converter = _Converter(markers, targets, ours.html, ours.bare)
    try:
        _run(value, converter)
    except AssertionError as error:  # html.parser on malformed markup
        raise ConvertError(f"unreadable HTML: {error}") from None
    structure = tuple(converter.structure())
    if structure != labml.structure:
        raise ConvertError(
            f"the blocks are {', '.join(structure) or 'none'}, labml's English "
            f"has {', '.join(labml.structure) or 'none'}"
        )
    return Converted(converter.markdown(), tuple(converter.repairs))
