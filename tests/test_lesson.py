"""The lesson's shape: chapters a learner finishes, each with exercises whose
outcome the page runs, and none of the statements an outside review found
false."""

from __future__ import annotations

import json
import re

import pytest
from conftest import CHAPTERS, ROOT

MAX_LINES = 700  # a chapter is one page a learner reads in one sitting
TRY_THIS = re.compile(r'^# !!! tip "Try this"$')
TITLES = {"ja": '!!! tip "やってみよう"', "zh": '!!! tip "动手试试"'}
# Statements of the round-3 teaching review (§2): each was false or
# misleading, and none may come back, in any chapter or translation.
FALSE = (
    "sees less text than the corpus holds",
    "That stops learning",
    "for X = Q, K, V",
    # Teaching review 4 (round of 2026-12-06).
    "changes only the seed",
    "Dropout 0.1 slows",
    "nothing non-linear is",
    "each of two positions",
    "agrees with Xiong",
    "Whether stacking is faster depends on the machine",
)


def lines(source: str) -> list[str]:
    return (ROOT / source).read_text(encoding="utf-8").splitlines()


def tries(source: str) -> list[tuple[int, list[str]]]:
    """Each "Try this" box's line number and the lines up to the next box
    or heading (its function and the example that runs it)."""
    text = lines(source)
    starts = [n for n, line in enumerate(text) if TRY_THIS.match(line)]
    found = []
    for n in starts:
        end = next(
            (
                m
                for m in range(n + 1, len(text))
                if TRY_THIS.match(text[m]) or text[m].startswith("# #")
            ),
            len(text),
        )
        found.append((n + 1, text[n:end]))
    return found


def test_the_chapters_are_the_sources_the_site_builds():
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    listed = re.search(r"sources:\n((?:\s+- .+\n)+)", config).group(1)
    assert tuple(re.findall(r"- (\S+)", listed)) == CHAPTERS


@pytest.mark.parametrize("source", CHAPTERS)
def test_a_chapter_is_short_enough_to_finish(source):
    assert len(lines(source)) <= MAX_LINES, source


@pytest.mark.parametrize("source", CHAPTERS)
def test_each_chapter_has_three_exercises_whose_outcome_the_page_runs(source):
    boxes = tries(source)
    assert len(boxes) >= 3, f"{source}: {len(boxes)} Try-this boxes"
    for line, body in boxes:
        body_text = [b for b in body[1:] if b.startswith("#     ")]
        assert body_text, f"{source}:{line}: the box has no indented text"
        assert any(b.startswith("#| ") for b in body), (
            f"{source}:{line}: no `#|` example runs the exercise"
        )


@pytest.mark.parametrize("source", CHAPTERS)
def test_no_statement_the_review_found_false_is_back(source):
    texts = {source: (ROOT / source).read_text(encoding="utf-8")}
    for lang in TITLES:
        table = ROOT / "translations" / lang / source.replace(".py", ".json")
        texts[str(table)] = table.read_text(encoding="utf-8")
    for where, text in texts.items():
        for statement in FALSE:
            assert statement not in text, f"{where}: {statement!r}"


@pytest.mark.parametrize("lang", sorted(TITLES))
@pytest.mark.parametrize("source", CHAPTERS)
def test_translated_exercises_keep_the_box_under_their_own_title(source, lang):
    table = ROOT / "translations" / lang / source.replace(".py", ".json")
    entries = json.loads(table.read_text(encoding="utf-8"))
    for key, value in entries.items():
        if key.startswith('!!! tip "Try this"') and value:
            # The key folds the box's lines into one; the translation must
            # keep the title on its own line and indent the body, or the
            # page shows the box as a plain paragraph starting with "!!!".
            title, _, body = value.partition("\n")
            assert title == TITLES[lang], f"{table}: {key[:60]!r}"
            lines = body.split("\n")
            assert all(line.startswith("    ") for line in lines if line), (
                f"{table}: {key[:60]!r}: the box's body is not indented"
            )
            assert body.strip(), f"{table}: {key[:60]!r}: an empty box"
