"""Prose comments of the code column: keys, the check, and the translated page.

A small project is written into a temporary folder: a literate source whose
code has a prose comment, a shape note, a pragma and code in a comment, and a
Japanese table. `translations update` adds only the prose comment as a key;
`check` and `status` judge its translation as a comment; the Japanese page
shows it in the code column with the English beside it for the reveal, and
the English page, the notebook and the source keep the English.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from literate.__main__ import main
from literate.check import comment_problems
from literate.comments import classify, section_comments
from literate.keys import source_keys
from literate.parse import parse
from literate.pipeline import Pipeline

SOURCE = textwrap.dedent(
    '''\
    """# Demo

    A page.
    """

    # Sizes of the model.
    WIDTH = 8  # width of the residual stream
    SHAPE = (2, 3)  # [B, S]
    TOTAL = WIDTH * 2  # noqa: E501
    LIMIT = 3  # x = WIDTH + 1
    DEPTH = 4  # blocks, see `WIDTH`
    '''
)
MKDOCS = "site_name: t\nplugins:\n  - literate:\n      sources: [demo.py]\n"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "demo.py").write_text(SOURCE, encoding="utf-8")
    (tmp_path / "mkdocs.yml").write_text(MKDOCS, encoding="utf-8")
    (tmp_path / "translations" / "ja").mkdir(parents=True)
    return tmp_path


def table(root: Path) -> dict[str, str]:
    path = root / "translations" / "ja" / "demo.json"
    return json.loads(path.read_text(encoding="utf-8"))


def write_table(root: Path, values: dict[str, str]) -> None:
    path = root / "translations" / "ja" / "demo.json"
    text = json.dumps(values, ensure_ascii=False, indent=2, sort_keys=True)
    path.write_text(text + "\n", encoding="utf-8")


def run(root: Path, *args: str, capsys) -> tuple[int, str]:
    code = main(["--root", str(root), "translations", *args])
    return code, capsys.readouterr().out


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("width of the residual stream", "prose"),
        ("blocks, see `WIDTH`", "prose"),
        ("[B, S]", "shape"),
        ("H times [B, S, Dk] -> [B, H, S, Dk]", "prose"),
        ("head 0, [D, Dk]", "prose"),
        ("[2 x 3, 6]", "shape"),
        ("noqa: E501", "pragma"),
        ("fmt: skip", "pragma"),
        ("x = WIDTH + 1", "code"),
        ("model.forward(x)", "code"),
    ],
)
def test_a_comment_is_prose_shape_code_or_pragma(text, kind):
    assert classify(text) == kind


def test_only_prose_comments_of_the_code_column_are_keys(project, capsys):
    page = parse(SOURCE, "demo.py")
    found = [(c.number, c.text) for c in section_comments(page.sections)]
    assert found == [(7, "width of the residual stream"), (11, "blocks, see `WIDTH`")]
    keys = source_keys(project, "demo.py")
    assert keys.comments == ("width of the residual stream", "blocks, see `WIDTH`")
    code, out = run(project, "update", "ja", capsys=capsys)
    assert code == 0, out
    assert set(table(project)) == {
        "Demo",
        "# Demo\n\nA page.",
        "Sizes of the model.",
        "width of the residual stream",
        "blocks, see `WIDTH`",
    }


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("残差ストリームの幅", None),
        ("残差ストリームの\n幅", "one line"),
        ("ブロック数、WIDTH を参照", "'`WIDTH`' must stay as written"),
        ("幅 <b>", "raw HTML"),
        ("幅\u202e", "U+202E"),
        ("width of the residual stream", "copied unchanged"),
    ],
)
def test_the_check_judges_a_comment_as_a_comment(value, problem):
    key = "blocks, see `WIDTH`" if "WIDTH" in value else "width of the residual stream"
    found = comment_problems(key, value)
    if problem is None:
        assert found == []
    else:
        assert any(problem in p for p in found), found


def test_shapes_stay_and_lists_of_words_may_be_translated():
    key = "[S, 2], each row [noun, action]"
    assert comment_problems(key, "[S, 2]、各行は [名詞, 動作]") == []
    assert comment_problems(key, "[S,2]、各行は [名詞, 動作]") == [
        "'[S, 2]' must stay as written in the English"
    ]


def test_check_and_status_count_comments_with_the_comment_rules(project, capsys):
    run(project, "update", "ja", capsys=capsys)
    values = table(project)
    values["width of the residual stream"] = "残差ストリームの幅"
    values["blocks, see `WIDTH`"] = "ブロック数（WIDTH を参照）"  # drops the backticks
    write_table(project, values)
    code, out = run(project, "check", "ja", capsys=capsys)
    assert code == 1
    assert "demo.json:5: key \"blocks, see `WIDTH`\": '`WIDTH`' must stay" in out
    assert "residual" not in out
    code, out = run(project, "status", capsys=capsys)
    assert "| ja | demo.py | 1 / 5 (20 %) | 0 | 1 |" in out


def test_the_translated_page_shows_the_comment_and_keeps_the_english(project):
    write_table(
        project,
        {
            "Demo": "デモ",
            "# Demo\n\nA page.": "# デモ\n\nページ。",
            "Sizes of the model.": "モデルの大きさ。",
            "width of the residual stream": "残差ストリームの幅",
            "blocks, see `WIDTH`": "",
        },
    )
    pipeline = Pipeline(project, run_examples=False)
    japanese = pipeline.page("demo.py", "ja")
    assert japanese.comments == ((7, "# 残差ストリームの幅"),)
    body = pipeline.html(japanese)
    line = body[body.index('id="L7"') : body.index('id="L8"')]
    title = 'title="# width of the residual stream"'
    assert f'<span class="lit-comment-tr" {title}>' in line
    assert "# 残差ストリームの幅</span>" in line
    english_span = '<span class="lit-comment-en" lang="en" data-search-exclude>'
    assert english_span + "# width of the residual stream</span>" in line
    # Untranslated: the English as it is, unmarked.
    assert "# blocks, see `WIDTH`" in body
    assert body.count("lit-comment-tr") == 1
    # The English page, the notebook's code and the source keep the English.
    english = pipeline.html(pipeline.page("demo.py"))
    assert "lit-comment" not in english and "残差" not in english
    notebook = json.loads(pipeline.notebook(japanese))
    cells = notebook["cells"]
    code = "".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
    assert "# width of the residual stream" in code and "残差" not in code
    assert "残差" not in (project / "demo.py").read_text(encoding="utf-8")


def test_a_failing_comment_translation_is_never_shown(project):
    write_table(project, {"width of the residual stream": "幅 <script>"})
    pipeline = Pipeline(project, run_examples=False)
    japanese = pipeline.page("demo.py", "ja")
    assert japanese.comments == ()
    assert "<script>" not in pipeline.html(japanese).replace("&lt;script&gt;", "")


def test_math_in_a_comment_is_typeset_and_bad_math_stays_text(tmp_path):
    """labml's `# Train for $32$ epochs` inside a config dict: its math is
    typeset in the code column as in the prose; a price or TeX that KaTeX
    rejects stays as written."""
    source = (
        '"""# Demo"""\n\nCONFIG = {\n    # Train for $32$ epochs\n    "epochs": 32,\n'
        '    "cost": 5,  # costs $5 a run\n    "bad": 1,  # broken $\\frac{$ here\n}\n'
    )
    (tmp_path / "demo.py").write_text(source, encoding="utf-8")
    pipeline = Pipeline(tmp_path, run_examples=False)
    body = pipeline.html(pipeline.page("demo.py"))
    line = body[body.index('id="L4"') : body.index('id="L5"')]
    assert line.count('<span class="katex"') == 1 and "$32$" not in line
    assert "# Train for " in line and " epochs</span>" in line
    assert "$5 a run" in body and "broken $\\frac{$ here" in body
    assert body.count('<span class="katex"') == 1


def test_math_in_a_translated_comment_is_typeset_and_its_tooltip_stays_text(tmp_path):
    """The Japanese comment's math is typeset; the English beside it (hidden
    until the reader asks) too; the tooltip, an attribute, keeps the TeX."""
    source = '"""# Demo"""\n\nEPOCHS = 32  # train for $32$ epochs\n'
    (tmp_path / "demo.py").write_text(source, encoding="utf-8")
    (tmp_path / "mkdocs.yml").write_text(MKDOCS, encoding="utf-8")
    (tmp_path / "translations" / "ja").mkdir(parents=True)
    write_table(tmp_path, {"train for $32$ epochs": "$32$ エポック学習する"})
    pipeline = Pipeline(tmp_path, run_examples=False)
    body = pipeline.html(pipeline.page("demo.py", "ja"))
    line = body[body.index('id="L3"') :]
    assert 'title="# train for $32$ epochs"' in line
    assert line.count('<span class="katex"') == 2
    assert "エポック学習する" in line and "$32$ エポック" not in line
