"""Hostile and careless input: one line of error, never a stall or a traceback.

Translations arrive from strangers and tables are saved by any editor, so:

- the span scanner and `normalize` give, on 2,668 generated texts, exactly
  what they gave when a second, independent implementation checked them
  (`tests/golden/spans.jsonl`), and stay linear on text built to make a
  scanner re-read itself (bounded by a timeout, not by a timing);
- a value far longer or nested deeper than prose, control and bidi
  characters, and a link turned into an image are refused by `check`, and
  the build's translate stage refuses them the same way, at once;
- a table or a source that is not UTF-8, and a duplicate key, give one line
  naming the file, the line (and the byte offset) and what was expected, in
  `check`, `update`, `render` and the build, with a non-zero exit status,
  no traceback, and the table on disk unchanged;
- a KaTeX command refused under `trust: false` is a build warning naming the
  source line (so `mkdocs build --strict` fails).
"""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import pytest
from conftest import UPDATE_GOLDEN

from literate import spans
from literate.__main__ import main as literate_main
from literate.check import (
    LENGTH_MARGIN,
    LENGTH_RATIO,
    LINES_MARGIN,
    LINES_RATIO,
    MAX_NESTING,
    check_entry,
)
from literate.normalize import key, normalize
from literate.parse import parse
from literate.pipeline import Pipeline
from literate.spans import extract
from literate.tables import save_table, short

ROOT = Path(__file__).resolve().parent.parent


def translations(argv: list[str]) -> int:
    """`literate translations ARGV...`, in this process: its exit status."""
    return literate_main(["translations", *argv])


DEMO = Path(__file__).parent / "translation_data" / "demo.py"
TABLE = "translations/ja/demo.json"


@contextmanager
def within(seconds: int):
    """Fail (TimeoutError) if the block runs longer than `seconds`: a bound
    against a scan that went quadratic, far above what linear time needs."""

    def expire(signum, frame):
        raise TimeoutError(f"still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


# --- the scanner: same spans as before, linear time -------------------------

# Generated texts, each with the spans the scanner found and its normalised
# form, frozen in a file (made from the characters that open and close spans
# and the sequences that matter, joined at random). When they were frozen, a
# second implementation of the scanner written independently agreed on every
# one, save two intended changes: no unquoted `<` inside a tag (`x <a <b> y`,
# which made the scan quadratic) and an admonition's `!!!`/`???` line, onto
# which nothing folds. LITERATE_UPDATE_GOLDEN=1 rewrites the answers after a
# deliberate change; the texts stay.
SPANS = Path(__file__).parent / "golden" / "spans.jsonl"


def frozen_spans() -> list[tuple[str, list, str]]:
    with SPANS.open(encoding="utf-8") as lines:
        return [tuple(json.loads(line)) for line in lines]


def scanned(text: str) -> tuple[str, list, str]:
    return text, [list(span) for span in spans.find_spans(text)], normalize(text)


def test_the_scanner_finds_the_spans_it_found_before():
    rows = frozen_spans()
    assert len(rows) > 2000
    if UPDATE_GOLDEN:
        lines = [json.dumps(scanned(t), ensure_ascii=False) for t, *_ in rows]
        SPANS.write_text("\n".join(lines) + "\n", encoding="utf-8")
    changed = [row[0] for row in rows if scanned(row[0]) != row]
    assert changed == [], f"{len(changed)} texts scan otherwise, e.g. {changed[:3]}"


def test_no_unquoted_angle_bracket_inside_a_tag():
    assert spans.find_spans("x <a <b> y") == [(5, 8, "html")]  # `<b>`, not `<a <b>`


# Text that made the old scanner re-read what follows each opener.
ADVERSARIAL = {
    "math openers": "$a ",
    "math openers, lines": "$a\n",
    "escaped dollars": "\\$a$",
    "display openers": "$$a",
    "prices": "$5 ",
    "link targets": "](",
    "link targets in <>": "](<",
    "nested targets": "](((",
    "backtick runs": "`a``b",
    "backtick ladders": "`` ` ``` ",
    "tags": "<a ",
    "quoted tags": "<a b='<a c=\"",
    "comments": "<!--",
    "declarations": "<!a",
    "instructions": "<?",
    "url then dots": "http://x.",
    "url then parens": "http://x)",
    "backslashes": "\\",
    "placeholder heads": "_^_1",
    "fences": "```\n",
    "reference targets": "[a]: x\n",
    "folded lines": "a\n",
    "display math lines": "$$a$$\n",
    "environments": "\\begin{align}a",
    "environment ends": "\\end{align}\\begin{gather}",
}


@pytest.mark.parametrize("unit", ADVERSARIAL.values(), ids=ADVERSARIAL.keys())
def test_the_scanner_is_linear_on_adversarial_text(unit):
    text = unit * (100_000 // len(unit))
    with within(10):  # linear: well under a second; the old scan: hours
        extract(text)
        key(text)


# --- values check refuses, and the build with it -----------------------------


def test_past_the_length_rule_check_is_linear_and_refuses_deep_nesting():
    english = "word " * 25_000 + "_^_0_^_"  # long enough to allow 100 kB
    with within(10):
        assert check_entry(english, "$a " * 30_000 + "_^_0_^_") == []
        nested = "[" * 20_000 + "x" + "]" * 20_000 + "_^_0_^_"
        assert check_entry(english, nested) == [
            f"[] nested 20000 deep: at most {MAX_NESTING} levels of brackets "
            "or parentheses are allowed"
        ]
        # Python-Markdown recurses once per level: this would overflow the stack.
        listed = "- " * 20_000 + "x _^_0_^_"
        assert check_entry(english, listed) == [
            f"20000 list or quote markers at the start of a line: at most "
            f"{MAX_NESTING} are allowed"
        ]


# --- the command line and the build, case by case -------------------------------


@pytest.fixture
def repo(tmp_path, capsys, monkeypatch):
    """A project with the demo source, a two-language site and a ja table."""
    monkeypatch.chdir(tmp_path)  # nothing can reach the repository's tables
    (tmp_path / "demo.py").write_text(DEMO.read_text(encoding="utf-8"), "utf-8")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "index.md").write_text("# Home\n", "utf-8")
    (tmp_path / "node_modules").symlink_to(ROOT / "node_modules")
    (tmp_path / "mkdocs.yml").write_text(
        "site_name: hostile\nuse_directory_urls: false\n"
        "theme: {name: material, language: en}\n"
        "plugins:\n  - i18n:\n      docs_structure: suffix\n      languages:\n"
        "        - {locale: en, name: English, default: true}\n"
        "        - {locale: ja, name: 日本語}\n"
        "  - literate: {sources: [demo.py], run_examples: false}\n",
        "utf-8",
    )
    assert translations(["--root", str(tmp_path), "update", "ja"]) == 0
    capsys.readouterr()
    return tmp_path


def demo_key(start: str) -> str:
    page = parse(DEMO.read_text(encoding="utf-8"), "demo.py")
    texts = [page.title, page.summary] + [s.docs for s in page.sections]
    return next(key(t) for t in texts if key(t).startswith(start))


def line_of(text: str, table_key: str) -> int:
    quoted = json.dumps(table_key, ensure_ascii=False)
    lines = text.split("\n")
    return next(n for n, row in enumerate(lines, 1) if row.lstrip().startswith(quoted))


def translated(repo: Path, start: str, value) -> tuple[str, str]:
    """Translate the key starting with `start` as value(key); its line, key."""
    table_key = demo_key(start)
    path = repo / TABLE
    save_table(
        path, json.loads(path.read_text("utf-8")) | {table_key: value(table_key)}
    )
    return line_of(path.read_text("utf-8"), table_key), table_key


GOOD = {  # a good translation of each key the cases below use
    "Scale": "スコアを _^_0_^_ で割り、ソフトマックスが飽和しないように_^_1_^_"
    "ヘッドの幅が広くても。$5 のような価格は数式ではない。\n\n_^_2_^_",
    "# Demo": "# デモ\n\n重みは _^_0_^_ のソフトマックスから得られる。"
    "[論文](_^_1_^_) と _^_2_^_ を参照。",
}
ENTRY_CASES = {  # name: (key start, value, the problem check reports)
    "NUL byte": ("Scale", GOOD["Scale"] + "\x00", "the control character U+0000 "
                 "is not allowed in a translation"),
    "right-to-left override": ("Scale", "\u202e" + GOOD["Scale"], "the control "
        "character U+202E is not allowed in a translation (it changes the "
        "direction of the text)"),
    "C1 control": ("Scale", GOOD["Scale"] + "\x85", "the control character "
                   "U+0085 is not allowed in a translation"),
    "link made an image": ("# Demo", GOOD["# Demo"].replace("[論文]", "![論文]"),
        "'![' makes a link an image (its text would be lost): write '[' as "
        "the English does"),
    "list markers nested": ("Scale", GOOD["Scale"] + "\n\n" + "- " * 9 + "x",
        f"9 list or quote markers at the start of a line: at most {MAX_NESTING} "
        "are allowed"),
    "nesting": ("Scale", GOOD["Scale"] + "（" + "(" * 9 + "x" + ")" * 9 + "）",
        f"() nested 9 deep: at most {MAX_NESTING} levels of brackets or "
        "parentheses are allowed"),
}  # fmt: skip


HOSTILE = {
    "90 kB of $a": "$a " * 30_000,
    "1 MB of $a": "$a " * 333_334,
    "20,000 nested brackets": "[" * 20_000 + "x" + "]" * 20_000,
}


@pytest.mark.parametrize("hostile", HOSTILE.values(), ids=HOSTILE.keys())
def test_a_hostile_value_is_refused_at_once_by_check_and_the_build(
    repo, capsys, hostile
):
    line, table_key = translated(repo, "# Demo", lambda _: GOOD["# Demo"] + hostile)
    length = len(GOOD["# Demo"] + hostile)
    limit = LENGTH_RATIO * len(table_key) + LENGTH_MARGIN
    with within(5):  # linear: well under a second; the old scan: hours
        assert translations(["--root", str(repo), "check", "ja"]) == 1
    assert capsys.readouterr().out.split("\n")[1] == (
        f"{TABLE}:{line}: key {short(table_key)}: the translation is {length} "
        f"characters long, more than {LENGTH_RATIO} × the English "
        f"({len(table_key)}) + {LENGTH_MARGIN} = {limit}"
    )
    with within(5):  # the build's translate stage runs the same check
        page = Pipeline(repo, run_examples=False).page("demo.py", "ja")
    assert page.sections[0].state == "untranslated"
    assert page.sections[0].docs == parse(DEMO.read_text("utf-8"), "d").sections[0].docs


def test_the_good_translations_pass(repo, capsys):
    for start, value in GOOD.items():
        translated(repo, start, lambda _, value=value: value)
    assert translations(["--root", str(repo), "check", "ja"]) == 0


@pytest.mark.parametrize(
    ("start", "value", "problem"), ENTRY_CASES.values(), ids=ENTRY_CASES.keys()
)
def test_check_names_file_line_key_and_the_problem(repo, capsys, start, value, problem):
    line, table_key = translated(repo, start, lambda _: value)
    assert translations(["--root", str(repo), "check", "ja"]) == 1
    out = capsys.readouterr().out
    assert f"{TABLE}:{line}: key {short(table_key)}: {problem}\n" in out
    page = Pipeline(repo, run_examples=False).page("demo.py", "ja")
    assert "untranslated" in {s.state for s in page.sections}


def test_check_refuses_a_value_far_longer_than_its_english(repo, capsys):
    line, table_key = translated(
        repo, "Scale", lambda k: "長" * (LENGTH_RATIO * len(k) + LENGTH_MARGIN + 1)
    )
    assert translations(["--root", str(repo), "check", "ja"]) == 1
    limit = LENGTH_RATIO * len(table_key) + LENGTH_MARGIN
    assert (
        f"{TABLE}:{line}: key {short(table_key)}: the translation is {limit + 1} "
        f"characters long, more than {LENGTH_RATIO} × the English "
        f"({len(table_key)}) + {LENGTH_MARGIN} = {limit}\n"
    ) in capsys.readouterr().out


def test_check_refuses_a_value_with_far_more_lines_than_its_english(repo, capsys):
    def many_lines(english: str) -> str:
        return GOOD["Scale"] + "\n行" * (LINES_RATIO * english.count("\n") + 12)

    line, table_key = translated(repo, "Scale", many_lines)
    assert translations(["--root", str(repo), "check", "ja"]) == 1
    lines, english = many_lines(table_key).count("\n") + 1, table_key.count("\n") + 1
    assert (
        f"{TABLE}:{line}: key {short(table_key)}: the translation has {lines} lines, "
        f"more than {LINES_RATIO} × the English ({english}) + {LINES_MARGIN} = "
        f"{LINES_RATIO * english + LINES_MARGIN}\n"
    ) in capsys.readouterr().out


def with_byte(text: str) -> bytes:
    """The table with a Latin-1 é in the value of the "Demo of" key."""
    return text.replace(': "",', ': "caf\udce9",', 1).encode("utf-8", "surrogateescape")


def duplicated(text: str) -> bytes:
    """The table with its title key written twice, the second time at the end."""
    entry = f'{json.dumps(demo_key("Demo of"), ensure_ascii=False)}: "デモ"'
    return text.replace('"\n}', f'",\n  {entry}\n}}').encode("utf-8")


def utf16(text: str) -> bytes:
    return text.encode("utf-16")


def last_line_of(data: bytes, table_key: str) -> int:
    """The line of the last occurrence of `table_key` in a table."""
    quoted = json.dumps(table_key, ensure_ascii=False)
    rows = data.decode("utf-8").split("\n")
    return max(n for n, row in enumerate(rows, 1) if row.lstrip().startswith(quoted))


def not_utf8_line(data: bytes, offset: int, detail: str) -> str:
    line = data.count(b"\n", 0, offset) + 1
    column = offset - data.rfind(b"\n", 0, offset)
    return f"{TABLE}:{line}:{column}: not UTF-8 (byte offset {offset}): {detail}"


TABLE_CASES = {  # name: (the file's bytes, its one-line error in check and update)
    "non-UTF-8 byte": (
        with_byte,
        lambda data: not_utf8_line(
            data,
            data.index(b"\xe9"),
            "byte 0xe9 (invalid continuation byte); save it as UTF-8",
        ),
    ),
    "UTF-16": (
        utf16,
        lambda data: not_utf8_line(
            data, 0, "it starts with a UTF-16 byte-order mark; save it as UTF-8"
        ),
    ),
    "duplicate key": (
        duplicated,
        lambda data: (
            f"{TABLE}:{last_line_of(data, demo_key('Demo of'))}: key "
            f"{short(demo_key('Demo of'))}: duplicate key"
        ),
    ),
}


@pytest.mark.parametrize(
    ("damage", "message"), TABLE_CASES.values(), ids=TABLE_CASES.keys()
)
def test_a_broken_table_gets_one_line_in_check_update_and_the_build(
    repo, capsys, damage, message
):
    path = repo / TABLE
    data = damage(path.read_text("utf-8"))
    path.write_bytes(data)
    expected = message(data)
    assert translations(["--root", str(repo), "check", "ja"]) == 1
    out = capsys.readouterr().out
    assert out.split("\n")[1] == expected
    assert translations(["--root", str(repo), "update", "ja"]) == 1
    out = capsys.readouterr().out
    assert expected in out.split("\n")[0]
    assert path.read_bytes() == data  # update wrote nothing
    with pytest.raises(ValueError) as raised:  # what the build calls
        Pipeline(repo, run_examples=False).page("demo.py", "ja")
    assert str(raised.value).startswith(f"{path}:{expected.split(':')[1]}:")
    assert "\n" not in str(raised.value)


def test_the_build_names_the_first_line_of_a_duplicate_key(repo):
    path = repo / TABLE
    data = duplicated(path.read_text("utf-8"))
    path.write_bytes(data)
    first = line_of(data.decode("utf-8"), demo_key("Demo of"))
    with pytest.raises(ValueError) as raised:
        Pipeline(repo, run_examples=False).page("demo.py", "ja")
    second = last_line_of(data, demo_key("Demo of"))
    assert str(raised.value) == (
        f"{path}:{second}:1: key {short(demo_key('Demo of'))}: "
        f"duplicate key (first on line {first}); remove one of the two"
    )


def latin1_source(repo: Path) -> tuple[str, str]:
    """demo.py with a Latin-1 é in a comment; its one-line error."""
    path = repo / "demo.py"
    data = path.read_bytes().replace(b"saturate", b"satur\xe9", 1)
    path.write_bytes(data)
    offset = data.index(b"\xe9")
    line = data.count(b"\n", 0, offset) + 1
    return "demo.py", (
        f"demo.py:{line}: not UTF-8 (byte offset {offset}): byte 0xe9 (invalid "
        "continuation byte); save it as UTF-8"
    )


def test_render_names_the_line_and_byte_of_a_source_not_utf8(repo):
    source, message = latin1_source(repo)
    done = subprocess.run(
        [sys.executable, "-m", "literate", "render", source],
        cwd=repo,
        capture_output=True,
        text=True,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
        check=False,
    )
    assert (done.returncode, done.stdout, done.stderr) == (1, "", f"error: {message}\n")


def refused_href(repo: Path) -> tuple[str, str]:
    """demo.py with `\\href` in a formula; the build's one-line warning."""
    path = repo / "demo.py"
    text = path.read_text("utf-8")
    text = text.replace("wide. A price", r"wide, $\href{https://x.org}{see}$. A price")
    path.write_text(text, "utf-8")
    line = text[: text.index(r"\href")].count("\n") + 1
    return "demo.py", (
        f"demo.py:{line}: KaTeX refused \\href (shown in red on the page): links, "
        "images and HTML are not allowed in math; write them in the prose"
    )


def test_a_refused_katex_command_is_a_warning_naming_the_line(repo, caplog):
    source, message = refused_href(repo)
    pipeline = Pipeline(repo, run_examples=False)
    try:
        with caplog.at_level(logging.WARNING):
            pipeline.html(pipeline.page(source))
    finally:
        pipeline.close()
    assert [r.getMessage() for r in caplog.records] == [message]


def with_table(damage):
    def apply(repo: Path) -> tuple[str, str]:
        path = repo / TABLE
        data = damage(path.read_text("utf-8"))
        path.write_bytes(data)
        return TABLE, TABLE_CASES_BY_DAMAGE[damage](data)

    return apply


TABLE_CASES_BY_DAMAGE = {damage: message for damage, message in TABLE_CASES.values()}
BUILD_CASES = {
    "non-UTF-8 table": with_table(with_byte),
    "UTF-16 table": with_table(utf16),
    "duplicate key": with_table(duplicated),
    "non-UTF-8 source": latin1_source,
    "refused KaTeX command": refused_href,
}


@pytest.mark.slow  # a site build each
@pytest.mark.parametrize("damage", BUILD_CASES.values(), ids=BUILD_CASES.keys())
def test_the_strict_build_fails_with_one_line_naming_file_and_line(repo, damage):
    name, message = damage(repo)
    where = ":".join(message.split(":")[:2]).removeprefix(name)  # ":LINE"
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-d", "site"],
        cwd=repo,
        capture_output=True,
        text=True,
        env=dict(os.environ, PYTHONPATH=str(ROOT), NO_MKDOCS_2_WARNING="1"),
        check=False,
    )
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    said = [line for line in done.stderr.split("\n") if f"{name}{where}:" in line]
    assert said and all(line.startswith(("ERROR", "WARNING")) for line in said)
