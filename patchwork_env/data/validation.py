"""The checks every entry point shares: actions, seats, setups, reset options, render modes.

Each check either returns the value in the form the engine wants or raises ``TypeError``
(wrong kind of value) or ``ValueError`` (right kind, impossible value) with a message that
names the argument and what it got. The engine, the environments and the scripts all call
these, so one input is judged the same way everywhere.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np

from patchwork_env.data.actions import N_ACTIONS
from patchwork_env.data.patches import FIRST_PATCH_ID, N_PATCHES

_INT64 = np.iinfo(np.int64)


def _is_int(value: Any) -> bool:
    return isinstance(value, int | np.integer) and not isinstance(value, bool | np.bool_)


def check_int(value: Any, name: str, low: int | None = None, high: int | None = None) -> int:
    """``value`` as a Python int: an int (not a bool, a float or an array), within
    ``low..high`` where given."""
    if not _is_int(value):
        raise TypeError(f"{name} must be an int, got {type(value).__name__} {value!r}")
    value = int(value)
    if (low is not None and value < low) or (high is not None and value > high):
        if high is None:
            raise ValueError(f"{name} must be >= {low}, got {value}")
        if low is None:
            raise ValueError(f"{name} must be <= {high}, got {value}")
        raise ValueError(f"{name} must be in {low}..{high}, got {value}")
    return value


def check_seat(value: Any, name: str = "seat", allow_none: bool = False) -> int | None:
    """A seat: 0 or 1 as an int (``None`` too where ``allow_none``)."""
    if value is None and allow_none:
        return None
    if not _is_int(value) or int(value) not in (0, 1):
        also = " or None" if allow_none else ""
        raise ValueError(f"{name} must be 0 or 1{also}, got {value!r}")
    return int(value)


class ActionOutOfRange(ValueError):
    """An action id outside ``0..n_actions - 1`` (``0..2025`` for Patchwork); ``row`` is its
    place in the batch."""

    def __init__(self, row: int, action: int, n: int, label: str = "env",
                 n_actions: int = N_ACTIONS) -> None:
        self.row, self.action = row, action
        where = f" ({label} {row})" if n > 1 else ""
        super().__init__(f"action {action}{where} is outside 0..{n_actions - 1}")


def as_actions(actions: Any, n: int, label: str = "env") -> np.ndarray:
    """``(n,) int64`` action ids from any integer array-like, without wrapping.

    Values are not range-checked here (``-1`` means "no move" to the engine); a value that
    does not fit in 64 signed bits raises :class:`ActionOutOfRange` rather than wrap.
    ``label`` names the items in messages (``"env"``, ``"game"``).
    """
    if isinstance(actions, np.ndarray) and actions.dtype == np.int64:
        acts = actions
    else:
        acts = np.asarray(actions)
        if acts.dtype.kind not in "iu":
            # ints beyond 64 bits make an object array (or a float one, mixed with negatives)
            values = np.asarray(actions, dtype=object).reshape(-1).tolist()
            for row, a in enumerate(values):
                if _is_int(a) and not _INT64.min <= a <= _INT64.max:
                    raise ActionOutOfRange(row, int(a), n, label)
            raise TypeError(f"actions must be integers, got dtype {acts.dtype}")
        if acts.dtype.kind == "u" and acts.size and acts.max() > _INT64.max:
            row = int(np.argmax(acts.reshape(-1) > _INT64.max))
            raise ActionOutOfRange(row, int(acts.reshape(-1)[row]), n, label)
        acts = acts.astype(np.int64)
    if acts.shape != (n,) and acts.size == n and acts.ndim <= 1:
        acts = acts.reshape(n)
    if acts.shape != (n,):
        raise ValueError(f"expected one action per {label}: shape ({n},), got {acts.shape}")
    return acts


def check_actions(actions: Any, n: int, n_actions: int = N_ACTIONS) -> np.ndarray:
    """``(n,) int64`` actions, each in ``0..n_actions - 1`` (``0..2025`` for Patchwork);
    ``ValueError`` naming the first that is not (and its index when there are several)."""
    acts = as_actions(actions, n)
    bad = (acts < 0) | (acts >= n_actions)
    if bad.any():
        i = int(np.argmax(bad))
        raise ActionOutOfRange(i, int(acts[i]), n, n_actions=n_actions)
    return acts


def as_action(action: Any, n_actions: int = N_ACTIONS) -> int:
    """One action id as a Python int of any size, not range-checked: ``TypeError`` unless
    it is an int or a numpy integer (a bool, a float, an array are refused)."""
    if not _is_int(action):
        raise TypeError(f"an action is an int in 0..{n_actions - 1}, got "
                        f"{type(action).__name__} {action!r}")
    return int(action)


def check_action(action: Any, n_actions: int = N_ACTIONS) -> int:
    """One action id as an int in ``0..n_actions - 1`` (``0..2025`` for Patchwork): an int
    or a 0-d/1-element integer array."""
    if type(action) is int and 0 <= action < n_actions:  # the common case, at no cost
        return action
    if isinstance(action, bool | np.bool_) or action is None:
        as_action(action, n_actions)  # raises
    try:
        return int(check_actions(np.reshape(action, -1) if not _is_int(action) else [action],
                                 1, n_actions)[0])
    except TypeError:
        as_action(action, n_actions)  # raises, naming the value
        raise


def check_circle(circle: Any) -> np.ndarray:
    """A starting circle as an int8 array; ``ValueError`` unless it is a valid setup."""
    arr = np.asarray(circle)
    if arr.dtype.kind not in "iu":
        raise TypeError(f"circle must hold ints, got dtype {arr.dtype}")
    if arr.shape != (N_PATCHES,):
        raise ValueError(f"circle must hold the {N_PATCHES} patch ids, got shape {arr.shape}")
    if sorted(arr.tolist()) != list(range(N_PATCHES)):
        raise ValueError(f"circle must be a permutation of the patch ids 0..{N_PATCHES - 1}")
    if arr[-1] != FIRST_PATCH_ID:
        raise ValueError(f"circle must end with patch {FIRST_PATCH_ID}, got {int(arr[-1])}")
    return arr.astype(np.int8)


def check_first_players(first_players: Any, n: int) -> np.ndarray:
    """``(n,) int8`` first players, each 0 or 1 (ints, not bools or floats)."""
    first = np.asarray(first_players)
    if first.dtype.kind not in "iu":
        raise TypeError(f"first_players must be seats 0 or 1 as ints, got dtype {first.dtype}")
    if first.shape != (n,) or not np.isin(first, (0, 1)).all():
        raise ValueError(f"first_players must give 0 or 1 for each of the {n} circles, got "
                         f"{first.tolist()!r}")
    return first.astype(np.int8)


def check_options(options: Any, allowed: tuple[str, ...], unknown: str = "raise"
                  ) -> dict[str, Any]:
    """Reset options as a dict: ``circle``, ``first_player``, ``learner_seat`` validated.

    Keys not in ``allowed`` raise ``ValueError``, or with ``unknown="warn"`` give a
    ``UserWarning`` and are dropped (PettingZoo's own tests pass such keys).
    """
    if unknown not in ("raise", "warn"):
        raise ValueError(f"unknown must be 'raise' or 'warn', got {unknown!r}")
    if options is None:
        return {}
    if not isinstance(options, Mapping):
        raise TypeError(f"reset options must be a dict, got {type(options).__name__}")
    options = dict(options)
    extra = set(options) - set(allowed)
    if extra and unknown == "warn":
        warnings.warn(f"ignoring unknown reset options {sorted(map(str, extra))}; "
                      f"known: {list(allowed)}", stacklevel=3)
        options = {k: v for k, v in options.items() if k in allowed}
    elif extra:
        raise ValueError(f"unknown reset options {sorted(map(str, extra))}; "
                         f"allowed: {list(allowed)}")
    if options.get("circle") is not None:
        options["circle"] = check_circle(options["circle"])
    for key in ("first_player", "learner_seat"):
        if key in options:
            options[key] = check_seat(options[key], key, allow_none=True)
    return options


def check_render_mode(render_mode: str | None, modes: list[str]) -> None:
    """``ValueError`` unless ``render_mode`` is ``None`` or one of ``modes``."""
    if render_mode is not None and render_mode not in modes:
        raise ValueError(f"render_mode must be one of {modes} or None, got {render_mode!r}")


def check_number(value: Any, name: str) -> float:
    """A real number (int or float, not a bool or a string) as a float."""
    if isinstance(value, bool | np.bool_) or not isinstance(value, int | float | np.number):
        raise TypeError(f"{name} must be a number, got {type(value).__name__} {value!r}")
    value = float(value)
    if not np.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value}")
    return value


def check_seed(value: Any, name: str = "seed") -> int | None:
    """A seed: ``None`` or a non-negative int (not a bool or a float)."""
    return None if value is None else check_int(value, name, low=0)


def check_count(value: Any, name: str) -> int:
    """A positive int (a number of games, environments, ...)."""
    return check_int(value, name, low=1)


__all__ = ["ActionOutOfRange", "as_action", "as_actions", "check_action", "check_actions",
           "check_circle", "check_count", "check_first_players", "check_int", "check_number",
           "check_options", "check_render_mode", "check_seat", "check_seed"]
