"""labml set up for a command-line run: no account, no file, no network.

What labml 0.5.3 does by itself, and what we change:

* It looks for a `.labml.yaml` in the script's folder and its parents and,
  finding none, prints a warning; we configure it from code instead (runs go to
  `logs/` under the working directory) and keep that warning off the screen,
  with the "not a git repository" one when run outside a clone.
* It sends nothing over the network unless it is given a server URL and the
  `app` writer; we use only the `screen` writer.
* On `experiment.start()` it creates `~/.labml/` (a computer id and a list of
  projects) and says so; that still happens, quietly.
* Its screen output is written with ANSI colour codes, and each progress update
  rewrites the current line with `\\r`. In a terminal that is a live status
  line; in a log file it is one unreadable line per run. When stdout is not a
  terminal we print plain text instead, one line per completed line: the
  progress updates between two `tracker.new_line()` calls collapse into the
  last of them.
"""

from __future__ import annotations

import contextlib
import re
import sys
from collections.abc import Iterator
from pathlib import Path

from labml import experiment, lab
from labml.internal.logger import logger_singleton
from labml.internal.logger.destinations import Destination
from labml.internal.logger.destinations.console import ConsoleDestination

_ANSI = re.compile(r"\x1b\[[0-9;]*m")


class Screen(Destination):
    """labml's console output, as plain lines when stdout is not a terminal."""

    def __init__(self) -> None:
        self.muted = False
        self.plain = not sys.stdout.isatty()
        self._console = ConsoleDestination(True)
        self._line = ""

    def log(self, parts, *, is_new_line: bool, is_reset: bool) -> None:
        if self.muted:
            return
        if not self.plain:
            self._console.log(parts, is_new_line=is_new_line, is_reset=is_reset)
            return
        text = "".join(p if isinstance(p, str) else p[0] for p in parts)
        text = _ANSI.sub("", text).replace("\r", "")
        # A reset with text replaces the pending line (a progress update); an
        # empty one only ends it.
        self._line = text if is_reset and text else self._line + text
        if is_new_line:
            print(self._line.rstrip(), flush=True)
            self._line = ""

    @contextlib.contextmanager
    def mute(self) -> Iterator[None]:
        muted, self.muted = self.muted, True
        try:
            yield
        finally:
            self.muted = muted


def install_screen() -> Screen:
    """Route labml's output through a `Screen` (replacing its console)."""
    logger = _labml_logger()
    screen = Screen()
    # labml 0.5.3 keeps its destinations in a private list; on another
    # version without it we leave labml's own console in place.
    if hasattr(logger, "_Logger__destinations"):
        logger._Logger__destinations = [screen]
    return screen


def _labml_logger():
    """labml's logger, made as outside a notebook.

    In a Jupyter kernel labml 0.5.3 gives it a notebook destination whose
    import fails with IPython 9 (`IPython.core.display.display` is gone).
    `install_screen` replaces the destinations anyway.
    """
    from labml.internal.logger.destinations import factory

    detect, factory.is_ipynb = factory.is_ipynb, lambda: False
    try:
        return logger_singleton()
    finally:
        factory.is_ipynb = detect


@contextlib.contextmanager
def labml_run(
    name: str, configs: dict, *, comment: str = "", silent: bool = False
) -> Iterator[Screen]:
    """An experiment recorded under `./logs/`, printing to the screen.

    `silent` (the non-zero ranks of a distributed run) prints nothing and
    records nothing, but lets the same `tracker` and `monit` calls run.
    """
    screen = install_screen()
    if silent:
        screen.muted = True
        yield screen
        return
    with screen.mute():
        lab.configure({"path": str(Path.cwd()), "experiments_path": "logs"})
        experiment.create(name=name, comment=comment, writers={"screen"})
        from labml.internal.computer.configs import computer_singleton

        computer_singleton()
        experiment.configs(configs)
        # `start` prints the run's name, id and git state ("[clean]: ..."):
        # noise on our screen, so we say where the record is instead.
        watcher = experiment.start()
    print(f"labml records this run in {_run_folder()}")
    with watcher:
        yield screen


def _run_folder() -> str:
    """The run's folder under `logs/`, relative to the working directory."""
    run = experiment.get_uuid()
    for folder in Path("logs").glob(f"*/{run}"):
        return str(folder)
    return f"logs/ (run {run})"
