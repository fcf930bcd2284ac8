"""All the formulas of a page typeset in one KaTeX batch, before any prose.

A LaTeX error fails the page with `path:line: KaTeX parse error: ...` before
anything is written (or, for foreign sources, is tolerated and shown as
TeX); a formula KaTeX accepts with a warning is logged once per line.
"""

from __future__ import annotations

from literate.katex import KatexUnavailable
from literate.model import Page
from literate.prose import LOG, MATH, Prose, RenderError, clean, formula
from literate.unclosed import unclosed_math


def render_math(page: Page, flat: list[Prose], formulas, *, strict: bool):
    """Send every permitted formula of the page as one batch; the returned
    function waits for it and gives (results, tolerated errors).

    A `formulas` with `send` (a `katex.Katex`) typesets while the caller
    works; a plain function is called at once.
    """
    wanted = [
        (prose, i, formula(span))
        for prose in flat
        for i, span in enumerate(prose.spans)
        if span.kind in MATH and prose.permits(span)
    ]
    if not wanted:
        return lambda: ({}, [])
    send = getattr(formulas, "send", None)
    try:
        if send is not None:
            waiting = send(formula for _, _, formula in wanted)
        else:
            done = formulas(formula for _, _, formula in wanted)
            waiting = lambda: done  # noqa: E731
    except KatexUnavailable as error:
        prose, i, _ = wanted[0]
        raise RenderError(page.source, _line_of(prose, i), str(error)) from None
    return lambda: _check_math(page, wanted, waiting, strict=strict)


def _check_math(page: Page, wanted: list, waiting, *, strict: bool):
    try:
        results = waiting()
    except KatexUnavailable as error:
        prose, i, _ = wanted[0]
        raise RenderError(page.source, _line_of(prose, i), str(error)) from None
    tolerated, warned = [], set()
    for prose, i, wanted_formula in wanted:
        result = results[wanted_formula]
        if result.error:
            error = RenderError(page.source, _line_of(prose, i), result.error)
            if strict:
                raise error
            tolerated.append(error)
        refused = (_line_of(prose, i), result.refused_message())
        if refused[1] and refused not in warned:
            warned.add(refused)
            LOG.warning("%s:%d: %s", page.source, *refused)
    return results, tolerated


def warn_unclosed_math(page: Page) -> None:
    """A warning (file:line) for each `$$` or TeX `$` that is never closed."""
    for section in page.sections:
        lines = section.docs_lines
        for index, opener in unclosed_math(section.docs):
            line = lines[min(index, len(lines) - 1)] if lines else 1
            LOG.warning(
                "%s:%d: unclosed %s: the math is shown as raw text; close it "
                "with %s (or write \\%s for a literal dollar)",
                page.source, line, opener, opener, opener[0],
            )  # fmt: skip


def _line_of(prose: Prose, index: int) -> int:
    """The source line of span `index` of `prose` (via the English text)."""
    section = prose.section
    english = clean(section.english or section.docs)
    start = prose.places[index][2] if index < len(prose.places) else 0
    if prose.text != english:
        found = english.find(prose.spans[index].text)
        start = found if found >= 0 else 0
    lines = section.docs_lines
    if not lines:
        return section.code[0].number if section.code else 1
    return lines[min(english[:start].count("\n"), len(lines) - 1)]
