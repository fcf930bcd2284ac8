"""Words that an example draws, in the language of the page that shows it.

    from literate.words import tr

    ax.set_xlabel(tr("key"))
    ax.set_title(tr("head {h}").format(h=h))

`tr` returns its English argument, except while the build runs the example
for a translated page: then it returns the translation from that page's table
(`translations/<lang>/<source>.json`, where the key is the English word), or
the English when the table has none. So the example stays one function, and
run by hand it draws English. A translated page's notebook starts with a
cell that calls `use` with the page's words, so that it draws and prints
what the page shows.

The argument must be a string literal: `literate translations update` finds
each `tr("...")` that a page's examples can reach and adds it to the page's
table, and the build runs per language only the examples that reach one.
"""

from __future__ import annotations

_words: dict[str, str] = {}


def tr(english: str) -> str:
    """`english` in the language of the page being built (else as it is)."""
    return _words.get(english) or english


def use(words: dict[str, str]) -> None:
    """Translate with `words` (English -> translation) from now on; {} for none."""
    _words.clear()
    _words.update(words)
