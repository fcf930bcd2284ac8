"""What the renderer knows of each language, in one place.

Its `lang` attribute (one that picks the right glyphs), the fonts its
figures are drawn with, and the few words the renderer writes itself (the
permalink's title, the original's control, the 404 page, the notebook's
first cells).
"""

from __future__ import annotations

LABELS: dict[str, dict[str, str]] = {
    "en": {
        "source": "Source file",
        "notebook": "Jupyter notebook",
        "permalink": "Link to this section",
        "original": "English original",
        "original_short": "English",
        "untranslated": "Not yet translated: the English original is shown.",
        "stale": "Translation out of date: the current English is shown.",
        "table": "Output table",
        "colon": ": ",
        "contents": "Sections",
        "breadcrumbs": "Where this page is",
        "home": "Home",
        "originals": "Show every English original",
        "status_headings": "language | page | translated | stale | failing checks",
        "share": " ({n} %)",
        "language_names": "",  # the codes stay: ja, zh
        "notebook_words": (
            "The words of the figures and tables in this page's language."
        ),
        "notebook_file": (
            "A notebook has no __file__: run as {name} would, from this folder."
        ),
        "rebuild_failed": (
            "Not rebuilt: a file this page is made from has an error. Until it is "
            "fixed and saved again, the last version that built (or the English) "
            "is shown."
        ),
        "not_found": "Page not found (404)",
        "not_found_text": "No page of this site has this address.",
    },
    "ja": {
        "source": "ソースファイル",
        "notebook": "Jupyter ノートブック",
        "permalink": "この節へのリンク",
        "original": "英語の原文",
        "original_short": "原文",
        "untranslated": "未翻訳です。英語の原文を表示しています。",
        "stale": "翻訳が古くなっています。現在の英語の原文を表示しています。",
        "table": "出力の表",
        "colon": "：",
        "contents": "この章の節",
        "breadcrumbs": "このページの位置",
        "home": "ホーム",
        "originals": "英語の原文をすべて表示",
        "status_headings": "言語 | ページ | 翻訳済み | 古くなった翻訳 | 検査エラー",
        "share": "（{n}%）",
        "language_names": "ja 日本語 | zh 中国語 | en 英語",
        "notebook_words": "図と表の言葉を、このページの言語にする。",
        "notebook_file": (
            "ノートブックには __file__ がない。"
            "このフォルダで {name} を実行したときと同じ値にする。"
        ),
        "rebuild_failed": (
            "再構築できませんでした。このページの元になるファイルにエラーがあります。"
            "直して保存し直すまで、最後に構築できた版（または英語の原文）を表示します。"
        ),
        "not_found": "ページが見つかりません（404）",
        "not_found_text": "このアドレスのページは、このサイトにはありません。",
    },
    "zh": {
        "source": "源文件",
        "notebook": "Jupyter 笔记本",
        "permalink": "本节的链接",
        "original": "英文原文",
        "original_short": "原文",
        "untranslated": "尚未翻译：显示的是英文原文。",
        "stale": "译文已过期：显示的是当前的英文原文。",
        "table": "输出表格",
        "colon": "：",
        "contents": "本章各节",
        "breadcrumbs": "本页所在位置",
        "home": "首页",
        "originals": "显示全部英文原文",
        "status_headings": "语言 | 页面 | 已翻译 | 过期译文 | 未通过检查",
        "share": "（{n}%）",
        "language_names": "ja 日语 | zh 中文 | en 英语",
        "notebook_words": "让图和表中的文字使用本页的语言。",
        "notebook_file": (
            "笔记本中没有 __file__，这里把它设成在本文件夹运行 {name} 时的值。"
        ),
        "rebuild_failed": (
            "未能重新构建：生成本页的某个文件有错误。在修正并重新保存之前，"
            "显示最后一次成功构建的版本（或英文原文）。"
        ),
        "not_found": "页面未找到（404）",
        "not_found_text": "本站没有这个地址的页面。",
    },
}


def label(lang: str, name: str) -> str:
    """The text of label `name` in `lang`, in English when `lang` has none."""
    return LABELS.get(lang, LABELS["en"]).get(name) or LABELS["en"][name]


# The `lang` attribute of a site language's pages: `zh` alone lets a browser
# draw Chinese with Japanese or Traditional forms.
HTML_LANG = {"zh": "zh-Hans"}

# The fonts of a language's figures: DejaVu Sans (matplotlib's, for Latin,
# Greek and math symbols), then one with the language's glyphs (Debian's
# fonts-noto-cjk). Languages not listed draw with DejaVu Sans alone.
FONTS = {
    "ja": ["DejaVu Sans", "Noto Sans CJK JP"],
    "zh": ["DejaVu Sans", "Noto Sans CJK SC"],
}


def html_lang(lang: str) -> str:
    """The `lang` attribute for a site language's pages."""
    return HTML_LANG.get(lang, lang)
