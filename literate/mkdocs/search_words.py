"""Chinese and Japanese text cut into words for the search index, at build time.

mkdocs-material's search (lunr, in the reader's browser) finds a word when a
token of the index starts with it, and it makes tokens by splitting the text
at a separator. Chinese and Japanese put no space between words, so the
index must carry the boundaries itself: this module cuts the text of each
entry into words and puts an invisible WORD JOINER (U+2060, which the
separator splits on and which allows no line break) between them.

Both languages use one dictionary of whole terms, made from the site's own
words (`dictionary`): the glossary's renderings (`translations/<lang>/
glossary.json`) and the terms of the headings. A term of the dictionary is
always one token (因果マスク, 键/值缓存's 值缓存), so a reader who types it
finds it, and the result marks the whole word.

- Chinese: jieba, with every term of the dictionary added as a word.
- Japanese: a run of kanji and katakana is one word (因果マスク, 学習率,
  位置エンコーディング: a compound stays whole), a run of hiragana another
  (particles, endings); a dictionary term that starts at a position and is
  longer than the run there wins (重み減衰, 埋め込み).

A whole word hides its parts from a prefix search (マスク is not a prefix of
因果マスク), so each compound also lists its parts (`parts`), which the index
keeps in a field that is searched but not shown: the dictionary terms and
the index's own words inside it (スコア in アテンションスコア when スコア
stands alone somewhere), its kanji and katakana halves, and, for Japanese,
the words TinySegmenter (the segmenter mkdocs-material ships for Japanese,
run in mini-racer's V8) finds in it (残差接続: 残差, 接続); for Chinese,
jieba's words inside it.

The browser cuts a query against the index's own words
(`literate/assets/search-worker.js`), so a term typed alone is cut exactly
as the index cut it.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterable
from pathlib import Path

JOINER = "\u2060"
# Where the index splits Chinese and Japanese text into tokens (a JavaScript
# regular expression, without flags): spaces, the joiner, and the
# punctuation of both scripts, so that （autograd） holds the token autograd.
SEPARATOR = r"[\s\u200b\u2060\-/、。，．・･：；！？（）「」『』【】〈〉《》〔〕“”‘’…—]+"
SPLIT = re.compile(SEPARATOR)

HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3005-\u3007"
HIRAGANA = "\u3041-\u3096\u309d-\u309f"
KATAKANA = "\u30a1-\u30fa\u30fc-\u30ff\u31f0-\u31ff"
_STRETCH = {
    "zh": re.compile(f"[{HAN}]+"),
    "ja": re.compile(f"[{HAN}{HIRAGANA}{KATAKANA}]+"),
}
_CONTENT = re.compile(f"[{HAN}{KATAKANA}]+")
_KANA_OR_HAN = re.compile(f"[{HAN}{KATAKANA}]")
_TAG = re.compile(r"(<[^>]*>)")
# A word added to jieba is given this frequency: enough to keep 词元 whole
# in 新词元接在 (jieba alone cuts 新词 / 元接), not so much that a term
# swallows its neighbours' characters (笔记录入 stays 笔记 / 录入).
JIEBA_FREQUENCY = 1000
# A Chinese heading's run of characters is a term when it is this short
# (学习率, 训练循环); longer runs are phrases, cut by jieba.
ZH_HEADING_TERM = 4
TINYSEG = Path("templates/assets/javascripts/lunr/tinyseg.js")

log = logging.getLogger("mkdocs.plugins.literate")


def cut_language(lang: str) -> str:
    """The language code whose cutting applies to `lang` (zh-Hant: zh), or ""
    when the index needs no cutting (words are apart already)."""
    base = lang.split("-")[0].lower()
    return base if base in _STRETCH else ""


def dictionary(lang: str, renderings: Iterable[str], headings: Iterable[str]):
    """The whole terms of `lang`: the pieces of the glossary's renderings and
    of the headings that are words of the language (see the docstring)."""
    stretch = _STRETCH[lang]
    terms = set()
    for text in renderings:
        for piece in SPLIT.split(text):
            if stretch.fullmatch(piece) and len(piece) > 1:
                terms.add(piece)
    for heading in headings:
        text = _TAG.sub(" ", heading)
        if lang == "ja":  # a heading's nouns lie between its particles
            pieces = re.split(f"[^{HAN}{KATAKANA}]+", text)
        else:
            pieces = [p for p in stretch.findall(text) if len(p) <= ZH_HEADING_TERM]
        terms.update(p for p in pieces if len(p) > 1)
    return tuple(sorted(terms))


class Cutter:
    """Cuts the text of one language's index into words (see the docstring)."""

    def __init__(self, lang: str, terms: Iterable[str]) -> None:
        self.lang = lang
        self.terms = frozenset(terms)
        self.longest = max((len(t) for t in self.terms), default=0)
        self.stretch = _STRETCH[lang]
        self._jieba = None

    def mark(self, html: str, words: set[str]) -> str:
        """`html` with a joiner between the words of its text (not inside its
        tags), and around each run of the language's script; the words it
        cut are added to `words`."""
        pieces = _TAG.split(html)
        for i in range(0, len(pieces), 2):  # the text between the tags
            pieces[i] = self.stretch.sub(
                lambda found: self._joined(found.group(), words), pieces[i]
            )
        return "".join(pieces)

    def _joined(self, stretch: str, words: set[str]) -> str:
        cut = self.words(stretch)
        words.update(cut)
        return JOINER + JOINER.join(cut) + JOINER

    def words(self, stretch: str) -> list[str]:
        """The words of a run of the language's script."""
        if self.lang == "zh":
            return [w for w in self._tokenizer().cut(stretch) if w]
        return self._japanese(stretch)

    def _japanese(self, text: str) -> list[str]:
        words, at = [], 0
        while at < len(text):
            term = next(
                (
                    text[at : at + n]
                    for n in range(min(self.longest, len(text) - at), 1, -1)
                    if text[at : at + n] in self.terms
                ),
                "",
            )
            run = _CONTENT.match(text, at) or re.compile(f"[{HIRAGANA}]+").match(
                text, at
            )
            natural = run.group() if run else text[at]
            word = term if len(term) > len(natural) else natural
            words.append(word)
            at += len(word)
        return words

    def parts(self, words: Iterable[str]) -> dict[str, list[str]]:
        """The parts of each compound among `words` (see the docstring):
        only words with parts are keys."""
        compounds = sorted(
            w for w in set(words) if len(w) > 1 and _KANA_OR_HAN.search(w)
        )
        if self.lang == "zh":
            found = {w: self._tokenizer().cut_for_search(w) for w in compounds}
        else:
            found = {w: _content_runs(w) for w in compounds}
            for word, cut in zip(compounds, tinysegmenter(compounds), strict=True):
                found[word] = [*found[word], *cut]
        known = self.terms | {w for w in compounds if _CONTENT.fullmatch(w)}
        result = {}
        for word in compounds:
            inside = [
                word[i:j]
                for i in range(len(word))
                for j in range(i + 2, len(word) + 1)
                if word[i:j] in known
            ]
            pieces = {
                p
                for p in [*found[word], *inside]
                if p != word and _KANA_OR_HAN.search(p)
            }
            if pieces:
                result[word] = sorted(pieces)
        return result

    def _tokenizer(self):
        if self._jieba is None:
            self._jieba = jieba_with(self.terms)
        return self._jieba


def _content_runs(word: str) -> list[str]:
    """A word's kanji and katakana halves: 因果マスク -> 因果, マスク."""
    runs = re.findall(f"[{HAN}]+|[{KATAKANA}]+", word)
    return runs if len(runs) > 1 else []


_JIEBA: dict[frozenset, object] = {}  # a tokenizer per dictionary (serve)


def jieba_with(terms: frozenset):
    """A jieba tokenizer of its own (jieba's global one is left as it is)
    that keeps each of `terms` whole."""
    if terms not in _JIEBA:
        import jieba

        jieba.setLogLevel(logging.WARNING)
        tokenizer = jieba.Tokenizer()
        for term in sorted(terms):
            tokenizer.add_word(term, JIEBA_FREQUENCY)
        _JIEBA.clear()
        _JIEBA[terms] = tokenizer
    return _JIEBA[terms]


_TINYSEG: list = []  # mini-racer's context with TinySegmenter, made once


def tinysegmenter(words: list[str]) -> list[list[str]]:
    """TinySegmenter's cut of each word (none where it keeps it whole), with
    the copy of it that mkdocs-material ships; nothing if it is missing."""
    if not words:
        return []
    if not _TINYSEG:
        _TINYSEG.append(_tinysegmenter_context())
    context = _TINYSEG[0]
    if context is None:
        return [[] for _ in words]
    cut = json.loads(context.call("literateCut", json.dumps(words)))
    return [pieces if len(pieces) > 1 else [] for pieces in cut]


def _tinysegmenter_context():
    try:
        import material
        from py_mini_racer import MiniRacer
    except ImportError:
        return None
    path = Path(material.__file__).parent / TINYSEG
    if not path.is_file():
        log.info(f"literate: {path} is missing: Japanese compounds keep fewer parts")
        return None
    context = MiniRacer()
    context.eval("var lunr = {}; this.lunr = lunr;")
    context.eval(path.read_text(encoding="utf-8"))
    context.eval(
        "var literateSegmenter = new lunr.TinySegmenter();"
        "function literateCut(words) { return JSON.stringify("
        "JSON.parse(words).map(w => literateSegmenter.segment(w))); }"
    )
    return context
