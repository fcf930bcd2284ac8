"""How fast chapter 5's model writes in the page, against PyTorch's sampling.

    python bench/web_model.py [--tokens 500] [--repeats 5]

Serves a folder with the page's scripts (`docs/assets/js/model-loader.js`,
`model.js`) and the weights `trainkit/web_model.py` writes, opens it in
headless Chromium, and times `literateModel.generate("ROMEO:", tokens, ...)`
against `generate.generate` with the key/value cache on one thread, the path
and settings of `python train.py sample` (temperature 0.8, top-k 40), on
the same prompt, in turns (`bench.timing.times_each`), so load on a shared
machine hits both alike. Prints characters per second and the ratio, for
those settings and for greedy (top-k 1), whose text is also compared.

Then the measurement behind the weights' float32: the weights rounded to
float16 and back, against the float32 model, in PyTorch: how many of 200
greedy characters stay the same, and the largest change of an attention
weight over windows of the validation text. And the bytes the explorer
loads when opened.
"""

from __future__ import annotations

import argparse
import functools
import http.server
import os
import shutil
import sys
import tempfile
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[0] = str(ROOT)
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # before PyTorch loads

import torch  # noqa: E402

from bench.timing import format_table, times_each  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]  # fmt: skip
SCRIPTS = ("model-loader.js", "model.js", "model-ui.js")
PROMPT = "ROMEO:"


def page_folder(out: Path) -> Path:
    """A page with the loader, its scripts and the model's files, in `out`."""
    from trainkit import web_model

    (out / "assets" / "js").mkdir(parents=True)
    for name in SCRIPTS:
        shutil.copy(ROOT / "docs" / "assets" / "js" / name, out / "assets" / "js")
    web_model.write(*web_model.export(ROOT / web_model.CHECKPOINT),
                    out / web_model.SITE_FOLDER)  # fmt: skip
    (out / "index.html").write_text(
        '<!doctype html><meta charset="utf-8"><title>bench</title>'
        '<script src="assets/js/model-loader.js"></script>\n',
        encoding="utf-8",
    )
    return out


def serve(folder: Path) -> tuple[http.server.ThreadingHTTPServer, str]:
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args) -> None:
            pass

    handler = functools.partial(Quiet, directory=folder)
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd, f"http://127.0.0.1:{httpd.server_port}/"


def speed_table(page, tokens: int, repeats: int) -> str:
    from generate import MODEL, generate
    from train import load_model

    torch.set_num_threads(1)  # as `python train.py sample`
    model, vocab = load_model(MODEL, torch.device("cpu"))
    prompt = vocab.encode(PROMPT)
    rows, texts = [], {}
    for name, temperature, top_k in (("T 0.8, top-k 40", 0.8, 40), ("greedy", 1.0, 1)):

        def python(temperature=temperature, top_k=top_k, name=name):
            rng = torch.Generator().manual_seed(0)
            ids = generate(model, prompt, tokens, temperature=temperature,
                           top_k=top_k, rng=rng)  # fmt: skip
            texts[name, "python"] = vocab.decode(list(ids))

        def browser(temperature=temperature, top_k=top_k, name=name):
            options = {"temperature": temperature, "topK": top_k, "seed": 0}
            texts[name, "page"] = page.evaluate(
                "([p, n, o]) => literateModel.generate(p, n, o)",
                [PROMPT, tokens, options],
            )

        times = times_each({"python": python, "page": browser}, repeats=repeats)
        median = {k: sorted(v)[len(v) // 2] for k, v in times.items()}
        same = texts[name, "python"] == texts[name, "page"]
        rows.append([
            name, f"{tokens / median['python']:.0f}", f"{tokens / median['page']:.0f}",
            f"{median['python'] / median['page']:.2f}x",
            "yes" if same else "no (different random numbers)",
        ])  # fmt: skip
    headers = ["settings", "PyTorch chars/s", "page chars/s", "page / PyTorch",
               "same text"]  # fmt: skip
    return format_table(headers, rows)


def float16_table(windows: int = 40) -> str:
    import generate_report as report
    from generate import MODEL, attention_maps, generate
    from train import load_model

    model, vocab = load_model(MODEL, torch.device("cpu"))
    rounded, _ = load_model(MODEL, torch.device("cpu"))
    with torch.no_grad():
        for p in rounded.parameters():
            p.copy_(p.half().float())
    prompt = vocab.encode(PROMPT)
    a = list(generate(model, prompt, 200, top_k=1))
    b = list(generate(rounded, prompt, 200, top_k=1))
    same = next((i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y), 200)
    x, _ = report.validation_windows(vocab, 0.1, windows, model.context)  # [W, M]
    rows = [["greedy characters equal to float32's (of 200)", 200, same]]
    for n in (64, model.context):
        worst = max(
            (attention_maps(model, w[:n]) - attention_maps(rounded, w[:n])).abs().max()
            for w in x
        ).item()
        rows.append([f"largest attention change, {windows} windows of {n}", 0,
                     f"{worst:.2e}"])  # fmt: skip
    return format_table(["weights rounded to float16", "float32", "float16"], rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tokens", type=int, default=500, help="characters (500)")
    parser.add_argument("--repeats", type=int, default=5, help="rounds (5)")
    args = parser.parse_args()
    if args.tokens < 1 or args.repeats < 1:
        parser.error("--tokens and --repeats must be >= 1")
    if not Path(CHROMIUM).exists():
        sys.exit(f"bench/web_model.py: {CHROMIUM} is missing")
    from playwright.sync_api import sync_playwright

    print(f"{os.cpu_count()} cores, load average at start {os.getloadavg()[0]:.2f}")
    with tempfile.TemporaryDirectory() as tmp:
        folder = page_folder(Path(tmp))
        httpd, base = serve(folder)
        with sync_playwright() as playwright:
            chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            page = chromium.new_page()
            page.goto(base)
            page.evaluate("literateModel.load()")
            print(f"\n{args.tokens} characters after {PROMPT!r}, median of "
                  f"{args.repeats} rounds, Chromium {chromium.version}\n")  # fmt: skip
            print(speed_table(page, args.tokens, args.repeats))
            chromium.close()
        httpd.shutdown()
        sizes = [
            [path.relative_to(folder).as_posix(), f"{path.stat().st_size:,}"]
            for path in sorted(folder.rglob("*"))
            if path.is_file() and path.name != "index.html"
        ]
    print("\n" + format_table(["file (model.js: for file:// only)", "bytes"], sizes))
    print("\n" + float16_table())


if __name__ == "__main__":
    main()
