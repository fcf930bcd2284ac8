"""KaTeX in-process: the packaged distribution in mini-racer's V8, the same
HTML as node gives, and node only where the in-process engine cannot run."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from conftest import KATEX_DIST

from literate import katex
from literate.pipeline import Pipeline

ROOT = Path(__file__).resolve().parent.parent
FORMULAS = [
    (r"\frac{QK^\top}{\sqrt{d_k}}", True),
    (r"\mathrm{softmax}(x)_i = e^{x_i} / \sum_j e^{x_j}", False),
    (r"\href{https://example.org}{x}", False),  # refused under trust: false
    (r"\frac{1}{", False),  # a parse error
]


def in_a_fresh_process(body: str) -> None:
    """Run `body()` of this module in a new Python: in one long test process
    the in-process V8 stopped answering after test_data_output (not yet
    understood), so the engine's own checks run where nothing came before."""
    code = (
        "import sys; sys.path[:0] = ['tests']; import test_katex_engine as t; "
        f"t.{body}()"
    )
    env = {k: v for k, v in os.environ.items() if k != "LITERATE_KATEX"}
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_default_engine_is_in_process_with_the_packaged_katex():
    in_a_fresh_process("default_engine")


def test_in_process_and_node_give_the_same_html():
    in_a_fresh_process("same_html")


def default_engine():
    os.environ.pop("LITERATE_KATEX", None)  # conftest asks the tests for node
    formulas = katex.Katex()
    assert (formulas.engine, formulas.dist) == ("v8", katex.DIST)
    assert (katex.DIST / "katex.min.js").read_text().count(katex.VERSION) >= 1
    assert (katex.DIST / "LICENSE").is_file()
    done = formulas(FORMULAS)
    assert 'display="block"' in done[FORMULAS[0]].html
    assert done[FORMULAS[2]].refused == ("\\href",)
    assert done[FORMULAS[3]].html == "" and "KaTeX parse error" in (
        done[FORMULAS[3]].error
    )
    assert formulas.starts == 1
    formulas.close()


def same_html():
    os.environ.pop("LITERATE_KATEX", None)
    v8 = katex.Katex.for_dist(KATEX_DIST)
    node = katex.Katex.for_dist(KATEX_DIST, node=True)
    assert (v8.engine, node.engine) == ("v8", "node")
    try:
        assert v8(FORMULAS) == node(FORMULAS)
    finally:
        v8.close()
        node.close()


def test_without_mini_racer_node_is_used(monkeypatch):
    monkeypatch.setitem(sys.modules, "py_mini_racer", None)  # import fails
    formulas = katex.Katex.for_dist(KATEX_DIST)
    assert formulas.engine == "node"
    assert "<mi>x</mi>" in formulas([("x", False)])[("x", False)].html
    formulas.close()


def test_a_folder_without_katex_min_js_uses_node(tmp_path: Path):
    assert katex.Katex(dist=tmp_path).engine == "node"


def test_the_pipeline_and_the_site_use_the_packaged_katex_by_default(
    tmp_path, monkeypatch
):
    monkeypatch.delenv("LITERATE_KATEX", raising=False)
    pipeline = Pipeline(tmp_path, run_examples=False)
    assert pipeline.formulas.engine == "v8"
    assert pipeline.formulas.dist == katex.DIST
    assert katex.dist_folder(tmp_path, "") == katex.DIST
    assert katex.dist_folder(tmp_path, "k/dist") == tmp_path / "k" / "dist"
