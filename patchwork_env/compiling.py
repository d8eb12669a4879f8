"""Compiling a batch loop twice, serial and multi-threaded, and picking one per batch size.

A batch loop is a plain Python function whose outer loop is a ``numba.prange``:
:func:`compile_serial_and_parallel` turns it into a serial and a parallel ``njit``
function, each cached on disk, and :func:`pick` chooses the parallel one for batches
large enough to pay for the threads.
"""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any

import numba
from numba import njit

PARALLEL_MIN_BATCH = 256
"""Batches at least this large use the multi-threaded kernels (when numba has threads)."""


def renamed_copy(fn: Callable[..., Any], suffix: str) -> Callable[..., Any]:
    """A copy of ``fn`` named ``fn.__name__ + suffix``.

    numba's on-disk cache tells functions apart by name and bytecode, not by the
    ``parallel`` flag: compiled from one function, the serial and the parallel kernels
    would share a cache entry and the first one compiled would serve for both.
    """
    name = fn.__name__ + suffix
    code = fn.__code__.replace(co_name=name)
    if hasattr(code, "co_qualname"):
        code = code.replace(co_qualname=fn.__qualname__ + suffix)
    copy = types.FunctionType(code, fn.__globals__, name, fn.__defaults__, fn.__closure__)
    copy.__qualname__ = fn.__qualname__ + suffix
    copy.__module__ = fn.__module__
    copy.__doc__ = fn.__doc__
    return copy


def compile_serial_and_parallel(fn: Callable[..., Any]) -> tuple[Any, Any]:
    """``fn`` compiled serial and multi-threaded, each with its own on-disk cache."""
    return njit(cache=True)(fn), njit(cache=True, parallel=True)(renamed_copy(fn, "_parallel"))


def pick(kernels: tuple[Any, Any], n: int) -> Any:
    """The serial or the parallel kernel of a pair, for a batch of ``n`` games."""
    serial, parallel = kernels
    if n >= PARALLEL_MIN_BATCH and numba.get_num_threads() > 1:
        return parallel
    return serial
