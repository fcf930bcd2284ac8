"""Structured data that an example hands to the page's scripts.

An example whose value is a `Data` shows nothing to a reader; the page gets
its value as JSON, for a script to read:

    #| toy_data()

    def toy_data():
        return Data("toy", {"queries": TOY_QUERIES.tolist(), "label": tr("query")})

    <script type="application/json" class="lit-data" data-name="toy">…</script>

    JSON.parse(document.querySelector('.lit-data[data-name="toy"]').textContent)

The value is made of JSON's types (dict with string keys, list, tuple, str,
int, float, bool, None); an object with a `tolist()` method (a NumPy array,
a PyTorch tensor) counts as its list. Words a reader reads go through `tr`,
as in a figure, so a translated page gets them in its language. NaN and the
infinities have no JSON form and are refused, with the data's name.

In a notebook the same cell shows the value as JSON (`_repr_json_`).
"""

from __future__ import annotations

import json
import re

NAME_RE = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,63}")
# Characters that could end the script element or start markup in it
# (`</script>`, `<!--`), and the line separators that older parsers of
# JavaScript refuse in a string; JSON reads each \u escape as the character.
_UNSAFE = re.compile("[<>&\u2028\u2029]")


class Data:
    """A named JSON value for the page's scripts (see the module's docstring)."""

    def __init__(self, name: str, value: object):
        if not isinstance(name, str) or not NAME_RE.fullmatch(name):
            raise ValueError(
                f"Data name {name!r}: expected a letter, then up to 63 letters, "
                "digits, '_' or '-'"
            )
        self.name = name
        self.json = dumps(value, name)
        self.value = json.loads(self.json)

    def _repr_json_(self):
        return self.value

    def __repr__(self) -> str:
        short = self.json if len(self.json) <= 60 else self.json[:57] + "..."
        return f"Data({self.name!r}, {short})"


def dumps(value: object, name: str = "") -> str:
    """`value` as compact JSON text; a value JSON cannot hold names `name`."""
    try:
        return json.dumps(
            value,
            ensure_ascii=False,
            allow_nan=False,
            separators=(",", ":"),
            default=_as_list,
        )
    except (TypeError, ValueError) as err:
        raise ValueError(
            f"Data {name!r}: {err}; expected JSON values (dict with str keys, list, "
            "str, int, finite float, bool, None, or an array with tolist())"
        ) from None


def _as_list(value: object) -> object:
    tolist = getattr(value, "tolist", None)
    if callable(tolist):
        return tolist()  # the encoder checks what it holds in turn
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def script_text(text: str) -> str:
    """JSON text made safe as the content of a `<script>` element.

    The text is parsed and written again, so what the page holds is JSON
    whatever it was given (a ValueError if it is not JSON), and `<`, `>`,
    `&` are written as `\\u003c`, ... inside its strings, the only place
    JSON has them: no `</script>` or `<!--` reaches the HTML parser.
    """
    try:
        value = json.loads(text, parse_constant=_no_constant)
    except ValueError as err:
        raise ValueError(f"not JSON: {err}") from None
    plain = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return _UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", plain)


def _no_constant(name: str):
    raise ValueError(f"{name} is not JSON")
