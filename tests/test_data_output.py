"""An example's data for the page's scripts (`literate.data`).

- an example that returns a `Data` shows no text; the page holds its value
  as `<script type="application/json" class="lit-data" data-name=...>`,
  and a translated page gets its `tr` words translated;
- hostile strings in the data (`</script>`, `<!--`, markup, line
  separators) stay inside the element: its content has no `<`, `>` or `&`,
  and Chromium parses back exactly the value, running nothing;
- values JSON cannot hold are refused with the data's name; the notebook
  keeps the data as a JSON output; the search index does not read it.
"""

from __future__ import annotations

import dataclasses
import json
import re

import nbformat
import numpy as np
import pytest
import torch
from conftest import Tree
from test_site import browser, in_browser  # noqa: F401 (a fixture)

from literate.data import Data, script_text
from literate.execute import execute_page
from literate.mkdocs.search_view import search_view
from literate.model import Output
from literate.notebook import page_to_notebook
from literate.parse import parse
from literate.render import RenderError, render_page

PAGE = '''\
"""A page that hands data to its scripts."""

from literate.data import Data
from literate.words import tr


def toy():
    """The toy's numbers, and a word the reader reads."""
    return Data("toy", {"label": tr("query"), "x": [1.5, -2, None, True]})


#| toy()
'''

HOSTILE = [
    "</script><img src=x onerror=alert(1)>",
    "</SCRIPT ><script>alert(1)</script>",
    "<!--<script>",
    "<![CDATA[ ]]> &amp; &lt; &#60;",
    "line\u2028separator\u2029paragraph",
    '"\\u003c/script>',  # an escape written out, not the character
    "<b>bold</b>",
]


def data_page(*outputs: Output, source: str = "# Data.\nx = 1\n#| toy()\n"):
    page = parse(source, "m.py")
    section = dataclasses.replace(page.sections[0], outputs=outputs)
    return dataclasses.replace(page, sections=(section,))


def scripts(html: str) -> list[tuple[dict, str]]:
    """Each `lit-data` script of `html`: its attributes and its text."""
    found = re.findall(r'(<script type="application/json" class="lit-data"[^>]*>)'
                       r"(.*?)</script>", html, re.S)  # fmt: skip
    return [(Tree(tag).tags[0][1], body) for tag, body in found]


# --- execute: a returned Data is data, in the page's language --------------------


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    root = tmp_path_factory.mktemp("data")
    (root / "page.py").write_text(PAGE, "utf-8")
    return root


def run(root, **language):
    page = parse((root / "page.py").read_text("utf-8"), "page.py")
    return execute_page(page, root / "page.py", cache_dir=root / "cache", **language)


def test_an_example_returning_data_gives_a_data_output_and_no_text(project):
    page = run(project)
    outputs = [o for s in page.sections for o in s.outputs]
    assert [(o.kind, o.name) for o in outputs] == [("data", "toy")]
    assert json.loads(outputs[0].text) == {"label": "query", "x": [1.5, -2, None, 1]}
    (attrs, body), = scripts(render_page(page))  # fmt: skip
    assert attrs["data-name"] == "toy" and json.loads(body)["label"] == "query"


def test_a_translated_page_gets_the_datas_words_translated(project):
    page = run(project, lang="ja", words={"query": "クエリ"})
    (output,) = [o for s in page.sections for o in s.outputs]
    assert json.loads(output.text)["label"] == "クエリ"


# --- render: hostile strings stay inside the script ------------------------------


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_strings_cannot_leave_the_script(text):
    value = {"s": text, text: [text]}
    html = render_page(data_page(Output(3, "data", text=json.dumps(value), name="t")))
    ((attrs, body),) = scripts(html)
    assert not set(body) & set("<>&\u2028\u2029")
    assert json.loads(body) == value
    assert [t for t, _ in Tree(html).tags if t in ("script", "img", "b")] == ["script"]


def test_a_hostile_name_is_refused_by_data_and_escaped_by_render():
    with pytest.raises(ValueError, match="Data name '\"><b>'"):
        Data('"><b>', 1)
    html = render_page(data_page(Output(3, "data", text="1", name='"><b>')))
    assert "<b>" not in html and 'data-name="&quot;&gt;&lt;b&gt;"' in html


@pytest.mark.parametrize("text", ["{", "NaN", "[Infinity]", ""])
def test_data_that_is_not_json_is_an_error_naming_the_line(text):
    with pytest.raises(RenderError, match=r"m\.py:3: data output: not JSON"):
        render_page(data_page(Output(3, "data", text=text, name="t")))


@pytest.mark.parametrize(
    "value, problem",
    [
        (float("nan"), "Out of range float"),
        ({"x": [float("inf")]}, "Out of range float"),
        ({"k": object()}, "Object of type object is not JSON serializable"),
        (np.array([np.nan]), "Out of range float"),
    ],
)
def test_a_value_json_cannot_hold_is_refused_with_the_datas_name(value, problem):
    with pytest.raises(ValueError, match=f"Data 'toy': {problem}"):
        Data("toy", value)


def test_arrays_and_tensors_count_as_their_lists():
    data = Data("toy", {"a": np.arange(3), "t": torch.tensor([[0.5, 1.0]]), "f": 2.0})
    assert data.value == {"a": [0, 1, 2], "t": [[0.5, 1.0]], "f": 2.0}
    assert repr(data) == """Data('toy', {"a":[0,1,2],"t":[[0.5,1.0]],"f":2.0})"""


def test_script_text_round_trips_every_json_value():
    value = {"": [0, -1e-300, 1.5e300, "é", "\x00\x1f", {"n": None, "b": False}]}
    assert json.loads(script_text(json.dumps(value))) == value


# --- the notebook and the search index -------------------------------------------


def test_the_notebook_keeps_the_data_as_a_json_output():
    value = {"label": "</script>", "x": [1, 2]}
    page = data_page(Output(3, "data", text=json.dumps(value), name="toy"))
    notebook = page_to_notebook(page)
    nbformat.validate(notebook)
    (cell,) = [c for c in notebook.cells if c.source == "toy()"]
    (output,) = cell.outputs
    assert output.data["application/json"] == value
    assert output.data["text/plain"] == repr(Data("toy", value))


def test_the_search_index_does_not_read_the_data():
    page = data_page(Output(3, "data", text='{"w": "needle"}', name="toy"))
    html = render_page(page)
    assert "needle" in html and "needle" not in search_view(html)


# --- in Chromium: the value comes back, nothing runs, nothing shows --------------


@in_browser
def test_chromium_reads_back_hostile_data_and_runs_nothing(browser):  # noqa: F811
    values = {f"d{n}": {"s": text, text: [text]} for n, text in enumerate(HOSTILE)}
    outputs = [
        Output(3, "data", text=json.dumps(v), name=name) for name, v in values.items()
    ]
    html = render_page(data_page(*outputs))
    tab = browser.new_page()
    try:
        dialogs = []
        tab.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        tab.set_content(f"<!doctype html><html><body>{html}</body></html>")
        read = tab.evaluate(
            """() => Object.fromEntries([...document.querySelectorAll('.lit-data')]
                .map(s => [s.dataset.name, JSON.parse(s.textContent)]))"""
        )
        assert read == values
        assert tab.evaluate("document.querySelectorAll('script, img, b').length") == (
            len(values)
        )
        assert "script" not in tab.evaluate("document.body.innerText")
        assert dialogs == []
    finally:
        tab.close()
