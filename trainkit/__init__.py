"""The plumbing of `train.py`: corpus, command line, checkpoints, processes,
experiment tracking and records. `train.py` keeps the ideas; this keeps the
details a reader of the tutorial does not need on the page.

Importing it sets `OMP_WAIT_POLICY=PASSIVE` unless the environment already
sets it: OpenMP threads that wait for work then sleep instead of spinning
(train.py's appendix says why). OpenMP reads the variable once, when PyTorch
loads, so `train.py` imports `trainkit` before `torch`.
"""

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


class RunError(Exception):
    """A problem with the command line or the files it names.

    `train.py` prints it as one line, without a traceback.
    """
