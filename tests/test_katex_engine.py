"""KaTeX in-process: the packaged distribution in mini-racer's V8, the same
HTML as node gives, and node only where the in-process engine cannot run."""

from __future__ import annotations

import sys
from pathlib import Path

from conftest import KATEX_DIST

from literate import katex
from literate.pipeline import Pipeline

FORMULAS = [
    (r"\frac{QK^\top}{\sqrt{d_k}}", True),
    (r"\mathrm{softmax}(x)_i = e^{x_i} / \sum_j e^{x_j}", False),
    (r"\href{https://example.org}{x}", False),  # refused under trust: false
    (r"\frac{1}{", False),  # a parse error
]


def test_the_default_engine_is_in_process_with_the_packaged_katex():
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


def test_in_process_and_node_give_the_same_html():
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


def test_the_pipeline_and_the_site_use_the_packaged_katex_by_default(tmp_path):
    pipeline = Pipeline(tmp_path, run_examples=False)
    assert pipeline.formulas.engine == "v8"
    assert pipeline.formulas.dist == katex.DIST
    assert katex.dist_folder(tmp_path, "") == katex.DIST
    assert katex.dist_folder(tmp_path, "k/dist") == tmp_path / "k" / "dist"
