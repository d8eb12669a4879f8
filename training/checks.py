"""The checks of a trainer's options, shared by both trainers (``train.py --algo ppo`` and
``--algo az``).

A trainer's options are one dataclass whose fields are its flags. :func:`check_types` checks
what every trainer's options must satisfy: each field holds a value of its default's type
(a finite number where a number) and the options both trainers have stay within
:data:`COMMON_RANGES`: a seed that every generator takes, and no more threads than the
machine has (torch crashes the process when asked for many more). :func:`check_ranges`
checks a trainer's own :class:`Range` s. Each refusal is a ``ValueError`` of one line
naming the flag, the range and the value.
"""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

MAX_SEED = 2**32 - 1
"""The largest seed: numpy's and torch's generators take 32-bit seeds."""
MIN_THREADS_LIMIT = 2
"""Threads allowed on any machine (two threads on one core only share it)."""


def flag(name: str) -> str:
    """The command-line flag of a field: ``total_steps`` -> ``total-steps``."""
    return name.replace("_", "-")


def machine_cpus() -> int:
    """The CPUs this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def machine_threads() -> int:
    """The most threads a run may ask for: the CPUs this process may use, or numba's thread
    count where that is larger (at least :data:`MIN_THREADS_LIMIT`)."""
    import numba

    return max(machine_cpus(), int(numba.config.NUMBA_NUM_THREADS), MIN_THREADS_LIMIT)


@dataclass(frozen=True)
class Range:
    """The values an option may take: ``low`` to ``high`` (each ``None`` where open;
    ``high`` may be a function, asked when the check runs), ``low`` itself excluded when
    ``above`` (``Range(0, above=True)``: positive)."""

    low: float | None = None
    high: float | Callable[[], float] | None = None
    above: bool = False
    why: str = ""
    """Said after the bound when a value is above ``high`` (``"this machine's CPUs"``)."""
    grouped: bool = True
    """Whether large bounds are written in groups of three digits (``1,000,000``); a seed's
    bound is a number people look up, written plain (``4294967295``)."""

    def upper(self) -> float | None:
        """``high``, asked for if it is a function."""
        return self.high() if callable(self.high) else self.high

    def problem(self, value: float) -> str | None:
        """What is wrong with ``value`` (``"must be positive"``), or ``None``."""
        high = self.upper()
        too_low = self.low is not None and (value <= self.low if self.above else
                                            value < self.low)
        too_high = high is not None and value > high
        if not too_low and not too_high:
            return None
        _number = _grouped if self.grouped else _plain
        if too_high and self.why:
            return f"must be at most {_number(high)} ({self.why})"
        if high is None:
            if self.above:
                return "must be positive" if self.low == 0 else f"must be above {self.low}"
            return f"must be at least {_number(self.low)}"
        if self.low is None:
            return f"must be at most {_number(high)}"
        if self.above:
            return f"must lie in ({_number(self.low)}, {_number(high)}]"
        return f"must lie in {_number(self.low)}..{_number(high)}"


def _plain(value: float | None) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def _grouped(value: float | None) -> str:
    if isinstance(value, int) and abs(value) >= 10_000:
        return f"{value:,}"
    return _plain(value)


POSITIVE = Range(0, above=True)
"""A number above 0."""
AT_LEAST_ONE = Range(1)
NOT_NEGATIVE = Range(0)
FRACTION = Range(0, 1)
"""A weight from 0 to 1."""
COMMON_RANGES: Mapping[str, Range] = {
    "seed": Range(0, MAX_SEED, grouped=False),
    "threads": Range(0, machine_threads, why="the CPUs of this machine"),
}
"""The ranges of the options that both trainers have (a trainer may narrow them)."""


def check_types(obj: Any) -> None:
    """``ValueError`` naming the first field of the dataclass ``obj`` whose value is not of
    its default's type (an int passes for a float), is a float that is not finite, or is
    out of its range in :data:`COMMON_RANGES`."""
    for f in dataclasses.fields(obj):
        kind, value = type(f.default), getattr(obj, f.name)
        if kind in (int, float):
            allowed: tuple[type, ...] = (int, float) if kind is float else (int,)
            ok = isinstance(value, allowed) and not isinstance(value, bool)
        else:
            ok = isinstance(value, kind)
        if not ok:
            what = {int: "a whole number", float: "a number", bool: "true or false",
                    str: "a string"}.get(kind, kind.__name__)
            raise ValueError(f"--{flag(f.name)} must be {what}, got {value!r}")
        if kind is float and not math.isfinite(value):
            raise ValueError(f"--{flag(f.name)} must be a finite number, got {value}")
    check_ranges(obj, {name: r for name, r in COMMON_RANGES.items() if hasattr(obj, name)})


def check_ranges(obj: Any, ranges: Mapping[str, Range]) -> None:
    """``ValueError`` naming the first field of ``obj`` (in the order of ``ranges``) whose
    value is out of its :class:`Range`."""
    for name, allowed in ranges.items():
        value = getattr(obj, name)
        problem = allowed.problem(value)
        if problem:
            raise ValueError(f"--{flag(name)} {problem}, got {value}")


__all__ = ["AT_LEAST_ONE", "COMMON_RANGES", "FRACTION", "MAX_SEED", "NOT_NEGATIVE", "POSITIVE",
           "Range", "check_ranges", "check_types", "flag", "machine_cpus",
           "machine_threads"]
