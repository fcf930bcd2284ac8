"""Translation tooling: keys, the translate stage, the check and the CLI.

The tables written here live in temp folders; the repository's own
`translations/` is only read (its glossaries).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from dataclasses import replace
from html.parser import HTMLParser
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from literate.catalog import glossary_path
from literate.check import Term, check_entry, load_glossary
from literate.keys import extract, fill, key, normalize, starts_block
from literate.parse import parse
from literate.tables import Entry, dumps_table, save_table, short
from literate.translate import translate_page
from literate.translations_cli import main
from literate.update import update_table

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).parent / "translation_data"
DEMO = DATA / "demo.py"
PAYLOADS = json.loads((DATA / "injections.json").read_text(encoding="utf-8"))
# The tutorial's own sources, as far as they are written yet.
SOURCES = [DEMO] + [p for p in (ROOT / "mha.py", ROOT / "train.py") if p.exists()]


def parsed(path: Path):
    return parse(path.read_text(encoding="utf-8"), path.name)


def japanese(value: str) -> str:
    """A stand-in translation of a key that keeps every placeholder."""
    return "【訳】" + value


# --- keys -------------------------------------------------------------------

SPAN_CASES = [
    (r"Scale by $\sqrt{d_k}$ now.", [("math", r"$\sqrt{d_k}$")]),
    ("Batch size $32$ and $2^k$.", [("math", "$32$"), ("math", "$2^k$")]),
    ("It costs $5 and $10, or $3.50.", []),
    ("A literal \\$x$ stays text.", []),
    ("x $ y $ z, and a $b$5 too", []),
    ("a `$x$` b", [("code", "`$x$`")]),
    ("``a ` b`` c", [("code", "``a ` b``")]),
    ("math $a<b>c$ here", [("math", "$a<b>c$")]),
    ("see\n$$\nA = QK^T\n$$\nok", [("display_math", "$$\nA = QK^T\n$$")]),
    ("[the (paper)](https://a.b/c_(d)) ok", [("url", "https://a.b/c_(d)")]),
    ("a <br> b <!-- c --> d", [("html", "<br>"), ("html", "<!-- c -->")]),
    (
        "<https://a.b> and https://c.d/e.",
        [("url", "<https://a.b>"), ("url", "https://c.d/e")],
    ),
    ("```py\nx = $1$\n```\nafter", [("code_block", "```py\nx = $1$\n```")]),
    ("[ref]: https://a.b/c\n\nUse [x][ref].", [("url", "https://a.b/c")]),
    ("Type _^_1_^_ then $x$", [("literal", "_^_1_^_"), ("math", "$x$")]),
]


@pytest.mark.parametrize(("markdown", "spans"), SPAN_CASES)
def test_extract_finds_each_kind_of_span(markdown, spans):
    template = extract(markdown)
    assert [(s.kind, s.text) for s in template.spans] == spans
    assert fill(template.text, template.spans) == markdown


MARKDOWN_PIECES = list("ab $`\\<>[]()!*_-#|~\n 1.:/") + [
    "https://x.y", "$$", "```", "<br>", "<!--", "-->", "    ", "\n\n", "* ",
    "1. ", "> ", "$d_k$", "](", "_^_0_^_", "_^_",
]  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(MARKDOWN_PIECES), max_size=30).map("".join))
def test_fill_inverts_extract_and_normalize_is_idempotent(markdown):
    template = extract(markdown)
    assert fill(template.text, template.spans) == markdown
    once = normalize(markdown)
    assert normalize(once) == once
    assert key(once) == key(markdown)


def rewrap(markdown: str, width: int) -> str:
    """Re-wrap every paragraph line of normalised markdown at `width`."""
    out = []
    for block in normalize(markdown).split("\n\n"):
        if any(mark in block for mark in ("```", "~~~", "$$")):
            out.append(block)
            continue
        lines = []
        for line in block.split("\n"):
            if line.startswith(("|", "#")):  # table rows, headings: one line
                lines.append(line)
                continue
            indent = (
                "> " if line.startswith(">") else "  " if starts_block(line) else ""
            )
            wrapped = textwrap.wrap(
                line, width, break_long_words=False, break_on_hyphens=False
            )
            if wrapped[1:] and any(starts_block(w) for w in wrapped[1:]):
                wrapped = [line]  # the wrap would start a list or a heading
            lines += wrapped[:1] + [indent + w for w in wrapped[1:]]
        out.append("\n".join(lines))
    return "\n\n".join(out)


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.name)
def test_rewrapping_a_comment_keeps_its_key(source):
    sections = [s for s in parsed(source).sections if s.docs.strip()]
    assert sections
    for section in sections:
        for width in (24, 41, 70):
            wrapped = rewrap(section.docs, width)
            assert key(wrapped) == key(section.docs), (section.anchor, width)


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.name)
def test_placeholders_round_trip_to_the_same_rendered_page(source):
    from literate.render import render_page

    page = parsed(source)
    sections = []
    for section in page.sections:
        spans = extract(normalize(section.docs)).spans
        back = fill(key(section.docs), spans)
        assert back == normalize(section.docs)
        sections.append(replace(section, docs=back))
    round_trip = replace(page, sections=tuple(sections))
    assert displayed(render_page(round_trip)) == displayed(render_page(page))


def displayed(html: str) -> str:
    """HTML as a browser lays it out: whitespace runs are one space outside <pre>.

    A key folds soft line breaks into spaces; the renderer keeps the English's
    newlines. Both display the same, and <pre> (the code column) is compared
    exactly.
    """
    parts = re.split(r"(<pre\b.*?</pre>)", html, flags=re.DOTALL)
    return "".join(
        part if part.startswith("<pre") else re.sub(r"\s+", " ", part) for part in parts
    )


# --- the translate stage and staleness --------------------------------------


def test_translate_page_fills_the_english_spans_into_the_translation():
    page = parsed(DEMO)
    table = {key(s.docs): japanese(key(s.docs)) for s in page.sections}
    table[key(page.title)] = "キーのデモ"
    done = translate_page(page, "ja", table)
    assert done.lang == "ja" and done.title == "キーのデモ"
    for before, after in zip(page.sections, done.sections, strict=True):
        assert after.state == "translated" and after.english == before.docs
        assert after.docs == japanese(normalize(before.docs))


def test_a_changed_word_makes_the_entry_stale_and_update_suggests_it():
    page = parsed(DEMO)
    table = {key(s.docs): japanese(key(s.docs)) for s in page.sections}
    old = page.sections[1]
    changed = replace(
        old, docs=old.docs.replace("Scale the scores", "Divide the scores")
    )
    new_page = replace(page, sections=(page.sections[0], changed, *page.sections[2:]))

    states = [s.state for s in translate_page(new_page, "ja", table).sections]
    assert states == ["translated", "stale", "translated", "translated"]
    shown = translate_page(new_page, "ja", table).sections[1]
    assert shown.docs == changed.docs

    current = [key(s.docs) for s in new_page.sections]
    entries = [Entry(k, v, n) for n, (k, v) in enumerate(table.items(), 2)]
    result = update_table(entries, current)
    assert [(s.key, s.suggestion) for s in result.stale] == [
        (key(old.docs), key(changed.docs))
    ]
    assert result.table[key(old.docs)] == table[key(old.docs)]  # kept
    assert result.table[key(changed.docs)] == ""  # added, untranslated
    assert key(old.docs) not in update_table(entries, current, prune=True).table


def test_missing_or_failing_translations_show_the_english():
    page = parsed(DEMO)
    section = page.sections[2]
    broken = {key(section.docs): "幅のヘッドの係数。"}  # both placeholders lost
    for table in ({}, {key(section.docs): ""}, broken):
        shown = translate_page(page, "ja", table).sections[2]
        assert (shown.state, shown.docs, shown.english) == (
            "untranslated",
            section.docs,
            section.docs,
        )


# --- check ------------------------------------------------------------------

KEY = (
    "Scale the scores by _^_0_^_ before the softmax; "
    "see [the paper](_^_1_^_) and _^_2_^_."
)
GOOD = "softmax の前にスコアを _^_0_^_ で割る。[論文](_^_1_^_) と _^_2_^_ を参照。"
EMPHASIS = "A **strong** word and *emphasis* here."
GLOSSARY = (
    Term("softmax", "softmax", ("ソフトマックス",)),
    Term("transformer", "Transformer", ("变压器",)),
)

BROKEN = [
    ("missing", KEY, GOOD.replace(" と _^_2_^_", ""), "_^_2_^_ is missing"),
    ("added", KEY, GOOD + " _^_3_^_", "_^_3_^_ is not in the English"),
    ("duplicated", KEY, GOOD + " _^_0_^_", "_^_0_^_ appears 2 times"),
    ("url-encoded", KEY, GOOD.replace("_^_0_^_", "_%5e_0_%5e_"), "mangled"),
    ("full-width carets", KEY, GOOD.replace("_^_0_^_", "_＾_0_＾_"), "mangled"),
    ("full-width underscores", KEY, GOOD.replace("_^_0_^_", "＿^＿0＿^＿"), "mangled"),
    ("spaces inside", KEY, GOOD.replace("_^_0_^_", "_^_ 0 _^_"), "mangled"),
    ("escaped", KEY, GOOD.replace("_^_0_^_", r"\_^\_0\_^\_"), "mangled"),
    ("open bracket", KEY, GOOD + " [注", "unbalanced link brackets"),
    ("split link", KEY, GOOD.replace("](", "] ("), "is broken"),
    ("strong", EMPHASIS, "**強い語と*強調*。", "odd number of '**'"),
    ("emphasis", EMPHASIS, "**強い**語と*強調。", "odd number of '*'"),
    ("term", KEY, GOOD.replace("softmax", "ソフトマックス"), "rendered 'softmax'"),
    ("forbidden", "The transformer.", "Transformer（变压器）。", "'变压器' is wrong"),
    (
        "name",
        "Call MultiHeadAttention.",
        "マルチヘッドを呼ぶ。",
        "'MultiHeadAttention'",
    ),
    ("copied", KEY, KEY, "copied unchanged"),
    ("raw HTML", KEY, GOOD + "<b>注</b>", "raw HTML"),
    ("typed math", KEY, GOOD + " $x$", "math '$x$' is not in the English"),
]


@pytest.mark.parametrize(
    ("key_text", "value", "message"),
    [case[1:] for case in BROKEN],
    ids=[case[0] for case in BROKEN],
)
def test_check_catches_each_defect(key_text, value, message):
    problems = check_entry(key_text, value, GLOSSARY)
    assert any(message in p for p in problems), problems


def test_check_accepts_reordered_placeholders_and_trivial_copies():
    reordered = "_^_2_^_ と [論文](_^_1_^_) を参照。softmax の前に _^_0_^_ で割る。"
    assert check_entry(KEY, reordered, GLOSSARY) == []
    assert check_entry(KEY, GOOD, GLOSSARY) == []
    assert check_entry(EMPHASIS, "**強い**語と*強調*。", GLOSSARY) == []
    assert check_entry("_^_0_^_", "_^_0_^_", GLOSSARY) == []
    assert check_entry("PyTorch 2.", "PyTorch 2.", GLOSSARY) == []


@pytest.mark.parametrize("lang", ["ja", "zh"])
def test_repository_glossaries_are_consistent(lang):
    glossary = load_glossary(glossary_path(ROOT, lang))
    names = {term.en.casefold() for term in glossary}
    assert {"attention", "softmax", "transformer", "pytorch"} <= names
    for term in glossary:  # a compound's rendering satisfies its parts too
        assert check_entry(term.en, term.render, glossary) == [], term


@pytest.mark.parametrize(
    ("lang", "wrong", "right"),
    [
        ("zh", "变压器堆叠多层注意力。", "Transformer 堆叠多层注意力。"),
        (
            "ja",
            "トランスフォーマーはアテンション層を重ねる。",
            "Transformer はアテンション層を重ねる。",
        ),
    ],
)
def test_the_transformer_is_never_the_electrical_device(lang, wrong, right):
    glossary = load_glossary(glossary_path(ROOT, lang))
    english = "The transformer stacks attention layers."
    assert any(
        "is wrong for 'transformer'" in p for p in check_entry(english, wrong, glossary)
    )
    assert check_entry(english, right, glossary) == []


# --- injection --------------------------------------------------------------

SAFE_VALUE = "幅 _^_1_^_ のヘッドの係数 _^_0_^_。"  # for "The factor … width …"
DANGEROUS_TAGS = {
    "script", "iframe", "style", "object", "embed", "form", "meta", "link",
    "base", "svg", "input", "button", "details", "body", "frame",
}  # fmt: skip


class Markup(HTMLParser):
    """Every element (tag, attributes) and comment of an HTML text."""

    def __init__(self, html: str):
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, tuple]] = []
        self.feed(html)
        self.close()

    def handle_starttag(self, tag, attrs):
        self.elements.append((tag, tuple(attrs)))

    def handle_comment(self, data):
        self.elements.append(("<!--", (("text", data),)))


URL_ATTRIBUTES = {"href", "src", "srcset", "action", "data", "formaction", "poster"}


def dangerous(element: tuple[str, tuple], known_urls: set[str]) -> bool:
    """Script, style, frames, comments, or a URL the English does not have."""
    tag, attrs = element
    if tag in DANGEROUS_TAGS or tag == "<!--":
        return True
    for name, value in attrs:
        if name.startswith("on") or name in ("style", "srcdoc"):
            return True
        if name in URL_ATTRIBUTES and (value or "") not in known_urls:
            return True
    return False


def urls(html: str) -> set[str]:
    return {
        value or ""
        for _, attrs in Markup(html).elements
        for name, value in attrs
        if name in URL_ATTRIBUTES
    }


def new_markup(html: str, baseline: str) -> list[tuple[str, tuple]]:
    """Elements of `html` that `baseline` does not have (as a multiset)."""
    left = list(Markup(baseline).elements)
    extra = []
    for element in Markup(html).elements:
        if element in left:
            left.remove(element)
        else:
            extra.append(element)
    return extra


@pytest.mark.parametrize("payload", PAYLOADS)
def test_check_reports_every_injection_payload(payload):
    english = key(parsed(DEMO).sections[2].docs)
    assert check_entry(english, SAFE_VALUE) == []
    assert check_entry(english, SAFE_VALUE + payload) != []


# Payloads that plain python-markdown already does not turn into markup
# (CommonMark would make the first an autolink).
INERT_IN_PLAIN_MARKDOWN = {
    "<javascript:alert(1)>",
    "<!-- everything after this is hidden",
}


@pytest.mark.parametrize("payload", PAYLOADS)
def test_the_markup_detector_sees_each_payload_in_unguarded_markdown(payload):
    """Without the renderer's guard, the payloads do become markup."""
    import markdown

    def unguarded(text: str) -> str:
        return markdown.markdown(text, extensions=["attr_list", "md_in_html"])

    safe = unguarded(SAFE_VALUE)
    found = [e for e in new_markup(unguarded(SAFE_VALUE + payload), safe)
             if dangerous(e, urls(safe))]  # fmt: skip
    assert bool(found) != (payload in INERT_IN_PLAIN_MARKDOWN)


@pytest.mark.parametrize("payload", PAYLOADS)
def test_injection_never_reaches_the_page_as_markup(payload):
    from literate.render import render_page

    page = parsed(DEMO)
    section = page.sections[2]
    table = {key(section.docs): SAFE_VALUE + payload}
    # Through the pipeline: the check rejects it, the English is shown.
    translated = translate_page(page, "ja", table)
    assert translated.sections[2].state == "untranslated"
    assert render_page(translated) == render_page(translate_page(page, "ja", {}))
    # Past the check, straight into the renderer: still no new markup.
    spans = extract(normalize(section.docs)).spans
    forced = [
        replace(section, docs=fill(value, spans), english=section.docs,
                lang="ja", state="translated")
        for value in (SAFE_VALUE, SAFE_VALUE + payload)
    ]  # fmt: skip
    safe, attacked = (
        render_page(
            replace(translated, sections=(*page.sections[:2], s, page.sections[3]))
        )
        for s in forced
    )
    known = urls(safe)
    assert [e for e in new_markup(attacked, safe) if dangerous(e, known)] == []


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
    code = main(["--root", str(root), *args])
    return code, capsys.readouterr().out


def line_of(text: str, table_key: str) -> int:
    quoted = json.dumps(table_key, ensure_ascii=False)
    return next(
        n
        for n, row in enumerate(text.split("\n"), 1)
        if row.lstrip().startswith(quoted)
    )


def demo_keys(source: Path) -> list[str]:
    page = parsed(source)
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
