"""A command line generated from a frozen dataclass and its named presets.

Every field becomes an option, `--n_layer 6` (or `--n-layer 6`), parsed with
the field's type; `bool` fields become `--compile` / `--no-compile`. The help
of each option is the comment at the end of the field's line in the source, so
the comment a reader sees in the code is the text `--help` prints, followed by
the default and each preset's value where it differs.
"""

from __future__ import annotations

import argparse
import ast
import codecs
import dataclasses
import difflib
import inspect
import io
import math
import os
import sys
import textwrap
import tokenize
from collections.abc import Mapping, Sequence
from typing import Any, get_type_hints

from trainkit.config import SEEDS, SEEDS_TEXT, shown


def field_comments(cls: type) -> dict[str, str]:
    """The trailing `# comment` of each field of dataclass `cls`, by name."""
    try:
        source = textwrap.dedent(inspect.getsource(cls))
    except (OSError, TypeError):
        return {}
    comments = {
        tok.start[0]: tok.string.lstrip("#").strip()
        for tok in tokenize.generate_tokens(io.StringIO(source).readline)
        if tok.type == tokenize.COMMENT
    }
    body = ast.parse(source).body[0].body
    return {
        node.target.id: comments.get(node.end_lineno, "")
        for node in body
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)
    }


class _Parser(argparse.ArgumentParser):
    """An argument parser that suggests the nearest option for a misspelt one."""

    def parse_args(self, args=None, namespace=None):  # noqa: D102
        parsed, unknown = self.parse_known_args(args, namespace)
        if unknown:
            options = [s for a in self._actions for s in a.option_strings]
            messages = []
            for word in unknown:
                name = word.split("=", 1)[0]
                close = difflib.get_close_matches(name, options, n=1)
                hint = f" (did you mean {close[0]}?)" if close else ""
                messages.append(f"{word}{hint}")
            self.error("unknown argument: " + ", ".join(messages))
        return parsed

    def error(self, message: str):
        """One line, without the usage (which lists every option)."""
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def _value_type(hint: Any):
    if hint not in (int, float, str):
        raise TypeError(f"cli: unsupported field type {hint!r}")
    return hint


def config_parser(
    cls: type,
    presets: Mapping[str, Any],
    default_preset: str,
    *,
    prog: str,
    description: str,
) -> argparse.ArgumentParser:
    """A parser with `--preset` and one option per field of `cls`."""
    parser = _Parser(
        prog=prog,
        description=description,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--preset",
        choices=sorted(presets),
        default=default_preset,
        help=f"named configuration to start from (default: {default_preset})",
    )
    hints = get_type_hints(cls)
    helps = field_comments(cls)
    base = presets[default_preset]
    for f in dataclasses.fields(cls):
        default = getattr(base, f.name)
        others = [
            f"{name}: {getattr(p, f.name)!r}"
            for name, p in sorted(presets.items())
            if getattr(p, f.name) != default
        ]
        text = f"{helps.get(f.name, '')} (default: {default!r}"
        text += f"; {', '.join(others)})" if others else ")"
        names = [f"--{f.name}"]
        if "_" in f.name:
            names.append(f"--{f.name.replace('_', '-')}")
        if hints[f.name] is bool:
            action = argparse.BooleanOptionalAction
            parser.add_argument(*names, dest=f.name, action=action, help=text)
        else:
            value_type = _value_type(hints[f.name])
            metavar = value_type.__name__.upper()
            parser.add_argument(
                *names, dest=f.name, type=value_type, metavar=metavar, help=text
            )
    parser.set_defaults(**{f.name: None for f in dataclasses.fields(cls)})
    return parser


def parse_config(
    argv: Sequence[str] | None,
    cls: type,
    presets: Mapping[str, Any],
    default_preset: str,
    *,
    prog: str,
    description: str,
):
    """The preset named by `--preset`, with the fields given on the line replaced."""
    parser = config_parser(
        cls, presets, default_preset, prog=prog, description=description
    )
    args = vars(parser.parse_args(sys.argv[1:] if argv is None else list(argv)))
    preset = presets[args.pop("preset")]
    changes = {k: v for k, v in args.items() if v is not None}
    try:
        return dataclasses.replace(preset, **changes)
    except ValueError as error:
        parser.exit(2, f"{prog}: error: {error}\n")


def sample_parser(
    prog: str = "train.py sample", checkpoint: str = "the newest out/*/ckpt.pt"
) -> argparse.ArgumentParser:
    """The options of `python train.py sample` (or of `prog`, whose default
    `--checkpoint` is described by `checkpoint`)."""
    parser = _Parser(
        prog=prog,
        description="Continue a prompt with a trained model, printing each "
        "character as it is drawn.",
    )
    add = parser.add_argument
    add("--checkpoint", help=f"checkpoint file (default: {checkpoint})")
    add("--prompt", default="\n", help="text to continue (default: a newline)")
    add("--tokens", type=int, default=500, help="characters to write (default: 500)")
    add("--temperature", type=float, default=0.8, help="> 0; lower is safer (0.8)")
    add("--top-k", type=int, default=40, help="draw from the k likeliest; 0 = all")
    add("--seed", type=int, default=0, help="seeds the draws, 0 to 2**64 - 1 (0)")
    add("--device", default="cpu", choices=("cpu", "cuda"), help="(default: cpu)")
    return parser


def parse_sample(argv: Sequence[str], **names: str) -> argparse.Namespace:
    parser = sample_parser(**names)
    args = parser.parse_args(list(argv))
    # `nan` and `inf` parse as floats: `nan` fails every comparison, and
    # `inf` would flatten every distribution to uniform noise.
    if not (math.isfinite(args.temperature) and args.temperature > 0):
        parser.error(
            f"--temperature must be a finite number > 0, got {args.temperature}"
        )
    if args.seed not in SEEDS:
        parser.error(f"--seed must be {SEEDS_TEXT}, got {shown(args.seed)}")
    if not args.prompt:
        parser.error("--prompt must not be empty")
    args.prompt = _argument_text(args.prompt, parser)
    if args.tokens < 0 or args.top_k < 0:
        parser.error("--tokens and --top-k must be >= 0")
    if args.device == "cuda":
        import torch

        if not torch.cuda.is_available():
            parser.error("--device cuda: no CUDA device is available")
    return args


def _argument_text(text: str, parser: argparse.ArgumentParser) -> str:
    """`text` as the characters typed, also where the locale is not UTF-8.

    Under the C locale, Python decodes the command line as ASCII and keeps
    each other byte as a lone surrogate; those bytes are decoded as UTF-8.
    """
    if not any("\udc80" <= c <= "\udcff" for c in text):
        return text
    try:
        return os.fsencode(text).decode("utf-8")
    except UnicodeError:
        parser.error("--prompt must be UTF-8 text")


def utf8_output() -> None:
    """Make printing the model's characters work whatever the locale.

    Under the C locale (`LC_ALL=C`, Python's UTF-8 mode off) standard output
    is ASCII, and printing a drawn `—` raised `UnicodeEncodeError`; it becomes
    UTF-8, as Python's UTF-8 mode would make it. Any other encoding is kept,
    and what it cannot write (a file name's undecodable bytes too) is written
    as `\\u` escapes instead of failing.
    """
    for stream in (sys.stdout, sys.stderr):
        if type(stream) is not io.TextIOWrapper:
            continue  # captured (pytest, a notebook): not the terminal's
        if codecs.lookup(stream.encoding).name == "ascii":
            stream.reconfigure(encoding="utf-8", errors=stream.errors)
        if stream.errors == "strict":
            stream.reconfigure(errors="backslashreplace")


TRAIN_USAGE = """Train a character-level transformer on Shakespeare's plays, or on
--data FILE. Every field of the configuration is an option; --preset picks the
values the others start from. To sample: python train.py sample --help

--resume continues the run in --out from its checkpoint. A checkpoint already
at --steps leaves nothing to do: the run says so and exits with status 0; one
past --steps is an error (status 1). Neither writes anything."""


def sample(
    argv: Sequence[str], load_model, prog: str = "train.py sample", default=None
) -> None:
    """`python train.py sample`: continue `--prompt` with the model that
    `load_model(path, device)` reads, printing each character as it is drawn,
    on one thread (decoding is a chain of tiny operations). `default` is the
    checkpoint read without `--checkpoint` (None: the newest under `out/`);
    errors name `prog`."""
    from pathlib import Path

    import torch

    from generate import generate  # the sampler of the next chapter
    from trainkit.checkpoints import newest_checkpoint

    names = {"prog": prog} if default is None else {"prog": prog, "checkpoint": default}
    args = parse_sample(argv, **names)
    if args.checkpoint:
        path = Path(args.checkpoint)
    else:
        path = Path(default) if default else newest_checkpoint(Path("out"))
    torch.set_num_threads(1)
    model, vocab = load_model(path, torch.device(args.device))
    prompt = vocab.encode(args.prompt, "--prompt")
    rng = torch.Generator().manual_seed(args.seed)
    print(args.prompt, end="", flush=True)
    for token in generate(
        model,
        prompt,
        args.tokens,
        temperature=args.temperature,
        top_k=args.top_k or None,
        rng=rng,
    ):
        print(vocab.chars[token], end="", flush=True)
    print()
