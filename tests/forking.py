"""Forking from a test: the child of a multi-threaded pytest process."""

from __future__ import annotations

import os
import warnings


def fork() -> int:
    """`os.fork` without Python 3.12's warning about other threads (idle worker threads of
    earlier async tests): our children only do file I/O and leave with `os._exit`."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return os.fork()
