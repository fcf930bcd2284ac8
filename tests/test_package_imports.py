"""A page inside a package imports as part of it: by its dotted name, from the
first folder above it that is not a package, so its absolute imports
(`from geom.vectors import dot`) and relative ones (`from .vectors import
norm`) work, `__init__.py` first; the examples' cache key follows the same
imports, so changing an imported module re-runs the examples that use it.

Each example appends to `ran.log` under the root, so the cache tests count
runs rather than time them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from literate.cache_key import import_root, module_name
from literate.execute import ExecuteError, execute_page
from literate.parse import parse

LOG = """
def logged(name, value):
    with open("ran.log", "a") as f:
        f.write(name + "\\n")
    return value
"""

FILES = {
    "src/geom/__init__.py": '"""# Geometry"""\n\nUNIT = 1.0\n' + LOG,
    "src/geom/vectors.py": (
        '"""# Vectors"""\n\n'
        "# The dot product.\n"
        "def dot(a, b):\n    return sum(x * y for x, y in zip(a, b))\n\n\n"
        "# The length.\n"
        "def norm(a):\n    return dot(a, a) ** 0.5\n"
    ),
    "src/geom/angles.py": (
        '"""# Angles"""\n\n'
        "from geom import UNIT\n"
        "from geom import logged\n"
        "from geom.vectors import dot\n\n"
        "from .vectors import norm\n\n\n"
        "# The cosine of the angle between two vectors.\n"
        "#| logged('cos', cosine([1, 0], [1, 1]))\n"
        "def cosine(a, b):\n    return UNIT * dot(a, b) / (norm(a) * norm(b))\n\n\n"
        "# Where the page's module is.\n"
        "#| logged('name', (__name__, __package__))\n"
        "X = 1\n"
    ),
    "src/geom/shapes/__init__.py": (
        '"""# Shapes\n\nA subpackage importing its parent relatively."""\n\n'
        "from ..vectors import dot\n\n"
        "# A square's diagonal, squared.\n"
        "#| dot([1, 1], [1, 1])\n"
        "Y = 2\n"
    ),
}


@pytest.fixture()
def tree(tmp_path) -> Path:
    for name, text in FILES.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    return tmp_path


def run(root: Path, source: str):
    page = parse((root / source).read_text(encoding="utf-8"), source)
    page = execute_page(page, root / source, root=root)
    return [o.text for s in page.sections for o in s.outputs]


def ran(root: Path) -> list[str]:
    log = root / "ran.log"
    return log.read_text().split() if log.exists() else []


def test_a_page_module_is_named_from_its_package(tree):
    angles = tree / "src/geom/angles.py"
    assert import_root(angles, tree) == tree / "src"
    assert module_name(angles, tree) == "geom.angles"
    assert module_name(tree / "src/geom/__init__.py", tree) == "geom"
    assert module_name(tree / "src/geom/shapes/__init__.py", tree) == "geom.shapes"
    (tree / "top.py").write_text("X = 1\n")
    assert (import_root(tree / "top.py", tree), module_name(tree / "top.py", tree)) == (
        tree,
        "top",
    )


def test_absolute_and_relative_imports_of_the_pages_own_package(tree):
    cosine, name = run(tree, "src/geom/angles.py")
    assert float(cosine) == pytest.approx(2**-0.5)
    assert name == "('geom.angles', 'geom')\n"
    assert run(tree, "src/geom/shapes/__init__.py") == ["2\n"]


def test_changing_an_imported_module_reruns_the_examples_that_use_it(tree):
    run(tree, "src/geom/angles.py")
    assert ran(tree) == ["cos", "name"]
    run(tree, "src/geom/angles.py")
    assert ran(tree) == ["cos", "name"]  # all cached

    # `norm`, reached through the relative import: only `cos` uses it.
    vectors = tree / "src/geom/vectors.py"
    text = vectors.read_text()
    vectors.write_text(text.replace("** 0.5", "** (1 / 2)"))
    run(tree, "src/geom/angles.py")
    assert ran(tree) == ["cos", "name", "cos"]

    # `UNIT`, from the package's __init__.py through an absolute import.
    init = tree / "src/geom/__init__.py"
    init.write_text(init.read_text().replace("UNIT = 1.0", "UNIT = 2.0"))
    [cosine, _] = run(tree, "src/geom/angles.py")
    assert ran(tree) == ["cos", "name", "cos", "cos"]
    assert float(cosine) == pytest.approx(2 * 2**-0.5)


def test_a_module_shadowed_by_another_of_its_name_is_an_error(tree):
    # `json` is the standard library's, imported before the page is.
    (tree / "sub").mkdir()
    (tree / "sub" / "json.py").write_text('"""# Mine"""\n\n# x\n#| 1\nX = 1\n')
    with pytest.raises(ExecuteError) as caught:
        run(tree, "sub/json.py")
    message = str(caught.value)
    assert message.startswith("sub/json.py:4: importing sub/json.py failed:")
    assert "not this page's source" in message
