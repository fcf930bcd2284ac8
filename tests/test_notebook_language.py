"""A translated page's notebook speaks the page's language in its own cells.

The notebook's code is the source's, in English; the cells the build adds
(the figures' words, `__file__`) say what they do in the page's language.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from literate.languages import label
from literate.notebook import page_to_notebook
from literate.parse import parse

SOURCE = '''"""# Demo"""

from pathlib import Path

HERE = Path(__file__).parent
'''


@pytest.mark.parametrize("lang", ["en", "ja", "zh"])
def test_the_cells_the_build_adds_are_in_the_pages_language(lang):
    page = parse(SOURCE, "pkg/demo.py")
    page = replace(page, lang=lang)
    notebook = page_to_notebook(page, {"key": "鍵" if lang != "en" else "key"})
    code = [c.source for c in notebook.cells if c.cell_type == "code"]
    words, file_cell = code[0], code[1]
    assert words.startswith(f"# {label(lang, 'notebook_words')}\n")
    said = label(lang, "notebook_file").format(name="demo.py")
    assert file_cell == f'# {said}\n__file__ = "demo.py"'
    if lang != "en":
        assert said != label("en", "notebook_file").format(name="demo.py")
        assert not any(
            c.isascii() and c.isalpha()
            for c in said.replace("__file__", "").replace("demo.py", "")
        )
