"""`literate translations import-labml`: labml's translate_cache into our tables.

The sources are the installed labml-nn's own; the labml-format tables are
written here, in labml's layout (`<path below labml_nn>.<lang>.json`, keys the
sections' HTML with `<span translate=no>_^_N_^_</span>` for math and code),
with translations of our own, some of them broken the ways labml's are.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import labml_nn
import pytest

from literate.__main__ import main
from literate.check import check_entry
from literate.glossary import load_glossary
from literate.tables import load_table
from literate.translations.labml_convert import convert, read_labml, read_ours

LABML = Path(labml_nn.__file__).parent
SOURCES = ("transformers/mha.py", "transformers/feed_forward.py")
SPAN = "<span translate=no>_^_{}_^_</span>".format
PREPARE_EN = (
    '<p> <a id="PrepareMHA"></a></p>\n<h2>Prepare for multi-head attention</h2>\n'
    "<p>This module does a linear transformation and splits the vector into "
    "given number of heads for multi-head attention. This is used to transform "
    "<strong>key</strong>, <strong>query</strong>, and <strong>value</strong> "
    "vectors.</p>\n"
)
HEADS_EN = (
    f"<ul><li>{SPAN(0)} is the number of heads. </li>\n<li>{SPAN(1)} is the "
    f"number of features in the {SPAN(2)}, {SPAN(3)} and {SPAN(4)} vectors."
    "</li></ul>\n"
)
INTRO_EN = (
    '<h1>Multi-Headed Attention (MHA)</h1>\n<p><a href="https://colab.research.'
    "google.com/github/labmlai/annotated_deep_learning_paper_implementations/"
    'blob/master/labml_nn/transformers/basic/autoregressive_experiment.ipynb">'
    f"{SPAN(0)}</a></p>\n<p>This is a tutorial/implementation of multi-headed "
    'attention from paper <a href="https://arxiv.org/abs/1706.03762">Attention '
    'Is All You Need</a> in <a href="https://pytorch.org/">PyTorch</a>. The '
    'implementation is inspired from <a href="https://nlp.seas.harvard.edu/'
    '2018/04/03/attention.html">Annotated Transformer</a>.</p>\n<p>Here is the '
    '<a href="basic/autoregressive_experiment.html">training code</a> that uses '
    "a basic transformer with MHA for NLP auto-regression.</p>\n<p><a href="
    '"basic/autoregressive_experiment.html">Here is an experiment '
    "implementation</a> that trains a simple transformer.</p>\n"
)

# ja: mapped, repaired (three kinds), refused (converter and check), kept.
JA = {
    "transformers/mha.ja.json": {
        "Multi-Headed Attention (MHA)": "マルチヘッドアテンション (MHA)",
        "<p>Number of heads </p>\n": "<p>ヘッドの数</p>\n",
        PREPARE_EN: (
            '<p><a id="PrepareMHA"></a></p>\n<h2>マルチヘッドアテンションの準備'
            "</h2>\n<p>線形変換でベクトルを所定の数のヘッドに分けます。"
            "<strong>キー</strong>、<strong>クエリ</strong>、<strong>バリュー"
            "</strong>のベクトルの変換に使います。</p>\n"
        ),
        # the full stop pushed out of its paragraph: folded back in
        f"<p>Compute attention scores {SPAN(0)}. This gives a tensor of shape "
        f"{SPAN(1)}. </p>\n": (
            f"<p>スコア {SPAN(0)} を計算します。形は {SPAN(1)} になります</p>。\n"
        ),
        # the last item after the list's end: moved back into the list
        HEADS_EN: (
            f"<ul><li>{SPAN(0)} はヘッドの数です。</li>\n</ul><li>{SPAN(1)} は "
            f"{SPAN(2)}、{SPAN(3)}、{SPAN(4)} のベクトルの特徴の数です。</li>\n"
        ),
        # a placeholder lost: check refuses it
        f"<p>Output has shape {SPAN(0)} or {SPAN(1)} </p>\n": (
            f"<p>出力の形は {SPAN(0)} です</p>\n"
        ),
        # against the project's glossary (dropout -> ドロップアウト)
        "<p>Apply dropout </p>\n": "<p>脱落を適用</p>\n",
        # a link nested in another's text: refused by the converter
        INTRO_EN: (
            '<h1>マルチヘッドアテンション (MHA)</h1>\n<p><a href="https://colab.'
            "research.google.com/github/labmlai/annotated_deep_learning_paper_"
            "implementations/blob/master/labml_nn/transformers/basic/"
            f'autoregressive_experiment.ipynb">{SPAN(0)}</a></p>\n<p><a href='
            '"https://arxiv.org/abs/1706.03762"><a href="https://pytorch.org/">'
            "論文</a></a></p>\n<p>訓練コード</p>\n<p>実験</p>\n"
        ),
        "<p>Dropout </p>\n": "<p>ドロップアウト層</p>\n",  # we have one: kept
        "<p>A comment that labml kept but we do not </p>\n": "<p>余り</p>\n",
    },
}
# zh: labml's split docstring (one key per block), a URL-escaped placeholder,
# the English copied unchanged, and a second source.
ZH = {
    "transformers/mha.zh.json": {
        '<p> <a id="PrepareMHA"></a></p>\n<h2>Prepare for multi-head attention'
        "</h2>\n": '<p><a id="PrepareMHA"></a></p>\n<h2>为多头注意力做准备</h2>\n',
        "<p>This module does a linear transformation and splits the vector into "
        "given number of heads for multi-head attention. This is used to "
        "transform <strong>key</strong>, <strong>query</strong>, and "
        "<strong>value</strong> vectors.</p>\n": (
            "<p>该模块做一次线性变换，并把向量分成给定数量的头。它用于变换"
            "<strong>键</strong>、<strong>查询</strong>和<strong>值</strong>"
            "向量。</p>\n"
        ),
        f"<p>Scale scores {SPAN(0)} </p>\n": (
            "<p>缩放分数 <span translate=no>_%5e_0_%5e_</span></p>\n"
        ),
        "<p>Number of dimensions in vectors in each head </p>\n": (
            "<p>Number of dimensions in vectors in each head</p>\n"
        ),
    },
    "transformers/feed_forward.zh.json": {
        "Position-wise Feed-Forward Network (FFN)": "逐位置前馈网络 (FFN)",
        "<h2>FFN module</h2>\n": "<h2>FFN 模块</h2>\n",
    },
}


def make_project(tmp_path: Path, tables: dict[str, dict[str, str]]) -> Path:
    """A project with labml's sources and the labml-format `tables`."""
    root = tmp_path / "site"
    for source in SOURCES:
        target = root / "labml_nn" / source
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(LABML / source, target)
    sources = ", ".join(f"labml_nn/{s}" for s in SOURCES)
    (root / "mkdocs.yml").write_text(
        f"site_name: t\nplugins:\n  - literate:\n      sources: [{sources}]\n"
        "      base: labml_nn\n",
        encoding="utf-8",
    )
    for lang in ("ja", "zh"):
        (root / "translations" / lang).mkdir(parents=True)
    glossary = {"dropout": {"render": "ドロップアウト"}}
    (root / "translations/ja/glossary.json").write_text(
        json.dumps(glossary, ensure_ascii=False), encoding="utf-8"
    )
    for name, table in tables.items():
        path = tmp_path / "translate_cache" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        # labml's own layout: one entry a line, one-space indent, \u escapes
        path.write_text(json.dumps(table, indent=1), encoding="utf-8")
    return root


def run(root: Path, *argv: str, capsys) -> tuple[int, list[str]]:
    code = main(["--root", str(root), "translations", *argv])
    return code, capsys.readouterr().out.splitlines()


def ja_table(root: Path) -> dict[str, str]:
    return load_table(root / "translations/ja/labml_nn/transformers/mha.json")


def test_import_reports_each_source_and_writes_tables_check_passes(tmp_path, capsys):
    root = make_project(tmp_path, {**JA, **ZH})
    existing = root / "translations/ja/labml_nn/transformers/mha.json"
    existing.parent.mkdir(parents=True)
    existing.write_text('{"Dropout": "ドロップアウト"}\n', encoding="utf-8")
    code, out = run(
        root, "import-labml", "ja", "--from", "../translate_cache", capsys=capsys
    )
    assert code == 0, out
    cache = "../translate_cache/transformers"
    glossary = load_glossary(root / "translations/ja/glossary.json")
    assert out == [
        f'{cache}/mha.ja.json:9: key "# Multi-Headed Attention (MHA)\\n\\n[![Open '
        "In Colab](_^_0_…\": refused: a link inside another link's text",
        f'{cache}/mha.ja.json:7: key "Output has shape _^_0_^_ or _^_1_^_": '
        "refused: placeholder _^_1_^_ is missing (the English has it)",
        f'{cache}/mha.ja.json:6: key "* _^_0_^_ is the number of heads.\\n* '
        '_^_1_^_ is the numbe…": repaired: list item after the end of '
        "its list moved into it",
        f'{cache}/mha.ja.json:5: key "Compute attention scores _^_0_^_. This '
        'gives a tensor of …": repaired: text after the end of its '
        "paragraph folded into it",
        f'{cache}/mha.ja.json:8: key "Apply dropout": refused: '
        + check_entry("Apply dropout", "脱落を適用", glossary)[0],
        "translations/ja/labml_nn/transformers/mha.json: 37 keys, 6 translated: "
        "3 mapped, 2 repaired, 3 refused, 28 no entry, 1 kept; 10 labml "
        "entries, 1 unused; written",
        "translations/ja/labml_nn/transformers/feed_forward.json: 15 keys, 0 "
        "translated: 0 mapped, 0 repaired, 0 refused, 15 no entry, 0 kept; no "
        f"labml table {cache}/feed_forward.ja.json; written",
        "ja: 2 sources, 52 keys, 6 translated (11.5 %): 3 mapped, 2 repaired, "
        "3 refused, 43 no entry, 1 kept",
    ]
    table = ja_table(root)
    assert table["Dropout"] == "ドロップアウト"  # ours, kept
    assert table["Number of heads"] == "ヘッドの数"
    assert table["Multi-Headed Attention (MHA)"] == "マルチヘッドアテンション (MHA)"
    # labml's anchors as our raw-HTML placeholders, <strong> as **
    assert table[read_ours(_docs("PrepareMHA")).template.text] == (
        "_^_0_^__^_1_^_\n\n## マルチヘッドアテンションの準備\n\n線形変換でベク"
        "トルを所定の数のヘッドに分けます。**キー**、**クエリ**、**バリュー**の"
        "ベクトルの変換に使います。"
    )
    scores = "Compute attention scores _^_0_^_. This gives a tensor of shape _^_1_^_."
    assert table[scores] == "スコア _^_0_^_ を計算します。形は _^_1_^_ になります。"
    heads = "* _^_0_^_ is the number of heads.\n* _^_1_^_ is the number of "
    heads += "features in the _^_2_^_, _^_3_^_ and _^_4_^_ vectors."
    assert table[heads] == (
        "* _^_0_^_ はヘッドの数です。\n* _^_1_^_ は _^_2_^_、_^_3_^_、_^_4_^_ の"
        "ベクトルの特徴の数です。"
    )
    # refused entries stay untranslated, never half-written
    assert table["Output has shape _^_0_^_ or _^_1_^_"] == ""
    assert table["Apply dropout"] == ""

    code, out = run(root, "import-labml", "--from", "../translate_cache",
                    capsys=capsys)  # fmt: skip
    assert code == 0, out
    assert out[-1] == (
        "zh: 2 sources, 52 keys, 4 translated (7.7 %): 3 mapped, 1 repaired, "
        "1 refused, 47 no entry, 0 kept"
    )
    assert (
        f'{cache}/mha.zh.json:4: key "Scale scores _^_0_^_": repaired: '
        "URL-escaped placeholder _%5e_N_%5e_ restored"
    ) in out
    assert any("refused: the English is copied unchanged" in line for line in out)
    zh = load_table(root / "translations/zh/labml_nn/transformers/mha.json")
    # one key of ours from two of labml's (its docstring split by blocks)
    assert zh[read_ours(_docs("PrepareMHA")).template.text] == (
        "_^_0_^__^_1_^_\n\n## 为多头注意力做准备\n\n该模块做一次线性变换，并把向量"
        "分成给定数量的头。它用于变换**键**、**查询**和**值**向量。"
    )
    assert zh["Scale scores _^_0_^_"] == "缩放分数 _^_0_^_"
    ffn = load_table(root / "translations/zh/labml_nn/transformers/feed_forward.json")
    assert ffn["## FFN module"] == "## FFN 模块"
    # ja was imported again: every translation is ours now, nothing changed
    assert (
        "translations/ja/labml_nn/transformers/mha.json: 37 keys, 6 translated: "
        "0 mapped, 0 repaired, 3 refused, 28 no entry, 6 kept; 10 labml entries, "
        "1 unused; unchanged"
    ) in out

    code, out = run(root, "check", capsys=capsys)
    assert code == 0, out
    assert all(line.endswith((" 0 errors", "terms")) for line in out), out


def _docs(anchor: str) -> str:
    """The docstring of mha.py that opens with `<a id="anchor">`."""
    from literate.parse import parse

    page = parse((LABML / "transformers/mha.py").read_text(encoding="utf-8"), "m")
    return next(s.docs for s in page.sections if f'id="{anchor}"' in s.docs)


def test_overwrite_replaces_our_translations(tmp_path, capsys):
    root = make_project(tmp_path, JA)
    path = root / "translations/ja/labml_nn/transformers/mha.json"
    path.parent.mkdir(parents=True)
    path.write_text('{"Dropout": "旧訳"}\n', encoding="utf-8")
    argv = ("import-labml", "ja", "--from", "../translate_cache", "--overwrite")
    code, out = run(root, *argv, capsys=capsys)
    assert code == 0, out
    assert ja_table(root)["Dropout"] == "ドロップアウト層"


def test_bad_labml_table_is_one_line_naming_file_and_line_others_written(
    tmp_path, capsys
):
    root = make_project(tmp_path, ZH)
    broken = tmp_path / "translate_cache/transformers/mha.zh.json"
    broken.write_text('{\n "<p>Dropout </p>\\n": "<p>丢弃</p>",\n "x" 1\n}\n')
    code, out = run(root, "import-labml", "zh", "--from", "../translate_cache",
                    capsys=capsys)  # fmt: skip
    assert code == 1
    assert out[0] == (
        "../translate_cache/transformers/mha.zh.json:3:6: invalid JSON: expected "
        "':', found '1' (translations/zh/labml_nn/transformers/mha.json not "
        "written)"
    )
    assert not (root / "translations/zh/labml_nn/transformers/mha.json").exists()
    ffn = load_table(root / "translations/zh/labml_nn/transformers/feed_forward.json")
    assert ffn["## FFN module"] == "## FFN 模块"

    broken.write_text('{\n "<p>Dropout </p>\\n": ["丢弃"]\n}\n')
    code, out = run(root, "import-labml", "zh", "--from", "../translate_cache",
                    capsys=capsys)  # fmt: skip
    assert code == 1
    assert out[0].startswith(
        "../translate_cache/transformers/mha.zh.json:2:1: key "
        '"<p>Dropout </p>\\n": expected a string value, found list'
    )
    code, out = run(root, "import-labml", "zh", "--from", "../nowhere",
                    capsys=capsys)  # fmt: skip
    assert (code, out) == (
        2, ["--from '../nowhere': not a folder (expected labml's translate_cache "
            "folder)"],
    )  # fmt: skip


def test_values_that_cannot_be_written_faithfully_are_refused():
    ours = read_ours("See [the paper](https://arxiv.org/abs/1) and $x$.")
    labml = read_labml(
        f'<p>See <a href="https://arxiv.org/abs/1">the paper</a> and {SPAN(0)}.</p>'
    )
    ok = convert(ours, labml, f'<p>{SPAN(0)} と<a href="https://arxiv.org/abs/1">'
                              "論文</a>を参照</p>")  # fmt: skip
    assert ok.markdown == "_^_1_^_ と[論文](_^_0_^_)を参照" and not ok.repairs
    for value, reason in [
        ('<p><a href="https://elsewhere.org/">論文</a></p>',
         "link target 'https://elsewhere.org/' is not in the English"),
        (f"<p>{SPAN(3)}</p>", "placeholder _^_3_^_ is not in labml's English"),
        (f"<h2>見出し</h2><p>{SPAN(0)}</p>",
         "the blocks are h2, p, labml's English has p"),
        ("<p>a <b>x</b> <script>y</script></p>",
         "HTML '<script>' is not in the English"),
    ]:  # fmt: skip
        try:
            convert(ours, labml, value)
        except ValueError as error:
            assert str(error) == reason
        else:
            raise AssertionError(f"{value!r} was converted")


@pytest.mark.slow
def test_the_imported_japanese_tables_build_a_japanese_site(tmp_path, capsys):
    """The tables the importer writes are ones the plugin reads: en + ja built."""
    root = make_project(tmp_path, JA)
    code, out = run(
        root, "import-labml", "ja", "--from", "../translate_cache", capsys=capsys
    )
    assert code == 0, out
    sources = ", ".join(f"labml_nn/{s}" for s in SOURCES)
    (root / "mkdocs.yml").write_text(
        "site_name: t\nuse_directory_urls: false\n"
        "theme: {name: material, font: false}\nplugins:\n  - i18n:\n"
        "      docs_structure: suffix\n      languages:\n"
        "        - {locale: en, name: English, default: true}\n"
        "        - {locale: ja, name: 日本語}\n"
        f"  - literate:\n      sources: [{sources}]\n      base: labml_nn\n"
        "      status_page: ''\n",
        encoding="utf-8",
    )
    (root / "docs").mkdir()
    (root / "docs/index.md").write_text("# Home\n", encoding="utf-8")
    (root / "docs/index.ja.md").write_text("# ホーム\n", encoding="utf-8")
    # Not --strict: the two sources link to labml pages outside this site.
    command = [sys.executable, "-m", "mkdocs", "build", "-d", "out"]
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    done = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    warnings = [line for line in done.stderr.splitlines() if "WARNING" in line]
    assert warnings and all(
        ": no such page or file in the site" in line for line in warnings
    ), done.stderr
    page = (root / "out/ja/transformers/mha.html").read_text(encoding="utf-8")
    assert '<html lang="ja"' in page
    # labml's translations, through the importer, on the page
    for words in ("マルチヘッドアテンションの準備", "ヘッドの数", "ドロップアウト"):
        assert words in page, words
    english = (root / "out/transformers/mha.html").read_text(encoding="utf-8")
    # Its text: a short hyphenated word is a nowrap span (typography.py).
    assert "Prepare for multi-head attention" in re.sub(r"<[^>]+>", "", english)
    assert "マルチヘッドアテンションの準備" not in english
