"""Math in the code column's comments, typeset as the prose's is.

labml writes `# Train for $32$ epochs` inside its code (a comment in a
config dict stays in the code column); its pages typeset that `$32$`, and so
do ours. Only inline math, found by the prose's own rules (`spans.extract`:
a price such as `$5` stays text). A formula KaTeX rejects stays as written:
a comment is the code's neighbour, and the build does not fail on it.
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping

from literate.comments import every_comment
from literate.model import Page
from literate.spans import Span, extract

_COMMENT = '<span class="c1'  # Pygments' class for a `#` comment
_TAG = re.compile(r"(<[^>]*>)")  # a tag: its attributes (a tooltip) stay text


def typeset_comment_math(
    code: Mapping[int, str], page: Page, formulas
) -> dict[int, str]:
    """`code` (line -> HTML) with each comment's inline math typeset by
    `formulas` (a `katex.Katex` or any function of (tex, display) pairs), in
    the English comment and in its translation (`Page.comments`) alike."""
    shown = dict(page.comments)
    wanted: dict[int, list[Span]] = {}
    for comment in every_comment(page.sections):
        texts = (comment.token, shown.get(comment.number, ""))
        spans = [s for t in texts for s in extract(t).spans if s.kind == "math"]
        if spans and comment.number in code:
            wanted[comment.number] = spans
    if not wanted:
        return dict(code)
    batch = {(s.text[1:-1], False): None for spans in wanted.values() for s in spans}
    results = formulas(list(batch))
    typeset = dict(code)
    for number, spans in wanted.items():
        line = typeset[number]
        at = line.find(_COMMENT)
        if at < 0:
            continue
        parts = _TAG.split(line[at:])
        for span in spans:
            rendered = results[(span.text[1:-1], False)]
            if not rendered.html or rendered.refused:
                continue
            written = html.escape(span.text, quote=False)
            parts = [
                p if p.startswith("<") else p.replace(written, rendered.html)
                for p in parts
            ]
        typeset[number] = line[:at] + "".join(parts)
    return typeset
