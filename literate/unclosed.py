"""Math that was opened and never closed: `$$` or a TeX-looking `$` left over.

The span scanner reads an unclosed `$$`, or a `$` with no closing `$` on its
paragraph, as literal dollars, so the page would show raw TeX without a word.
`unclosed_math` finds them, so that the renderer can warn (file:line) and
`mkdocs build --strict` fails. A lone `$` that reads as money (`$5`) or as
text is not math and is never reported.
"""

from __future__ import annotations

import re

from literate.spans import PLACEHOLDER_RE, extract

# In the prose left once every closed span is a placeholder: any unescaped
# `$$`, and a `$` that opens TeX (`$\alpha`, `$x^2`, `$d_k`, `$W{`).
_OPENER = re.compile(
    r"(?<!\\)\$\$"
    r"|(?<![\\$])\$(?!\$)(?=\\[A-Za-z]|[A-Za-z0-9]{1,8}[\^_{])"
)


def unclosed_math(markdown: str) -> list[tuple[int, str]]:
    """(line index in `markdown`, what was left open) for each unclosed math."""
    template = extract(markdown)
    found = []
    for match in _OPENER.finditer(template.text):
        line = _original_line(template.text, template.spans, match.start())
        opener = match.group(0) or "$"
        found.append((line, opener))
    return found


def _original_line(text: str, spans, offset: int) -> int:
    """The line of `offset` of the template in the markdown it came from: the
    placeholders before it stand for spans that may hold line breaks."""
    breaks = text.count("\n", 0, offset)
    for m in PLACEHOLDER_RE.finditer(text, 0, offset):
        breaks += spans[int(m.group(1))].text.count("\n")
    return breaks
