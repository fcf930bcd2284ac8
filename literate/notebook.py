"""A Page as a Jupyter notebook that runs top to bottom in a fresh kernel.

The sections are already the cells' boundaries, so the notebook is built
with `nbformat` directly rather than by writing a text for `jupytext` to
parse again. The rules:

- Module-level prose becomes a markdown cell, and the code under it a code
  cell.
- A definition cannot be split across cells, so a class or function whose
  body holds several sections is one code cell: the prose inside it becomes
  `#` comments above the lines it explains, as in the source.
- A docstring stays a docstring, beside its `def` or `class` line.
- The `if __name__ == "__main__":` block is left out: in a kernel it would
  run the command line with the kernel's own arguments. Instead, each `#|`
  directive becomes a code cell after the code it follows, holding the
  outputs the build recorded for it, or later, after the last definition it
  needs (on the page every example runs once the whole module is loaded); a
  `#| notebook:` line becomes a cell only here (e.g. training on the `tiny`
  preset).
- A notebook has no `__file__`; where the code uses it, a first cell sets
  it to the source's name, so the notebook runs as the source would from
  the folder it is opened in (the repository root).
- A translated page's notebook, given the words its examples draw, starts
  with a cell that hands them to `tr` (see `literate.words`), so its figures
  and tables come out as the page shows them.

A translated Page gives a notebook with the translated prose.
"""

from __future__ import annotations

import ast
import base64
import json
import re
import warnings
from dataclasses import dataclass
from pathlib import PurePosixPath

import nbformat
from nbformat import v4

from literate.data import Data
from literate.directives import read_directive
from literate.languages import FONTS, label
from literate.model import Page, Section

KERNEL = {"name": "python3", "display_name": "Python 3", "language": "python"}
FILE_RE = re.compile(r"\b__file__\b")
MAIN_TESTS = ('__name__ == "__main__"', '"__main__" == __name__')


class NotebookError(ValueError):
    """The sections' code does not join into a valid module."""


@dataclass(frozen=True)
class _Piece:
    """A section's code lines as they go into a cell, and how prose goes in."""

    section: Section
    lines: tuple[str, ...]  # with its docstring put back, if it has one
    has_docstring: bool


def page_to_notebook(
    page: Page, words: dict[str, str] | None = None
) -> nbformat.NotebookNode:
    """The notebook of `page`: its prose, code and examples, in source order.

    `words`: the `tr` words of its examples in the page's language, if any.
    """
    pieces = [_piece(s) for s in page.sections]
    starts, lines = [], []
    for piece in pieces:
        starts.append(len(lines) + 1)
        lines.extend(piece.lines)
    inside, dropped = _statement_lines(page.source, lines)
    cells: list[nbformat.NotebookNode] = []
    group: list[_Piece] = []
    for i in range(len(pieces) + 1):
        if group and (i == len(pieces) or starts[i] not in inside):
            cells += _group_cells(page, group, starts[i - len(group)], dropped)
            group = []
        if i < len(pieces):
            group.append(pieces[i])
    cells = _after_what_they_need(cells)
    if any(FILE_RE.search(line) for line in lines):
        first_code = next(
            (n for n, c in enumerate(cells) if c.cell_type == "code"), len(cells)
        )
        cells.insert(first_code, _file_cell(page.source, page.lang))
    if words:
        first_code = next(
            (n for n, c in enumerate(cells) if c.cell_type == "code"), len(cells)
        )
        cells.insert(first_code, _words_cell(words, page.lang))
    for n, cell in enumerate(cells):
        cell["id"] = f"cell-{n}"  # the same notebook from the same page
    notebook = v4.new_notebook(cells=cells)
    notebook.metadata.update(kernelspec=KERNEL, language_info={"name": "python"})
    return notebook


def _words_cell(words: dict[str, str], lang: str) -> nbformat.NotebookNode:
    """`tr`'s words, and the build's fonts for `lang` (with its glyphs)."""

    def text(s: str) -> str:
        return json.dumps(s, ensure_ascii=False)

    entries = "".join(f"    {text(k)}: {text(v)},\n" for k, v in sorted(words.items()))
    fonts = (
        f"\nimport matplotlib\n\nmatplotlib.rcParams['font.family'] = {FONTS[lang]}"
        if lang in FONTS
        else ""
    )
    return v4.new_code_cell(
        f"# {label(lang, 'notebook_words')}\n"
        "from literate.words import use\n\n"
        f"use({{\n{entries}}})" + fonts
    )


def _file_cell(source: str, lang: str) -> nbformat.NotebookNode:
    """`__file__` for the code that reads it, said in the page's language."""
    name = PurePosixPath(source).name
    comment = label(lang, "notebook_file").format(name=name)
    return v4.new_code_cell(f'# {comment}\n__file__ = "{name}"')


def _piece(section: Section) -> _Piece:
    """`section`'s code, with its docstring back in place if it had one."""
    code = section.code
    if not (code and section.docs_lines and section.docs_lines[0] > code[0].number):
        return _Piece(section, tuple(c.text for c in code), False)
    after = section.docs_lines[0]
    header = [c.text for c in code if c.number < after]
    body = [c for c in code if c.number > after]
    outer = _indent(header[0])
    inner = next((_indent(b.text) for b in body if b.text.strip()), outer + "    ")
    if len(inner) <= len(outer):
        inner = outer + "    "
    # The parser drops the blank lines between a docstring and the code below.
    blanks = [""] * (body[0].number - section.docs_lines[-1] - 1) if body else []
    lines = (
        *header,
        *_docstring(section.docs, inner, section.docstring_quote),
        *blanks,
        *(b.text for b in body),
    )
    return _Piece(section, lines, True)


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def _docstring(text: str, indent: str, opening: str = "") -> list[str]:
    """`text` as the lines of a docstring at `indent`.

    `text` is the docstring's source text, so it goes back between the
    source's own quotes (`opening`, such as `r` and three double quotes);
    a text those quotes cannot hold (a translation that has them) is escaped
    to read back as itself.
    """
    prefix = opening.rstrip("\"'")
    end = opening[len(prefix) :][:1] * 3  # one quote or three: the same escapes
    if end and end not in text and not text.endswith(end[0]):
        quote = prefix + end
    elif '"""' in text or text.endswith(("\\", '"')):
        text = text.replace("\\", "\\\\").replace('"', '\\"')
        quote = end = '"""'
    else:
        quote, end = ('r"""' if "\\" in text else '"""'), '"""'
    rows = text.strip("\n").split("\n")
    if len(rows) == 1:
        return [f"{indent}{quote}{rows[0]}{end}"]
    return [
        f"{indent}{quote}{rows[0]}",
        *(f"{indent}{row}" if row.strip() else "" for row in rows[1:]),
        f"{indent}{end}",
    ]


def _statement_lines(source: str, lines: list[str]) -> tuple[set[int], set[int]]:
    """Lines that continue a top-level statement; lines of the `__main__` block.

    A cell may start at line `n` only if `n` is not in the first set.
    """
    try:
        tree = _parse_quietly("\n".join(lines))
    except SyntaxError as err:
        raise NotebookError(
            f"{source}: its code, joined without the prose, is not valid "
            f"Python at line {err.lineno} of the joined code: {err.msg}"
        ) from err
    inside, dropped = set(), set()
    for statement in tree.body:
        decorators = getattr(statement, "decorator_list", [])
        first = min([statement.lineno, *(d.lineno for d in decorators)])
        inside.update(range(first + 1, statement.end_lineno + 1))
        test = getattr(statement, "test", None)
        if test is not None and ast.unparse(test).replace("'", '"') in MAIN_TESTS:
            dropped.update(range(first, statement.end_lineno + 1))
    return inside, dropped


def _group_cells(page, group: list[_Piece], offset: int, dropped) -> list:
    """Cells for sections that share top-level statements: prose, code, runs.

    `offset` is the joined-code line number of the group's first line.
    """
    cells = []
    first = group[0]
    if first.section.docs.strip() and not first.has_docstring:
        cells.append(v4.new_markdown_cell(first.section.docs.strip("\n")))
    rows: list[str] = []
    for n, piece in enumerate(group):
        if n:  # blank lines as between the sections in the source, PEP 8's most
            most = 1 if piece.lines and _indent(piece.lines[0]) else 2
            gap = _first_line(piece) - _last_line(group[n - 1]) - 1
            rows += [""] * min(most, gap)
        if n and piece.section.docs.strip() and not piece.has_docstring:
            after = [r for p in group[n:] for r in p.lines if r.strip()]
            rows += _comment(piece.section.docs, _indent(after[0]) if after else "")
        for row in piece.lines:
            if offset not in dropped:
                rows.append(row)
            offset += 1
    code = "\n".join(rows).strip("\n")
    if code.strip():
        cells.append(v4.new_code_cell(code))
    for piece in group:
        cells += _directive_cells(page, piece.section)
    return cells


def _first_line(piece: _Piece) -> int:
    """The first source line of a section: its prose, or else its code."""
    section = piece.section
    numbers = [*section.docs_lines[:1], *(c.number for c in section.code[:1])]
    return min(numbers, default=0)


def _last_line(piece: _Piece) -> int:
    """The last source line of a section: code, prose or directive."""
    section = piece.section
    numbers = [*section.docs_lines, *(c.number for c in section.code)]
    return max(numbers + [d.number for d in section.directives], default=0)


def _comment(text: str, indent: str) -> list[str]:
    return [f"{indent}# {row}".rstrip() for row in text.strip("\n").split("\n")]


def _after_what_they_need(cells: list) -> list:
    """The cells, each example moved down to just after the last cell that
    defines a name it needs, directly or through the page's own functions.

    On the page every example runs once the whole module is loaded, so an
    example may call a function whose body uses a class defined further down
    (a result shown before the appendix that defines its configuration); a
    notebook runs top to bottom, so such an example waits for the definition.
    Examples that need nothing later stay where they are.
    """
    defined: dict[str, int] = {}  # name -> first code cell that binds it
    uses: dict[str, set[str]] = {}  # page name -> the names its definition reads
    for n, cell in enumerate(cells):
        if cell.cell_type != "code" or cell.get("outputs") or _EXAMPLE in cell:
            continue
        try:
            tree = _parse_quietly(cell.source)
        except SyntaxError:
            continue
        for node in tree.body:
            for name in _bound(node):
                defined.setdefault(name, n)
                uses.setdefault(name, set()).update(_read(node))
    placed: list = []
    waiting: dict[int, list] = {}
    for n, cell in enumerate(cells):
        if cell.pop(_EXAMPLE, False):
            need = _latest(_read(_parse_quietly(cell.source)), defined, uses)
            if need > n:
                waiting.setdefault(need, []).append(cell)
                continue
        placed.append(cell)
        placed += waiting.pop(n, [])
    return placed


_EXAMPLE = "_literate_example"  # marks an example's cell until it is placed


def _bound(node: ast.stmt) -> list[str]:
    """The module-level names a statement binds."""
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return [node.name]
    if isinstance(node, ast.Import | ast.ImportFrom):
        return [(a.asname or a.name).split(".")[0] for a in node.names]
    targets = getattr(node, "targets", None) or [getattr(node, "target", None)]
    return [
        t.id for target in targets if target for t in ast.walk(target)
        if isinstance(t, ast.Name)
    ]  # fmt: skip


def _read(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _latest(names: set[str], defined: dict[str, int], uses) -> int:
    """The last cell defining any of `names` or what their definitions read."""
    seen, todo, latest = set(), list(names), -1
    while todo:
        name = todo.pop()
        if name in seen or name not in defined:
            continue
        seen.add(name)
        latest = max(latest, defined[name])
        todo += uses.get(name, ())
    return latest


def _directive_cells(page: Page, section: Section) -> list:
    """A code cell per `#|` line, holding the outputs the build recorded."""
    cells = []
    for directive in section.directives:
        example = read_directive(directive, page.source)
        code = example.expr + (";" if example.hide_value else "")
        cell = v4.new_code_cell(code)
        cell[_EXAMPLE] = True
        for output in section.outputs:
            if output.directive != directive.number:
                continue
            if output.kind == "text":
                cell.outputs.append(
                    v4.new_output("stream", name="stdout", text=output.text)
                )
            elif output.variant == "narrow":
                continue  # the figure before it, redrawn for a phone's page
            elif output.kind == "data":  # as Jupyter shows a literate.data.Data
                value = Data(output.name, json.loads(output.text))
                data = {"application/json": value.value, "text/plain": repr(value)}
                cell.outputs.append(v4.new_output("display_data", data=data))
            else:
                data = dict([_image(output.image)], **{"text/plain": output.alt})
                cell.outputs.append(v4.new_output("display_data", data=data))
        cells.append(cell)
    return cells


def _image(url: str) -> tuple[str, str]:
    """A `data:` URL as a notebook output's (MIME type, data).

    Notebooks keep SVG as text and PNG as base64.
    """
    head, data = url.split(",", 1)
    mime = head.removeprefix("data:").split(";")[0]
    if mime == "image/svg+xml":
        return mime, base64.b64decode(data).decode("utf-8")
    return mime, data


def _parse_quietly(code: str) -> ast.Module:
    """`code` (the page's own code, regrouped) parsed without warnings: what
    compiling it warns about, `parse` has reported with the source's lines."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ast.parse(code)
