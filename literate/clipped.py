"""Figure text that the saved canvas cuts off.

matplotlib draws a label where the layout puts it, even when part of it
lies past the figure's edge; the saved file then shows a word cut in half
(a long y label in Japanese, say, on a figure sized for the English). The
execute stage saves each figure inside `drawn_texts()`, which records the
extent of every text as it is drawn (titles, axis and tick labels, legends,
annotations, the suptitle, colour bar labels), and `outside` names those
that reach past the canvas, for a build warning with the example's
`file:line`.

Only what is drawn counts: a hidden text, an empty one, and a tick label
outside the axis' limits are not drawn. A text clipped on purpose to its
axes (`clip_on`) counts with only the part its clip box leaves.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

# How far, in points of the figure, a text may reach past the edge: glyph
# boxes are measured from the font's ascent and descent, so a label set flush
# with the edge can overrun by a fraction of a point with no pixel cut.
TOLERANCE_PT = 1.0


@contextlib.contextmanager
def drawn_texts() -> Iterator[list[dict]]:
    """Collect, while inside, each text drawn: {"text", "extent": (x0, y0,
    x1, y1), "canvas": (width, height)}, in the drawing's units (points for
    an SVG, pixels for a PNG)."""
    from matplotlib.text import Text

    original = Text.draw
    drawn: list[dict] = []

    def draw(self, renderer):
        original(self, renderer)
        if renderer is None or not self.get_visible() or not self.get_text().strip():
            return
        extent = _visible_extent(self, renderer)
        if extent is not None:
            drawn.append(
                {
                    "text": self.get_text(),
                    "extent": tuple(extent.extents.tolist()),
                    "canvas": tuple(renderer.get_canvas_width_height()),
                    "unit": 72 / renderer.points_to_pixels(72),
                }
            )

    Text.draw = draw
    try:
        yield drawn
    finally:
        Text.draw = original


def _visible_extent(text, renderer):
    """The text's window extent, cut to its clip box and path if it is
    clipped; None if nothing of it is left."""
    extent = text.get_window_extent(renderer)
    if not text.get_clip_on():
        return extent
    clips = [text.get_clip_box()]
    path = text.get_clip_path()
    if path is not None:
        clips.append(path.get_fully_transformed_path().get_extents())
    for clip in filter(None, clips):
        extent = extent.intersection(extent, clip)
        if extent is None:
            return None
    return extent


def outside(drawn: list[dict]) -> list[str]:
    """One line per drawn text that reaches past the canvas by more than
    TOLERANCE_PT: the text and by how much, on which side (once, though a
    layout engine may draw a text twice)."""
    lines = []
    for item in drawn:
        x0, y0, x1, y1 = item["extent"]
        width, height = item["canvas"]
        unit = item.get("unit", 1.0)  # points per drawing unit
        over = {"left": -x0, "bottom": -y0, "right": x1 - width, "top": y1 - height}
        sides = [
            f"{side} by {amount * unit:.1f} pt"
            for side, amount in over.items()
            if amount * unit > TOLERANCE_PT
        ]
        if sides:
            shown = " ".join(item["text"].split())
            shown = shown if len(shown) <= 60 else shown[:57] + "..."
            lines.append(f"{shown!r} ({', '.join(sides)})")
    return list(dict.fromkeys(lines))
