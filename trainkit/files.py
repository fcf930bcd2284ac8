"""The files a run writes into `--out`: atomic writes and the folder's lock.

Every file is written to a temporary file of a unique name in the same
folder, flushed to disk, then renamed over the old one: a rename within a
file system is atomic, so a run killed at any moment (`kill -9` included)
leaves the old file or the new one, never half of one, and two writers never
share a temporary file. A write that fails (a full disk, a read-only folder)
removes its temporary file and raises `WriteError`, one line saying why; the
old file is untouched.

One run at a time may write into a folder: `out_lock` holds an exclusive
`flock` on `train.lock` there, which names the holder's process id. The
operating system drops the lock when its process ends, however it ends, so a
lock file left by a killed run is simply taken over. `check_unlocked` asks
early, before a second run reads its text or its checkpoint.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import secrets
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import BinaryIO

from trainkit import RunError

LOCK = "train.lock"

_WHY = {
    errno.ENOSPC: "the disk is full",
    errno.EDQUOT: "the disk quota is used up",
    errno.EROFS: "the file system is read-only",
    errno.EACCES: "no permission to write there",
    errno.EPERM: "no permission to write there",
}


# `_temporary`'s names: `.NAME.PID.HEX.tmp`.
_TEMPORARY = re.compile(r"\..+\.[0-9]+\.[0-9a-f]{8}\.tmp")


class WriteError(RunError, OSError):
    """A file of the run could not be written; the old one, if any, is kept."""

    def __str__(self) -> str:
        return self.strerror


def why(error: OSError) -> str:
    """`error`'s reason in words: the system's, and what it means here."""
    reason = error.strerror or type(error).__name__
    meaning = _WHY.get(error.errno)
    return f"{reason}, {meaning}" if meaning else reason


def _temporary(path: Path) -> tuple[int, Path]:
    """A new file beside `path`, of a name no other writer has."""
    while True:
        tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
        try:
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
            return os.open(tmp, flags, 0o666), tmp
        except FileExistsError:
            continue


def write_atomically(path: Path, write: Callable[[BinaryIO], None]) -> None:
    """Replace `path` with what `write` writes into the binary file it is given."""
    path = Path(path)
    kept = "the previous one is kept" if path.exists() else "nothing was written"
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = _temporary(path)
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException as error:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        if isinstance(error, OSError) and not isinstance(error, RunError):
            message = f"{path}: could not be written ({why(error)}); {kept}"
            raise WriteError(error.errno, message) from None
        raise


def stale_temporaries(folder: Path) -> list[Path]:
    """Temporary files `write_atomically` left in `folder` (a killed run's)."""
    found = Path(folder).glob(".*.tmp")
    return sorted(p for p in found if _TEMPORARY.fullmatch(p.name))


@contextlib.contextmanager
def out_lock(out: Path, main: bool = True) -> Iterator[None]:
    """Hold `out/train.lock` while the block runs; `main=False` holds nothing.

    Refuses (`RunError`, naming the other run's process) if another run holds
    it. A folder it had to create is removed again if the block leaves it
    empty. Temporary files a killed run left are removed once it is held.
    """
    if not main:
        yield
        return
    out = Path(out)
    created = not out.exists()
    path = out / LOCK
    try:
        out.mkdir(parents=True, exist_ok=True)
        fd, before = _acquire(path)
    except OSError as error:
        _remove_if_empty(out, created)
        raise RunError(
            f"--out {out}: cannot write in this folder ({why(error)}); "
            "nothing was changed"
        ) from None
    except RunError:
        _remove_if_empty(out, created)
        raise
    try:
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        if before and before != str(os.getpid()):
            print(f"{path}: left by process {before}, which has ended; taken over")
        for tmp in stale_temporaries(out):
            with contextlib.suppress(OSError):
                tmp.unlink()
        yield
    finally:
        with contextlib.suppress(OSError):
            path.unlink()
        os.close(fd)
        _remove_if_empty(out, created)


def check_unlocked(out: Path) -> None:
    """Refuse now, as `out_lock` would later, if another run holds `out`'s lock.

    Writes nothing and holds nothing: `out_lock` still decides. It spares a
    second run the reading and evaluating it would do before it got there.
    (In a distributed run every process may call it before they meet, while
    their own lock is not yet taken.)
    """
    path = Path(out) / LOCK
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return  # no lock there, or none we can read: `out_lock` will say
    try:
        _try_lock(fd, path, shared=True)
    finally:
        os.close(fd)  # closing drops the lock we may have taken


def _try_lock(fd: int, path: Path, shared: bool = False) -> str:
    """Lock `fd` (open on `path`), or refuse naming the holder; the process id
    the file named before.

    The exclusive lock `out_lock` takes waits up to half a second for
    `check_unlocked`'s shared one, held for the time of one system call; the
    lock of a run is held for its whole run.
    """
    import fcntl

    named = os.read(fd, 64).decode("ascii", "replace").strip()
    mode = fcntl.LOCK_SH if shared else fcntl.LOCK_EX
    for attempt in range(1 if shared else 10):
        if attempt:
            time.sleep(0.05)
        try:
            fcntl.flock(fd, mode | fcntl.LOCK_NB)
            return named
        except BlockingIOError:
            continue
    holder = f"process {named}" if named.isdigit() else "a process"
    raise RunError(
        f"--out {path.parent}: another train.py run ({holder}) is writing there "
        f"(it holds {path}); wait for it to end or give another --out"
    )


def _acquire(path: Path) -> tuple[int, str]:
    """An open descriptor holding `path`'s lock, and the process id it named."""
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o644)
        try:
            named = _try_lock(fd, path)
            # The holder before us may have removed the file after we opened
            # it: then we hold the lock of a file no one else will open.
            try:
                now = os.stat(path)
            except FileNotFoundError:
                now = None
            if now is not None and os.path.samestat(os.fstat(fd), now):
                return fd, named
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)


def _remove_if_empty(folder: Path, created: bool) -> None:
    if created:
        with contextlib.suppress(OSError):
            folder.rmdir()
