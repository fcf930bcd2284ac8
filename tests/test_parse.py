"""The parser: sections, line accounting, anchors, front matter and errors.

Golden files: `tests/golden/NAME.py` is parsed and compared with
`NAME.sections.json`; run with LITERATE_UPDATE_GOLDEN=1 to rewrite them after
a deliberate change (then read the diff).
"""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest
from conftest import GOLDEN, compare_golden
from hypothesis import given, settings
from hypothesis import strategies as st

from literate.parse import ParseError, parse


def sections_json(source: Path) -> str:
    page = parse(source.read_text(encoding="utf-8"), source.name)
    data = dataclasses.asdict(page)
    return json.dumps(data, indent=2, ensure_ascii=False, sort_keys=True) + "\n"


@pytest.mark.parametrize("name", sorted(p.stem for p in GOLDEN.glob("*.py")))
def test_golden_sections(name):
    source = GOLDEN / f"{name}.py"
    compare_golden(GOLDEN / f"{name}.sections.json", sections_json(source))


def by_anchor(page):
    return {s.anchor: s for s in page.sections}


def code_numbers(section):
    return [line.number for line in section.code]


# --- sections ---------------------------------------------------------------------


def test_docstring_sits_beside_decorators_and_multiline_signature():
    page = parse((GOLDEN / "edge.py").read_text(), "edge.py")
    section = by_anchor(page)["decorated"]
    assert section.docs == (
        "Sits beside its decorator and its two-line signature: \\sqrt{x}."
    )
    lines = (GOLDEN / "edge.py").read_text().split("\n")
    first = [lines[n - 1] for n in code_numbers(section)[:6]]
    assert first == [
        "@property",
        "def decorated(",
        "    a,",
        "    b,",
        "):",
        "    return a",
    ]
    assert section.defines == ("decorated",)


def test_comment_runs_merge_across_blank_lines_but_docstrings_stand_alone():
    source = '"""Module."""\n\n# One.\n\n# Two.\nx = 1\n'
    page = parse(source, "m.py")
    assert [s.docs for s in page.sections] == ["Module.", "One.\n\nTwo."]
    assert page.sections[1].docs_lines == (3, 4, 5)
    assert code_numbers(page.sections[1]) == [6]


def test_comment_lines_leave_the_code_column_and_keep_line_numbers():
    source = "a = 1\n# Why b.\nb = 2\n\nc = 3\n# Why d.\nd = 4\n"
    page = parse(source, "m.py")
    assert [code_numbers(s) for s in page.sections] == [[1], [3, 4, 5], [7]]
    assert page.sections[1].code[1].text == ""  # a blank line inside code stays


def test_hash_and_quotes_inside_strings_are_code():
    source = 'x = "# no"\ny = """\n# no\n"""\nz = "\\"\\"\\"" # yes, trailing\n'
    page = parse(source, "m.py")
    assert len(page.sections) == 1
    assert code_numbers(page.sections[0]) == [1, 2, 3, 4, 5]
    assert page.sections[0].docs == ""


def test_pragmas_and_bracketed_comments_stay_code():
    source = "# noqa: E501\n# type: ignore\n# fmt: off\nx = [\n    # in brackets\n]\n"
    page = parse(source, "m.py")
    assert [s.docs for s in page.sections] == [""]
    assert code_numbers(page.sections[0]) == [1, 2, 3, 4, 5, 6]


def test_shebang_and_encoding_are_neither_prose_nor_code():
    source = "#!/usr/bin/env python\n# -*- coding: utf-8 -*-\n# Prose.\nx = 1\n"
    page = parse(source, "m.py")
    assert [(s.docs, s.docs_lines, code_numbers(s)) for s in page.sections] == [
        ("Prose.", (3,), [4])
    ]


def test_directive_is_recorded_not_prose_or_code():
    source = "# Show it.\nx = 1\n#| show table(x)\ny = 2\n"
    (section,) = parse(source, "m.py").sections
    assert [(d.number, d.text) for d in section.directives] == [(3, "show table(x)")]
    assert code_numbers(section) == [2, 4]


def test_docstrings_are_the_source_text_as_written():
    # Plain and raw strings alike: escapes are kept, not evaluated, so a
    # plain "\frac" is not a form feed and "\n" is not a line break.
    source = (
        'def f():\n    "Plain: $\\frac{a}{b}$, \\times, \\\\sqrt, \\n."\n\n\n'
        'def g():\n    r"""Raw: $\\beta$ \\t."""\n'
    )
    page = parse(source, "m.py")
    assert [s.docs for s in page.sections] == [
        "Plain: $\\frac{a}{b}$, \\times, \\\\sqrt, \\n.",
        "Raw: $\\beta$ \\t.",
    ]
    assert [s.docs_lines for s in page.sections] == [(2,), (6,)]


def test_one_line_docstrings_with_non_ascii_text_are_prose():
    # ast counts columns in bytes, tokenize in characters: "é" and "注意" differ.
    source = 'def f():\n    """Café, 注意."""\n    return 1\n'
    (section,) = parse(source, "m.py").sections
    assert section.docs == "Café, 注意."
    assert [line.text for line in section.code] == ["def f():", "    return 1"]


def test_docstring_sharing_a_line_with_code_stays_code():
    source = 'def f(): "inline"; return 1\n'
    (section,) = parse(source, "m.py").sections
    assert section.docs == "" and code_numbers(section) == [1]


# --- front matter and title -----------------------------------------------------


def test_front_matter_gives_title_and_summary_and_leaves_the_prose():
    page = parse((GOLDEN / "basic.py").read_text(), "basic.py")
    assert page.title == "A small attention example"
    assert page.summary == "Scores, a softmax and a weighted sum, in a few lines."
    assert page.sections[0].docs.startswith("# Attention in brief\n")
    assert "title:" not in page.sections[0].docs


def test_title_falls_back_to_first_heading_then_file_name():
    assert parse('"""Intro.\n\n## Heading two\n"""\n', "a/m.py").title == "Heading two"
    assert parse("x = 1\n", "a/m.py").title == "m.py"


@pytest.mark.parametrize(
    ("source", "line", "words"),
    [
        ('"""\n---\ntitle: x\n"""\n', 2, "no closing"),
        ('"""\n---\ntitle: [unclosed\n---\n"""\n', 3, "not YAML"),
        ('"""\n---\n- a list\n---\n"""\n', 2, "key: value"),
    ],
)
def test_front_matter_errors_name_the_line(source, line, words):
    with pytest.raises(ParseError) as caught:
        parse(source, "m.py")
    assert caught.value.line == line
    assert str(caught.value).startswith(f"m.py:{line}: ")
    assert words in str(caught.value)


# --- errors -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "line"),
    [
        ("x = 1\ndef f(:\n    pass\n", 2),  # syntax error
        ('x = 1\n\ndef f():\n    """Never closed.\n    return 1\n', 4),
        ("x = 1\n  y = 2\n", 2),  # unexpected indent
        ("x = (\n", 1),  # never closed bracket
        ("x = 1\ny = '\0'\n", 2),  # null byte
    ],
)
def test_errors_name_file_and_line(source, line):
    with pytest.raises(ParseError) as caught:
        parse(source, "bad.py")
    assert (caught.value.path, caught.value.line) == ("bad.py", line)
    assert str(caught.value).startswith(f"bad.py:{line}: ")


# --- anchors ----------------------------------------------------------------------


def test_anchors_come_from_symbols_and_content():
    page = parse((GOLDEN / "basic.py").read_text(), "basic.py")
    assert [s.anchor for s in page.sections] == [
        "attention-in-brief",
        "scores-each-query-is-compared-with-each-key",  # "scores" is the function's
        "scores",
        "Attention",
        "Attention.weights-the-softmax-runs-over",
        "Attention.__call__-a-weighted-average-of",
    ]


def test_anchors_stay_when_a_comment_is_added_above():
    before = parse((GOLDEN / "basic.py").read_text(), "basic.py")
    text = (GOLDEN / "basic.py").read_text()
    text = text.replace("import math\n", "# A new note about imports.\nimport math\n")
    text = text.replace(
        "    def weights", "    # A new note on weights.\n    x = 1\n\n    def weights"
    )
    after = parse(text, "basic.py")
    kept = {s.docs: s.anchor for s in before.sections}
    moved = {s.docs: s.anchor for s in after.sections if s.docs in kept}
    assert moved == kept
    assert len(after.sections) == len(before.sections) + 2


def test_anchors_are_unique_and_never_look_like_line_anchors():
    source = (
        "# Same.\nx = 1\n# Same.\ny = 2\n# L12\nz = 3\n# Next.\ndef L3():\n    pass\n"
    )
    anchors = [s.anchor for s in parse(source, "m.py").sections]
    assert anchors == ["same", "same-2", "l12", "L3-2"]


def test_defines_lists_every_definition_line_in_the_code():
    page = parse((GOLDEN / "edge.py").read_text(), "edge.py")
    defined = [name for s in page.sections for name in s.defines]
    assert defined == [
        "decorated",
        "Outer",
        "Outer.Inner",
        "Outer.Inner.method",
        "one_liner",
    ]


# --- every line lands in exactly one place ------------------------------------------

WORDS = st.sampled_from(["alpha", "beta", "`x`", "$d_k$", "a # b", '"""', "#", ""])


@st.composite
def comment_run(draw, indent):
    lines = draw(st.lists(st.lists(WORDS, max_size=3), min_size=1, max_size=3))
    return [indent + ("# " + " ".join(ws)).rstrip() for ws in lines]


@st.composite
def statement(draw, indent, depth):
    kind = draw(
        st.sampled_from(
            ["code", "string", "brackets", "blank", "comment", "pragma", "directive"]
            + (["def", "class"] if depth < 2 else [])
        )
    )
    if kind == "code":
        return [indent + "x = 1  # trailing"]
    if kind == "string":
        return [indent + 's = """', "# in a string", '"""']
    if kind == "brackets":
        return [indent + "y = [", indent + "    # in brackets", indent + "]"]
    if kind == "blank":
        return [""]
    if kind == "comment":
        return draw(comment_run(indent))
    if kind == "pragma":
        return [indent + "# noqa: E501"]
    if kind == "directive":
        return [indent + "#| show x"]
    inner = indent + "    "
    head = [indent + "@decorator"] if draw(st.booleans()) else []
    if kind == "def":
        head += [indent + "def f(", inner + "a,", indent + "):"]
    else:
        head += [indent + "class C:"]
    docstring = draw(
        st.sampled_from(
            [
                [],
                [inner + '"""One line."""'],
                [inner + '"""', inner + "Text.", inner + '"""'],
            ]
        )
    )
    body = draw(st.lists(statement(inner, depth + 1), max_size=4))
    return (
        head + docstring + [line for part in body for line in part] + [inner + "pass"]
    )


@st.composite
def module(draw):
    top = []
    if draw(st.booleans()):
        top.append("#!/usr/bin/env python")
    if draw(st.booleans()):
        top += ['"""', "---", "title: T", "---", "", "Intro.", '"""']
    body = draw(st.lists(statement("", 0), max_size=8))
    return "\n".join(top + [line for part in body for line in part]) + "\n"


TRIVIAL_RE = re.compile(r'\s*(#\s*|[rRuU]?("""|\'\'\')\s*)?')


@settings(max_examples=200, deadline=None)
@given(module())
def test_every_line_lands_in_exactly_one_place(source):
    page = parse(source, "gen.py")
    lines = source.split("\n")[:-1]
    placed: list[int] = []
    for section in page.sections:
        docs = section.docs.split("\n") if section.docs else []
        assert len(docs) == len(section.docs_lines)
        for number, text in zip(section.docs_lines, docs, strict=True):
            assert text.strip() in lines[number - 1]  # the prose line is from there
        for line in section.code:
            assert line.text == lines[line.number - 1]
        placed += section.docs_lines
        placed += [line.number for line in section.code]
        placed += [d.number for d in section.directives]
    assert len(placed) == len(set(placed)), "a line landed in two places"
    front = set()
    if '"""\n---\ntitle: T\n---' in source:
        start = lines.index("---") + 1
        front = set(range(start, start + 3))  # ---, title, ---
    for number, text in enumerate(lines, start=1):
        if number in placed:
            continue
        trivial = TRIVIAL_RE.fullmatch(text) or number in front
        shebang = number == 1 and text.startswith("#!")
        assert trivial or shebang, f"line {number} {text!r} landed nowhere"
