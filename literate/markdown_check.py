"""The Markdown a translation keeps as its English has it.

Link brackets balanced, each link's `](` kept together, no image made of a
link, emphasis markers paired where the English's are, and the same headings
at the same levels: what the renderer needs to show the translation as the
English is shown (`check_entry` calls it).
"""

from __future__ import annotations

import re


def structure_problems(
    key: str, value: str, bare_key: str, bare_value: str
) -> list[str]:
    problems = []
    if _brackets_balanced(bare_key) and not _brackets_balanced(bare_value):
        problems.append("unbalanced link brackets: every '[' needs its ']'")
    for link in _LINK.findall(key):
        if link not in value:
            problems.append(f"link {link!r} is broken: keep ']' and '(' together")
    if _images(bare_value) > _images(bare_key):
        problems.append(
            "'![' makes a link an image (its text would be lost): write '[' as "
            "the English does"
        )
    translated = _emphasis_parity(bare_value)
    for marker, odd in _emphasis_parity(bare_key).items():
        if not odd and translated[marker]:
            problems.append(f"unbalanced emphasis: an odd number of {marker!r}")
    wanted, found = _headings(bare_key), _headings(bare_value)
    if found != wanted:
        problems.append(
            f"the headings are {found or 'none'}, the English's {wanted or 'none'}: "
            "keep each '#' heading of the English, at its level, and add none "
            "(they make the page's section list)"
        )
    return problems


# An ATX heading line (`## Title`), outside fenced code; its level.
_HEADING = re.compile(r"(?m)^ {0,3}(#{1,6})(?:[ \t]|$)")


def _headings(text: str) -> list[int]:
    """The levels of the Markdown headings of `text`, in order."""
    if "#" not in text:
        return []
    levels, fenced = [], False
    for row in text.split("\n"):
        if row.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        match = None if fenced else _HEADING.match(row)
        if match:
            levels.append(len(match.group(1)))
    return levels


# (Each has a fast path: most values hold none of the characters it reads.)
_LINK = re.compile(r"\]\(_\^_\d+_\^_\)")
_ESCAPED = re.compile(r"\\.")
_BULLET = re.compile(r"(?m)^\s*[*+-]\s+")
_SPACED_STAR = re.compile(r"\s\*+\s")
_SNAKE = re.compile(r"(?<=[A-Za-z0-9])_+(?=[A-Za-z0-9])")
_IMAGE = re.compile(r"(?<!\\)!\[")
_NO_EMPHASIS = {"**": False, "__": False, "*": False, "_": False}


def _images(text: str) -> int:
    """How many `![` (an image's start) there are, not counting `\\![`."""
    if "![" not in text:
        return 0
    return len(_IMAGE.findall(text.replace("\\\\", "")))


def _brackets_balanced(text: str) -> bool:
    if "[" not in text and "]" not in text:
        return True
    depth = 0
    for char in _ESCAPED.sub("", text):
        if char == "[":
            depth += 1
        elif char == "]":
            depth -= 1
            if depth < 0:
                return False
    return depth == 0


def _emphasis_parity(text: str) -> dict[str, bool]:
    """Whether each emphasis marker occurs an odd number of times."""
    if "*" not in text and "_" not in text:
        return dict(_NO_EMPHASIS)
    text = _ESCAPED.sub("", text)
    text = _BULLET.sub("", text)  # bullet list markers
    text = _SPACED_STAR.sub(" ", text)  # `a * b` is not emphasis
    text = _SNAKE.sub("", text)  # snake_case
    strong = {m: text.count(m) for m in ("**", "__")}
    for marker in strong:
        text = text.replace(marker, "")
    parity = {m: n % 2 == 1 for m, n in strong.items()}
    parity |= {m: text.count(m) % 2 == 1 for m in ("*", "_")}
    return parity
