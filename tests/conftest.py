"""Shared test setup and helpers: the repository root on sys.path (so
`import mha` works), the golden-file check, an HTML tag reader and a
stand-in translator. Test files import these from `conftest`."""

import os
import sys
from html.parser import HTMLParser
from pathlib import Path

# Idle OpenMP threads spin while they wait for work; on a machine whose cores
# are shared (CI, a laptop running other things) that makes small torch ops
# many times slower. Passive waiting must be chosen before torch is imported.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
# KaTeX through node in this process: the in-process V8 stopped answering
# after other tests in one long run (not yet understood); test_katex_engine
# and the wheel test check the in-process engine on their own.
os.environ.setdefault("LITERATE_KATEX", "node")

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

# The KaTeX distribution that `npm ci` installs (the plugin's default).
KATEX_DIST = ROOT / "node_modules" / "katex" / "dist"
# The lesson's chapters, in reading order: the literate sources of mkdocs.yml.
CHAPTERS = ("attention.py", "mha.py", "layers.py", "train.py", "generate.py")

# Golden files: `tests/golden/NAME.py` and what it parses and renders to;
# LITERATE_UPDATE_GOLDEN=1 rewrites them after a deliberate change.
GOLDEN = Path(__file__).parent / "golden"
UPDATE_GOLDEN = os.environ.get("LITERATE_UPDATE_GOLDEN") == "1"


def compare_golden(expected: Path, actual: str) -> None:
    if UPDATE_GOLDEN:
        expected.write_text(actual, encoding="utf-8")
    assert expected.exists(), f"{expected}: missing; LITERATE_UPDATE_GOLDEN=1 makes it"
    assert actual == expected.read_text(encoding="utf-8")


class Tree(HTMLParser):
    """Every start tag of a document as (tag, attributes), and its text."""

    def __init__(self, text: str):
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text.append(data)

    def find(self, tag, **attrs):
        return [
            a
            for t, a in self.tags
            if t == tag and all(a.get(k.rstrip("_")) == v for k, v in attrs.items())
        ]


def japanese(value: str) -> str:
    """A stand-in translation of a key that keeps every placeholder (and a
    leading heading a heading: the mark goes after its `#`s)."""
    marks = len(value) - len(value.lstrip("#"))
    if marks and value[marks : marks + 1] == " ":
        return value[: marks + 1] + "【訳】" + value[marks + 1 :]
    return "【訳】" + value
