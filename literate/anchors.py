"""A section's anchor: stable across edits that do not touch it.

The anchor is the symbol a section defines (`MultiHeadAttention.forward`),
else its enclosing symbol and a slug of its content; never its position
alone, so adding a section above does not move the links to this one.
"""

from __future__ import annotations

import hashlib
import re


def section_anchors(drafts: list[tuple[list[str], list, str, str]]) -> list[str]:
    """Stable ids: the defined symbol, else enclosing symbol plus a content slug.

    Sections that start with a class or function claim its name first, so a
    slug can never take it. A slug that is taken grows to more words of the
    content; only identical content falls back to `-2`, `-3` in source order.
    """
    taken: set[str] = set()
    # The last suffix tried for each base: `taken` only grows, so the search
    # for a free `base-N` resumes there (linear, not quadratic, in repeats).
    suffix: dict[str, int] = {}
    result = [""] * len(drafts)
    order = sorted(range(len(drafts)), key=lambda i: (not drafts[i][1], i))
    for i in order:
        docs, code, starts, symbol = drafts[i]
        if starts:
            wanted = [starts]
        else:
            wanted = [
                f"{symbol}-{slug}" if symbol else slug for slug in _slugs(docs, code)
            ]
        free = [a for a in wanted if a not in taken and not re.fullmatch(r"L\d+", a)]
        anchor = (free or wanted)[0]
        if not free:
            base = wanted[-1]
            n = suffix.get(base, 1)
            while anchor in taken or re.fullmatch(r"L\d+", anchor):
                n += 1
                anchor = f"{base}-{n}"
            suffix[base] = n
        taken.add(anchor)
        result[i] = anchor
    return result


def _slugs(docs: list[str], code: list) -> list[str]:
    """Slugs from the content, short to long: the prose's first line, then up to
    eight words of it (of the code when there is no prose)."""
    for text in ("\n".join(docs), "\n".join(c.text for c in code)):
        text = re.sub(
            r"\$\$.*?\$\$|\$[^$\n]*\$|`[^`]*`|\]\([^)]*\)", " ", text, flags=re.S
        )
        lines = [re.findall(r"[A-Za-z0-9]+", row) for row in text.split("\n")]
        words = [w for row in lines for w in row]
        if words:
            first = next(row for row in lines if row)
            return [_join(first[:4]), _join(words[:8])]
    content = "\n".join(docs) + "\n".join(c.text for c in code)
    return ["s-" + hashlib.sha1(content.encode()).hexdigest()[:8]]


def _join(words: list[str]) -> str:
    """Lower-case words joined by `-`, cut at a word to at most 48 characters."""
    slug = words[0].lower()[:48]
    for word in words[1:]:
        if len(slug) + 1 + len(word) > 48:
            break
        slug += "-" + word.lower()
    return slug
