"""`python -m literate translations update|status|check`, and the table files.

Every table is written in a temp folder holding a copy of the demo source;
the repository's own `translations/` is never touched.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT, japanese

from literate.__main__ import main as literate_main
from literate.normalize import key
from literate.parse import parse
from literate.status import status_rows, status_table
from literate.tables import dumps_table, save_table, short

DEMO = Path(__file__).parent / "translation_data" / "demo.py"


# --- tables on disk ---------------------------------------------------------


def test_save_table_is_canonical_and_atomic(tmp_path, monkeypatch):
    path = tmp_path / "ja" / "mha.json"
    table = {"b": "ビー", "a": "エー"}
    save_table(path, table)
    text = path.read_text(encoding="utf-8")
    assert (
        text == json.dumps(table, ensure_ascii=False, sort_keys=True, indent=2) + "\n"
    )
    with pytest.raises(TypeError):
        save_table(path, {"a": {1, 2}})  # fails while writing the temp file
    monkeypatch.setattr(
        os, "replace", lambda *a: (_ for _ in ()).throw(OSError("disk"))
    )
    with pytest.raises(OSError):
        save_table(path, {"a": "新しい"})  # fails at the rename
    assert path.read_text(encoding="utf-8") == text
    assert [p.name for p in path.parent.iterdir()] == ["mha.json"]


# --- the command line -------------------------------------------------------

SITE = (
    'site_url: !ENV [SITE_URL, ""]\nplugins:\n  - literate:\n      sources: [demo.py]\n'
)
TABLE = "translations/ja/demo.json"


@pytest.fixture
def repo(tmp_path):
    """A repository root with one literate source named by its mkdocs.yml."""
    (tmp_path / "demo.py").write_text(DEMO.read_text(encoding="utf-8"), "utf-8")
    (tmp_path / "mkdocs.yml").write_text(SITE, encoding="utf-8")
    return tmp_path


def cli(root: Path, capsys, *args: str) -> tuple[int, str]:
    code = literate_main(["--root", str(root), "translations", *args])
    return code, capsys.readouterr().out


def line_of(text: str, table_key: str) -> int:
    quoted = json.dumps(table_key, ensure_ascii=False)
    return next(
        n
        for n, row in enumerate(text.split("\n"), 1)
        if row.lstrip().startswith(quoted)
    )


def demo_keys(source: Path) -> list[str]:
    page = parse(source.read_text(encoding="utf-8"), source.name)
    texts = [page.title, page.summary] + [s.docs for s in page.sections]
    return list(dict.fromkeys(key(t) for t in texts if t.strip()))


def test_update_creates_a_language_and_keeps_translations(repo, capsys):
    keys = demo_keys(repo / "demo.py")
    code, out = cli(repo, capsys, "update", "ja")
    assert code == 0
    assert out == (
        f"{TABLE}: {len(keys)} keys, 0 translated, {len(keys)} added, "
        "0 stale kept, 0 removed; written\n"
    )
    path = repo / TABLE
    assert json.loads(path.read_text("utf-8")) == dict.fromkeys(keys, "")
    table = dict.fromkeys(keys, "") | {keys[0]: "キーのデモ"}
    path.write_text(json.dumps(table), encoding="utf-8")  # \u escapes, unsorted
    assert cli(repo, capsys, "update")[1].endswith(
        "1 translated, 0 added, 0 stale kept, 0 removed; written\n"
    )
    assert path.read_text("utf-8") == dumps_table(
        table
    ) and "キーのデモ" in path.read_text("utf-8")
    assert cli(repo, capsys, "update")[1].endswith("; unchanged\n")


def test_update_reports_stale_keys_with_the_most_similar_one(repo, capsys):
    cli(repo, capsys, "update", "ja")
    path = repo / TABLE
    old = next(k for k in demo_keys(repo / "demo.py") if k.startswith("Scale"))
    table = json.loads(path.read_text("utf-8")) | {old: japanese(old)}
    save_table(path, table)
    source = repo / "demo.py"
    source.write_text(
        source.read_text("utf-8").replace("Scale the", "Divide the"), "utf-8"
    )
    new = old.replace("Scale the", "Divide the")
    line = line_of(path.read_text("utf-8"), old)
    code, out = cli(repo, capsys, "update")
    assert code == 0
    assert (
        f"{TABLE}:{line}: stale key {short(old)}: most similar current key (ratio"
        in out
    )
    assert out.split("\n")[0].endswith(short(new))
    assert json.loads(path.read_text("utf-8"))[old] == japanese(old)
    code, out = cli(repo, capsys, "update", "--prune")
    assert (
        f"stale key {short(old)}: removed" in out and "0 stale kept, 1 removed" in out
    )
    assert old not in json.loads(path.read_text("utf-8"))


def test_check_passes_a_good_table_and_names_file_line_and_key(repo, capsys):
    cli(repo, capsys, "update", "ja")
    path = repo / TABLE
    keys = demo_keys(repo / "demo.py")
    assert cli(repo, capsys, "check") == (
        0,
        "translations/ja/glossary.json: none, no terms\n"
        f"{TABLE}: {len(keys)} keys, 0 translated, 0 errors\n",
    )
    bad = next(k for k in keys if "_^_0_^_" in k)
    save_table(path, json.loads(path.read_text("utf-8")) | {bad: "訳だけ。"})
    code, out = cli(repo, capsys, "check", "ja")
    line = line_of(path.read_text("utf-8"), bad)
    assert code == 1
    assert f"{TABLE}:{line}: key {short(bad)}: placeholder _^_0_^_ is missing" in out


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{\n  "a": "x"\n  "b": "y"\n}\n', "invalid JSON"),
        ('{\n  "a": "x",\n  "a": "y"\n}\n', "duplicate key"),
        ('{\n  "a": 1\n}\n', "expected a string value"),
        ('{\n  "b": "y",\n  "a": "x"\n}\n', "not in canonical form"),
        ('{\n  "a": "\\u30a2"\n}\n', "not in canonical form"),
    ],
)
def test_check_fails_on_a_broken_file_with_its_line(repo, capsys, text, message):
    path = repo / TABLE
    path.parent.mkdir(parents=True)
    path.write_text(text, encoding="utf-8")
    code, out = cli(repo, capsys, "check")
    assert code == 1 and message in out
    if message == "invalid JSON":
        with pytest.raises(json.JSONDecodeError) as parser:
            json.loads(text)
        assert f"{TABLE}:{parser.value.lineno}:{parser.value.colno}: " in out
    else:
        assert f"{TABLE}:3:" in out or f"{TABLE}:2:" in out


def test_check_reports_a_broken_glossary(repo, capsys):
    path = repo / "translations" / "ja" / "glossary.json"
    path.parent.mkdir(parents=True)
    path.write_text('{\n  "softmax": {\n    "rendering": "softmax"\n  }\n}\n', "utf-8")
    code, out = cli(repo, capsys, "check")
    assert code == 1
    assert 'translations/ja/glossary.json:2:1: term "softmax": expected' in out


def test_status_counts_translated_stale_and_failing(repo, capsys):
    cli(repo, capsys, "update", "zh")
    path = repo / "translations" / "zh" / "demo.json"
    keys = demo_keys(repo / "demo.py")
    with_math = [k for k in keys if "_^_0_^_" in k]
    table = json.loads(path.read_text("utf-8")) | {
        with_math[0]: japanese(with_math[0]),  # passes
        with_math[1]: "没有占位符。",  # fails the check
        "An English text that is gone.": "已经不存在的英文。",  # stale
    }
    save_table(path, table)
    code, out = cli(repo, capsys, "status")
    share = round(100 / len(keys))
    assert code == 0
    assert f"| zh | demo.py | 1 / {len(keys)} ({share} %) | 1 | 1 |" in out
    # The site's Chinese and Japanese status pages name the languages and
    # write the share as those languages do.
    rows = status_rows(repo, ("demo.py",))
    in_zh, in_ja = status_table(rows, "zh"), status_table(rows, "ja")
    assert f"| 中文 | demo.py | 1 / {len(keys)}（{share}%） | 1 | 1 |" in in_zh
    assert f"| 中国語 | demo.py | 1 / {len(keys)}（{share}%） | 1 | 1 |" in in_ja


def test_bad_arguments_exit_non_zero(repo, capsys):
    assert cli(repo, capsys, "update", "Japanese")[0] == 2
    assert cli(repo, capsys, "update", "en")[0] == 2
    code, out = cli(repo, capsys, "check", "ko")
    assert code == 1 and "translations/ko: no such language folder" in out
    (repo / "demo.py").write_text("def broken(:\n", encoding="utf-8")
    code, out = cli(repo, capsys, "update", "ja")
    assert code == 1 and out.startswith("demo.py")


def test_python_m_literate_translations_runs_the_cli(repo):
    done = subprocess.run(
        [sys.executable, "-m", "literate", "translations", "--root", str(repo),
         "update", "ja"],
        capture_output=True, text=True, cwd=ROOT, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"{TABLE}: ")


def test_a_relative_root_is_the_folder_it_names(tmp_path, capsys, monkeypatch):
    """`--root .` or `--root proj` works as the absolute path does (a relative
    root once failed on the first source a folder pattern found under it)."""
    from literate.__main__ import main as literate_main

    project = tmp_path / "proj"
    (project / "src").mkdir(parents=True)
    (project / "src" / "demo.py").write_text(DEMO.read_text("utf-8"), "utf-8")
    (project / "mkdocs.yml").write_text(
        "plugins:\n  - literate:\n      sources: [src]\n      base: src\n",
        encoding="utf-8",
    )
    monkeypatch.chdir(project)
    assert literate_main(["--root", ".", "translations", "update", "ja"]) == 0
    monkeypatch.chdir(tmp_path)
    code = literate_main(["--root", "proj", "translations", "status"])
    out = capsys.readouterr().out
    assert code == 0 and "| ja | src/demo.py |" in out, out
