"""Command line: `python -m literate render FILE` and `... translations ...`.

python -m literate render mha.py -o out/mha.html [--lang ja] [--fragment]
    the page as a standalone HTML file (KaTeX's stylesheet and fonts from
    node_modules), or with --fragment only the body the site embeds;
    without -o it goes to stdout
python -m literate translations ...
    the translation tools (see `python -m literate translations --help`)
"""

from __future__ import annotations

import argparse
import html
import os
import sys
from pathlib import Path

from pygments.formatters import HtmlFormatter

ROOT = Path(__file__).resolve().parent.parent
CSS = Path(__file__).with_name("assets") / "literate.css"
KATEX_CSS = ROOT / "node_modules" / "katex" / "dist" / "katex.min.css"


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["translations"]:
        from literate.translations.cli import main as translations_main

        return translations_main(argv[1:])
    args = _parser().parse_args(argv)
    return render_command(args)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m literate")
    commands = parser.add_subparsers(dest="command", required=True)
    render = commands.add_parser("render", help="render one source as HTML")
    render.add_argument("file", type=Path, help="a literate Python source")
    render.add_argument("-o", "--output", type=Path, help="file to write (stdout)")
    render.add_argument("--lang", default="en", help="en (default), ja, zh, ...")
    render.add_argument(
        "--fragment", action="store_true", help="only the page body, no <html>"
    )
    commands.add_parser("translations", help="translation tools", add_help=False)
    return parser


def render_command(args: argparse.Namespace) -> int:
    from literate.parse import ParseError, parse
    from literate.render import RenderError, render_page

    path = _display_path(args.file)
    try:
        page = parse(args.file.read_text(encoding="utf-8"), path)
        if args.lang != "en":
            page = _translate(page, args.lang)
        body = render_page(page, source_url=_relative(args.file, args.output))
    except (ParseError, RenderError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    except OSError as error:
        print(f"error: {error.filename}: {error.strerror}", file=sys.stderr)
        return 1
    text = body if args.fragment else _standalone(page, body, args.output)
    if args.output:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0


def _translate(page, lang: str):
    """The page in `lang`, from translations/<lang>/<stem>.json (if present)."""
    from literate.translate import translate_page
    from literate.translations.tables import load_table

    table_file = ROOT / "translations" / lang / f"{Path(page.source).stem}.json"
    table = load_table(table_file) if table_file.exists() else {}
    return translate_page(page, lang, table)


def _display_path(file: Path) -> str:
    """The repo-relative path when the file is in the repository."""
    try:
        return file.resolve().relative_to(ROOT).as_posix()
    except ValueError:
        return file.name


def _relative(target: Path, start: Path | None) -> str:
    """A link from the output file (or the working directory) to `target`."""
    folder = start.resolve().parent if start else Path.cwd()
    return Path(os.path.relpath(target.resolve(), folder)).as_posix()


def _standalone(page, body: str, output: Path | None) -> str:
    """A whole HTML document around `body`, for looking at it in a browser."""
    pygments_css = HtmlFormatter(style="default").get_style_defs(".highlight")
    katex = _relative(KATEX_CSS, output)
    return (
        "<!doctype html>\n"
        f'<html lang="{html.escape(page.lang)}">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{html.escape(page.title)}</title>\n"
        f'<meta name="description" content="{html.escape(page.summary)}">\n'
        f'<link rel="stylesheet" href="{html.escape(katex)}">\n'
        f"<style>\n{CSS.read_text(encoding='utf-8')}\n{pygments_css}\n"
        "body { margin: 1rem 2rem; font: 16px/1.6 system-ui, sans-serif; }\n"
        "</style>\n</head>\n<body>\n"
        f"{body}</body>\n</html>\n"
    )


if __name__ == "__main__":
    sys.exit(main())
