"""Command line: `literate render FILE` and `literate translations ...`.

literate [--root DIR] render mha.py -o out/mha.html [--lang ja] [--fragment]
    the page as the site shows it (examples run, translated with the
    glossary) as a standalone HTML file, or with --fragment only the body
    the site embeds; without -o it goes to stdout. The file is whole on
    its own: its figures are inside it as data: URLs (the site writes them
    as files under assets/figures/ instead, see literate.figures)
literate [--root DIR] translations update|status|check ...
    the translation tools (see `literate translations --help`)

--root is the project's folder (sources, translations/, node_modules/); by
default the nearest folder holding mkdocs.yml, from the working directory
up, else the working directory. `python -m literate` is the same command.
"""

from __future__ import annotations

import argparse
import html
import os
import sys
from pathlib import Path

from pygments.formatters import HtmlFormatter

CSS = Path(__file__).with_name("assets") / "literate.css"


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(sys.argv[1:] if argv is None else argv)
    given = getattr(args, "root", None)
    root = (Path(given) if given else default_root(Path.cwd())).resolve()
    if not root.is_dir():
        print(f"--root {ascii(str(root))}: not a folder", file=sys.stderr)
        return 2
    return args.command(root, args)


def default_root(cwd: Path) -> Path:
    """The nearest folder from `cwd` up that holds mkdocs.yml, else `cwd`."""
    return next((p for p in (cwd, *cwd.parents) if (p / "mkdocs.yml").is_file()), cwd)


def _parser() -> argparse.ArgumentParser:
    from literate.translations.cli import add_commands, run

    root = argparse.ArgumentParser(add_help=False)
    root.add_argument(
        "--root",
        default=argparse.SUPPRESS,
        help="the project's folder (default: the nearest holding mkdocs.yml, "
        "else the working directory)",
    )
    # No set_defaults(root=None) here: the `--root` action is shared with the
    # subcommands (parents=), and a default set on it would overwrite a
    # `--root` given before the subcommand.
    parser = argparse.ArgumentParser(prog="literate", parents=[root])
    commands = parser.add_subparsers(required=True, metavar="COMMAND")
    render = commands.add_parser(
        "render", parents=[root], help="render one source as the site shows it"
    )
    render.add_argument("file", type=Path, help="a literate Python source")
    render.add_argument("-o", "--output", type=Path, help="file to write (stdout)")
    render.add_argument("--lang", default="en", help="en (default), ja, zh, ...")
    render.add_argument(
        "--fragment", action="store_true", help="only the page body, no <html>"
    )
    render.add_argument(
        "--no-examples", action="store_true", help="do not run the `#|` examples"
    )
    render.set_defaults(command=render_command)
    translations = commands.add_parser(
        "translations",
        parents=[root],
        help="keep the translation tables in step with the sources",
        description="Keep the translation tables in step with the sources.",
    )
    add_commands(translations)
    translations.set_defaults(command=run)
    return parser


def render_command(root: Path, args: argparse.Namespace) -> int:
    from literate.katex import dist_folder
    from literate.keys import SOURCE_LANGUAGE, is_language, site_options
    from literate.pipeline import ERRORS, KATEX, Pipeline

    if args.lang != SOURCE_LANGUAGE and not is_language(args.lang):
        print(
            f"error: --lang {ascii(args.lang)}: expected en or a language code "
            "such as ja, zh, pt-BR",
            file=sys.stderr,
        )
        return 2
    file = args.file.resolve()
    try:
        source = file.relative_to(root.resolve()).as_posix()
    except ValueError:  # a file outside the project: its folder is the root
        root, source = file.parent, file.name
    # The site's own plugin options, so the page is the one the site shows.
    options = site_options(root)
    katex = str(options.get("katex_dist", KATEX))
    settings = {"katex": katex, "run_examples": not args.no_examples}
    settings["run_examples"] &= bool(options.get("run_examples", True))
    if "packages" in options:
        settings["packages"] = tuple(options["packages"])
    if "timeout" in options:
        settings["timeout"] = float(options["timeout"])
    if "markdown_extensions" in options:
        settings["extensions"] = tuple(options["markdown_extensions"])
    pipeline = Pipeline(root, **settings)
    try:
        page = pipeline.page(source, args.lang)
        body = pipeline.html(page, source_url=_relative(file, args.output))
    except OSError as error:
        print(f"error: {error.filename}: {error.strerror}", file=sys.stderr)
        return 1
    except ERRORS as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    finally:
        pipeline.close()
    katex_css = dist_folder(pipeline.root, katex) / "katex.min.css"
    text = body if args.fragment else _standalone(page, body, katex_css, args.output)
    if args.output:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0


def _relative(target: Path, start: Path | None) -> str:
    """A link from the output file (or the working directory) to `target`."""
    folder = start.resolve().parent if start else Path.cwd()
    return Path(os.path.relpath(target.resolve(), folder)).as_posix()


def _standalone(page, body: str, katex_css: Path, output: Path | None) -> str:
    """A whole HTML document around `body`, for looking at it in a browser."""
    pygments_css = HtmlFormatter(style="default").get_style_defs(".highlight")
    katex = _relative(katex_css, output)
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
