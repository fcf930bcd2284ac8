"""Figures as the build makes them: `data:` URLs of SVG or PNG, and files.

The execute stage hands each figure over as a `data:` URL (see
`literate.execute.figure_url`), so a rendered page is whole on its own: that
is what `literate render` writes. The mkdocs adapter moves each figure into
a file named by its content (`assets/figures/<hash>.svg`), which every page
and language showing the same figure shares and a browser caches.

A figure's shown size, in CSS px, is what its own bytes say: an SVG's
`width`/`height` (matplotlib writes points, 96/72 px each), a PNG's pixels
divided by the density its `pHYs` chunk records (the build draws them at
192 per inch: twice the shown size).
"""

from __future__ import annotations

import base64
import binascii
import functools
import gzip
import hashlib
import html
import io
import re
import struct

SVG_URL = "data:image/svg+xml;base64,"
PNG_URL = "data:image/png;base64,"
EXTENSIONS = {SVG_URL: ".svg", PNG_URL: ".png"}
CSS_PX_PER_INCH = 96
_LENGTH = re.compile(r"\s*([0-9.]+)\s*(pt|px|in|cm|mm)?\s*$")
_PX = {"pt": 96 / 72, "px": 1, "in": 96, "cm": 96 / 2.54, "mm": 96 / 25.4, None: 1}
_SVG_TAG = re.compile(rb"<svg\b[^>]*>", re.S)


def figure_url(svg: str, png: str = "") -> str:
    """A figure as a data: URL: its SVG, or its PNG where that is the lighter
    of the two as a host sends them (an SVG compressed, being text; a PNG as
    it is). The PNG is the build's (`png`, base64) reduced to 256 colours,
    which a heatmap's colour map and the grey of its labels fit in. A grid of
    heatmaps, a rectangle per cell, comes out as a PNG; line plots, and
    heatmaps of few cells, as SVGs."""
    if png:
        palette = _palette_png(png)
        if len(palette) < len(gzip.compress(svg.encode(), 6, mtime=0)):
            return PNG_URL + base64.b64encode(palette).decode()
    return SVG_URL + base64.b64encode(svg.encode()).decode()


@functools.lru_cache(maxsize=256)
def _palette_png(png: str) -> bytes:
    """The PNG (base64) with at most 256 colours, transparency and density kept."""
    from PIL import Image

    image = Image.open(io.BytesIO(base64.b64decode(png)))
    dpi = image.info.get("dpi")
    out = io.BytesIO()
    reduced = image.convert("RGBA").quantize(256, method=Image.Quantize.FASTOCTREE)
    reduced.save(out, format="PNG", optimize=True, **({"dpi": dpi} if dpi else {}))
    return out.getvalue()


def decode(url: str) -> tuple[str, bytes]:
    """A figure's `data:` URL as (file extension, bytes); ValueError if it is
    not a base64 SVG or PNG."""
    for head, extension in EXTENSIONS.items():
        if url.startswith(head):
            try:
                return extension, base64.b64decode(url[len(head) :], validate=True)
            except binascii.Error as err:
                raise ValueError(f"a figure's base64 is broken: {err}") from None
    raise ValueError(f"not an SVG or PNG data: URL: {url[:40]!r}")


def file_name(url: str) -> str:
    """The figure's file name: a hash of its bytes and its extension."""
    extension, data = decode(url)
    return hashlib.sha256(data).hexdigest()[:16] + extension


def shown_size(url: str) -> tuple[int, int] | None:
    """(width, height) in CSS px at which the figure shows; None if its bytes
    do not say."""
    extension, data = decode(url)
    return _svg_size(data) if extension == ".svg" else _png_size(data)


def _svg_size(data: bytes) -> tuple[int, int] | None:
    tag = _SVG_TAG.search(data)
    if tag is None:
        return None
    sizes = []
    for name in (b"width", b"height"):
        value = re.search(rb"\s" + name + rb'="([^"]*)"', tag.group())
        length = value and _LENGTH.match(value.group(1).decode("ascii", "replace"))
        if not length:
            return None
        sizes.append(round(float(length.group(1)) * _PX[length.group(2)]))
    return sizes[0], sizes[1]


def _png_size(data: bytes) -> tuple[int, int] | None:
    """From the IHDR chunk, scaled by the pHYs chunk's density (if any)."""
    if data[:8] != b"\x89PNG\r\n\x1a\n" or data[12:16] != b"IHDR":
        return None
    width, height = struct.unpack(">II", data[16:24])
    scale = 1.0
    at = data.find(b"pHYs", 8, max(data.find(b"IDAT"), 8))  # before the pixels
    if at > 0:
        x, y, unit = struct.unpack(">IIB", data[at + 4 : at + 13])
        if unit == 1 and x == y and x > 0:  # pixels per metre
            scale = CSS_PX_PER_INCH / (x * 0.0254)
    return round(width * scale), round(height * scale)


def img_tag(url: str, alt: str) -> str:
    """The `<img>` of a figure: its size reserved (nothing moves when it
    arrives), fetched only as the reader nears it, decoded off the main
    thread."""
    size = shown_size(url)
    box = f' width="{size[0]}" height="{size[1]}"' if size else ""
    src, text = html.escape(url, quote=True), html.escape(alt, quote=True)
    return f'<img src="{src}" alt="{text}"{box} loading="lazy" decoding="async">'
