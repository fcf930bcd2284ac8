"""The plumbing of `train.py`: corpus, command line, checkpoints, processes,
experiment tracking and records. `train.py` keeps the ideas; this keeps the
details a reader of the tutorial does not need on the page."""


class RunError(Exception):
    """A problem with the command line or the files it names.

    `train.py` prints it as one line, without a traceback.
    """
