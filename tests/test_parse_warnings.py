"""What Python warns about while a source is compiled is reported once, as
`file:line: ...` (labml's invalid escape sequences such as "\\s" in a
docstring, which Python 3.11 reports at the string's first line and as
`<unknown>` when the notebook stage reparses the code)."""

from __future__ import annotations

import logging
import re
import warnings
from pathlib import Path

import labml_nn

from literate.notebook import page_to_notebook
from literate.parse import parse

SOURCE = '''"""# A page

Math: $\\sum_i x_i$
"""

# A regex.
PATTERN = "\\d+"
'''


def warnings_of(caplog) -> list[str]:
    """What the renderer said about compiling: at INFO, as mkdocs shows
    Python's own warnings (a `--strict` build does not fail on them)."""
    return [
        r.getMessage()
        for r in caplog.records
        if r.name == "mkdocs.plugins.literate" and "escape" in r.getMessage()
    ]


def test_an_invalid_escape_names_the_file_and_its_own_line(caplog):
    caplog.set_level(logging.INFO, logger="mkdocs.plugins.literate")
    with warnings.catch_warnings(record=True) as unnamed:
        warnings.simplefilter("always")
        page = parse(SOURCE, "pkg/m.py")
        page_to_notebook(page)  # reparses the code
    assert unnamed == []  # no `<unknown>:2: DeprecationWarning` beside them
    assert warnings_of(caplog) == [
        "pkg/m.py:3: invalid escape sequence '\\s'; double the backslash or "
        'make the string raw (r"...")',
        "pkg/m.py:7: invalid escape sequence '\\d'; double the backslash or "
        'make the string raw (r"...")',
    ]


def test_labmls_escapes_are_named_by_file_and_line(caplog):
    caplog.set_level(logging.INFO, logger="mkdocs.plugins.literate")
    root = Path(labml_nn.__file__).parent.parent
    source = "labml_nn/transformers/alibi/__init__.py"
    text = (root / source).read_text(encoding="utf-8")
    page_to_notebook(parse(text, source))
    said = warnings_of(caplog)
    assert said and all(m.startswith(f"{source}:") for m in said), said
    lines = text.split("\n")
    for message in said:
        line, escape = re.match(rf"{source}:(\d+): .*'(\\.)'", message).groups()
        assert escape in lines[int(line) - 1], message
