"""train.py: data, model, schedule, training, resume, DDP, sampling and CLI."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

import generate
import train
from trainkit import cli, session
from trainkit.checkpoints import load_checkpoint, save_checkpoint
from trainkit.cli import field_comments
from trainkit.corpus import cached_corpus, convert_play, encode_all, play_files
from trainkit.metrics import Metrics

ROOT = Path(__file__).resolve().parent.parent
MARKUP = set("*_#\\[]`")


@pytest.fixture(scope="module")
def corpus() -> str:
    return cached_corpus(ROOT / "data").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def small_text(corpus, tmp_path_factory) -> Path:
    """The first 200,000 characters of the corpus: fast to load and encode."""
    path = tmp_path_factory.mktemp("data") / "small.txt"
    path.write_text(corpus[:200_000], encoding="utf-8")
    return path


@pytest.fixture
def in_tmp(tmp_path, monkeypatch):
    """Run in a temporary folder, restoring torch's thread count afterwards."""
    monkeypatch.chdir(tmp_path)
    threads = torch.get_num_threads()
    yield tmp_path
    torch.set_num_threads(threads)


def records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def losses(path: Path) -> list[tuple]:
    """Every loss of a run, without the wall-clock times."""
    keys = ("step", "loss", "train", "val")
    return [tuple(r.get(k) for k in keys) for r in records(path)]


def refusal(argv: list[str]) -> str:
    """The message `train.main(argv)` exits with: what `python train.py`
    prints on standard error, with status 1, and nothing else (the one test
    in a process of its own, test_out_naming_a_file_is_refused_and_kept,
    checks that contract). One line, no traceback."""
    with pytest.raises(SystemExit) as exit_:
        train.main(argv)
    message = exit_.value.code
    assert isinstance(message, str), message  # a string: status 1
    assert message.startswith("train.py: error: ") and "\n" not in message
    assert "Traceback" not in message
    return message


def run_script(*args: str, cwd: Path, check: bool = True, **kw):
    result = subprocess.run(
        [sys.executable, str(ROOT / "train.py"), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        **kw,
    )
    if check and result.returncode != 0:
        raise AssertionError(f"train.py {args} failed:\n{result.stderr}")
    return result


# ----------------------------------------------------------------- the corpus


def test_play_files_fixed_order():
    files = play_files()
    names = [f"{f.parent.name}/{f.name}" for f in files]
    assert names[0].startswith("comedies/") and names[-1].startswith("tragedies/")
    assert names == sorted(names, key=lambda n: (n.split("/")[0], n))
    assert "tragedies/hamlet.md" in names


def test_hamlet_opens_in_tiny_shakespeare_shape():
    hamlet = next(f for f in play_files() if f.name == "hamlet.md")
    text = convert_play(hamlet.read_text(encoding="utf-8"))
    assert text.startswith(
        "BERNARDO:\nWho's there?\n\n"
        "FRANCISCO:\nNay, answer me: stand, and unfold yourself.\n\n"
        "BERNARDO:\nLong live the king!\n\n"
    )
    # A speech interrupted by a stage direction continues as one speech.
    assert "FRANCISCO:\nI think I hear them. Stand, ho! Who's there?\n\n" in text
    assert "Enter HORATIO" not in text and "SCENE" not in text


def test_conversion_drops_every_kind_of_markup():
    markdown = (
        "# A Play\n\n## ACT I\n\n### SCENE I. A heath. Two speakers\n\n"
        "enter later.\n\n_Enter FIRST and SECOND, with\nattendants_\n\n"
        "**FIRST**  \n_\\[Aside]_  \nSo foul \\-- and fair  \n"
        "a day.\n**SECOND**  \n[Within]_  \nWho's there?\n\n"
        "_Exit FIRST_\n\nI will stay.\n\n*Sound a horn.*\n\n"
        "1\\. A flourish.  \n2\\. Then, judges.\n"
    )
    assert convert_play(markdown) == (
        "FIRST:\nSo foul -- and fair\na day.\n\nSECOND:\nWho's there?\nI will stay.\n\n"
    )


def test_corpus_has_no_markup_and_only_speeches(corpus):
    assert not MARKUP & set(corpus)
    speeches = corpus.split("\n\n")
    assert speeches[-1] == "" and len(speeches) > 30_000
    for speech in speeches[:-1]:
        speaker, *lines = speech.split("\n")
        assert speaker.endswith(":") and len(speaker) > 1 and lines, speech


# ------------------------------------------------------------ text and batches


def test_vocab_round_trip_and_unknown_character():
    vocab = train.Vocab.of("to be, or not to be")
    ids = vocab.encode("be or not")
    assert vocab.decode(ids.tolist()) == "be or not"
    assert vocab.chars == "".join(sorted(set("to be, or not to be")))
    with pytest.raises(train.RunError, match=r"'Z' \(U\+005A\)"):
        vocab.encode("to bZ", "--prompt")


def test_fast_encoding_gives_the_dictionary_ids(corpus):
    # `train` encodes the corpus with `encode_all`; the page teaches
    # `Vocab.encode`. On a slice of the plays, and on an unknown character,
    # they agree.
    vocab = train.Vocab.of(corpus)
    text = corpus[:50_000] + corpus[-50_000:]
    fast = encode_all(text, vocab.chars)
    assert fast.dtype == torch.int64
    assert torch.equal(fast, vocab.encode(text))
    assert [vocab.stoi[c] for c in "ROMEO:"] == encode_all(
        "ROMEO:", vocab.chars
    ).tolist()
    for encode in (vocab.encode, lambda t: encode_all(t, vocab.chars)):
        with pytest.raises(train.RunError, match=r"'ж' \(U\+0436\)"):
            encode("a ж b")


def test_split_is_contiguous_and_checks_length():
    cfg = replace(train.PRESETS["tiny"], context=8, val_fraction=0.1)
    data = torch.arange(1000)
    tr, val = train.split(data, cfg, "t")
    assert torch.equal(torch.cat([tr, val]), data)
    assert len(val) == round(len(data) * cfg.val_fraction)
    with pytest.raises(train.RunError, match="needs at least") as error:
        train.split(torch.arange(cfg.context), cfg, "t")
    need = int(str(error.value).rsplit(" ", 1)[1])
    # The length it asks for is enough for a window in each part; one less is
    # not.
    tr, val = train.split(torch.arange(need), cfg, "t")
    assert min(len(tr), len(val)) >= cfg.context + 1
    with pytest.raises(train.RunError):
        train.split(torch.arange(need - 1), cfg, "t")


def test_batches_are_shifted_windows_and_split_across_processes():
    cfg = replace(train.PRESETS["tiny"], context=5, batch_size=4)
    data = torch.arange(100) * 3
    x, y = train.get_batch(data, cfg, torch.Generator().manual_seed(0), 0, 1)
    assert x.shape == (4, 5) and torch.equal(y[:, :-1], x[:, 1:])
    assert torch.equal(y[:, -1], x[:, -1] + 3)
    halves = [
        train.get_batch(data, cfg, torch.Generator().manual_seed(0), r, 2)[0]
        for r in (0, 1)
    ]
    assert torch.equal(torch.cat(halves), x)


# -------------------------------------------------------------- model, optim


def tiny_model(dtype=torch.float32, vocab: int = 11, **changes):
    cfg = replace(train.PRESETS["tiny"], **changes)
    torch.manual_seed(0)
    return train.CharTransformer(cfg, vocab).to(dtype).eval()


def test_model_is_causal_and_ties_output_to_embedding():
    model = tiny_model(torch.float64)
    ids = torch.randint(11, (2, 32))
    changed = ids.clone()
    changed[:, 20:] = (changed[:, 20:] + 1) % 11
    with torch.no_grad():
        a, b = model(ids), model(changed)
    assert a.shape == (2, 32, 11)
    assert torch.allclose(a[:, :20], b[:, :20]) and not torch.allclose(a, b)
    assert model.head.weight is model.token.weight


def test_cached_forward_equals_full_forward():
    model = tiny_model(torch.float64)
    ids = torch.randint(11, (1, 20))
    caches = model.new_caches(1)
    with torch.no_grad():
        full = model(ids)
        parts = [model(ids[:, :12], caches)] + [
            model(ids[:, i : i + 1], caches) for i in range(12, 20)
        ]
    torch.testing.assert_close(torch.cat(parts, dim=1), full)


def test_block_weights_equal_the_explicit_computation():
    # The heads figure's path: the block's output equals the fused path's, and
    # its weights are softmax(q k^T / sqrt(Dk)) under the causal mask,
    # computed here from the block's own projections.
    model = tiny_model(torch.float64)
    block = model.blocks[0]
    x = torch.randn(2, 9, 32, dtype=torch.float64)
    with torch.no_grad():
        out, weights = block(x, need_weights=True)
        torch.testing.assert_close(out, block(x))
        h = block.ln1(x)
        attn = block.attn
        q, k = attn.query(h), attn.key(h)  # [B, H, S, Dk]
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        causal = torch.ones(9, 9, dtype=torch.bool).tril()
        expected = scores.masked_fill(~causal, float("-inf")).softmax(-1)
    assert weights.shape == (2, 2, 9, 9)
    torch.testing.assert_close(weights, expected)
    maps = generate.attention_maps(model, torch.randint(11, (9,)))
    assert maps.shape == (2, 2, 9, 9)
    torch.testing.assert_close(maps.sum(-1), torch.ones(2, 2, 9, dtype=maps.dtype))


def test_learning_rate_matches_pytorch_schedulers():
    cfg = replace(train.PRESETS["tiny"], steps=50, warmup=10, lr=1e-2, min_lr=1e-3)
    param = torch.zeros(1, requires_grad=True)
    opt = torch.optim.SGD([param], lr=cfg.lr)
    warm = torch.optim.lr_scheduler.LinearLR(
        opt, start_factor=1 / cfg.warmup, total_iters=cfg.warmup - 1
    )
    cosine = torch.optim.lr_scheduler.CosineAnnealingLR(
        opt, T_max=cfg.steps - 1 - cfg.warmup, eta_min=cfg.min_lr
    )
    schedule = torch.optim.lr_scheduler.SequentialLR(
        opt, [warm, cosine], milestones=[cfg.warmup]
    )
    for step in range(cfg.steps):
        assert train.learning_rate(step, cfg) == pytest.approx(
            opt.param_groups[0]["lr"], rel=1e-9
        ), step
        opt.step()
        schedule.step()
    # The formula on the page: min_lr exactly at the last step, steps - 1.
    assert train.learning_rate(cfg.steps - 1, cfg) == cfg.min_lr
    assert train.learning_rate(0, cfg) == cfg.lr / cfg.warmup


def test_weight_decay_on_matrices_only():
    model = tiny_model()
    opt = train.make_optimizer(model, train.PRESETS["tiny"])
    decayed, plain = opt.param_groups
    assert decayed["weight_decay"] == train.PRESETS["tiny"].weight_decay
    assert plain["weight_decay"] == 0
    assert all(p.dim() == 2 for p in decayed["params"])
    assert all(p.dim() == 1 for p in plain["params"])
    n = sum(len(g["params"]) for g in opt.param_groups)
    assert n == len(list(model.parameters()))


# ------------------------------------------------------------------- sampling


def test_sampling_with_cache_equals_recomputing_the_window():
    # float64, so the two ways' rounding differences cannot tip a draw; three
    # times the context, so the window is re-encoded several times.
    model = tiny_model(torch.float64, vocab=11)
    prompt = torch.randint(11, (5,))

    def text(use_cache: bool) -> list[int]:
        rng = torch.Generator().manual_seed(3)
        return list(
            generate.generate(
                model, prompt, 3 * model.context, temperature=0.9, top_k=8,
                rng=rng, use_cache=use_cache,
            )
        )  # fmt: skip

    cached = text(True)
    assert cached == text(False)
    assert len(cached) == 3 * model.context and len(set(cached)) > 3


def test_top_k_draws_only_the_likeliest():
    logits = torch.tensor([0.0, 5.0, 4.0, -1.0, 3.0])
    rng = torch.Generator().manual_seed(0)
    drawn = {generate.next_token(logits, 1.0, 2, rng) for _ in range(200)}
    assert drawn == {1, 2}


# ------------------------------------------------------------------- training


def test_tiny_preset_trains_and_its_loss_falls(in_tmp):
    train.main(["--preset", "tiny", "--threads", "1", "--out", "run"])
    runs = records(in_tmp / "run" / "metrics.jsonl")
    evals = [r for r in runs if "val" in r]
    cfg = train.PRESETS["tiny"]
    assert [r["step"] for r in evals] == list(
        range(0, cfg.steps + 1, cfg.eval_interval)
    )
    vocab = load_checkpoint(in_tmp / "run" / "ckpt.pt")["vocab"]
    # The untrained model scores close to a uniform guess, ln N; then the
    # loss falls below it, at every evaluation.
    assert evals[0]["val"] == pytest.approx(math.log(len(vocab)), abs=0.05)
    assert all(a["val"] > b["val"] for a, b in zip(evals, evals[1:], strict=False))
    assert runs[1]["loss"] > evals[-1]["train"]
    assert (in_tmp / "run" / "loss.png").read_bytes()[:4] == b"\x89PNG"
    assert list((in_tmp / "logs" / "shakespeare").iterdir())


def test_same_seed_same_losses(in_tmp, small_text):
    args = ["--preset", "tiny", "--threads", "1", "--data", str(small_text)]
    train.main([*args, "--out", "a"])
    train.main([*args, "--out", "b"])
    train.main([*args, "--out", "c", "--seed", "7"])
    a, b, c = (losses(in_tmp / o / "metrics.jsonl") for o in "abc")
    assert a == b and a != c
    # A new run over an old one's folder starts again, from step 0's
    # evaluation of the untrained model.
    train.main([*args, "--out", "a"])
    assert losses(in_tmp / "a" / "metrics.jsonl") == a and a[0][0] == 0


@pytest.mark.slow
def test_resume_after_kill_gives_the_same_losses(in_tmp, small_text):
    args = ["--preset", "tiny", "--threads", "1", "--data", str(small_text)]
    args += ["--steps", "600", "--eval_interval", "20"]
    train.main([*args, "--out", "whole"])
    # Kill -9 the same run once it has written a checkpoint or two.
    cmd = [sys.executable, str(ROOT / "train.py"), *args, "--out", "cut"]
    proc = subprocess.Popen(cmd, cwd=in_tmp, stdout=subprocess.DEVNULL)
    metrics = in_tmp / "cut" / "metrics.jsonl"
    deadline = time.monotonic() + 120
    while not (metrics.exists() and records(metrics)[-1]["step"] >= 40):
        assert proc.poll() is None and time.monotonic() < deadline
        time.sleep(0.01)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    stopped = load_checkpoint(in_tmp / "cut" / "ckpt.pt")["step"]
    assert stopped < 600
    train.main([*args, "--out", "cut", "--resume"])
    assert losses(metrics) == losses(in_tmp / "whole" / "metrics.jsonl")


@pytest.mark.slow
def test_two_process_ddp_matches_one_process(in_tmp, small_text):
    args = ["--preset", "tiny", "--threads", "1", "--data", str(small_text)]
    args += ["--steps", "30", "--eval_interval", "10", "--batch_size", "8"]
    train.main([*args, "--out", "one"])
    launcher = [sys.executable, "-m", "torch.distributed.run", "--standalone"]
    result = subprocess.run(
        [
            *launcher,
            "--nproc_per_node=2",
            str(ROOT / "train.py"),
            *args,
            "--out",
            "two",
        ],
        cwd=in_tmp,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    one, two = (losses(in_tmp / o / "metrics.jsonl") for o in ("one", "two"))
    assert [r[0] for r in one] == [r[0] for r in two]
    for a, b in zip(one, two, strict=True):
        for x, y in zip(a[1:], b[1:], strict=True):
            assert (x is None) == (y is None)
            if x is not None:
                assert x == pytest.approx(y, rel=1e-4)
    # Only the first process printed the progress lines.
    assert result.stdout.count(" val: ") == 3


def test_output_is_plain_text_when_not_a_terminal(in_tmp, small_text, capfd):
    args = ["--preset", "tiny", "--threads", "1", "--data", str(small_text)]
    train.main([*args, "--out", "run"])  # standard output is captured: no tty
    out = capfd.readouterr().out
    assert "\x1b[" not in out and "\r" not in out and "LABML" not in out
    # Our lines and labml's progress only: not the run's git state.
    assert out.startswith(f"{small_text}: ") and "[clean]" not in out
    assert "[dirty]" not in out
    lines = [line for line in out.splitlines() if " val: " in line]
    assert len(lines) == 3 and all("loss:" in line for line in lines)


# ------------------------------------------------------------ checkpoint files


def test_failed_save_keeps_the_previous_checkpoint(tmp_path, monkeypatch):
    path = tmp_path / "ckpt.pt"
    save_checkpoint(path, {"step": 1})
    good = path.read_bytes()

    def crash(obj, f):
        f.write(b"half a checkpoint")
        raise OSError("disk full")

    monkeypatch.setattr(torch, "save", crash)
    with pytest.raises(OSError):
        save_checkpoint(path, {"step": 2})
    assert path.read_bytes() == good


def test_metrics_resume_drops_records_after_the_checkpoint(tmp_path):
    m = Metrics(tmp_path / "m.jsonl")
    for step in (10, 20, 30):
        m.add(step=step, loss=1.0)
    m.write()
    assert [r["step"] for r in Metrics.resume(m.path, 20).records] == [10, 20]


# ------------------------------------------------------------ the command line


def test_help_lists_every_field_with_default_and_meaning(capsys):
    with pytest.raises(SystemExit):
        train.main(["--help"])
    text = " ".join(capsys.readouterr().out.split())
    comments = field_comments(train.Config)
    for name in train.Config.__dataclass_fields__:
        assert f"--{name}" in text
        default = getattr(train.PRESETS["cpu"], name)
        assert f"{comments[name]} (default: {default!r}" in text, name


def test_cli_overrides_fields_of_the_preset():
    argv = ["--preset", "tiny", "--n_layer", "3", "--lr", "1e-3", "--no-bf16"]
    argv += ["--d-model", "48"]
    cfg = cli.parse_config(argv, train.Config, train.PRESETS, "cpu", prog="t",
                             description="")  # fmt: skip
    assert cfg == replace(train.PRESETS["tiny"], n_layer=3, lr=1e-3, d_model=48)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--n_layers", "6"], "did you mean --n_layer"),
        (["--n_layer", "six"], "--n-layer: invalid int value: 'six'"),
        (["--d_model", "100", "--n_head", "3"], "divisible by --n_head 3"),
        (["--preset", "huge"], "invalid choice: 'huge'"),
        (["--device", "gpu"], "--device must be auto, cpu or cuda, not 'gpu'"),
        (["--steps", "0"], "--steps must be >= 1, got 0"),
        (["--lr", "-1"], "--lr must be > 0, got -1.0"),
        (["--lr", "nan"], "--lr must be a finite number, got nan"),
        (["--min_lr", "inf"], "--min_lr must be a finite number, got inf"),
        (["--val_fraction", "1.5"], "--val_fraction must be between 0 and 1"),
        (["--dropout", "1"], "--dropout must be a probability in [0, 1), got 1.0"),
        (["--beta2", "1"], "--beta2 must be in [0, 1), got 1.0"),
        (["--weight_decay", "-0.1"], "--weight_decay must be >= 0, got -0.1"),
    ],
)
def test_cli_rejects_bad_configuration(args, message, capsys, in_tmp):
    with pytest.raises(SystemExit) as exit_:
        train.main(args)
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert message in err
    # One line, and nothing was written.
    assert err.count("\n") == 1 and "Traceback" not in err
    assert list(in_tmp.iterdir()) == []


def test_bad_values_fail_before_pytorch_sees_them():
    # Each float option's check runs when the configuration is made, so an
    # optimizer never receives a negative or NaN learning rate.
    for field in ("lr", "min_lr", "weight_decay", "grad_clip", "beta2"):
        for value in (float("nan"), -1.0):
            with pytest.raises(ValueError, match=f"^--{field} must be"):
                replace(train.PRESETS["tiny"], **{field: value})


def test_out_naming_a_file_is_refused_and_kept(in_tmp, capsys):
    # The one test of a refusal by `python train.py` in a process of its own:
    # status 1 and exactly one line on standard error, no traceback. The
    # others call train.main in this process (`refusal`).
    (in_tmp / "notes.txt").write_text("mine")
    result = run_script("--preset", "tiny", "--out", "notes.txt", cwd=in_tmp,
                        check=False)  # fmt: skip
    assert result.returncode == 1
    assert result.stderr == (
        "train.py: error: --out notes.txt: is a file; expected a folder "
        "(new or a run's)\n"
    )
    assert (in_tmp / "notes.txt").read_text() == "mine"
    assert sorted(p.name for p in in_tmp.iterdir()) == ["notes.txt"]


def test_resume_with_nothing_left_to_do(in_tmp, small_text, capsys):
    args = ["--preset", "tiny", "--threads", "1", "--data", str(small_text)]
    args += ["--out", "run", "--eval_batches", "1"]
    train.main([*args, "--steps", "20"])
    written = {p.name: p.read_bytes() for p in (in_tmp / "run").iterdir()}
    logs = sorted((in_tmp / "logs").rglob("*"))
    # Past --steps: an error naming the option.
    behind = refusal([*args, "--resume", "--steps", "10"])
    assert "--steps 10: run/ckpt.pt is already at step 20" in behind
    # At --steps: nothing to do, said so; main returns (exit status 0).
    capsys.readouterr()
    train.main([*args, "--resume", "--steps", "20"])
    assert "already at step 20; nothing to do" in capsys.readouterr().out
    assert {p.name: p.read_bytes() for p in (in_tmp / "run").iterdir()} == written
    assert sorted((in_tmp / "logs").rglob("*")) == logs


def test_memory_estimate_refuses_what_cannot_fit(in_tmp, monkeypatch):
    import psutil

    from trainkit import machine

    cfg = train.PRESETS["cpu"]
    # One position: the estimate is 16 bytes per parameter of the model
    # (weights, gradients, two AdamW averages), plus one position's activations.
    one = replace(cfg, batch_size=1, context=1)
    params = sum(p.numel() for p in train.CharTransformer(one, 71).parameters())
    assert 16 * params < machine.memory_estimate(one, 71) < 16 * params + 40_000
    # 16 GiB in all, 8 free: a context of 100,000 is refused before training.
    memory = SimpleNamespace(total=16 * 2**30, available=8 * 2**30)
    monkeypatch.setattr(psutil, "virtual_memory", lambda: memory)
    with pytest.raises(SystemExit) as exit_:
        train.main(["--context", "100000", "--threads", "1", "--out", "big"])
    message = str(exit_.value.code)
    assert "--context 100000" in message and "GiB" in message
    assert "more than the 16.0 GiB of memory here" in message
    assert not (in_tmp / "big").exists() and not (in_tmp / "logs").exists()
    # What fits in all but not in what is free now: a warning, then the run.
    said = []
    big = replace(cfg, context=20_000)
    assert 8 * 2**30 < machine.memory_estimate(big, 71) < 16 * 2**30
    machine.check_memory(big, 71, 1, torch.device("cpu"), said.append)
    assert len(said) == 1 and said[0].startswith("warning: --batch_size 16 --context")


def test_checkpoint_errors_never_suggest_unsafe_loading(tmp_path):
    noise = tmp_path / "noise.pt"
    noise.write_bytes(bytes(range(256)) * 8)
    code = tmp_path / "code.pt"
    torch.save({"model": Path("x")}, code)  # an object, not a tensor
    for path, reason in ((noise, "truncated or corrupted"), (code, "could run code")):
        message = refusal(["sample", "--checkpoint", str(path)])
        assert reason in message and "weights_only" not in message, message


def test_missing_and_corrupt_checkpoints_are_named(tmp_path, in_tmp, small_text):
    missing = tmp_path / "nothing.pt"
    with pytest.raises(SystemExit, match=f"{missing}: no checkpoint there"):
        train.main(["sample", "--checkpoint", str(missing)])
    with pytest.raises(SystemExit, match="no checkpoint under out/"):
        train.main(["sample"])
    # A real checkpoint, cut in half as by a full disk.
    model = tiny_model()
    path = tmp_path / "ckpt.pt"
    state = session.checkpoint(
        model, train.make_optimizer(model, train.PRESETS["tiny"]),
        train.PRESETS["tiny"], train.Vocab("abcdefghijk"), 1, 0.0, {},
    )  # fmt: skip
    save_checkpoint(path, state)
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    cut = path.read_bytes()
    with pytest.raises(SystemExit, match=f"{path}: not a readable checkpoint"):
        train.main(["sample", "--checkpoint", str(path)])
    with pytest.raises(SystemExit, match="truncated or corrupted"):
        train.main(["--preset", "tiny", "--data", str(small_text), "--out",
                    str(tmp_path), "--resume", "--threads", "1"])  # fmt: skip
    assert path.read_bytes() == cut


def test_too_short_data_file_says_how_long_it_must_be(in_tmp):
    short = in_tmp / "short.txt"
    short.write_text("To be, or not to be.\n" * 3)
    with pytest.raises(SystemExit) as exit_:
        train.main(["--preset", "tiny", "--data", str(short), "--threads", "1"])
    message = str(exit_.value.code)
    assert str(short) in message and "63 characters" in message
    need = int(message.rsplit("at least ", 1)[1])
    short.write_text("x" * need)
    train.main(["--preset", "tiny", "--data", str(short), "--steps", "1",
                "--threads", "1", "--eval_batches", "1"])  # fmt: skip


def test_data_file_not_found_or_not_utf8(in_tmp):
    with pytest.raises(SystemExit, match="--data nope.txt: no such file"):
        train.main(["--data", "nope.txt"])
    (in_tmp / "bin.txt").write_bytes(b"abc\xff\xfe" * 100)
    with pytest.raises(SystemExit, match="not UTF-8"):
        train.main(["--data", "bin.txt"])


def test_sample_command_prints_the_prompt_and_continuation(in_tmp, small_text, capsys):
    train.main(["--preset", "tiny", "--threads", "1", "--data", str(small_text),
                "--steps", "20", "--out", "out/t"])  # fmt: skip
    capsys.readouterr()
    sample = ["sample", "--prompt", "ROMEO:", "--tokens", "50"]
    train.main(sample)  # the newest checkpoint under out/
    printed = capsys.readouterr().out
    assert printed.startswith("ROMEO:") and len(printed) == 6 + 50 + 1
    train.main(sample)
    assert capsys.readouterr().out == printed
    assert "'{'" in refusal(["sample", "--prompt", "ROMEO{"])


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine without CUDA")
def test_cuda_requested_without_cuda(in_tmp):
    with pytest.raises(SystemExit, match="--device cuda: no CUDA device"):
        train.main(["--preset", "tiny", "--device", "cuda"])


def test_resume_refuses_another_model(in_tmp, small_text):
    args = ["--preset", "tiny", "--threads", "1", "--data", str(small_text)]
    train.main([*args, "--steps", "20", "--out", "run"])
    with pytest.raises(SystemExit, match="n_layer=2 there, 3 now"):
        train.main([*args, "--out", "run", "--resume", "--n_layer", "3"])


# ---------------------------------------------------------- the shipped model


def test_shipped_model_samples_the_recorded_text(monkeypatch, capsys):
    # A fresh clone can sample from runs/cpu/model.pt: weights, configuration
    # and vocabulary only, read with weights_only=True. The same arguments as
    # the recorded sample, fewer characters: the same first characters.
    folder = ROOT / "runs" / "cpu"
    state = torch.load(folder / "model.pt", weights_only=True)
    assert set(state) == {"model", "config", "vocab", "step"}
    run = json.loads((folder / "run.json").read_text())
    args = run["sample_args"]
    assert args[:2] == ["--checkpoint", "runs/cpu/model.pt"]
    tokens = args.index("--tokens") + 1
    args = [*args[:tokens], "40", *args[tokens + 1 :]]
    monkeypatch.chdir(ROOT)  # the recorded arguments name files from there
    threads = torch.get_num_threads()  # sampling sets one thread
    try:
        train.main(["sample", *args])
    finally:
        torch.set_num_threads(threads)
    recorded = (folder / "sample.txt").read_text(encoding="utf-8")
    prompt = args[args.index("--prompt") + 1]
    assert capsys.readouterr().out == recorded[: len(prompt) + 40] + "\n"


def test_recorded_sample_settings_are_the_cli_defaults():
    # The page says the sample command's defaults drew the recorded sample.
    run = json.loads((ROOT / "runs" / "cpu" / "run.json").read_text())
    given = dict(zip(run["sample_args"][::2], run["sample_args"][1::2], strict=True))
    defaults = cli.parse_sample([])
    assert float(given["--temperature"]) == defaults.temperature
    assert int(given["--top-k"]) == defaults.top_k
    assert int(given["--seed"]) == defaults.seed


def test_heads_passage_is_validation_text(corpus):
    cut = int(len(corpus) * (1 - train.PRESETS["cpu"].val_fraction))
    assert generate.PASSAGE in corpus[cut:] and generate.PASSAGE not in corpus[:cut]
    assert len(generate.PASSAGE) <= train.PRESETS["cpu"].context
