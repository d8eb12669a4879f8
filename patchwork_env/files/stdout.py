"""A program's standard output closed by its reader (``python evaluate.py | head -1``).

:func:`ends_quietly_when_stdout_closes` wraps a program's ``main``: when the reader of its
standard output goes away, the program ends at its next print, quietly, with status
:data:`CLOSED_STDOUT_STATUS` (141, as a program killed by ``SIGPIPE`` reports itself to the
shell), instead of a ``BrokenPipeError`` traceback. The programs write their files before
they print about them, so what they did is on disk by then.
"""

from __future__ import annotations

import functools
import os
import select
import sys
from collections.abc import Callable
from typing import ParamSpec

P = ParamSpec("P")

CLOSED_STDOUT_STATUS = 141
"""The exit status of a program whose standard output was closed: 128 + ``SIGPIPE``."""


def stdout_closed() -> bool:
    """Whether the reader of this process's standard output (a pipe or socket) is gone."""
    try:
        fd = sys.stdout.fileno()
        poller = select.poll()
        poller.register(fd, select.POLLOUT)
        events = poller.poll(0)
    except (AttributeError, OSError, ValueError):
        return False
    return any(mask & (select.POLLERR | select.POLLHUP) for _, mask in events)


def _discard_stdout() -> None:
    """Point standard output at the null device, so that the interpreter's last flush of
    what is still buffered does not fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (AttributeError, OSError, ValueError):
        pass


def ends_quietly_when_stdout_closes(main: Callable[P, int]) -> Callable[P, int]:
    """``main`` returning :data:`CLOSED_STDOUT_STATUS` when its standard output is closed
    by the reader (a ``BrokenPipeError`` of another pipe still propagates)."""

    @functools.wraps(main)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> int:
        try:
            status = main(*args, **kwargs)
            sys.stdout.flush()  # what is buffered fails here, not after main has returned
            return status
        except BrokenPipeError:
            if not stdout_closed():
                raise
            _discard_stdout()
            return CLOSED_STDOUT_STATUS

    return wrapper


__all__ = ["CLOSED_STDOUT_STATUS", "ends_quietly_when_stdout_closes", "stdout_closed"]
