"""Pages as notebooks: the same code and prose, valid, and they run.

The code of a notebook is compared with the source it came from, statement
by statement (`ast.dump`, docstrings cleaned the way `inspect` cleans them);
the runs use nbclient with the `python3` kernel, which must be this
interpreter.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import os
import re
import shutil
import sys
from pathlib import Path

import nbformat
import pytest
from conftest import CHAPTERS, japanese
from nbclient import NotebookClient

from literate.execute import execute_page
from literate.normalize import key
from literate.notebook import page_to_notebook
from literate.parse import parse
from literate.pipeline import Pipeline
from literate.render import render_page
from literate.translate import translate_page

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).parent / "data" / "execute"
SOURCES = [
    *CHAPTERS,
    "tests/data/execute/demo.py",
    "tests/data/execute/tricky.py",
]


PAGES = Pipeline(ROOT, run_examples=False)  # parsed and translated, not run
BUILT = Pipeline(ROOT)  # as the site builds them: examples run (or cached)


def page_of(source: str, lang: str = "en"):
    return PAGES.page(source, lang)


def code_cells(nb) -> list[str]:
    return [c.source for c in nb.cells if c.cell_type == "code"]


def is_docstring(node) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)


def statements(code: str, docstrings: bool = True) -> list[str]:
    """Top-level statements as `ast.dump`, docstrings cleaned, `__main__` out.

    With `docstrings=False` every docstring reads "" (to compare languages).
    """
    tree = ast.parse(code)
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and is_docstring(body[0]):
            value = body[0].value
            if isinstance(value.value, str):
                value.value = inspect.cleandoc(value.value) if docstrings else ""
    kept = [
        s
        for s in tree.body
        if not (isinstance(s, ast.If) and "__main__" in ast.unparse(s.test))
    ]
    return [ast.dump(s) for s in kept]


def definition_code(nb, page) -> str:
    """The code cells that are not `#|` examples or the `__file__` cell."""
    examples = {d.text for s in page.sections for d in s.directives}
    return "\n\n".join(
        source
        for source in code_cells(nb)
        if not source.startswith("# A notebook has no __file__")
        and not any(source.rstrip(";") in text for text in examples)
    )


@pytest.mark.parametrize("source", SOURCES)
def test_notebook_code_is_the_source_without_main(source):
    page = page_of(source)
    nb = page_to_notebook(page)
    nbformat.validate(nb)
    original = statements((ROOT / source).read_text(encoding="utf-8"))
    rebuilt = statements(definition_code(nb, page))
    # The module docstring is the first markdown cell, not code.
    assert rebuilt == original[1:]


def flat(text: str) -> str:
    """`text` with each line stripped: prose in a class body is indented."""
    return "\n".join(line.strip() for line in text.split("\n"))


def assert_prose_in_order(page, nb) -> None:
    """Each section's prose is in `nb`: markdown, `#` comments or a docstring."""
    text = flat("\n".join(c.source for c in nb.cells))
    code = "\n".join(code_cells(nb))
    docstrings = [
        inspect.cleandoc(ast.get_docstring(n, clean=False))
        for n in ast.walk(ast.parse(code))
        if isinstance(n, ast.FunctionDef | ast.ClassDef) and ast.get_docstring(n)
    ]
    position = 0
    for section in page.sections:
        rows = section.docs.strip("\n").split("\n")
        if not "".join(rows).strip() or inspect.cleandoc(section.docs) in docstrings:
            continue
        docs = flat("\n".join(rows))
        as_comment = flat("\n".join(f"# {row}".rstrip() for row in rows))
        found = [text.find(form, position) for form in (docs, as_comment)]
        found = [f for f in found if f >= 0]
        assert found, f"{page.source} ({page.lang}): {section.anchor} is missing"
        position = min(found)


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("lang", ["en", "ja", "zh"])
def test_every_paragraph_is_in_the_notebook_in_order(source, lang):
    page = page_of(source, lang)
    assert_prose_in_order(page, page_to_notebook(page))


def test_translated_page_gives_translated_notebook():
    """Every paragraph of the demo, translated (a made-up but valid table)."""
    english = page_of("tests/data/execute/demo.py")
    table = {key(s.docs): japanese(key(s.docs).upper()) for s in english.sections}
    page = translate_page(english, "ja", table)
    assert {s.state for s in page.sections if s.docs.strip()} == {"translated"}
    nb = page_to_notebook(page)
    assert_prose_in_order(page, nb)
    text = "\n".join(c.source for c in nb.cells)
    for section in page.sections:
        if section.docs.strip():
            assert flat(section.english) not in flat(text)
    assert statements(definition_code(nb, page), docstrings=False) == statements(
        definition_code(page_to_notebook(english), english), docstrings=False
    )


def test_notebook_is_deterministic():
    page = page_of("mha.py")
    assert nbformat.writes(page_to_notebook(page)) == nbformat.writes(
        page_to_notebook(page)
    )


def test_main_block_is_replaced_by_example_cells():
    nb = page_to_notebook(page_of("tests/data/execute/demo.py"))
    code = code_cells(nb)
    assert not any("__main__" in c for c in code)
    assert 'print("only in the notebook")' in code
    assert "square(8);" in code  # the `;` still hides the value


# --- running ---------------------------------------------------------------------


def execute(nb, cwd: Path) -> None:
    """Run `nb` in a fresh kernel in `cwd`, with the repository importable."""
    nb.cells.append(nbformat.v4.new_code_cell("import sys; print(sys.executable)"))
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    client = NotebookClient(
        nb, kernel_name="python3", timeout=300, resources={"metadata": {"path": cwd}}
    )
    client.execute(env=dict(os.environ, PYTHONPATH=path))
    # The kernel may send one print as several stream messages.
    printed = "".join(o.text for o in nb.cells[-1].outputs if o.name == "stdout")
    assert Path(printed.strip()) == Path(sys.executable)


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory):
    """The demo page executed by the build, and its notebook run in a kernel."""
    root = tmp_path_factory.mktemp("demo")
    shutil.copytree(DATA, root, dirs_exist_ok=True)
    source = (root / "demo.py").read_text(encoding="utf-8")
    page = execute_page(parse(source, "demo.py"), root / "demo.py")
    nb = page_to_notebook(page)
    ran = page_to_notebook(page)
    execute(ran, root)
    return page, nb, ran


@pytest.mark.slow
def test_notebook_holds_the_builds_outputs(demo_run):
    page, nb, _ = demo_run
    for section in page.sections:
        for output in section.outputs:
            cells = [c for c in nb.cells if c.cell_type == "code" and c.outputs]
            held = [o for c in cells for o in c.outputs]
            if output.kind == "text":
                assert any(o.get("text") == output.text for o in held)
            else:
                assert any(
                    o.get("data", {}).get("text/plain") == output.alt for o in held
                )


@pytest.mark.slow
def test_demo_notebook_runs_and_shows_what_the_page_shows(demo_run):
    page, built, ran = demo_run
    for before, after in zip(built.cells, ran.cells, strict=False):
        if before.cell_type != "code" or not before.outputs:
            continue
        shown, recorded = printed(after), printed(before)
        if recorded and before.source != "where()":  # the page hides its paths
            assert shown.strip() == recorded.strip(), before.source
        svg = [o for o in after.outputs if "image/svg+xml" in o.get("data", {})]
        png = [o for o in after.outputs if "image/png" in o.get("data", {})]
        images = [o for o in before.outputs if o.output_type == "display_data"]
        assert len(svg) + len(png) >= len(images), before.source


def printed(cell) -> str:
    """What a code cell's outputs say as text (stdout and values; progress
    on stderr, such as preparing the corpus on a fresh clone, is not a
    result)."""
    return "".join(
        o.get("text", "") + o.get("data", {}).get("text/plain", "")
        for o in cell.get("outputs", [])
        if o.output_type == "execute_result"
        or (o.output_type == "stream" and o.get("name") == "stdout")
    )


def run_as_built(source: str, lang: str, cwd: Path):
    """Run the notebook of `source` in `lang`, in `cwd`; compare with the page.

    Each cell whose output the build recorded must print the same text in
    the kernel. Returns the executed notebook.
    """
    page = BUILT.page(source, lang)
    built = nbformat.reads(BUILT.notebook(page), as_version=4)
    ran = nbformat.reads(BUILT.notebook(page), as_version=4)
    execute(ran, cwd)
    compared = 0
    for before, after in zip(built.cells, ran.cells, strict=False):
        if before.cell_type == "code" and printed(before):
            assert printed(after).strip() == printed(before).strip(), before.source
            compared += 1
    assert compared == sum(bool(printed(c)) for c in built.cells)
    return ran


@pytest.mark.slow
def test_mha_notebook_runs_and_prints_what_the_page_shows(tmp_path):
    """The Japanese notebook (the code is the same in every language), run in
    a scratch folder holding the recorded runs, as the repository does."""
    (tmp_path / "runs").symlink_to(ROOT / "runs", target_is_directory=True)
    ran = run_as_built("mha.py", "ja", tmp_path)
    assert sum(bool(printed(c)) for c in ran.cells) >= 2  # the two tables


@pytest.mark.slow
def test_train_notebook_trains_the_tiny_preset_and_samples(tmp_path):
    """In a scratch folder holding the recorded run, as the repository does."""
    (tmp_path / "runs").symlink_to(ROOT / "runs", target_is_directory=True)
    ran = run_as_built("train.py", "zh", tmp_path)
    sources = [c.source for c in ran.cells]
    trained = ran.cells[sources.index('train(PRESETS["tiny"])')]
    assert "'val'" in printed(trained)  # the last evaluation it returns
    train = importlib.import_module("train")
    assert (tmp_path / train.PRESETS["tiny"].out / "ckpt.pt").is_file()
    sampled = next(c for c in ran.cells if c.source.startswith('main(["sample"'))
    assert len(printed(sampled)) > 50


def test_page_links_its_notebook():
    page = page_of("mha.py", "ja")
    body = render_page(page, source_url="../source/mha.py", notebook_url="mha.ipynb")
    # "ノートブック: mha.ipynb" or with a full-width colon.
    link = r'<a href="mha.ipynb" download>Jupyter ノートブック[:：] ?mha\.ipynb</a>'
    assert re.search(link, body)


LATER = '''"""A result shown before the definitions it needs."""


def shown():
    return Later().value


#| shown()
#| 1 + 1

# The definition, in an appendix.


class Later:
    value = 3
'''


def test_an_example_waits_for_what_it_needs_and_no_longer():
    cells = page_to_notebook(parse(LATER, "later.py")).cells
    sources = [c.source for c in cells]
    later = next(n for n, s in enumerate(sources) if s.startswith("class Later"))
    # shown() reads Later through its body: it moves to just after it ...
    assert sources.index("shown()") == later + 1
    # ... while an example that needs nothing stays where it was written.
    assert sources.index("1 + 1") < later
    assert not any("_literate_example" in c for c in cells)
