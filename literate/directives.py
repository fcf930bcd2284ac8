"""The `#|` directive grammar: what an example line asks for.

    #| print(format_scaling_table(scaling_experiment()))
    #| plot_attention_weights()  | alt: a heatmap of the attention weights
    #| train(PRESETS["tiny"]);
    #| notebook: train(PRESETS["tiny"])

An expression to evaluate (a trailing `;` hides its value), optional alt text
for its figures after `| alt:`, or with `notebook:` code that only the page's
notebook runs. Read once here for both the execute stage and the notebook;
a malformed line is an ExecuteError naming the file and line.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from literate.model import Directive, Page, SourceError

ALT_RE = re.compile(r"\|\s*alt:\s*")
NOTEBOOK_RE = re.compile(r"notebook:\s*")


class ExecuteError(SourceError):
    """A directive that is malformed, or an example that failed when run."""


@dataclass(frozen=True)
class Example:
    """A directive, read: what to evaluate and how to describe its figures."""

    line: int
    expr: str  # the expression (or, for a notebook line, the code)
    alt: str = ""
    hide_value: bool = False  # the expression ended with `;`
    notebook_only: bool = False


def read_directive(directive: Directive, path: str) -> Example:
    """The example a `#|` line describes; a malformed line names its place."""
    text, line = directive.text, directive.number
    notebook = NOTEBOOK_RE.match(text)
    if notebook:
        code = text[notebook.end() :].strip()
        _check_syntax(code, "exec", path, line)
        return Example(line, code, notebook_only=True)
    expr, alt = text, ""
    found = list(ALT_RE.finditer(text))
    if found and _parses(text[: found[-1].start()].strip().rstrip(";")):
        expr, alt = text[: found[-1].start()].strip(), text[found[-1].end() :]
    hide = expr.endswith(";")
    expr = expr.rstrip(";").strip()
    _check_syntax(expr, "eval", path, line)
    return Example(line, expr, alt.strip(), hide)


def _parses(code: str, mode: str = "eval") -> bool:
    try:
        ast.parse(code, mode=mode)
    except SyntaxError:
        return False
    return bool(code)


def _check_syntax(code: str, mode: str, path: str, line: int) -> None:
    if not _parses(code, mode):
        what = "an expression" if mode == "eval" else "Python code"
        raise ExecuteError(
            path, line, f"`#| {code}`: expected {what} after `#|` (see outputs.md)"
        )


def page_examples(page: Page) -> list[Example]:
    """Every directive of `page`, read, in source order."""
    return [
        read_directive(d, page.source)
        for section in page.sections
        for d in section.directives
    ]
