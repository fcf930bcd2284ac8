"""What the search index reads of a page: its words, in the blocks a result shows.

The theme's search plugin parses each page's HTML into sections (one per
heading with an id) and keeps a few tags of each (`p`, `li`, `code`, `pre`).
A generated page is mostly markup (a span per highlighted token, KaTeX's
HTML for every formula), its headings sit deep inside section elements
(the plugin then files the prose after the first paragraph under the page,
not under its heading), and a translated page holds the English originals
hidden beside each paragraph. So the plugin hands the search plugin this
view of every page, then puts the page back before it is written:

- headings and the blocks of prose (paragraphs, list items) in reading
  order, side by side: each block falls under the heading above it;
- no English originals (`.lit-original`) and nothing marked
  `data-search-exclude` (line numbers, the list of sections, controls);
- a formula as readable text (`1/√d_k`, `literate.mkdocs.tex_text`), and
  the words of its TeX (`sqrt d_k`) in a `<pre>`;
- a table's rows as paragraphs, their cells apart;
- the code column (code and outputs, a figure's alt text) as a `<pre>`.

A `<pre>` is what a reader can find but a result does not show:
`i18n_search` moves it into a field of its own. Block boundaries become
spaces, so the words of two cells or two `div`s never run together.
"""

from __future__ import annotations

from html import escape
from html.parser import HTMLParser

from literate.mkdocs.tex_text import tex_text, tex_words

KEPT = {"p", "li", "ul", "ol", "code", "sub", "sup"}
HEADINGS = {"h1", "h2", "h3", "h4", "h5", "h6"}
VOID = {
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link",
    "meta", "param", "source", "track", "wbr",
}  # fmt: skip
# Elements whose end separates words (besides the kept and heading tags).
BLOCKS = {
    "div", "section", "article", "nav", "aside", "header", "footer", "main",
    "figure", "figcaption", "blockquote", "dl", "dt", "dd", "details",
    "summary", "table", "thead", "tbody", "tfoot", "tr", "th", "td",
    "caption", "br", "hr", "label", "pre", "form", "fieldset",
}  # fmt: skip
SKIPPED = {"script", "style", "template", "noscript", "svg", "button", "select"}
SKIPPED_CLASSES = {"lit-original", "headerlink", "lit-source", "lit-permalink"}
# A table cell's end in the shown text: an em space (a separator in every
# language's search, and a visible gap in a result).
CELL = "\u2003"


def search_view(html: str) -> str:
    """`html` as the search index should read it (see the module's docstring)."""
    view = _View()
    view.feed(html)
    view.close()
    if view.formula is not None:
        raise ValueError("unclosed <span> of a formula (class katex)")
    # Nothing before the first heading: the search plugin would make it a
    # section of its own, and the page's title another.
    return "".join(view.out).lstrip()


class _View(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.out: list[str] = []
        self.stack: list[str] = []  # open elements, innermost last
        self.skip_at: int | None = None  # depth of the subtree being skipped
        self.hidden_at: int | None = None  # depth of the code column
        self.formula: list[str] | None = None  # a formula's TeX, while in it
        self.formula_at = 0
        self.in_tex = False
        self.pre_at: int | None = None  # depth of a <pre> outside the column
        self.headings: list[str] = []  # how each open heading was written

    # --- tags -------------------------------------------------------------

    def handle_starttag(self, tag: str, attrs: list) -> None:
        named = dict(attrs)
        classes = set((named.get("class") or "").split())
        if tag not in VOID:
            self.stack.append(tag)
        depth = len(self.stack)
        if self.skip_at is not None:
            return
        if self.formula is not None:
            self.in_tex = tag == "annotation" and (
                named.get("encoding") == "application/x-tex"
            )
            return
        if "katex" in classes:
            self.formula, self.formula_at = [], depth
            return
        if (
            tag in SKIPPED
            or classes & SKIPPED_CLASSES
            or "data-search-exclude" in named
            or (tag == "a" and "lit-ln" in classes)
        ):
            self.skip_at = depth if tag not in VOID else None
            return
        if self.hidden_at is not None or self.pre_at is not None:
            self._hidden_tag(tag, named)
            return
        if "lit-code" in classes:
            self.hidden_at = depth
            self.out.append("<pre>")
        elif tag == "pre":
            self.pre_at = depth
            self.out.append("<pre>")
        elif tag in HEADINGS:  # a section of the index if it has an id
            shown = tag if named.get("id") else "p"
            self.headings.append(shown)
            anchor = f' id="{escape(named["id"])}"' if shown == tag else ""
            self.out.append(f"<{shown}{anchor}>")
        elif tag in KEPT:
            self.out.append(f"<{tag}>")
        elif tag == "tr":
            self.out.append("<p>")
        elif tag in BLOCKS:
            self.out.append(" ")

    def handle_endtag(self, tag: str) -> None:
        if tag in VOID or tag not in self.stack:
            return
        while self.stack:  # close what was left open inside it
            depth = len(self.stack)
            closed = self.stack.pop()
            if depth == self.formula_at and closed != tag:
                raise ValueError(
                    f"unclosed <{closed}> of a formula (class katex), cut by </{tag}>"
                )
            self._closed(closed, depth)
            if closed == tag:
                return

    def _closed(self, tag: str, depth: int) -> None:
        if self.skip_at is not None:
            if depth == self.skip_at:
                self.skip_at = None
            return
        if self.formula is not None:
            if tag == "annotation":
                self.in_tex = False
            if depth == self.formula_at:
                self.formula_at = 0
                self._formula_ends()
            return
        if self.hidden_at is not None or self.pre_at is not None:
            if depth in (self.hidden_at, self.pre_at):
                self.hidden_at = self.pre_at = None
                self.out.append("</pre>")
            elif tag in BLOCKS or tag in KEPT:
                self.out.append("\n" if tag in ("tr", "p", "li", "div") else " ")
            return
        if tag in HEADINGS:
            self.out.append(f"</{self.headings.pop()}>")
        elif tag in KEPT:
            self.out.append(f"</{tag}>")
        elif tag == "tr":
            self.out.append("</p>")
        elif tag in ("th", "td"):
            self.out.append(CELL)
        elif tag in BLOCKS:
            self.out.append(" ")

    def _hidden_tag(self, tag: str, named: dict) -> None:
        if tag == "img" and named.get("alt"):
            self.out.append(f" {escape(named['alt'], quote=False)} ")
        elif tag in BLOCKS:
            self.out.append(" ")

    # --- text -------------------------------------------------------------

    def handle_data(self, data: str) -> None:
        if self.skip_at is not None:
            return
        if self.formula is not None:
            if self.in_tex:
                self.formula.append(data)
            return
        self.out.append(escape(data, quote=False))

    def _formula_ends(self) -> None:
        tex = "".join(self.formula or []).strip()
        self.formula = None
        self.in_tex = False
        if not tex:
            return
        if self.hidden_at is not None or self.pre_at is not None:
            self.out.append(f" {escape(tex_words(tex), quote=False)} ")
            return
        text, words = tex_text(tex), tex_words(tex)
        unseen = "" if words.split() == text.split() else words
        self.out.append(f" {escape(text, quote=False)} ")
        if unseen:
            self.out.append(f"<pre>{escape(unseen, quote=False)}</pre>")
