"""The examples' process: import a page's module, evaluate its examples.

`literate.execute` starts `python -m literate.example_process` in the
repository root with the pending examples of one page as JSON on stdin; this
module imports the page's module under its dotted name, evaluates each
example as a notebook cell would (what it prints, its value's `repr`, its
figures as SVG and PNG, a `literate.data.Data` as JSON), records which files
it read (for the cache), and writes the results as JSON.
"""

from __future__ import annotations

import base64
import contextlib
import io
import json
import os
import sys
import traceback
from pathlib import Path

from literate.cache_key import import_root, module_name
from literate.clipped import drawn_texts, outside
from literate.languages import FONTS

# Figures are drawn on a transparent background in a mid grey (contrast about
# 4:1 against both the light page and the dark one), so one SVG reads in
# both themes; colour maps and line colours are left as they are.
GREY = "#808080"
STYLE = {
    "figure.facecolor": "none",
    "axes.facecolor": "none",
    "savefig.facecolor": "none",
    "savefig.transparent": True,
    "text.color": GREY,
    "axes.labelcolor": GREY,
    "axes.edgecolor": GREY,
    "xtick.color": GREY,
    "ytick.color": GREY,
    "grid.color": GREY,
    "legend.frameon": False,
    # The same figure gives the same bytes, so the built pages are reproducible.
    "svg.hashsalt": "literate",
    "svg.fonttype": "path",
}
# A figure is also drawn as a PNG of twice its shown size: an SVG shows at
# 96 CSS px per inch of the figure, so the PNG has 192 pixels per inch.
RASTER_DPI = 192


def child_main() -> None:
    """Import the module, evaluate each example, write the results as JSON."""
    request = json.loads(sys.stdin.read())
    root, source = Path(request["root"]), request["source"]
    reads = _record_reads(root)
    results, error = [], None
    try:
        _setup_matplotlib(request.get("lang", ""))
        _use_words(request.get("words") or {})
        module = _import(root / source, root)
        imported = set(reads)
        for line, expr, hide in request["examples"]:
            reads.clear()
            reads.update(imported)
            error = _evaluate(module, source, line, expr, hide, root, results)
            if error:
                break
            results[-1]["inputs"] = sorted(reads)
    except BaseException as err:  # importing the module failed
        line = request["examples"][0][0]
        message = f"importing {source} failed:\n" + _traceback(err, str(root / source))
        error = {"line": line, "traceback": scrub(message, root)}
    reply = {"results": results, "error": error}
    Path(request["results"]).write_text(json.dumps(reply), encoding="utf-8")


def _setup_matplotlib(lang: str = "") -> None:
    """Agg, the style, the language's fonts; a missing glyph is an error."""
    import warnings

    warnings.filterwarnings("error", "Glyph .* missing from font")
    try:
        import matplotlib
    except ImportError:
        return
    matplotlib.use("Agg")
    matplotlib.rcParams.update(STYLE)
    if lang in FONTS:
        matplotlib.rcParams["font.family"] = FONTS[lang]


def _use_words(words: dict[str, str]) -> None:
    """Give `literate.words.tr` the page's translations (those not empty)."""
    from literate import words as module

    module.use({k: v for k, v in words.items() if v.strip()})


def _import(path: Path, root: Path):
    """The module at `path`, imported under its dotted name (not `__main__`)
    from its import root, its packages' `__init__.py` first, so that the
    page's absolute imports (`from geom.vectors import dot`) and relative
    ones (`from .vectors import dot`) work; its own folder is on the path
    too, as for a script. See `cache_key.import_root`."""
    import importlib

    name = module_name(path, root)
    folders = [str(import_root(path, root)), str(path.parent)]
    sys.path[:0] = [f for f in dict.fromkeys(folders) if f not in sys.path]
    module = importlib.import_module(name)
    found = getattr(module, "__file__", None)
    if not found or not Path(found).samefile(path):
        raise ImportError(
            f"`import {name}` found {found or 'a module without a file'}, not "
            f"this page's source (an installed module of that name shadows it)"
        )
    return module


def _record_reads(root: Path) -> set[str]:
    """A set that collects the data files under `root` opened for reading."""
    reads: set[str] = set()
    skip = {"site-packages", "dist-packages", "__pycache__", ".git", ".cache"}
    prefixes = {sys.prefix, sys.base_prefix, sys.exec_prefix}

    def hook(event: str, args: tuple) -> None:
        if event != "open" or not isinstance(args[0], str | bytes | os.PathLike):
            return
        mode, flags = args[1] or "r", args[2] or 0  # os.open gives flags only
        if any(c in str(mode) for c in "wax+") or flags & (os.O_WRONLY | os.O_RDWR):
            return
        path = os.path.abspath(os.fsdecode(args[0]))
        if any(path.startswith(p + os.sep) for p in prefixes):
            return
        if not Path(path).is_relative_to(root):
            return
        rel = Path(path).relative_to(root)
        if skip.isdisjoint(rel.parts) and rel.suffix not in (".py", ".pyc"):
            # A file that is not there yet counts too: its hash is "" until
            # it appears, so the example that missed it runs again then.
            if os.path.isfile(path) or not os.path.lexists(path):
                reads.add(rel.as_posix())

    sys.addaudithook(hook)
    return reads


def _evaluate(module, source, line, expr, hide, root, results) -> dict | None:
    """Run one example; append its result, or return the error."""
    _reset_state()
    where = f"<#| {source}:{line}>"
    printed = io.StringIO()
    try:
        with contextlib.redirect_stdout(printed):
            value = eval(compile(expr, where, "eval"), vars(module))
            text, (svgs, rasters, clipped) = printed.getvalue(), figures(value)
            data = _data(value)
            if value is not None and not hide and not _is_figure(value) and not data:
                text += repr(value) + "\n"
    except BaseException as err:
        message = f"`{expr}` raised:\n" + _traceback(err, where)
        return {"line": line, "traceback": scrub(message, root)}
    results.append(
        {
            "line": line,
            "text": scrub(text, root),
            "figures": [scrub(svg, root) for svg in svgs],
            "rasters": rasters,
            "clipped": clipped,
            "data": [dict(d, json=scrub(d["json"], root)) for d in data],
        }
    )
    return None


def _reset_state() -> None:
    """The same random state and no open figures before every example."""
    import random

    random.seed(0)
    if "numpy" in sys.modules:
        sys.modules["numpy"].random.seed(0)
    if "torch" in sys.modules:
        sys.modules["torch"].manual_seed(0)
    if "matplotlib.pyplot" in sys.modules:
        sys.modules["matplotlib.pyplot"].close("all")


def _is_figure(value) -> bool:
    return type(value).__module__.startswith("matplotlib") and hasattr(value, "savefig")


def _data(value) -> list[dict]:
    """A returned `literate.data.Data` as [{"name", "json"}]; else []."""
    data = sys.modules.get("literate.data")
    if data is None or not isinstance(value, data.Data):
        return []
    return [{"name": value.name, "json": value.json}]


def figures(value) -> tuple[list[str], list[str], list[list[str]]]:
    """Every open pyplot figure (and a returned one), as SVG text and as a
    base64 PNG at twice the SVG's size in CSS px (RASTER_DPI), and for each
    the texts its canvas cuts off (`literate.clipped`); all closed."""
    pyplot = sys.modules.get("matplotlib.pyplot")
    figs = [pyplot.figure(n) for n in pyplot.get_fignums()] if pyplot else []
    if _is_figure(value) and value not in figs:
        figs.append(value)
    svgs, pngs, clipped = [], [], []
    for fig in figs:
        buffer = io.StringIO()
        with drawn_texts() as drawn:
            fig.savefig(buffer, format="svg", metadata={"Date": None})
        svgs.append(buffer.getvalue())
        clipped.append(outside(drawn))
        raster = io.BytesIO()
        fig.savefig(raster, format="png", dpi=RASTER_DPI, metadata={"Software": None})
        pngs.append(base64.b64encode(raster.getvalue()).decode())
        if pyplot:
            pyplot.close(fig)
    return svgs, pngs, clipped


def _traceback(err: BaseException, first_file: str) -> str:
    """The traceback of `err` from the first frame in `first_file` on."""
    tb = err.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename != first_file:
        tb = tb.tb_next
    return "".join(traceback.format_exception(type(err), err, tb or err.__traceback__))


def scrub(text: str, root: Path, home: Path | None = None) -> str:
    """`text` with paths under `root` made relative and `home` written `~`."""
    for folder, short in ((root, ""), (home or Path.home(), "~/")):
        forms = {str(folder), os.path.realpath(folder)}
        for form in sorted(forms, key=len, reverse=True):
            if len(form) > 1:
                text = text.replace(form + os.sep, short)
                text = text.replace(form, short.rstrip("/") or ".")
    return text


if __name__ == "__main__":
    child_main()
