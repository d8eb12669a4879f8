"""A program asked to stop with ``SIGTERM`` (``kill PID``, a cluster's scheduler, a
container's shutdown) stops as it does on a Ctrl-C.

:func:`stops_on_sigterm_as_on_ctrl_c` wraps a program's ``main``: while it runs, the first
``SIGTERM`` raises ``KeyboardInterrupt`` in the main thread, so the program's own Ctrl-C
handling runs (a trainer keeps its last checkpoint and says how to resume, a tournament
writes nothing half done, worker processes are stopped), and the program then ends with
status :data:`TERMINATED_STATUS` instead of a Ctrl-C's 130. A second ``SIGTERM`` ends the
process at once, as it would without the wrapper. A ``SIGTERM`` that comes before the
program handles Ctrl-C (while it starts) ends it with one line and the same status.
"""

from __future__ import annotations

import functools
import signal
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import ParamSpec

P = ParamSpec("P")

INTERRUPTED_STATUS = 130
"""The exit status the programs give after a Ctrl-C: 128 + ``SIGINT``."""
TERMINATED_STATUS = 128 + signal.SIGTERM
"""The exit status of a program stopped by ``SIGTERM`` (143), as the shell reports a
process killed by it."""


def stops_on_sigterm_as_on_ctrl_c(main: Callable[P, int]) -> Callable[P, int]:
    """``main`` with ``SIGTERM`` handled as a Ctrl-C (the module docstring says how). Outside
    the main thread, where no handler can be set, ``main`` runs as it is."""

    @functools.wraps(main)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> int:
        if threading.current_thread() is not threading.main_thread():
            return main(*args, **kwargs)
        received = False

        def stop(signum: int, frame: FrameType | None) -> None:
            nonlocal received
            received = True
            signal.signal(signal.SIGTERM, signal.SIG_DFL)  # a second one ends the process
            raise KeyboardInterrupt

        previous = signal.signal(signal.SIGTERM, stop)
        try:
            status = main(*args, **kwargs)
        except KeyboardInterrupt:  # one that came before the program could handle it
            if not received:
                raise
            print(f"{Path(sys.argv[0]).name}: terminated", file=sys.stderr)
            return TERMINATED_STATUS
        finally:
            signal.signal(signal.SIGTERM, previous)
        return TERMINATED_STATUS if received and status == INTERRUPTED_STATUS else status

    return wrapper


__all__ = ["INTERRUPTED_STATUS", "TERMINATED_STATUS", "stops_on_sigterm_as_on_ctrl_c"]
