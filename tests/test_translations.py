"""Translation tooling: keys, the translate stage and the check.

The repository's own `translations/` is only read here (its glossaries).
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import replace
from pathlib import Path

import pytest
from conftest import CHAPTERS, ROOT, japanese
from hypothesis import given, settings
from hypothesis import strategies as st

from literate.check import check_entry
from literate.glossary import Term, load_glossary
from literate.keys import glossary_path
from literate.normalize import key, normalize, starts_block
from literate.parse import parse
from literate.spans import extract, fill
from literate.tables import Entry
from literate.translate import translate_page
from literate.translations.update import update_table

DEMO = Path(__file__).parent / "translation_data" / "demo.py"
# The tutorial's own sources: its chapters.
SOURCES = [DEMO] + [ROOT / chapter for chapter in CHAPTERS]


def parsed(path: Path):
    return parse(path.read_text(encoding="utf-8"), path.name)


# --- keys -------------------------------------------------------------------

SPAN_CASES = [
    (r"Scale by $\sqrt{d_k}$ now.", [("math", r"$\sqrt{d_k}$")]),
    ("Batch size $32$ and $2^k$.", [("math", "$32$"), ("math", "$2^k$")]),
    ("It costs $5 and $10, or $3.50.", []),
    (r"positions $0, 1, \ldots$ in order", [("math", r"$0, 1, \ldots$")]),
    ("costs $5, and $x$", [("math", "$x$")]),
    ("A literal \\$x$ stays text.", []),
    ("x $ y $ z, and a $b$5 too", []),
    # labml's `$… $`: a space may close where a TeX command lies between
    (r"If gated, $f(x) \otimes (x V) $ here", [("math", r"$f(x) \otimes (x V) $")]),
    (r"from $a \to b $c, $1 \cdot 2 $3", []),
    (r"$a \cdot b$ and $c $", [("math", r"$a \cdot b$")]),
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
    "1. ", "> ", "$d_k$", "](", "_^_0_^_", "_^_", "_^_1",
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
    # A `%symbols` line is for the page's script, not prose: no key holds it,
    # and only the English's attribute lists it.
    english = re.sub(r' data-symbols="[^"]*"', "", render_page(page))
    assert displayed(render_page(round_trip)) == displayed(english)


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
    # A plural name without its plural: Chinese and Japanese have none.
    assert check_entry("Where the LayerNorms go.", "LayerNorm 的位置。", GLOSSARY) == []
    assert check_entry("Where the LayerNorms go.", "层归一化的位置。", GLOSSARY)


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
