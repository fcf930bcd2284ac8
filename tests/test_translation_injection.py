"""Translated text is untrusted: injected markup is caught and never shown.

Each payload of `translation_data/injections.json` is appended to a good
translation; `check` must report it, the translate stage must not show it,
and the renderer must not turn it into markup even when handed it directly.
"""

from __future__ import annotations

import json
from dataclasses import replace
from html.parser import HTMLParser
from pathlib import Path

import pytest

from literate.check import check_entry
from literate.normalize import key, normalize
from literate.parse import parse
from literate.spans import extract, fill
from literate.translate import translate_page

DATA = Path(__file__).parent / "translation_data"
DEMO = DATA / "demo.py"
PAYLOADS = json.loads((DATA / "injections.json").read_text(encoding="utf-8"))


def parsed(path: Path):
    return parse(path.read_text(encoding="utf-8"), path.name)


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
                state="translated")
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
