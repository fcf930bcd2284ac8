"""Import labml's translation cache (`translate_cache/**/<stem>.<lang>.json`).

labml (annotated_deep_learning_paper_implementations) keeps one flat JSON
object per source and language, next to its sources' tree: the source
`labml_nn/transformers/mha.py` has `translate_cache/transformers/mha.ja.json`.
Each key is a section's prose rendered to HTML, with its math, inline code and
images replaced by `_^_N_^_` inside `<span translate=no>`; link targets stay
as `href`s. The title and the summary are plain text. Long docstrings are
sometimes split, one key per top-level block (a heading, a paragraph, a list).

`import_tables` maps each labml entry onto our key for the same source (the
section's Markdown with our placeholders, see `literate.spans`) and converts
its value from HTML back to Markdown with our placeholders:

1. Pairing: both keys are reduced to a skeleton, their words with one marker
   for each formula, code span or image, markup and link targets left out.
   Equal skeletons pair; a key with no partner is matched block by block
   against labml's split keys.
2. Converting: labml's placeholders are renumbered to ours by their order in
   the pair's skeleton, `<a href>` gets our placeholder for the same target,
   `<strong>`/`<em>`/`<code>` become `**`/`*`/backticks, headings, lists and
   paragraphs become Markdown blocks.
3. Classifying: a value converted as it was is *mapped*; one that needed a
   mechanical fix is *repaired* (the fix named); one that cannot be converted,
   whose block structure differs from labml's own English, or that
   `check_entry` rejects is *refused* with the reason and stays untranslated;
   a key with no labml entry is *no entry*.
"""

from __future__ import annotations

import re
from collections import Counter, deque
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path, PurePosixPath

from literate.spans import PLACEHOLDER_RE, Template, extract, normalize

# A labml table's name: `<stem>.<lang>.json`.
TABLE_SUFFIX = ".{lang}.json"
# `_%5e_3_%5e_`: a placeholder whose carets a translation service URL-escaped.
_ESCAPED_PLACEHOLDER = re.compile(r"_%5[eE]_(\d+)_%5[eE]_")
_WORD = re.compile(r"\w+")
_MARK = "\0"
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
    return _pieces(template.text, template)


def _pieces(text: str, template: Template) -> Ours:
    markers, targets, html, bare, words = [], [], [], [], []
    last = 0
    for match in _ANY_PIECE.finditer(text):
        words += _WORD.findall(text[last : match.start()])
        last = match.end()
        if match.group(1) is not None:  # an image: one marker for labml
            markers.append(match.group(0))
            words.append(_MARK)
            continue
        index = int(match.group(2))
        span = template.spans[index]
        if span.kind in _MARKER_KINDS:
            markers.append(match.group(0))
            words.append(_MARK)
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
        self.words.append(_MARK)
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


def labml_table(folder: Path, source: str, base: str, lang: str) -> Path:
    """Where labml keeps `source`'s table for `lang`: the path below `base`,
    `.py` replaced by `.<lang>.json`, under `folder`."""
    path = PurePosixPath(source)
    if base and path.is_relative_to(base):
        path = path.relative_to(base)
    return folder / path.with_suffix(TABLE_SUFFIX.format(lang=lang))


# --- pairing and importing one table ---------------------------------------------


@dataclass(frozen=True)
class LabmlEntry:
    key: str
    value: str
    line: int
    read: Labml


@dataclass(frozen=True)
class Result:
    """What became of one of our keys."""

    key: str
    status: str  # "mapped" | "repaired" | "refused" | "no entry" | "kept"
    value: str = ""  # the converted translation (mapped or repaired)
    detail: str = ""  # the repairs, or why it was refused
    line: int = 0  # the labml entry's line (0: none)


STATUSES = ("mapped", "repaired", "refused", "no entry", "kept")


def read_entries(path: Path, folder: Path) -> list[LabmlEntry]:
    """A labml table's entries with lines; TableError (file:line) if it is
    not a flat JSON object of strings."""
    from literate.translations.tables import TableError, parse_object, read_text

    text = read_text(path, root=folder)
    entries = []
    for entry in parse_object(text, path):
        if not isinstance(entry.value, str):
            raise TableError(
                path, entry.line, 1,
                f"key {_short(entry.key)}: expected a string value, "
                f"found {type(entry.value).__name__}",
            )  # fmt: skip
        read = read_labml(entry.key)
        entries.append(LabmlEntry(entry.key, entry.value, entry.line, read))
    return entries


def _short(text: str) -> str:
    from literate.translations.tables import short

    return short(text)


def pair(ours: Ours, index: dict) -> list[tuple[Ours, LabmlEntry]] | None:
    """The labml entries that translate our key: the whole key's, else one
    per run of blocks; None when some block has none."""
    if ours.skeleton in index:
        return [(ours, _best(ours, index[ours.skeleton]))]
    parts = blocks(ours.template.text)
    found, i = [], 0
    while i < len(parts):
        for j in range(len(parts), i, -1):
            piece = _pieces("\n\n".join(parts[i:j]), ours.template)
            if piece.skeleton in index:
                found.append((piece, _best(piece, index[piece.skeleton])))
                break
            if j == i + 1 and not any(w != _MARK for w in piece.skeleton):
                found.append((piece, None))  # only HTML or links: kept as is
                break
        else:
            return None
        i = j
    return found if any(entry for _, entry in found) else None


def _best(ours: Ours, entries: list[LabmlEntry]) -> LabmlEntry:
    """Of labml's keys with our key's words, the one with its blocks (the
    title `Transformers` and the heading `# Transformers` read alike)."""
    want = structure(ours.text)
    return next((e for e in entries if e.read.structure == want), entries[0])


def structure(text: str) -> tuple[str, ...]:
    """Our Markdown's blocks as `_Converter.structure` names labml's."""
    out = []
    for block in blocks(text):
        heading = re.match(r" {0,3}(#{1,6})[ \t]", block)
        items = re.findall(r"(?m)^([*+-]|\d{1,9}[.)])[ \t]", block)
        if heading:
            out.append(f"h{len(heading.group(1))}")
        elif items and re.match(r"([*+-]|\d{1,9}[.)])[ \t]", block):
            kind = "ul" if items[0] in "*+-" else "ol"
            out.append(f"{kind}:{len(items)}")
        else:
            out.append("p")
    return tuple(out)


def import_key(ours: Ours, index: dict, problems) -> Result:
    """Our key's translation from labml's entries (`index`: skeleton ->
    entry), classified; `problems(key, value)` is the check's verdict."""
    key = ours.template.text
    parts = pair(ours, index)
    if parts is None:
        return Result(key, "no entry")
    values, repairs, line = [], [], 0
    for piece, entry in parts:
        if entry is None:
            values.append(piece.text)
            continue
        line = line or entry.line
        try:
            converted = convert(piece, entry.read, entry.value)
        except ConvertError as error:
            return Result(key, "refused", detail=str(error), line=entry.line)
        values.append(converted.markdown)
        repairs += [r for r in converted.repairs if r not in repairs]
    value = "\n\n".join(values)
    found = problems(key, value)
    if found:
        more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
        return Result(key, "refused", detail=found[0] + more, line=line)
    status = "repaired" if repairs else "mapped"
    return Result(key, status, value, "; ".join(repairs), line)


def source_texts(root: Path, source: str) -> dict[str, Ours]:
    """Our keys of a source's title, summary and sections, read for pairing."""
    from literate.parse import parse
    from literate.textfile import inside, read_utf8

    page = parse(read_utf8(inside(root, source, source), source), source)
    texts = [page.title, page.summary, *(s.docs for s in page.sections)]
    read = (read_ours(text) for text in texts if text.strip())
    return {ours.template.text: ours for ours in read}


@dataclass(frozen=True)
class Imported:
    """One table's import: the table to write and what became of each key."""

    table: dict[str, str]
    results: tuple[Result, ...]
    unused: int  # labml entries (translated) that no key took


def import_table(
    current: list[str],
    texts: dict[str, Ours],
    entries: list[LabmlEntry],
    existing: dict[str, str],
    problems,
    overwrite: bool = False,
) -> Imported:
    """The table for `current` keys, `existing` (kept, stale keys too)
    updated from labml's `entries`; pure."""
    index: dict[tuple[str, ...], list[LabmlEntry]] = {}
    for entry in entries:
        if entry.value.strip():
            index.setdefault(entry.read.skeleton, []).append(entry)
    table = dict(existing)
    results = []
    used: set[int] = set()
    for key in current:
        table.setdefault(key, "")
        ours = texts.get(key)
        result = Result(key, "no entry") if ours is None else import_key(
            ours, index, problems
        )  # fmt: skip
        if ours is not None:
            used |= {id(e) for _, e in (pair(ours, index) or []) if e}
        if table[key].strip() and not overwrite:
            result = Result(key, "kept", detail=result.status, line=result.line)
        elif result.status in ("mapped", "repaired"):
            table[key] = result.value
        results.append(result)
    unused = sum(1 for e in entries if e.value.strip() and id(e) not in used)
    return Imported(table, tuple(results), unused)


def import_command(
    root: Path,
    sources: tuple[str, ...],
    langs: list[str],
    folder: Path,
    base: str,
    overwrite: bool,
    entry_problems,
) -> int:
    """`translations import-labml`: import, write, report; the exit status.

    `entry_problems(entry, lang, glossary, keys)` is `check`'s verdict on one
    entry. Each table is written atomically once it is complete; a labml
    table or one of ours that cannot be read is named with its line and
    leaves that table untouched.
    """
    from literate.translations.check import load_glossary
    from literate.translations.layout import (
        glossary_path,
        relative,
        source_keys,
        table_path,
    )  # fmt: skip
    from literate.translations.tables import (
        TableError,
        dumps_table,
        duplicates,
        read_table,
        save_table,
    )  # fmt: skip

    failed = False
    keys, texts = {}, {}
    for source in sources:
        try:
            keys[source] = source_keys(root, source)
            texts[source] = source_texts(root, source)
        except (OSError, ValueError) as error:
            print(f"{source}: cannot read its sections: {error}")
            failed = True
    for lang in langs:
        try:
            glossary = load_glossary(glossary_path(root, lang))
        except TableError as error:
            print(error.relative_to(root) + " (nothing imported)")
            failed = True
            continue
        totals = dict.fromkeys(STATUSES, 0)
        translated = total = comments = 0
        for source, known in keys.items():
            ours = table_path(root, lang, source)
            name = relative(ours, root)
            theirs = labml_table(folder, source, base, lang)
            try:
                _, old = read_table(ours)
                if duplicates(old):
                    raise TableError(
                        ours, duplicates(old)[0].line, 1,
                        f"key {_short(duplicates(old)[0].key)}: duplicate key; "
                        "remove one of the two first",
                    )  # fmt: skip
                entries = read_entries(theirs, folder) if theirs.is_file() else []
            except TableError as error:
                print(error.relative_to(root) + f" ({name} not written)")
                failed = True
                continue
            problems = _verdict(entry_problems, lang, glossary, known)
            # labml translates no code comments: they are keys, left empty.
            wanted = [k for k in known.all if k not in known.comment_only]
            done = import_table(
                wanted, texts[source], entries,
                {e.key: e.value for e in old}, problems, overwrite,
            )  # fmt: skip
            for comment in known.comment_only:
                done.table.setdefault(comment, "")
            where = relative(theirs, root)
            for result in done.results:
                if result.status in ("repaired", "refused"):
                    at = f"{where}:{result.line}" if result.line else where
                    print(f"{at}: key {_short(result.key)}: {result.status}: "
                          f"{result.detail}")  # fmt: skip
            counts = Counter(r.status for r in done.results)
            for status in STATUSES:
                totals[status] += counts[status]
            before = dumps_table({e.key: e.value for e in old}) if old else None
            written = before != dumps_table(done.table)
            if written:
                save_table(ours, done.table)
            done_keys = sum(1 for k in wanted if done.table[k].strip())
            translated += done_keys
            total += len(wanted)
            comments += len(known.comment_only)
            found = f"{len(entries)} labml entries, {done.unused} unused"
            print(
                f"{name}: {len(wanted)} keys, {done_keys} translated: "
                + ", ".join(f"{counts[s]} {s}" for s in STATUSES)
                + f"; {found if theirs.is_file() else 'no labml table ' + where}; "
                + ("written" if written else "unchanged")
            )
        share = f" ({100 * translated / total:.1f} %)" if total else ""
        print(
            f"{lang}: {len(keys)} sources, {total} keys, {translated} "
            f"translated{share}: " + ", ".join(f"{totals[s]} {s}" for s in STATUSES)
            + (f"; and {comments} code comments, which labml does not translate"
               if comments else "")
        )  # fmt: skip
    return 1 if failed else 0


def _verdict(entry_problems, lang, glossary, keys):
    """`check`'s problems with `value` as the translation of `key`."""
    from literate.translations.tables import Entry

    return lambda key, value: entry_problems(Entry(key, value, 0), lang, glossary, keys)
