"""The execute stage: outputs, the cache, failures and paths.

The fixture pages live in `tests/data/execute/`. Each example of `demo.py`
appends its name to `ran.log` in the root it runs in, so the cache tests
count executions instead of timing them.
"""

from __future__ import annotations

import base64
import contextlib
import importlib.util
import io
import json
import shutil
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from literate.cache_key import code_key, reachable_code
from literate.execute import (
    ExecuteError,
    execute_page,
    page_examples,
    read_directive,
    scrub,
)
from literate.model import Directive, Output
from literate.parse import parse
from literate.translate import translate_page

DATA = Path(__file__).parent / "data" / "execute"
PLOT = "#| plot()  | alt: a curve rising from 0 to 4"


def load(root: Path, name: str = "demo.py"):
    return parse((root / name).read_text(encoding="utf-8"), name)


def run(root: Path, name: str = "demo.py"):
    return execute_page(load(root, name), root / name)


def ran(root: Path) -> list[str]:
    log = root / "ran.log"
    return log.read_text().split() if log.exists() else []


def line_of(root: Path, text: str, name: str = "demo.py") -> int:
    lines = (root / name).read_text(encoding="utf-8").split("\n")
    return next(n for n, line in enumerate(lines, 1) if line.strip() == text)


def outputs_of(page, line: int) -> list[Output]:
    return [o for s in page.sections for o in s.outputs if o.directive == line]


def svg_text(output: Output) -> str:
    return base64.b64decode(output.image.split(",", 1)[1]).decode()


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{path.name} no longer contains {old!r}"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """The demo run once, from an empty cache: its root and page."""
    root = tmp_path_factory.mktemp("built")
    shutil.copytree(DATA, root, dirs_exist_ok=True)
    return root, run(root)


@pytest.fixture
def copy(built, tmp_path):
    """A fresh copy of the built root, warm cache included, log emptied."""
    shutil.copytree(built[0], tmp_path, dirs_exist_ok=True)
    (tmp_path / "ran.log").unlink()
    return tmp_path


@pytest.fixture(scope="module")
def demo_module(built):
    """demo.py imported here, to compute what its examples should show."""
    root = built[0]
    sys.path.insert(0, str(root))
    try:
        spec = importlib.util.spec_from_file_location("demo_ref", root / "demo.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(root))
    return module


# --- directives ------------------------------------------------------------------


def test_directive_forms():
    d = read_directive(Directive(3, "plot(x | y)  | alt: a plot | of things"), "m.py")
    assert (d.expr, d.alt, d.hide_value) == ("plot(x | y)", "a plot | of things", False)
    assert read_directive(Directive(4, "f();"), "m.py").hide_value
    note = read_directive(Directive(5, 'notebook: x = train("tiny")'), "m.py")
    assert note.notebook_only and note.expr == 'x = train("tiny")'
    assert read_directive(Directive(6, "a | b"), "m.py").expr == "a | b"


@pytest.mark.parametrize("text", ["x = 1", "show table()", "", "f(  | alt: x"])
def test_malformed_directive_names_file_and_line(text):
    with pytest.raises(ExecuteError, match=r"^m\.py:7: .*expected an expression"):
        read_directive(Directive(7, text), "m.py")


def test_page_examples_are_every_directive_in_source_order(built):
    root, page = built
    source = (root / "demo.py").read_text(encoding="utf-8").split("\n")
    directives = [n for n, row in enumerate(source, 1) if row.lstrip().startswith("#|")]
    assert [e.line for e in page_examples(page)] == directives
    assert len(directives) == 7


# --- outputs ---------------------------------------------------------------------


def test_printed_text_is_shown(built, demo_module, tmp_path):
    root, page = built
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed), contextlib.chdir(tmp_path):
        demo_module.table()
    [out] = outputs_of(page, line_of(root, "#| table()"))
    assert (out.kind, out.text) == ("text", printed.getvalue())


def test_value_is_shown_as_repr_unless_hidden(built, demo_module, tmp_path):
    root, page = built
    with contextlib.chdir(tmp_path):
        expected = repr(demo_module.square(7)) + "\n"
    [out] = outputs_of(page, line_of(root, "#| square(7)"))
    assert out.text == expected
    assert outputs_of(page, line_of(root, "#| square(8);")) == []


def test_figure_is_svg_with_alt_and_transparent(built):
    root, page = built
    [fig] = outputs_of(page, line_of(root, PLOT))
    assert fig.kind == "image" and fig.alt == "a curve rising from 0 to 4"
    assert fig.image.startswith("data:image/svg+xml;base64,")
    svg = ET.fromstring(svg_text(fig))
    assert svg.tag == "{http://www.w3.org/2000/svg}svg"
    # The figure's background patch has no fill colour (matplotlib writes
    # `fill: #ffffff` for an opaque one).
    assert "#ffffff" not in svg_text(fig)


def test_notebook_lines_do_not_run(built):
    root, page = built
    line = line_of(root, '#| notebook: print("only in the notebook")')
    assert outputs_of(page, line) == []


def test_outputs_have_no_absolute_paths(built):
    root, page = built
    outputs = [o for s in page.sections for o in s.outputs]
    texts = [o.text for o in outputs] + [svg_text(o) for o in outputs if o.image]
    for forbidden in (str(root), str(Path.home())):
        assert not any(forbidden in t for t in texts)
    [out] = outputs_of(page, line_of(root, "#| where()"))
    assert out.text == "demo.py\n'~/notes.txt'\n"


def test_scrub_prefers_the_root_inside_home(tmp_path):
    home = tmp_path / "home"
    root = home / "repo"
    text = f"{root}/mha.py {home}/.cache {root}"
    assert scrub(text, root, home) == "mha.py ~/.cache ."


def test_translated_page_shows_the_same_outputs(built):
    root, page = built
    translated = translate_page(load(root), "ja", {})
    executed = execute_page(translated, root / "demo.py")
    assert [s.outputs for s in executed.sections] == [s.outputs for s in page.sections]
    # Translating after executing keeps them too.
    again = translate_page(page, "ja", {})
    assert [s.outputs for s in again.sections] == [s.outputs for s in page.sections]


# --- the cache -------------------------------------------------------------------


def test_first_run_executes_each_example_once(built):
    root, _ = built
    assert sorted(ran(root)) == sorted(
        ["table", "square", "square", "plot", "where", "numbers"]
    )


def test_second_run_executes_nothing(copy, built):
    assert run(copy) == built[1]
    assert ran(copy) == []


def test_changing_one_example_reruns_only_it(copy):
    edit(copy / "demo.py", "return n * n", "return n * n + 0")
    run(copy)
    assert ran(copy) == ["square", "square"]


def test_changing_an_imported_function_reruns_its_users(copy):
    edit(copy / "helper.py", "return 2 * n", "return n + n")
    edit(copy / "helper.py", "return 3 * n", "return n + n + n")  # unused
    run(copy)
    assert ran(copy) == ["table"]


def test_prose_and_unused_code_rerun_nothing(copy):
    edit(copy / "demo.py", "# A table, printed.", "# A table, as text.")
    edit(copy / "demo.py", '"""Record that', '"""Write down that')
    edit(copy / "demo.py", "    table()\n", "    print(table())\n")  # __main__
    run(copy)
    assert ran(copy) == []


def test_a_shared_helper_reruns_everything(copy):
    edit(copy / "demo.py", 'f.write(name + "\\n")', 'f.write(f"{name}\\n")')
    run(copy)
    assert len(ran(copy)) == 6


def test_a_changed_data_file_reruns_its_reader(copy, built):
    (copy / "numbers.txt").write_text("4 5 6\n")
    page = run(copy)
    assert ran(copy) == ["numbers"]
    [out] = outputs_of(page, line_of(copy, "#| numbers()"))
    assert out.text == "15\n"


LATE = '''"""A page whose example reads a file that is not there yet."""

from pathlib import Path


def shown():
    try:
        path = Path(__file__).parent / "results.txt"
        print(path.read_text(encoding="utf-8").strip())
    except FileNotFoundError:
        print("not yet")


#| shown()
'''


def test_a_data_file_that_appears_reruns_the_example_that_missed_it(tmp_path):
    (tmp_path / "late.py").write_text(LATE, encoding="utf-8")
    line = line_of(tmp_path, "#| shown()", "late.py")
    [out] = outputs_of(run(tmp_path, "late.py"), line)
    assert out.text == "not yet\n"
    (tmp_path / "results.txt").write_text("recorded\n", encoding="utf-8")
    [out] = outputs_of(run(tmp_path, "late.py"), line)
    assert out.text == "recorded\n"


def test_a_broken_cache_entry_is_rerun(copy):
    entries = sorted((copy / ".cache/outputs").glob("*.json"))
    for entry in entries:
        entry.write_text(entry.read_text()[:10])  # as if cut off mid-write
    run(copy)
    assert len(ran(copy)) == 6
    assert not list((copy / ".cache/outputs").glob("*.tmp"))
    for entry in entries:
        json.loads(entry.read_text())


def test_alt_text_changes_rerun_nothing(copy):
    edit(copy / "demo.py", "| alt: a curve", "| alt: the curve")
    page = run(copy)
    assert ran(copy) == []
    [fig] = outputs_of(page, line_of(copy, PLOT.replace("a curve", "the curve")))
    assert fig.alt == "the curve rising from 0 to 4"


def test_a_figure_without_alt_text_is_an_error(copy):
    edit(copy / "demo.py", PLOT, "#| plot()")
    line = line_of(copy, "#| plot()")
    with pytest.raises(ExecuteError, match=rf"^demo\.py:{line}: .*no alt text"):
        run(copy)


# --- failures --------------------------------------------------------------------


def test_a_failing_example_names_its_line_and_traceback(tmp_path):
    shutil.copy(DATA / "failing.py", tmp_path)
    line = line_of(tmp_path, "#| broken()", "failing.py")
    source_line = line_of(tmp_path, "return 1 / 0", "failing.py")
    with pytest.raises(ExecuteError) as caught:
        run(tmp_path, "failing.py")
    message = str(caught.value)
    assert message.startswith(f"failing.py:{line}: `broken()` raised:")
    assert f'File "failing.py", line {source_line}, in broken' in message
    assert message.rstrip().endswith("ZeroDivisionError: division by zero")
    assert str(tmp_path) not in message
    # `fine()`, before it, succeeded: its result is cached all the same.
    assert len(list((tmp_path / ".cache/outputs").glob("*.json"))) == 1


def test_a_module_that_fails_to_import(tmp_path):
    (tmp_path / "bad.py").write_text('"""\n# Bad\n"""\n\nmissing_name\n\n#| 1 + 1\n')
    with pytest.raises(ExecuteError, match=r"(?s)^bad\.py:7: importing bad\.py.*"
                       r"NameError: name 'missing_name'"):  # fmt: skip
        run(tmp_path, "bad.py")


def test_a_crashed_process_is_an_error(tmp_path):
    (tmp_path / "crash.py").write_text("import os\n\n#| os._exit(3)\n")
    with pytest.raises(ExecuteError, match=r"^crash\.py:3: .*exit status 3"):
        run(tmp_path, "crash.py")


def test_a_hung_example_times_out(tmp_path):
    (tmp_path / "slow.py").write_text("import time\n\n#| time.sleep(30)\n")
    with pytest.raises(ExecuteError, match=r"^slow\.py:3: .*did not finish in 1 s"):
        execute_page(load(tmp_path, "slow.py"), tmp_path / "slow.py", timeout=1)


# --- what the key depends on -----------------------------------------------------


def test_reachable_code_follows_names_across_modules(built):
    root = built[0]
    code = reachable_code(root, root / "demo.py", {"table"})
    files = {c.split(":", 1)[0] for c in code}
    assert files == {"demo.py", "helper.py"}
    assert any("def double" in c for c in code)
    assert not any("def triple" in c or "def square" in c for c in code)
    assert not any("__main__" in c for c in code)


def test_key_depends_on_the_expression(built):
    root = built[0]
    keys = {code_key(root, "demo.py", e) for e in ("square(7)", "square(8)")}
    assert len(keys) == 2
