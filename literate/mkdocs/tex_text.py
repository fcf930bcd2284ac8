"""A formula's TeX as plain text that a reader can read in a search result.

The search index shows a few lines of each matching section. A typeset
formula cannot be shown there (the result list is plain HTML without KaTeX),
and its TeX (`S = Q K^\\top / \\sqrt{d_k}`) is not what the page shows. So
the text the result shows writes the formula with Unicode (`S = Q Kᵀ / √d_k`),
and the words of its TeX (`sqrt`, `d_k`) are indexed apart, unseen, so that
a reader who types them still finds it.

Only what a linear line of text can say is kept: fractions become `a/b`,
roots `√x`, Greek letters and operators their characters, font and spacing
commands disappear. A command it does not know keeps its name.
"""

from __future__ import annotations

import re

SYMBOLS = {
    # Greek letters
    **{
        name: chr(code)
        for name, code in (
            ("alpha", 0x3B1), ("beta", 0x3B2), ("gamma", 0x3B3), ("delta", 0x3B4),
            ("epsilon", 0x3B5), ("varepsilon", 0x3B5), ("zeta", 0x3B6),
            ("eta", 0x3B7), ("theta", 0x3B8), ("iota", 0x3B9), ("kappa", 0x3BA),
            ("lambda", 0x3BB), ("mu", 0x3BC), ("nu", 0x3BD), ("xi", 0x3BE),
            ("pi", 0x3C0), ("rho", 0x3C1), ("sigma", 0x3C3), ("tau", 0x3C4),
            ("phi", 0x3C6), ("varphi", 0x3C6), ("chi", 0x3C7), ("psi", 0x3C8),
            ("omega", 0x3C9), ("Gamma", 0x393), ("Delta", 0x394),
            ("Theta", 0x398), ("Lambda", 0x39B), ("Pi", 0x3A0), ("Sigma", 0x3A3),
            ("Phi", 0x3A6), ("Psi", 0x3A8), ("Omega", 0x3A9),
        )
    },  # fmt: skip
    "ell": "ℓ", "infty": "∞", "partial": "∂", "nabla": "∇",
    "sum": " Σ", "prod": " Π", "int": " ∫", "sqrt": "√",
    "cdot": "·", "times": "×", "div": "÷", "pm": "±", "mp": "∓",
    "le": "≤", "leq": "≤", "ge": "≥", "geq": "≥", "ne": "≠", "neq": "≠",
    "approx": "≈", "sim": "∼", "equiv": "≡", "propto": "∝",
    "in": "∈", "notin": "∉", "subset": "⊂", "subseteq": "⊆",
    "to": "→", "rightarrow": "→", "leftarrow": "←", "Rightarrow": "⇒",
    "mapsto": "↦", "gets": "←",
    "mid": "|", "vert": "|", "lvert": "|", "rvert": "|",
    "Vert": "‖", "lVert": "‖", "rVert": "‖",
    "langle": "⟨", "rangle": "⟩", "lfloor": "⌊", "rfloor": "⌋",
    "lceil": "⌈", "rceil": "⌉",
    "ldots": "…", "dots": "…", "cdots": "⋯", "vdots": "⋮",
    "odot": "⊙", "otimes": "⊗", "oplus": "⊕", "circ": "∘",
    "top": "ᵀ", "intercal": "ᵀ", "prime": "′", "forall": "∀", "exists": "∃",
    "{": "{", "}": "}", "%": "%", "$": "$", "&": "&", "#": "#", "_": "_",
}  # fmt: skip
# Commands that only change a font or a size, or add space: their argument
# (if any) stays, the command goes.
QUIET = {
    "left", "right", "big", "Big", "bigg", "Bigg", "bigl", "bigr", "Bigl",
    "Bigr", "displaystyle", "textstyle", "limits", "nolimits",
}  # fmt: skip
FONTS = {
    "mathrm", "mathit", "mathbf", "mathsf", "mathtt", "mathcal", "mathbb",
    "boldsymbol", "text", "textrm", "textit", "textbf", "operatorname",
}  # fmt: skip
SPACES = {",": " ", ";": " ", ":": " ", "!": "", " ": " ", "quad": " ", "qquad": " "}
# Prefix operators written against their operand: ∂L, √x, ∇f.
PREFIX = {"partial", "nabla"}
ENVIRONMENTS = {"begin", "end"}  # \begin{aligned}: the name goes too

_TOKEN = re.compile(r"\\([A-Za-z]+|.)|([{}^_])|([^\\{}^_]+)", re.S)
# What needs no parentheses: a fraction's `d_k`, `∂L`; a script's `kv`, `Q`.
_SIMPLE = re.compile(r"[\w.′ᵀ∂√]+")
_SIMPLE_SCRIPT = re.compile(r"[^\W_]+")


def tex_text(tex: str) -> str:
    """`tex` written as one line of plain text (see the module's docstring)."""
    tokens = _TOKEN.findall(tex)
    text, _ = _group(tokens, 0, closing=False)
    return re.sub(r"\s+", " ", text).strip()


def tex_words(tex: str) -> str:
    """The words of `tex` a reader may type (`sqrt d_k`), space-separated:
    its symbols and command names, without braces, fonts or environments."""
    unseen = "|".join(sorted(FONTS | QUIET | {"frac", "tfrac", "dfrac"}))
    words = re.sub(rf"\\(?:begin|end)\{{[^}}]*\}}|\\(?:{unseen})\b", " ", tex)
    return " ".join(re.sub(r"\\[,;:! ]|[\\{}$&]", " ", words).split())


def _group(tokens: list, at: int, closing: bool) -> tuple[str, int]:
    """The text of tokens from `at` up to the `}` that closes this group (if
    `closing`) or the end; and the index after it."""
    out: list[str] = []
    while at < len(tokens):
        command, mark, plain = tokens[at]
        at += 1
        if mark == "}":
            if closing:
                return "".join(out), at
            continue  # a stray closing brace: dropped
        if mark == "{":
            inner, at = _group(tokens, at, closing=True)
            out.append(inner)
        elif mark:  # ^ or _
            argument, at = _argument(tokens, at)
            out.append(_script(mark, argument))
        elif command:
            piece, at = _command(command, tokens, at)
            out.append(piece)
        else:
            out.append(plain.replace("&", ""))  # alignment marks
    return "".join(out), at


def _argument(tokens: list, at: int) -> tuple[str, int]:
    """A command's or a script's argument: a braced group, one command, or
    the first character of the plain text that follows (the rest stays)."""
    while at < len(tokens) and tokens[at][2].isspace():
        at += 1
    if at >= len(tokens):
        return "", at
    command, mark, plain = tokens[at]
    if mark == "{":
        return _group(tokens, at + 1, closing=True)
    if command:
        return _command(command, tokens, at + 1)
    if mark:
        return "", at + 1
    plain = plain.lstrip()
    tokens[at] = ("", "", plain[1:])  # the argument is its first character
    return plain[0], at


def _command(name: str, tokens: list, at: int) -> tuple[str, int]:
    if name in SPACES:
        return SPACES[name], at
    if name == "\\":  # a line break in an aligned or matrix environment
        return "; ", at
    if name in QUIET:
        return "", at
    if name in ENVIRONMENTS:
        _, at = _argument(tokens, at)
        return " ", at
    if name in PREFIX:
        while at < len(tokens) and tokens[at][2].isspace():
            at += 1
        if at < len(tokens) and tokens[at][2]:
            tokens[at] = ("", "", tokens[at][2].lstrip())
        return SYMBOLS[name], at
    if name in FONTS:
        return _argument(tokens, at)
    if name in ("frac", "tfrac", "dfrac"):
        top, at = _argument(tokens, at)
        bottom, at = _argument(tokens, at)
        return f"{_wrapped(top)}/{_wrapped(bottom)}", at
    if name == "sqrt":
        inside, at = _argument(tokens, at)
        return f"√{_wrapped(inside)}", at
    if name in SYMBOLS:
        return SYMBOLS[name], at
    return name, at  # \log, \max, \exp, ... and any command it does not know


def _script(mark: str, argument: str) -> str:
    """A sub- or superscript as text: `^\\top` is ᵀ, one-word scripts are
    written as typed (`d_k`, `W^Q`), longer ones in parentheses."""
    argument = argument.strip()
    if mark == "^" and argument == "ᵀ":
        return "ᵀ"
    return mark + _wrapped(argument, _SIMPLE_SCRIPT)


def _wrapped(text: str, simple: re.Pattern[str] = _SIMPLE) -> str:
    text = text.strip()
    return text if simple.fullmatch(text) or text in "ᵀ′" else f"({text})"
