"""Figures in the page's language: `literate.words.tr`, the words a page's
examples reach, per-language runs and cache keys, translated alt text, fonts.

The small pages are written into a temporary root; the last tests check the
site's own pages through the pipeline (warm cache: the site build's).
"""

from __future__ import annotations

import base64
import re
from pathlib import Path

import pytest
from conftest import CHAPTERS

from literate import words
from literate.cache_key import code_key, example_words
from literate.directives import page_examples
from literate.execute import ExecuteError, execute_page
from literate.keys import current_keys
from literate.parse import parse
from literate.pipeline import Pipeline

ROOT = Path(__file__).resolve().parents[1]
CJK = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")

LABELS = '''\
"""Labels."""

from literate.words import tr


def label() -> str:
    return tr("step")


def helper():
    return tr("never drawn")
'''

DEMO = '''\
"""A figure with words."""

import labels
import matplotlib.pyplot as plt


def plot():
    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1])
    ax.set_xlabel(labels.label())
    return fig


#| plot()  | alt: a rising line

# Plain text.


def table():
    print("| n |\\n| --: |\\n| 1 |")


#| table()
'''


@pytest.fixture
def root(tmp_path):
    (tmp_path / "labels.py").write_text(LABELS, encoding="utf-8")
    (tmp_path / "demo.py").write_text(DEMO, encoding="utf-8")
    return tmp_path


def page_of(root: Path):
    return parse((root / "demo.py").read_text(encoding="utf-8"), "demo.py")


def images(page) -> list:
    return [o for s in page.sections for o in s.outputs if o.kind == "image"]


def drawn(output) -> bytes:
    """The figure's file, SVG or PNG (the build rasters heavy vector figures)."""
    return base64.b64decode(output.image.split(",", 1)[1])


def test_tr_returns_the_translation_else_the_english():
    try:
        words.use({"step": "ステップ"})
        assert (words.tr("step"), words.tr("loss")) == ("ステップ", "loss")
        words.use({})
        assert words.tr("step") == "step"
    finally:
        words.use({})


def test_example_words_follow_only_the_attributes_used(root):
    # `labels.label` is reached through `import labels`; `labels.helper` is not.
    assert example_words(root, "demo.py", "plot()") == ("step",)
    assert example_words(root, "demo.py", "table()") == ()


def test_update_keys_hold_the_alt_texts_and_words(root):
    keys = current_keys(root, "demo.py")
    assert "a rising line" in keys and "step" in keys
    assert "never drawn" not in keys


def test_the_cache_key_depends_on_the_translation_only_where_words_are_used(root):
    english = code_key(root, "demo.py", "plot()", {"s": 1})
    keyed = {
        v: code_key(root, "demo.py", "plot()", {"s": 1, "words": {"step": v}})
        for v in ("ステップ", "步")
    }
    assert len({english, *keyed.values()}) == 3


def test_a_translated_page_draws_its_words_and_alt_in_its_language(root):
    english = execute_page(page_of(root), root / "demo.py")
    table = {"step": "ステップ", "a rising line": "右上がりの直線"}
    ja = execute_page(english, root / "demo.py", lang="ja", words=table)
    [en_image], [ja_image] = images(english), images(ja)
    assert ja_image.alt == "右上がりの直線" and en_image.alt == "a rising line"
    assert drawn(ja_image) != drawn(en_image)
    # Text outputs that show no words are the English page's.
    text = [[o.text for s in p.sections for o in s.outputs if o.kind == "text"]
            for p in (english, ja)]  # fmt: skip
    assert text[0] == text[1] and text[0]
    # An untranslated word draws the English figure.
    same = execute_page(english, root / "demo.py", lang="ja", words={})
    assert drawn(images(same)[0]) == drawn(en_image)


def test_a_glyph_missing_from_the_fonts_is_an_error_naming_the_line(root):
    english = execute_page(page_of(root), root / "demo.py")
    # Korean has no font in FONTS: DejaVu Sans alone has no Hangul.
    with pytest.raises(ExecuteError) as error:
        execute_page(english, root / "demo.py", lang="ko", words={"step": "단계"})
    line = DEMO.split("\n").index("#| plot()  | alt: a rising line") + 1
    assert str(error.value).startswith(f"demo.py:{line}:")
    assert "missing from font" in str(error.value)


@pytest.mark.parametrize("lang", ["ja", "zh"])
def test_the_site_figures_are_drawn_and_described_in_each_language(lang):
    pipeline = Pipeline(ROOT)
    try:
        pages = {
            source: (pipeline.english(source), pipeline.page(source, lang))
            for source in CHAPTERS
        }
    finally:
        pipeline.close()
    for source, (english, translated) in pages.items():
        ours, theirs = images(english), images(translated)
        assert ours and len(ours) == len(theirs), source
        for en, other in zip(ours, theirs, strict=True):
            assert drawn(en) != drawn(other), f"{source}:{en.directive} is English"
            assert CJK.search(other.alt), f"{source}:{en.directive}: {other.alt}"
        # Printed tables whose headings are `tr` words: in the language too.
        worded = {
            e.line
            for e in page_examples(english)
            if not e.notebook_only and example_words(ROOT, source, e.expr)
        }
        texts = [
            (o, t)
            for o, t in zip(outputs(english), outputs(translated), strict=True)
            if o.kind == "text" and o.directive in worded and o.text.startswith("|")
        ]
        assert texts or source not in ("attention.py", "mha.py")
        for en, other in texts:
            heading = other.text.split("\n")[0]
            assert CJK.search(heading) and not CJK.search(en.text), en.directive


def outputs(page) -> list:
    return [o for s in page.sections for o in s.outputs]


def test_a_module_used_whole_anywhere_counts_whole(root):
    # Five functions use `labels.label` only, one uses `labels` whole: in
    # whichever order they are followed, all of `labels` counts.
    partly = "".join(f"def p{i}():\n    return labels.label()\n\n\n" for i in range(5))
    (root / "uses.py").write_text(
        f"import labels\n\n\n{partly}def whole():\n    return labels\n",
        encoding="utf-8",
    )
    expr = "(p0(), p1(), p2(), p3(), p4(), whole())"
    assert example_words(root, "uses.py", expr) == ("never drawn", "step")
    assert example_words(root, "uses.py", "p0()") == ("step",)
