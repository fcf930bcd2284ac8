"""train.py under hostile input (issue 23): checkpoints, options, corpora, --out.

One table, one row per input. A refused input gets one line on standard
error naming the option or file and what was expected, a non-zero status, no
traceback, and leaves every file as it was (compared byte for byte). The few
inputs that are handled instead (a truncated metrics file, a stale lock) say
what they did and are checked for it. Each row runs `train.py` in this
process, as `python train.py` would (a row that hangs, such as one that
opens a pipe nobody writes to, fails after a minute), unless it needs a
process of its own (the C locale).
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import pytest
import torch

import train
from trainkit import RunError, files, session
from trainkit.checkpoints import load_checkpoint
from trainkit.files import write_atomically

ROOT = Path(__file__).resolve().parent.parent
# Made-up text with characters outside ASCII (the plays have a `—`).
WORDS = ["ROMEO:", "café", "naïve", "—", "日本", "to", "be", "or", "not", "\n"]
STEPS = ["--steps", "20", "--eval_interval", "10", "--log_interval", "5"]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("data") / "words.txt"
    text = " ".join(WORDS[(i * 7 + i // 3) % len(WORDS)] for i in range(2000))
    path.write_text(text, encoding="utf-8")
    return path


def tiny(corpus: Path, *more: str) -> list[str]:
    return ["--preset", "tiny", "--threads", "1", "--eval_batches", "1",
            "--data", str(corpus), *more]  # fmt: skip


@pytest.fixture(scope="module")
def trained(corpus, tmp_path_factory) -> Path:
    """A tiny run's folder at step 20: its checkpoint, metrics and curve."""
    folder = tmp_path_factory.mktemp("trained")
    threads, cwd = torch.get_num_threads(), os.getcwd()
    os.chdir(folder)
    try:
        train.main(tiny(corpus, *STEPS, "--out", "run"))
    finally:
        os.chdir(cwd)
        torch.set_num_threads(threads)
    return folder / "run"


@dataclass
class Case:
    """What a row's setup may use: the folder it runs in, a copy of the run
    (`run/`), the corpus, and pytest's monkeypatch and cleanups."""

    tmp: Path
    run: Path
    corpus: Path
    monkeypatch: pytest.MonkeyPatch
    cleanup: contextlib.ExitStack
    metrics: str = ""  # run/metrics.jsonl as the setup left it
    holder: int = 0  # the process holding the lock
    ended: int = 0  # a process that has ended


@dataclass
class Row:
    id: str
    setup: Callable[[Case], list[str]]  # writes its files, returns the argv
    status: int
    says: str  # the one line on standard error contains this
    refused: bool = True  # False: handled, and `check` says how
    check: Callable[[Case, str], None] | None = None  # (case, stdout)


# ----------------------------------------------------------------- checkpoints


def checkpoint(change: Callable[[dict], None], model_file: bool = False):
    """A setup: the run's checkpoint, changed by `change`, saved as bad.pt."""

    def setup(case: Case) -> list[str]:
        state = load_checkpoint(case.run / "ckpt.pt")
        if model_file:
            state = session.model_file(state)
        change(state)
        torch.save(state, case.tmp / "bad.pt")
        return ["sample", "--checkpoint", "bad.pt", "--prompt", "to", "--tokens", "5"]

    return setup


def config(**changes) -> Callable[[dict], None]:
    return lambda state: state["config"].update(changes)


def weights(change: Callable[[dict], None]) -> Callable[[dict], None]:
    return lambda state: change(state["model"])


def reshape(name: str, shape: tuple) -> Callable[[dict], None]:
    return weights(lambda w: w.update({name: torch.zeros(shape)}))


def nan_weight(w: dict) -> None:
    w["ln_f.weight"] = w["ln_f.weight"].clone()
    w["ln_f.weight"][0] = float("nan")


def vocab(change: Callable[[str], object]) -> Callable[[dict], None]:
    return lambda state: state.update(vocab=change(state["vocab"]))


def resume_from(change: Callable[[dict], None]):
    """A setup: --resume from the run's checkpoint, changed by `change`."""

    def setup(case: Case) -> list[str]:
        state = load_checkpoint(case.run / "ckpt.pt")
        change(state)
        torch.save(state, case.run / "ckpt.pt")
        return resume(case)

    return setup


def resume(case: Case) -> list[str]:
    return tiny(case.corpus, *STEPS[2:], "--steps", "40", "--out", "run", "--resume")


def sample(*options: str):
    return lambda case: ["sample", "--checkpoint", "run/ckpt.pt", *options]


# ------------------------------------------------------------ metrics, writes


def truncated_metrics(case: Case) -> list[str]:
    path = case.run / "metrics.jsonl"
    text = path.read_text()
    path.write_text(text[: len(text) - len(text.splitlines()[-1]) // 2 - 1])
    return resume(case)


def check_repaired(case: Case, stdout: str) -> None:
    records = [json.loads(line) for line in (case.run / "metrics.jsonl").open()]
    for kind in ("loss", "val"):
        steps = [r["step"] for r in records if kind in r]
        assert steps == sorted(set(steps)) and steps[-1] == 40, (kind, steps)
    # The whole records before the cut are kept as they were.
    before = case.metrics.splitlines()[:-1]
    assert [json.dumps(r) for r in records[: len(before)]] == before


def disk_full(case: Case) -> list[str]:
    def full(obj, f):
        f.write(b"half a checkpoint")
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    case.monkeypatch.setattr(torch, "save", full)
    return resume(case)


def read_only_folder(case: Case) -> list[str]:
    case.run.chmod(0o555)
    case.cleanup.callback(case.run.chmod, 0o755)
    if os.access(case.run, os.W_OK):  # root writes anyway
        pytest.skip("this user can write in a read-only folder (root)")
    return resume(case)


def read_only_file_system(case: Case) -> list[str]:
    """As if `run/` were a read-only mount: opening to write there fails."""
    real = os.open
    writing = os.O_WRONLY | os.O_RDWR | os.O_CREAT

    def open_(path, flags, *args, **kw):
        inside = Path(os.path.abspath(path)).parent == case.run.resolve()
        if inside and flags & writing:
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(path))
        return real(path, flags, *args, **kw)

    case.monkeypatch.setattr(os, "open", open_)
    return resume(case)


# ---------------------------------------------------------------------- --data


def data(name: str | Callable[[Case], str]):
    def setup(case: Case) -> list[str]:
        given = name(case) if callable(name) else name
        return tiny(Path(given), *STEPS, "--out", "new")

    return setup


def fifo(case: Case) -> str:
    os.mkfifo(case.tmp / "pipe")
    return "pipe"


def sparse_over_cap(case: Case) -> str:
    with open(case.tmp / "huge.txt", "wb") as f:
        f.truncate(129 * 2**20)  # no blocks on disk: cheap
    return "huge.txt"


# ------------------------------------------------------------------- the lock


def held_by_another_run(case: Case) -> list[str]:
    case.holder = hold(case.run, case.cleanup)
    return resume(case)


def hold(folder: Path, cleanup: contextlib.ExitStack) -> int:
    """Hold `folder`'s lock in another process until `cleanup`; its id."""
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(folder)],
        cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    cleanup.callback(holder.wait, timeout=30)
    cleanup.callback(holder.stdin.close)
    assert holder.stdout.readline() == "held\n"
    return holder.pid


HOLD = """import sys
from pathlib import Path
from trainkit.files import out_lock
with out_lock(Path(sys.argv[1])):
    print("held", flush=True)
    sys.stdin.read()
"""


def stale_lock(case: Case) -> list[str]:
    ended = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                           capture_output=True, text=True, check=True)  # fmt: skip
    case.ended = int(ended.stdout)
    (case.run / files.LOCK).write_text(f"{case.ended}\n")
    return resume(case)


def check_taken_over(case: Case, stdout: str) -> None:
    assert f"left by process {case.ended}, which has ended; taken over" in stdout
    assert load_checkpoint(case.run / "ckpt.pt")["step"] == 40
    assert not (case.run / files.LOCK).exists()


# ------------------------------------------------------------------ the table

TEMPERATURE = "--temperature must be a finite number > 0, got "
SEED = "--seed must be an integer from 0 to 2**64 - 1 (torch.manual_seed's range)"
CONFIG = "train.py: error: bad.pt: its configuration: "
WEIGHTS = "train.py: error: bad.pt: its weights do not match its configuration"
CORPUS = "not a text file; expected a UTF-8 text file of at most 128 MiB"
TINY = train.PRESETS["tiny"]

ROWS = [
    Row("config: d_model not divisible by n_head", checkpoint(config(n_head=3)), 1,
        CONFIG + "--d_model 32 must be divisible by --n_head 3"),
    Row("config: an unknown device", checkpoint(config(device="tpu")), 1,
        CONFIG + "--device must be auto, cpu or cuda, not 'tpu'"),
    Row("config: a huge context", checkpoint(config(context=10**12)), 1,
        WEIGHTS + " (--n_layer 2 --d_model 32 --context 1000000000000), which has "
        "32,000,000,026,176 parameters; the file holds 27,904 numbers"),
    Row("config: a count as a string", checkpoint(config(n_layer="2")), 1,
        CONFIG + "--n_layer must be an integer, got '2'"),
    Row("config: a negative seed", checkpoint(config(seed=-1)), 1,
        CONFIG + SEED + ", got -1"),
    Row("config: not a dict", checkpoint(lambda s: s.update(config=[2, 2])), 1,
        CONFIG + "expected a dict of options, got list"),
    Row("weights: a missing key", checkpoint(weights(lambda w: w.pop("ln_f.bias"))),
        1, WEIGHTS + ": missing 'ln_f.bias'"),
    Row("weights: an extra key", checkpoint(reshape("extra.weight", (2, 2))), 1,
        WEIGHTS + ": unexpected 'extra.weight'"),
    Row("weights: a wrong shape", checkpoint(reshape("blocks.1.ln2.bias", (31,))), 1,
        WEIGHTS + ": 'blocks.1.ln2.bias' is [31] there, [32] for its configuration"),
    Row("weights: NaN", checkpoint(weights(nan_weight)), 1,
        "bad.pt: its weight 'ln_f.weight' holds NaN or infinite values"),
    Row("weights: not tensors", checkpoint(lambda s: s.update(model=[1])), 1,
        "bad.pt: its weights must be a dict of tensors by name"),
    Row("vocabulary: not a string", checkpoint(vocab(list)), 1,
        "bad.pt: its vocabulary must be a non-empty string, got ['\\n', ' ', "),
    Row("vocabulary: shorter than the embedding",
        checkpoint(vocab(lambda v: v[:-1]), model_file=True), 1,
        "bad.pt: its vocabulary has {fewer} characters but its embedding "
        "(token.weight) {n} rows; expected one row per character"),
    Row("vocabulary: out of order", checkpoint(vocab(lambda v: v[::-1])), 1,
        "bad.pt: its vocabulary must hold each character once, in code-point order"),
    Row("--temperature nan", sample("--temperature", "nan"), 2, TEMPERATURE + "nan"),
    Row("--temperature inf", sample("--temperature", "inf"), 2, TEMPERATURE + "inf"),
    Row("--temperature 0", sample("--temperature", "0"), 2, TEMPERATURE + "0.0"),
    Row("--temperature -1", sample("--temperature", "-1"), 2, TEMPERATURE + "-1.0"),
    Row("--seed 2**64", sample("--seed", str(2**64)), 2,
        SEED + ", got 18446744073709551616"),
    Row("--seed -1", sample("--seed", "-1"), 2, SEED + ", got -1"),
    Row("training --seed -1", lambda c: tiny(c.corpus, "--seed", "-1"), 2,
        SEED + ", got -1"),
    Row("resume: a step that is a string", resume_from(lambda s: s.update(step="20")),
        1, "run/ckpt.pt: its step must be an integer >= 0, got '20'"),
    Row("resume: a negative step", resume_from(lambda s: s.update(step=-1)), 1,
        "run/ckpt.pt: its step must be an integer >= 0, got -1"),
    Row("resume: threads that are not a count",
        resume_from(lambda s: s.update(threads="2")), 1,
        "run/ckpt.pt: its threads must be an integer >= 1, got '2'"),
    Row("resume: optimizer state of another model",
        resume_from(lambda s: s["optimizer"].update(param_groups=[])), 1,
        "run/ckpt.pt: its optimizer state does not fit this model (ValueError: "),
    Row("resume: random states of nothing", resume_from(lambda s: s.update(rng={})),
        1, "run/ckpt.pt: its random generator states are not usable (KeyError: "),
    Row("resume: a truncated metrics.jsonl", truncated_metrics, 0,
        "run/metrics.jsonl:7: the last line is cut short; kept the 6 whole records "
        "before it", refused=False, check=check_repaired),
    Row("a full disk while writing the checkpoint", disk_full, 1,
        "run/ckpt.pt: could not be written (No space left on device, the disk is "
        "full); the previous one is kept"),
    Row("a read-only --out folder", read_only_folder, 1,
        "--out run: cannot write in this folder (Permission denied, no permission "
        "to write there); nothing was changed"),
    Row("a read-only file system under --out", read_only_file_system, 1,
        "--out run: cannot write in this folder (Read-only file system, the file "
        "system is read-only); nothing was changed"),
    Row("--data /dev/zero", data("/dev/zero"), 1,
        "--data /dev/zero: a character device, " + CORPUS),
    Row("--data a pipe", data(fifo), 1, "--data pipe: a pipe (FIFO), " + CORPUS),
    Row("--data over the size cap", data(sparse_over_cap), 1,
        "--data huge.txt: 135,266,304 bytes; expected a UTF-8 text file of at most "
        "128 MiB"),
    Row("--data a folder", data("run"), 1, "--data run: a folder, " + CORPUS),
    Row("a second run into one --out", held_by_another_run, 1,
        "--out run: another train.py run (process {holder}) is writing there (it "
        "holds run/train.lock); wait for it to end or give another --out"),
    Row("a stale lock", stale_lock, 0, "", refused=False, check=check_taken_over),
]  # fmt: skip


def snapshot(folder: Path) -> dict[str, str]:
    """Every file under `folder` (but labml's `logs/`) and its hash."""
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and not p.is_fifo() and p.parts[len(folder.parts)] != "logs"
    }


def expire(signum, frame):
    raise TimeoutError("train.main still running after 60 s")


def run_inline(argv: list[str], capsys) -> tuple[int, str, str]:
    """`python train.py ARGV` in this process: its status, stdout and stderr.
    A run that hangs (blocked opening a pipe, say) fails after 60 s, as
    `run_process`'s would."""
    status = 0
    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(60)
    try:
        train.main(argv)
    except SystemExit as exit_:
        status = exit_.code if isinstance(exit_.code, int) else 1
        if isinstance(exit_.code, str):
            print(exit_.code, file=sys.stderr)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    out, err = capsys.readouterr()
    return status, out, err


def run_process(argv: list[str], cwd: Path, env: dict | None = None):
    """`python train.py ARGV` in a process of its own (under `env`, if given)."""
    result = subprocess.run(
        [sys.executable, str(ROOT / "train.py"), *argv], cwd=cwd, timeout=60,
        capture_output=True, env=env,
    )  # fmt: skip
    out, err = (result.stdout.decode("utf-8"), result.stderr.decode("utf-8"))
    return result.returncode, out, err


@pytest.mark.parametrize("row", ROWS, ids=[r.id for r in ROWS])
def test_hostile_input(row: Row, trained, corpus, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    threads = torch.get_num_threads()
    run = tmp_path / "run"
    run.mkdir()
    for path in trained.iterdir():
        (run / path.name).write_bytes(path.read_bytes())
    with contextlib.ExitStack() as cleanup:
        case = Case(tmp_path, run, corpus, monkeypatch, cleanup)
        argv = row.setup(case)
        case.metrics = (run / "metrics.jsonl").read_text()
        before = snapshot(tmp_path)
        status, out, err = run_inline(argv, capsys)
        monkeypatch.undo()
        torch.set_num_threads(threads)
        after = snapshot(tmp_path)  # before the cleanups (a lock's holder)
    assert status == row.status, err
    assert "Traceback" not in err
    n = len(load_checkpoint(trained / "ckpt.pt")["vocab"])
    says = row.says.format(holder=case.holder, n=n, fewer=n - 1)
    if says:
        assert err.count("\n") == 1 and err.endswith("\n"), err
        assert says in err, err
    else:
        assert err == ""
    if row.refused:
        assert after == before
    else:
        row.check(case, out)


# --------------------------------------------------- what the table leaves out


def test_tiny_config_matches_the_rows():
    # The messages above name the tiny preset's sizes.
    assert (TINY.n_layer, TINY.n_head, TINY.d_model) == (2, 2, 32)


def test_parameter_count_is_exact():
    from trainkit.machine import parameter_count

    for changes in ({}, {"n_layer": 3, "d_model": 48, "n_head": 4, "context": 20}):
        cfg = replace(TINY, **changes)
        model = train.CharTransformer(cfg, 17)
        assert parameter_count(cfg, 17) == sum(p.numel() for p in model.parameters())


def test_the_shipped_model_passes_every_check(tmp_path):
    path = tmp_path / "model.pt"
    path.write_bytes((ROOT / "runs" / "cpu" / "model.pt").read_bytes())
    model, vocab = train.load_model(path, torch.device("cpu"))
    assert len(vocab) == model.token.weight.shape[0] == 71


def test_two_writers_never_share_a_temporary_file(tmp_path):
    path = tmp_path / "ckpt.pt"
    during = []

    def second(f):
        during.extend(files.stale_temporaries(tmp_path))
        f.write(b"2")

    def first(f):
        f.write(b"1")
        # A second writer of the same file while the first is writing.
        write_atomically(path, second)

    write_atomically(path, first)
    # Both temporary files existed at once, beside the file; the first writer
    # renamed its own last, and neither is left.
    assert len(during) == 2 and {p.parent for p in during} == {tmp_path}
    assert path.read_bytes() == b"1"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ckpt.pt"]


def test_the_lock_refuses_while_held_and_is_taken_after(tmp_path):
    with contextlib.ExitStack() as cleanup:
        pid = hold(tmp_path, cleanup)
        said = f"another train.py run \\(process {pid}\\) is writing there"
        with pytest.raises(RunError, match=said):
            files.check_unlocked(tmp_path)
        with pytest.raises(RunError, match=said), files.out_lock(tmp_path):
            pass
        assert (tmp_path / files.LOCK).read_text() == f"{pid}\n"
    files.check_unlocked(tmp_path)  # its process has ended
    with files.out_lock(tmp_path):
        assert (tmp_path / files.LOCK).read_text() == f"{os.getpid()}\n"


def test_a_killed_runs_temporary_files_are_removed_under_the_lock(tmp_path):
    left = tmp_path / ".ckpt.pt.4242.0123abcd.tmp"
    mine = tmp_path / ".notes.tmp"
    left.write_bytes(b"half")
    mine.write_text("mine")
    with files.out_lock(tmp_path):
        assert (tmp_path / files.LOCK).read_text() == f"{os.getpid()}\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == [".notes.tmp"]


def test_a_lock_in_a_new_folder_leaves_no_folder_when_nothing_is_written(tmp_path):
    with files.out_lock(tmp_path / "new"):
        assert (tmp_path / "new" / files.LOCK).exists()
    assert list(tmp_path.iterdir()) == []


UNSET = ("PYTHONIOENCODING", "PYTHONUTF8", "LANG", "LANGUAGE", "LC_CTYPE")
C_LOCALE = {k: v for k, v in os.environ.items() if k not in UNSET}
C_LOCALE |= {"LC_ALL": "C", "PYTHONUTF8": "0"}


def test_c_locale_samples_characters_outside_ascii(trained, tmp_path, capsys):
    # Under LC_ALL=C with UTF-8 mode off, printing a drawn character outside
    # ASCII raised UnicodeEncodeError (in `sample`'s print), and so did a
    # --prompt outside ASCII (in `Vocab.encode`, given the bytes Python could
    # not decode as lone surrogates).
    argv = ["sample", "--checkpoint", str(trained / "ckpt.pt"), "--prompt", "café"]
    argv += ["--tokens", "200", "--seed", "3"]
    status, out, err = run_process(argv, tmp_path, C_LOCALE)
    assert status == 0 and "Traceback" not in err, err
    threads = torch.get_num_threads()
    assert run_inline(argv, capsys) == (0, out, "")  # as in a UTF-8 locale
    torch.set_num_threads(threads)
    assert out.startswith("café") and set(out[4:]) & set("éï—日本")


@pytest.mark.slow
def test_c_locale_trains_on_a_file_named_outside_ascii(corpus, tmp_path):
    # The file's name reached the loss curve's title as lone surrogates, which
    # matplotlib refused (TypeError).
    named = tmp_path / "ünï.txt"
    named.write_bytes(corpus.read_bytes())
    args = ["--steps", "10", "--eval_interval", "10", "--out", "o"]
    status, out, err = run_process(tiny(Path(named.name), *args), tmp_path, C_LOCALE)
    assert status == 0 and "Traceback" not in err, err
    assert out.startswith("ünï.txt: ")
    assert (tmp_path / "o" / "loss.png").read_bytes()[:4] == b"\x89PNG"
