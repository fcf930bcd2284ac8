"""Chinese and Japanese search: the words the index is cut into at build time
(literate/mkdocs/search_words.py, i18n_search.language_index) and the words
the browser cuts a query into (literate/assets/search-worker.js, run here in
mini-racer's V8 with a stand-in for the theme's worker)."""

from __future__ import annotations

import json
import re

import pytest
from conftest import ROOT

from literate.mkdocs import i18n_search, search_words
from literate.mkdocs.search_words import JOINER, Cutter, dictionary
from literate.mkdocs.site import Language

JA, ZH = Language("ja", False), Language("zh", False)
WORKER = ROOT / "literate" / "assets" / "search-worker.js"


def words(cutter: Cutter, text: str) -> list[str]:
    """The tokens the browser makes of `text` once `cutter` has marked it."""
    return [w for w in re.split(search_words.SEPARATOR, cutter.mark(text, set())) if w]


# --- the dictionary -------------------------------------------------------------


def test_the_dictionary_takes_glossary_terms_and_the_headings_nouns():
    ja = dictionary(
        "ja",
        ["因果マスク", "KV キャッシュ", "キー/バリュー", "重み減衰", "softmax"],
        ["オプティマイザと学習率のスケジュール", "<code>generate</code>", "表"],
    )
    assert set(ja) == {
        "因果マスク", "キャッシュ", "キー", "バリュー", "重み減衰",
        "オプティマイザ", "学習率", "スケジュール",
    }  # fmt: skip
    zh = dictionary(
        "zh", ["键/值缓存", "词元", "头"], ["学习率", "如何阅读页面", "五章课程"]
    )
    # A heading run longer than four characters is a phrase, not a term.
    assert set(zh) == {"值缓存", "词元", "学习率", "五章课程"}


def test_only_chinese_and_japanese_are_cut():
    codes = ("ja", "zh", "zh-Hant", "en", "ko")
    cut = [search_words.cut_language(code) for code in codes]
    assert cut == ["ja", "zh", "zh", "", ""]


# --- Japanese -------------------------------------------------------------------


def test_japanese_compounds_and_dictionary_terms_are_whole_words():
    cutter = Cutter("ja", ["重み減衰", "学習率"])
    assert words(cutter, "因果マスクの下で学習率に重み減衰をかける") == [
        "因果マスク", "の", "下", "で", "学習率", "に", "重み減衰", "をかける",
    ]  # fmt: skip
    # Latin, digits and punctuation are apart from the Japanese words.
    assert words(cutter, "PyTorchの（softmax）と2つ") == [
        "PyTorch", "の", "softmax", "と", "2", "つ",
    ]  # fmt: skip


def test_the_parts_of_a_japanese_compound_are_kept_for_the_hidden_field():
    cutter = Cutter("ja", ["マスク", "アテンション", "ヘッド"])
    parts = cutter.parts(["因果マスク", "マルチヘッドアテンション", "残差接続", "の"])
    assert set(parts["因果マスク"]) >= {"因果", "マスク"}
    assert set(parts["マルチヘッドアテンション"]) >= {"ヘッド", "アテンション"}
    assert set(parts["残差接続"]) == {"残差", "接続"}  # TinySegmenter's cut
    assert "の" not in parts
    # The index's own words inside a compound are parts of it too.
    parts = Cutter("ja", []).parts(["アテンションスコア", "スコア", "の"])
    assert parts == {"アテンションスコア": ["スコア"]}


# --- Chinese --------------------------------------------------------------------


def test_chinese_glossary_terms_are_whole_words_in_any_context():
    plain = words(Cutter("zh", []), "新词元接在后面")
    assert "词元" not in plain  # jieba alone: 新词 / 元接
    cutter = Cutter("zh", ["词元", "值缓存", "因果掩码"])
    assert words(cutter, "新词元接在后面") == ["新", "词元", "接", "在", "后面"]
    assert words(cutter, "键/值缓存与因果掩码") == ["键", "值缓存", "与", "因果掩码"]
    # A term does not swallow its neighbours' characters.
    assert words(Cutter("zh", ["记录"]), "笔记录入") == ["笔记", "录入"]


def test_the_parts_of_a_chinese_compound_are_jiebas_words_inside_it():
    parts = Cutter("zh", ["多头注意力"]).parts(["多头注意力", "词"])
    assert {"多头", "注意力"} <= set(parts["多头注意力"])
    assert "词" not in parts


# --- the index ------------------------------------------------------------------


def test_the_index_sets_code_apart_and_lists_a_compounds_parts_unseen():
    entries = [
        {
            "location": "ja/mha.html#cache",
            "title": "キー/バリューキャッシュ",
            "text": "<p>因果マスクを使う</p><pre>def f(): pass</pre>",
        },
        {"location": "mha.html#cache", "title": "Cache", "text": "<p>a cache</p>"},
    ]
    glossary = ["キー/バリュー", "キャッシュ"]
    cutter = Cutter("ja", dictionary("ja", glossary, ["キー/バリューキャッシュ"]))
    settings = {"separator": search_words.SEPARATOR, "lang": ["en"]}
    (doc,) = json.loads(i18n_search.language_index(entries, JA, settings, cutter))[
        "docs"
    ]
    assert doc["location"] == "mha.html#cache"
    joined = JOINER.join(["", "因果マスク", "を", "使", "う", ""])
    assert doc["text"] == f"<p>{joined}</p> "
    assert doc["title"] == f"{JOINER}キー{JOINER}/{JOINER}バリューキャッシュ{JOINER}"
    hidden = doc["hidden"].split()
    assert hidden[:3] == ["def", "f():", "pass"]  # the code, not shown
    assert {"因果", "マスク", "バリュー", "キャッシュ"} <= set(hidden[3:])


def test_cut_languages_search_without_the_browsers_segmenter():
    settings = {"lang": ["ja"], "separator": "[\\s]+", "pipeline": ["stemmer"]}

    class Theme:  # the theme's language file, as search_settings reads it
        @staticmethod
        def get_template(name):
            words = {
                "search.config.lang": "ja",
                "search.config.separator": settings["separator"],
                "search.config.pipeline": "trimmer, stemmer",
            }
            return type("T", (), {"module": type("M", (), {"t": words.get})})

    ja = i18n_search.search_settings(Theme, "ja")
    assert ja == {
        "lang": ["en"],
        "separator": search_words.SEPARATOR,
        "pipeline": [],
    }
    assert i18n_search.search_settings(Theme, "fr")["lang"] == ["ja"]


# --- the worker's cut of a query ------------------------------------------------

HARNESS = """
var URLSearchParams = function (query) { this.query = query; };
URLSearchParams.prototype.get = function (name) {
  var found = new RegExp("[?&]" + name + "=([^&]*)").exec(this.query);
  return found ? decodeURIComponent(found[1]) : null;
};
var received = [];
var listener = null;
var self = {
  location: {search: "?worker=search.1234.min.js"},
  addEventListener: function (type, fn) { listener = fn; },
};
var importScripts = function (name) {
  // The theme's worker: it listens, and records what it is sent.
  self.addEventListener("message", function (event) { received.push(event.data); });
};
"""


@pytest.fixture(scope="module")
def worker():
    from py_mini_racer import MiniRacer

    context = MiniRacer()
    context.eval(HARNESS)
    context.eval(WORKER.read_text(encoding="utf-8"))
    # The index's words in those scripts (as the build joins them).
    index = [
        "学習率",
        "学習",
        "学習済み",
        "モデル",
        "因果",
        "マスク",
        "キー",
        "バリュー",
    ]
    docs = [
        {"title": "学習率", "text": "<p>" + JOINER.join(index) + "</p>"},
        {"title": "x", "text": "softmax", "hidden": "キャッシュ 词元"},
    ]
    setup = {
        "type": 0,
        "data": {
            "config": {
                "separator": search_words.SEPARATOR,
                "fields": {"title": {}, "text": {}, "hidden": {}},
            },
            "docs": docs,
        },
    }
    context.eval(f"listener({{data: {json.dumps(setup)}}})")

    def query(text: str) -> str:
        message = json.dumps({"type": 2, "data": text})
        context.eval(f"listener({{data: {message}}})")
        return json.loads(context.eval("JSON.stringify(received[received.length-1])"))[
            "data"
        ]

    return query


def test_a_query_that_is_one_word_of_the_index_stays_one_word(worker):
    # Han characters escaped: the theme's worker would re-cut 学習率 as 学習.
    assert worker("学習率") == "\\学\\習\\率"
    assert worker("マスク") == "マスク"


def test_a_query_is_cut_into_the_indexs_words_each_required(worker):
    assert worker("因果マスク") == "+\\因\\果* +マスク*"
    assert worker("キー/バリューキャッシュ") == "+キー* +バリュー* +キャッシュ*"
    assert worker("学習率モデル") == "+\\学\\習\\率* +モデル*"


def test_a_query_still_being_typed_keeps_its_last_piece_whole(worker):
    assert worker("学習済") == "\\学\\習\\済"  # the start of 学習済み's tokens
    assert worker("学習率キャ") == "+\\学\\習\\率* +キャ*"


def test_other_words_and_query_syntax_are_left_as_typed(worker):
    assert worker("softmax attention") == "softmax attention"
    assert worker("title:学習率") == "title:学習率"
    assert worker("+学習率 -softmax") == "+学習率 -softmax"
    assert worker("学習率 softmax") == "\\学\\習\\率 softmax"


def test_the_worker_loads_only_a_file_beside_it():
    from py_mini_racer import MiniRacer

    context = MiniRacer()
    context.eval(HARNESS.replace("search.1234.min.js", "https://elsewhere/x.js"))
    with pytest.raises(Exception, match="worker=https://elsewhere/x.js"):
        context.eval(WORKER.read_text(encoding="utf-8"))
