"""The trained model's weights for the browser, where `generate.html` runs them.

The page's script (`docs/assets/js/model.js`) runs chapter 4's model from
three files that this module writes into the built site, under
`assets/model/`:

* `model.json`, the header: `format` and `version`; the sizes the forward
  pass needs (`n_layer`, `n_head`, `d_model`, `context`, `positions`,
  LayerNorm `eps`, GELU `approximate`); `vocab`, the characters as one
  string (id `i` is its `i`-th character); `checkpoint_sha256`; and
  `tensors`, each weight in file order with its state-dict name, `shape`,
  `offset` and `length`, counted in numbers (4 bytes each) from the start
  of `model.bin`.
* `model.bin`: those weights as little-endian float32, one after another
  with no gaps, each row-major (PyTorch's layout). `nn.Linear` keeps its
  weight as `[out, in]`, so an output is a dot product along one row. The
  output layer is tied to `token.weight` (`head.weight` is the same tensor)
  and is not stored twice.
* `model.js`: the same header and bytes (as base64) in a script that calls
  `literateModelFiles(header, base64)`, for a page opened from disk
  (`file://`), where the browser refuses `fetch`.

float32, not float16: `bench/web_model.py` measures both. Rounded to
float16 the weights still write the same greedy text, but the attention
weights move by about 1e-3 on windows of the validation text, as much as
the tolerance the page's tests hold the browser to.

The files are made when the site is built, by the mkdocs hook at the end of
this module (`hooks:` in mkdocs.yml), and cached in `.cache/web_model/`
under the checkpoint's SHA-256: `make docs`, `make serve` and a clean clone
all get them, and no generated binary is committed.

    python -m trainkit.web_model [CHECKPOINT] [OUT_DIR]   # write them by hand
"""

from __future__ import annotations

import base64
import hashlib
import json
import shutil
import sys
import tempfile
from pathlib import Path

FORMAT, VERSION = "literate-char-transformer", 1
CHECKPOINT = Path("runs/cpu/model.pt")  # the model chapter 4 trained
FILES = ("model.json", "model.bin", "model.js")
SITE_FOLDER = "assets/model"  # where the files go in the built site
TIED = "head.weight"  # the same tensor as token.weight


def sha256(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def export(checkpoint: Path = CHECKPOINT) -> tuple[dict, bytes]:
    """The header and the float32 weights of the model file `checkpoint`."""
    import numpy as np
    import torch

    from train import load_model

    model, vocab = load_model(Path(checkpoint), torch.device("cpu"))
    block = model.blocks[0]
    tensors, chunks, offset = [], [], 0
    for name, tensor in model.state_dict().items():
        if name == TIED:
            continue
        data = tensor.detach().to(torch.float32).contiguous().numpy()
        tensors.append(
            {"name": name, "shape": list(data.shape), "offset": offset,
             "length": data.size}
        )  # fmt: skip
        chunks.append(data.astype("<f4").tobytes())
        offset += data.size
    header = {
        "format": FORMAT,
        "version": VERSION,
        "dtype": "float32",
        "n_layer": len(model.blocks),
        "n_head": block.attn.heads,
        "d_model": block.attn.d_model,
        "context": model.context,
        "positions": bool(model.positions),
        "eps": model.ln_f.eps,
        "approximate": block.ffn[1].approximate,  # GELU: "none" is exact erf
        "tied": {TIED: "token.weight"},
        "vocab": "".join(vocab.chars),
        "checkpoint_sha256": sha256(checkpoint),
        "tensors": tensors,
    }
    weights = b"".join(chunks)
    assert len(weights) == 4 * offset and np.dtype("<f4").itemsize == 4
    return header, weights


def write(header: dict, weights: bytes, folder: Path) -> None:
    """The three files of the module docstring, in `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    text = json.dumps(header, ensure_ascii=False, sort_keys=True)
    (folder / "model.json").write_text(text + "\n", encoding="utf-8")
    (folder / "model.bin").write_bytes(weights)
    packed = base64.b64encode(weights).decode("ascii")
    script = f'literateModelFiles({text}, "{packed}");\n'
    (folder / "model.js").write_text(script, encoding="utf-8")


def cached(checkpoint: Path, cache: Path) -> Path:
    """The folder of `cache` holding the files for `checkpoint`, made once."""
    folder = cache / f"v{VERSION}-{sha256(checkpoint)[:16]}"
    if not all((folder / name).is_file() for name in FILES):
        cache.mkdir(parents=True, exist_ok=True)
        # Written aside, then renamed: two builds at once never read half.
        partial = Path(tempfile.mkdtemp(dir=cache, prefix=".partial-"))
        write(*export(checkpoint), partial)
        shutil.rmtree(folder, ignore_errors=True)
        try:
            partial.rename(folder)
        except OSError:  # another build renamed its copy first
            shutil.rmtree(partial, ignore_errors=True)
    return folder


# ## The mkdocs hook
#
# After each build (mkdocs-static-i18n builds once per language, into the
# same site folder), copy the cached files into the site, unless the
# checkpoint's files are already there.


def on_post_build(*, config) -> None:
    root = Path(config.config_file_path).resolve().parent
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))  # `train` and `trainkit`, for `export`
    checkpoint = root / CHECKPOINT
    if not checkpoint.is_file():
        from mkdocs.exceptions import PluginError

        raise PluginError(f"{CHECKPOINT}: no model file there for {SITE_FOLDER}/")
    source = cached(checkpoint, root / ".cache" / "web_model")
    target = Path(config.site_dir) / SITE_FOLDER
    if _same(source, target):
        return
    target.mkdir(parents=True, exist_ok=True)
    for name in FILES:
        (target / name).write_bytes((source / name).read_bytes())


def _same(source: Path, target: Path) -> bool:
    def size(path: Path) -> int:
        return path.stat().st_size if path.is_file() else -1

    header = "model.json"
    return all(size(target / n) == size(source / n) for n in FILES) and (
        (target / header).read_bytes() == (source / header).read_bytes()
    )


if __name__ == "__main__":
    args = sys.argv[1:]
    path = Path(args[0]) if args else CHECKPOINT
    out = Path(args[1]) if len(args) > 1 else Path("site") / SITE_FOLDER
    write(*export(path), out)
    print(f"wrote {', '.join(FILES)} to {out}")
