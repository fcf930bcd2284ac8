"""Figures for narrow screens: a narrow variant, and how small a figure's text is.

A figure drawn for the width of a wide window (three panels side by side)
shrinks with a phone's screen, and so does its text. An example can draw the
same thing twice: the figure for wide windows, then a narrow one (the panels
stacked), marked with `narrow(fig)`. The page shows the narrow one where the
wide one's text would come out smaller than READABLE_PX:

    def draw_masks():
        _masks(columns=3)
        narrow(_masks(columns=1))

The execute stage tells the two apart by the mark, which matplotlib writes
into the SVG as the figure's id; `smallest_text` reads the SVG's text sizes
(as paths, `svg.fonttype: path`, or as text) so the renderer and the tests
can tell what size a figure's text is once it is shown at a given width.
"""

from __future__ import annotations

import math
import re

NARROW = "literate-narrow"  # the figure's gid, the id of its SVG's first group
READABLE_PX = 9.0  # the smallest text, in CSS px, a figure should show
# The page's margins around a figure on a narrow window (stacked layout),
# in CSS px: the figure is this much narrower than the window.
MARGINS_PX = 32
# Where a figure with no text to measure takes its narrow variant.
NARROW_DEFAULT_PX = 600

_ROOT = re.compile(r"<svg\b[^>]*>", re.S)
_VIEW_BOX = re.compile(r'\sviewBox="\s*[-0-9.]+[\s,]+[-0-9.]+[\s,]+([0-9.]+)')
_WIDTH = re.compile(r'\swidth="\s*([0-9.]+)')
# A text drawn as paths: a group `text_N` whose transform scales glyphs of
# 100 units to the font size (matplotlib's textpath.FONT_SCALE); glyphs of
# math drawn smaller (sub- and superscripts) carry their own `scale(k)`.
_TEXT_GROUP = re.compile(
    r'<g id="text_\d+">\s*(?:<!--.*?-->\s*)?<g [^>]*?transform="([^"]*)"', re.S
)
_GROUP_SCALE = re.compile(r"scale\(([0-9.]+)[ ,]+-")
_GLYPH_SCALE = re.compile(r'<use [^>]*transform="[^"]*scale\(([0-9.]+)\)')
_FONT_SCALE = 100
# A text drawn as text (`svg.fonttype: none`).
_FONT_SIZE = re.compile(r"font(?:-size)?:\s*([0-9.]+)px")


def narrow(fig):
    """Marks `fig` as the narrow variant of the figure the example drew just
    before it; returns `fig`."""
    fig.set_gid(NARROW)
    return fig


def is_narrow(svg: str) -> bool:
    """Whether the SVG is a figure marked by `narrow`."""
    return f'<g id="{NARROW}"' in svg[:4000]


def smallest_text(svg: str) -> float:
    """The size of the SVG's smallest text as a fraction of its width (so
    the text shows at that times the width it is shown at); 0 if it has no
    text, or its size cannot be read."""
    root = _ROOT.search(svg)
    if root is None:
        return 0.0
    box = _VIEW_BOX.search(root.group()) or _WIDTH.search(root.group())
    width = float(box.group(1)) if box else 0.0
    sizes = [float(s) for s in _FONT_SIZE.findall(svg)]
    groups = list(_TEXT_GROUP.finditer(svg))
    for n, group in enumerate(groups):
        scale = _GROUP_SCALE.search(group.group(1))
        if not scale:
            continue
        end = groups[n + 1].start() if n + 1 < len(groups) else len(svg)
        glyphs = [float(k) for k in _GLYPH_SCALE.findall(svg, group.end(), end)]
        least = min([1.0, *glyphs])
        sizes.append(float(scale.group(1)) * _FONT_SCALE * least)
    sizes = [s for s in sizes if s > 0]
    return min(sizes) / width if sizes and width > 0 else 0.0


def narrow_below(text: float) -> int:
    """The window width in CSS px below which a wide figure whose smallest
    text is `text` of its width would show it under READABLE_PX (on a
    window that narrow the figure spans the page, less its margins)."""
    return math.ceil(READABLE_PX / text) + MARGINS_PX if text > 0 else 0
