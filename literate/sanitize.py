"""What raw HTML and which link targets prose may carry into a page.

Raw HTML reaches a page only through a span `spans.extract` found (and, for a
translation, one that the English has too); even then only a few inline tags
pass, rebuilt from their parsed name and allowed attributes. Link targets are
http(s), mailto, relative or `#`; images load only from the site itself.
"""

from __future__ import annotations

import html
import re

TAGS = frozenset(
    "a abbr b br cite code del dfn em i ins kbd mark q s samp small span strong"
    " sub sup u var wbr".split()
)
VOID = frozenset({"br", "wbr"})
ATTRIBUTES = frozenset({"id", "class", "title", "lang", "dir"})
LINK_SCHEMES = frozenset({"http", "https", "mailto"})

_TAG_RE = re.compile(
    r"<(/?)([A-Za-z][A-Za-z0-9-]*)((?:\s+[^\s\"'>/=]+"
    r"(?:\s*=\s*(?:\"[^\"]*\"|'[^']*'|[^\s\"'=<>`]+))?)*)\s*/?>\Z"
)
_ATTR_RE = re.compile(
    r"([^\s\"'>/=]+)(?:\s*=\s*(?:\"([^\"]*)\"|'([^']*)'|([^\s\"'=<>`]+)))?"
)
_SCHEME_RE = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*):")
# Browsers skip these characters when they read a URL's scheme.
_IGNORED_IN_URL = re.compile(r"[\x00-\x20\x7f]")


def safe_href(url: str) -> str | None:
    """`url` if a link may point there (http(s), mailto, relative, #), else None."""
    compact = _IGNORED_IN_URL.sub("", url)
    scheme = _SCHEME_RE.match(compact)
    if scheme and scheme.group(1).lower() not in LINK_SCHEMES:
        return None
    return url.strip()


def safe_src(url: str) -> str | None:
    """`url` if an image may load from there: the site itself, never the web."""
    compact = _IGNORED_IN_URL.sub("", url)
    if _SCHEME_RE.match(compact) or compact.startswith(("//", "\\")):
        return None
    return url.strip()


def link_target(span_text: str) -> str:
    """The URL of a link-target span: `<url>`, `url "title"` or a bare `url`."""
    text = span_text.strip()
    if text.startswith("<"):
        return text[1 : text.find(">")] if ">" in text else text[1:]
    return text.split()[0] if text else ""


def clean_tag(tag: str) -> tuple[str, str, bool] | None:
    """Rebuild an allowed tag: (html, name, is_closing), or None if not allowed.

    Only the tags of `TAGS` and the attributes of `ATTRIBUTES` (plus a safe
    `href` on `<a>`) survive; every value is re-escaped.
    """
    match = _TAG_RE.match(tag.strip())
    if not match:
        return None
    closing, name, attributes = match.group(1), match.group(2).lower(), match.group(3)
    if name not in TAGS:
        return None
    if closing:
        return (f"</{name}>", name, True)
    kept = []
    for attr in _ATTR_RE.finditer(attributes):
        key = attr.group(1).lower()
        value = next((v for v in attr.groups()[1:] if v is not None), "")
        value = html.unescape(value)
        if key == "href" and name == "a":
            value = safe_href(value)
        elif key not in ATTRIBUTES:
            value = None
        if value is not None:
            kept.append(f' {key}="{html.escape(value)}"')
    return (f"<{name}{''.join(kept)}>", name, False)


def attr(value: str) -> str:
    """`value` escaped for an HTML attribute between double quotes."""
    return html.escape(value, quote=True)
