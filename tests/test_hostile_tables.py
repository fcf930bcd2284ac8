"""Hostile tables, round three: what `translations check` refuses, and how.

A project in a temporary folder has one literate source whose example prints
and draws `tr` words (`step {step}, {split}` is formatted), an alt text, a
title and a summary, and a Japanese table translating all of them. Each case
below damages the table (or the folders around it) one way; `check` must
exit non-zero, print one line per problem naming the file and line, print
no traceback, and leave every file of `translations/` byte for byte as it
was. The build (the same gate, `literate.check.entry_problems`, applied when
the pipeline loads a table) never formats a refused word, whether or not
`check` ran first.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from test_hostile_input import within

from literate import words
from literate.__main__ import main as literate
from literate.check import entry_problems
from literate.figure_check import (
    MAX_MATH_DEPTH,
    MAX_MATH_LENGTH,
    figure_problems,
    missing_fonts,
)
from literate.keys import SourceKeys, languages, source_keys
from literate.pipeline import Pipeline
from literate.tables import save_table, short
from literate.translations.update import MAX_STALE

TABLE = "translations/ja/demo.json"

LABELS = '''\
"""The words the demo's example draws and prints."""

from literate.words import tr


def caption(step, split):
    return tr("step {step}, {split}").format(step=step, split=split)


def axis():
    return tr("loss")


def note():
    return tr("milliseconds per new token, with the key/value cache")
'''

DEMO = '''\
"""
---
title: Demo of hostile tables
summary: A page whose figure draws translated words.
---

# Demo

The figure below draws its words in the language of the page.
"""

import labels
import matplotlib.pyplot as plt


def show():
    print(labels.caption(3, "val"))
    fig, ax = plt.subplots()
    ax.set_xlabel(labels.axis())
    ax.set_ylabel(labels.note())
    return fig


#| show()  | alt: a rising line
'''

GOOD = {  # English (or its start) -> a translation that passes
    "Demo of hostile tables": "敵対的な表のデモ",
    "A page whose figure": "図が訳語を描くページ。",
    "# Demo": "# デモ\n\n下の図は、ページの言語で語を描く。",
    "step {step}, {split}": "ステップ {step}、{split}",
    "loss": "損失",
    "milliseconds per new token": "新しいトークン 1 個あたりのミリ秒（キャッシュあり）",
    "a rising line": "右上がりの直線",
}


@pytest.fixture
def project(tmp_path, monkeypatch, capsys):
    """The demo project, its Japanese table fully translated, `check` clean."""
    root = tmp_path / "project"
    root.mkdir()
    monkeypatch.chdir(root)
    (root / "labels.py").write_text(LABELS, encoding="utf-8")
    (root / "demo.py").write_text(DEMO, encoding="utf-8")
    (root / "mkdocs.yml").write_text(
        "site_name: hostile\nplugins:\n  - literate: {sources: [demo.py]}\n", "utf-8"
    )
    assert check(root, "update", "ja")[0] == 0
    save_table(root / TABLE, {key_of(root, k): v for k, v in GOOD.items()})
    assert check(root) == (0, clean_output())
    capsys.readouterr()
    return root


def clean_output() -> str:
    return (
        "translations/ja/glossary.json: none, no terms\n"
        f"{TABLE}: {len(GOOD)} keys, {len(GOOD)} translated, 0 errors\n"
    )


def key_of(root: Path, start: str) -> str:
    return next(k for k in source_keys(root, "demo.py").all if k.startswith(start))


def check(root: Path, *argv: str) -> tuple[int, str]:
    """`literate --root ROOT translations ARGV` (default: `check`), in-process:
    the exit status and what it printed (stdout and stderr)."""
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        code = literate(["--root", str(root), "translations", *(argv or ["check"])])
    return code, out.getvalue()


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file under translations/ (symlinks as their targets' names)."""
    files = {}
    for path in sorted((root / "translations").rglob("*")):
        name = path.relative_to(root).as_posix()
        if path.is_symlink():
            files[name] = os.readlink(path).encode()
        elif path.is_file():
            files[name] = path.read_bytes()
    return files


def line_of(root: Path, table_key: str) -> int:
    quoted = json.dumps(table_key, ensure_ascii=False)
    rows = (root / TABLE).read_text("utf-8").split("\n")
    return next(n for n, row in enumerate(rows, 1) if row.lstrip().startswith(quoted))


def translate(root: Path, start: str, value: str) -> str:
    """Set the value of the key starting with `start`; the message prefix."""
    table_key = key_of(root, start)
    table = json.loads((root / TABLE).read_text("utf-8")) | {table_key: value}
    save_table(root / TABLE, table)
    return f"{TABLE}:{line_of(root, table_key)}: key {short(table_key)}: "


def assert_one_line_each(out: str) -> None:
    """No traceback; every line names a file (and a line) or is a summary."""
    assert "Traceback" not in out
    for row in out.rstrip("\n").split("\n"):
        assert re.match(r"(--root |LANG |error: |update: |[^:\s]+(:\d+)*: )", row), row


# --- entries: figure words as format strings, math, glyphs, characters -------

STEP = "step {step}, {split}"
FIELD_CASES = {  # name: (value of STEP, the problem)
    "attribute walk": (
        "ステップ {step.__class__.__mro__}、{split}",
        "the replacement field {step.__class__.__mro__} reads an attribute or "
        "index of {step}: write {step} as the English does",
    ),
    "index": (
        "ステップ {step[0]}、{split}",
        "the replacement field {step[0]} reads an attribute or index of "
        "{step}: write {step} as the English does",
    ),
    "huge width": (
        "ステップ {step:>99999999}、{split}",
        "the replacement field {step:>99999999} has a format spec or conversion "
        "the English does not have: write {step} as the English does",
    ),
    "conversion": (
        "ステップ {step!r}、{split}",
        "the replacement field {step!r} has a format spec or conversion the "
        "English does not have: write {step} as the English does",
    ),
    "unknown field": (
        "ステップ {x}、{step}、{split}",
        "the replacement field {x} is not in the English: its fields are "
        "{step}, {split}",
    ),
    "positional field": (
        "ステップ {0}、{step}、{split}",
        "the replacement field {0} is positional: the English's fields are "
        "{step}, {split}",
    ),
    "field dropped": (
        "ステップ {step}",
        "the replacement field {split} is missing (the English has it)",
    ),
    "unclosed brace": (
        "ステップ {step}、{split",
        "a brace that str.format cannot read (expected '}' before end of "
        "string): write a literal '{' or '}' twice, '{{' or '}}'",
    ),
    "stray brace": (
        "ステップ {step}}、{split}",
        "a brace that str.format cannot read (Single '}' encountered in format "
        "string): write a literal '{' or '}' twice, '{{' or '}}'",
    ),
}
NOTE = "milliseconds per new token"
MATH_CASES = {  # name: (key start, value, the problem)
    "undefined command": (
        "loss",
        "$ \\undefined $",
        "matplotlib cannot draw this math: Unknown symbol: \\undefined, found "
        "'\\'  (at char 1), (line:1, col:2)",
    ),
    "60 nested braces": (
        "loss",
        "$ " + "{" * 60 + "x" + "}" * 60 + " $",
        f"math nested 60 deep ({{…}} or \\left…\\right): at most {MAX_MATH_DEPTH} "
        "levels are allowed in a figure",
    ),
    "30 chained superscripts": (
        NOTE,
        "$ " + "x^{" * 30 + "x" + "}" * 30 + " $",
        f"math nested 30 deep ({{…}} or \\left…\\right): at most {MAX_MATH_DEPTH} "
        "levels are allowed in a figure",
    ),
    "40 nested fractions": (
        NOTE,
        "$" + "\\frac{" * 40 + "1" + "}{2}" * 40 + "$",
        f"math nested 40 deep ({{…}} or \\left…\\right): at most {MAX_MATH_DEPTH} "
        "levels are allowed in a figure",
    ),
    "long math": (
        NOTE,
        "$ " + "x^{2}" * 30 + " $",
        f"152 characters of math: at most {MAX_MATH_LENGTH} are allowed in a "
        "figure word",
    ),
    "words in the math font": (
        "loss",
        "損失 $ x $",
        "matplotlib's math font has no glyph for '損' (U+640D), '失' (U+5931): a "
        "figure word with math is drawn in that font throughout; keep the math "
        "and these characters apart",
    ),
}
INVISIBLE = {  # code point: its name as the message gives it
    0x200B: "ZERO WIDTH SPACE",
    0x200D: "ZERO WIDTH JOINER",
    0x200E: "LEFT-TO-RIGHT MARK",
    0x200F: "RIGHT-TO-LEFT MARK",
    0x061C: "ARABIC LETTER MARK",
    0x2060: "WORD JOINER",
    0xFEFF: "ZERO WIDTH NO-BREAK SPACE",
    0xE0041: "TAG LATIN CAPITAL LETTER A",
    0x00AD: "SOFT HYPHEN",
    0x3164: "HANGUL FILLER",
    0x115F: "HANGUL CHOSEONG FILLER",
    0x1160: "HANGUL JUNGSEONG FILLER",
    0xFFA0: "HALFWIDTH HANGUL FILLER",
    0x2800: "BRAILLE PATTERN BLANK",
    0xFE0F: "VARIATION SELECTOR-16",
}
DIRECTIONAL = {0x200E, 0x200F, 0x061C}
SUMMARY = "A page whose figure"
ATTRIBUTE = (
    "is not allowed in a title, summary, alt text or figure word (it would end "
    "an HTML attribute or start markup): "
)
ENTRY_CASES = {
    **{
        f"field: {name}": (STEP, value, problem)
        for name, (value, problem) in FIELD_CASES.items()
    },
    **{f"math: {name}": case for name, case in MATH_CASES.items()},
    **{
        f"invisible U+{code:04X}": (
            "Demo of hostile tables",
            f"敵対的な{chr(code)}表のデモ",
            f"the invisible character U+{code:04X} {name} is not allowed in a "
            "translation" + (" (it changes the direction of the text)"
                             if code in DIRECTIONAL else ""),
        )
        for code, name in INVISIBLE.items()
    },
    "summary leaves its attribute": (
        SUMMARY,
        '0;url=//evil.example/phish" http-equiv="refresh" data-x="',
        f"'\"' {ATTRIBUTE}quote with 「」 or “”",
    ),
    "title with a character reference": (
        "Demo of hostile tables",
        "敵対的な表&quot;のデモ",
        f"'&quot;' {ATTRIBUTE}write it another way",
    ),
    "alt text with an angle bracket": (
        "a rising line",
        "右上がりの直線 > 0",
        f"'>' {ATTRIBUTE}write it another way",
    ),
}  # fmt: skip


@pytest.mark.parametrize(
    ("start", "value", "problem"), ENTRY_CASES.values(), ids=ENTRY_CASES.keys()
)
def test_check_refuses_the_entry_with_one_line_at_once(project, start, value, problem):
    where = translate(project, start, value)
    before = snapshot(project)
    with within(5):  # each well under a second, matplotlib's start included
        code, out = check(project)
    assert code == 1
    assert f"{where}{problem}\n" in out
    assert_one_line_each(out)
    assert snapshot(project) == before


def test_a_glyph_the_figure_fonts_lack_is_named_with_its_line(project):
    if missing_fonts("ja"):
        pytest.skip(f"not installed here: {missing_fonts('ja')}")
    where = translate(project, "loss", "損失 📉")
    code, out = check(project)
    assert code == 1
    assert (
        f"{where}the fonts of 'ja' figures (DejaVu Sans and Noto Sans CJK JP) have "
        "no glyph for '📉' (U+1F4C9): the figure would show boxes\n"
    ) in out


def test_the_same_characters_in_prose_are_not_figure_rules(project):
    # Prose is neither formatted nor drawn: a double quote, math-like dollars
    # and an emoji pass there (the renderer escapes prose like any text).
    translate(project, "# Demo", '# デモ\n\n下の図は「語」を描く。$5 と $6 📉 "引用"。')
    assert check(project)[0] == 0


# --- the build, without `check` first -----------------------------------------


def test_the_build_never_formats_a_refused_word(project):
    """The example prints `tr("step {step}, {split}").format(...)`: a value
    that walks attributes shows the English, a good one its translation."""
    pipeline = Pipeline(project)
    try:
        translate(project, STEP, "ステップ {step.__class__.__mro__}、{split}")
        hostile = printed(pipeline.page("demo.py", "ja"))
        pipeline.forget()
        translate(project, STEP, GOOD[STEP])
        good = printed(pipeline.page("demo.py", "ja"))
    finally:
        pipeline.close()
        words.use({})
    assert hostile == "step 3, val\n"
    assert "class" not in hostile
    assert good == "ステップ 3、val\n"


def printed(page) -> str:
    [text] = [o.text for s in page.sections for o in s.outputs if o.kind == "text"]
    return text


def shown_words(table: dict[str, str]) -> dict[str, str]:
    """What the build would show of `table`'s figure words (its gate)."""
    keys = SourceKeys((), (), (), tuple(table))  # every key a figure word
    return {k: v for k, v in table.items() if not entry_problems(k, v, keys)}


def test_the_build_gate_drops_every_word_check_refuses():
    for value, _ in FIELD_CASES.values():
        assert shown_words({STEP: value}) == {}, value
    for _, value, _ in MATH_CASES.values():
        assert figure_problems("loss", value), value
        assert shown_words({"loss": value}) == {}, value
    assert shown_words({STEP: GOOD[STEP]}) == {STEP: GOOD[STEP]}


# --- files: JSON Python cannot read, paths, folders ---------------------------


def replace_value(text: str, table_key: str, raw: str) -> str:
    """The table text with the JSON value of `table_key` replaced by `raw`."""
    quoted = json.dumps(table_key, ensure_ascii=False)
    return re.sub(
        rf"^(\s*{re.escape(quoted)}: ).*?(,?)$",
        lambda m: m.group(1) + raw + m.group(2),
        text,
        count=1,
        flags=re.M,
    )


FILE_CASES = {  # name: (raw JSON value for "loss", the problem after file:line:1)
    "JSON nested 10,000 deep": (
        "[" * 10_000 + "]" * 10_000,
        'key "loss": the value is nested too deeply to be read (arrays or objects '
        "inside one another): expected a string",
    ),
    "a number of 10,000 digits": (
        "1" * 10_000,
        'key "loss": the value is a number too long to be read: expected a string',
    ),
    "half a surrogate pair": (
        '"\\ud800損失"',
        'key "loss": a \\uD800-\\uDFFF escape that is half of a surrogate pair, '
        "not a character: write the character itself",
    ),
}


@pytest.mark.parametrize(("raw", "problem"), FILE_CASES.values(), ids=FILE_CASES)
def test_json_python_cannot_read_is_one_line_in_check_update_and_the_build(
    project, raw, problem
):
    path = project / TABLE
    line = line_of(project, "loss")
    path.write_text(replace_value(path.read_text("utf-8"), "loss", raw), "utf-8")
    before = snapshot(project)
    expected = f"{TABLE}:{line}:1: {problem}"
    with within(5):
        code, out = check(project)
    assert (code, out.split("\n")[1]) == (1, expected)
    assert_one_line_each(out)
    code, out = check(project, "update", "ja")
    assert (code, out) == (1, f"{expected} (not updated)\n")
    assert snapshot(project) == before
    with pytest.raises(ValueError) as raised:
        Pipeline(project, run_examples=False).page("demo.py", "ja")
    assert str(raised.value) == f"{path}:{line}:1: {problem}"


def outside_table(project: Path) -> str:
    secret = project.parent / "secret.json"
    secret.write_text('{"a private key": "its private value"}\n', "utf-8")
    (project / TABLE).unlink()
    (project / TABLE).symlink_to(secret)
    return (
        f"{TABLE}:1:1: leads outside the project (a path or a symlink to "
        "elsewhere): only files inside the project are read"
    )


def to_dev_zero(project: Path) -> str:
    (project / TABLE).unlink()
    (project / TABLE).symlink_to("/dev/zero")
    return (
        f"{TABLE}:1:1: leads outside the project (a path or a symlink to "
        "elsewhere): only files inside the project are read"
    )


def fifo(project: Path) -> str:
    (project / TABLE).unlink()
    os.mkfifo(project / TABLE)
    return f"{TABLE}:1:1: not a regular file: expected a regular file"


def dangling(project: Path) -> str:
    (project / TABLE).unlink()
    (project / TABLE).symlink_to(project / "translations" / "gone.json")
    return f"{TABLE}:1:1: cannot be read: No such file or directory"


def outside_glossary(project: Path) -> str:
    secret = project.parent / "terms.json"
    secret.write_text('{"secret": {"render": "private"}}\n', "utf-8")
    (project / "translations" / "ja" / "glossary.json").symlink_to(secret)
    return (
        "translations/ja/glossary.json:1:1: leads outside the project (a path or "
        "a symlink to elsewhere): only files inside the project are read"
    )


PATH_CASES = {
    "table symlinked out of the project": outside_table,
    "table symlinked to /dev/zero": to_dev_zero,
    "table that is a FIFO": fifo,
    "table symlinked to nothing": dangling,
    "glossary symlinked out of the project": outside_glossary,
}


@pytest.mark.parametrize("damage", PATH_CASES.values(), ids=PATH_CASES.keys())
def test_a_table_that_is_not_a_file_inside_the_project_is_refused_unread(
    project, damage
):
    expected = damage(project)
    before = snapshot(project)
    with within(5):  # /dev/zero and a FIFO: never opened, so never waited on
        code, out = check(project)
    assert code == 1 and f"{expected}\n" in out
    assert "private" not in out
    assert_one_line_each(out)
    assert snapshot(project) == before


FOLDER_CASES = {  # name: the folder under translations/ (holding `{}`)
    "script in a folder name": "<img src=x onerror=alert(document.domain)>",
    "English": "en",
    "not a code": "Japanese",
    "hidden": ".backup",
}


@pytest.mark.parametrize("name", FOLDER_CASES.values(), ids=FOLDER_CASES.keys())
def test_only_language_code_folders_are_languages(project, name):
    folder = project / "translations" / name
    folder.mkdir()
    (folder / "demo.json").write_text("{}\n", "utf-8")
    before = snapshot(project)
    code, out = check(project)
    assert code == 1
    assert out.startswith(
        f"translations/{ascii(name)}: not a language folder (expected a language "
        "code such as ja, zh, pt-BR; English has none): rename or remove it\n"
    )
    assert languages(project) == ["ja"]
    code, status = check(project, "status")
    assert code == 0 and name not in status
    assert snapshot(project) == before


def test_a_project_with_sources_and_no_translations_fails(project):
    for path in sorted((project / "translations").rglob("*"), reverse=True):
        path.rmdir() if path.is_dir() else path.unlink()
    (project / "translations").rmdir()
    assert check(project) == (
        1,
        "translations/: no language folders, but mkdocs.yml names sources: run "
        "`python -m literate translations update LANG`\n",
    )


def test_a_root_that_is_not_a_folder_fails(tmp_path):
    missing = tmp_path / "nonexistent"
    assert check(missing) == (2, f"--root {ascii(str(missing))}: not a folder\n")


@pytest.mark.parametrize("source", ["../x.py", "/etc/hostname"])
def test_update_refuses_a_source_outside_the_project(project, source):
    (project.parent / "x.py").write_text('"""Elsewhere."""\n', "utf-8")
    before = snapshot(project)
    code, out = check(project, "update", "ja", "--source", source)
    assert code == 1
    assert out == (
        f"update: {source}: leads outside the project (a path or a symlink to "
        "elsewhere): only files inside the project are read\n"
    )
    assert snapshot(project) == before
    assert not (project.parent / "x.json").exists()


@pytest.mark.parametrize("lang", ["../..", "ja/../..", "<b>", "JA"])
def test_render_refuses_a_lang_that_is_not_a_language_code(project, lang, capsys):
    assert literate(["render", "demo.py", "--lang", lang, "--no-examples"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        f"error: --lang {ascii(lang)}: expected en or a language code such as ja, "
        "zh, pt-BR\n"
    )


# --- linear costs ----------------------------------------------------------------


def test_stale_keys_past_the_cap_are_one_error(project):
    table = json.loads((project / TABLE).read_text("utf-8"))
    table |= {f"gone {i}": f"消えた {i}" for i in range(MAX_STALE + 1)}
    save_table(project / TABLE, table)
    before = snapshot(project)
    code, out = check(project)
    assert code == 1
    assert (
        f"{TABLE}: {MAX_STALE + 1} stale keys (English that is gone), more than "
        f"the {MAX_STALE} a table may keep: carry over what you need, then run "
        "`python -m literate translations update ja --prune`\n"
    ) in out
    assert snapshot(project) == before
    del table["gone 0"]
    save_table(project / TABLE, table)
    assert check(project)[0] == 0


def test_thirty_thousand_keys_are_checked_in_linear_time(project):
    table = json.loads((project / TABLE).read_text("utf-8"))
    table |= {f"gone {i}": f"消えた {i}" for i in range(30_000)}
    save_table(project / TABLE, table)
    with within(20):  # about a second; reading was quadratic (58 s)
        code, out = check(project)
    assert code == 1 and out.count("\n") == 3  # glossary, the cap, the summary
    with within(30):  # suggestions for the first MAX_STALE, bounded candidates
        code, out = check(project, "update", "ja")
    assert code == 0
    assert f"{TABLE}: {30_000 - MAX_STALE} more stale keys, not compared" in out


def test_a_thousand_term_glossary_is_checked_in_linear_time(project):
    terms = {f"term{i:04d}": {"render": f"用語{i}"} for i in range(1000)}
    save_table(project / "translations" / "ja" / "glossary.json", terms)
    with within(20):  # a second or two; compiling per use made it 110 s
        code, out = check(project)
    assert (code, out.split("\n")[0]) == (
        0,
        "translations/ja/glossary.json: 1000 terms",
    )


def test_update_writes_nothing_through_a_symlinked_language_folder(project):
    elsewhere = project.parent / "elsewhere"
    elsewhere.mkdir()
    (project / "translations" / "zh").symlink_to(elsewhere)
    code, out = check(project, "update", "zh")
    assert (code, out) == (
        1,
        "translations/zh/demo.json: leads outside the project (a path or a symlink "
        "to elsewhere): only files inside the project are read (not updated)\n",
    )
    assert list(elsewhere.iterdir()) == []
