"""GameBatch: the state of N games in one numpy record array, and its batch operations.

Every operation works on the whole batch in one compiled call: ``legal_mask``, ``step``,
``random_actions``, ``playout``, ``scores``, ``winners``, ``reset``. Large batches run
multi-threaded (numba's thread count, see ``numba.set_num_threads``); a batch of one takes
the serial path, so tree search pays little per call.

The state is one record per game (:data:`STATE_DTYPE`, 240 bytes) rather than one array
per field: a kernel then takes a single argument (cheap calls at batch 1), each game's
fields sit together in memory, and copying or resetting games is one slice assignment.
The fields are still visible as arrays, e.g. ``batch.buttons`` is an ``(N, 2)`` view.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from patchwork_env.data.actions import N_ACTIONS, NO_ACTION, format_action
from patchwork_env.data.patches import FIRST_PATCH_ID, N_PATCHES
from patchwork_env.data.rules import Rules, get_rules
from patchwork_env.data.tables import RuleTables
from patchwork_env.data.validation import (
    check_circle,
    check_first_players,
    check_seed,
)
from patchwork_env.engine import kernels
from patchwork_env.engine.batch_kernels import (
    BATCH_KERNELS,
    check_kernel,
    restart_finished,
    set_up_games,
)
from patchwork_env.engine.compiling import compile_serial_and_parallel, pick
from patchwork_env.engine.kernels import STATE_DTYPE
from patchwork_env.engine.record_batch import RecordBatch, seed_from

_ERROR_TEXT = {
    kernels.ERR_GAME_OVER: "the game is over",
    kernels.ERR_OUT_OF_RANGE: f"it is out of range 0..{N_ACTIONS - 1}",
    kernels.ERR_LEATHER_PENDING: "a leather patch must be placed first",
    kernels.ERR_NO_LEATHER: "no leather patch is pending",
    kernels.ERR_NO_SLOT: "that slot of the circle is empty",
    kernels.ERR_BAD_PLACEMENT: (
        "that orientation is not canonical for the patch or the patch leaves the board"
    ),
    kernels.ERR_TOO_EXPENSIVE: "the player cannot afford the patch",
    kernels.ERR_OVERLAP: "the patch overlaps the quilt",
    kernels.ERR_CELL_TAKEN: "that cell is already covered",
}


_KERNELS = {name: compile_serial_and_parallel(fn) for name, fn in BATCH_KERNELS.items()}


def _kernel(name: str, n: int) -> Any:
    return pick(_KERNELS[name], n)


def random_setup(rng: np.random.Generator, circle: Any = None,
                 first_player: int | None = None) -> tuple[np.ndarray, int]:
    """A random circle (patch 0 last) and first player drawn from ``rng``, as
    ``Game.new(seed)`` draws them; a ``circle`` or ``first_player`` given replaces its
    drawn part (both are always drawn, so the generator moves on the same way)."""
    circles, first = random_setups(rng, 1)
    return (circles[0] if circle is None else check_circle(circle),
            int(first[0]) if first_player is None else int(first_player))


def random_setups(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    """``n`` random circles ``(n, 33)`` (patch 0 last) and first players ``(n,)``."""
    circles = np.empty((n, N_PATCHES), dtype=np.int8)
    first = np.empty(n, dtype=np.int8)
    _kernel("setups", n)(seed_from(rng), FIRST_PATCH_ID, circles, first)
    return circles, first


class GameBatch(RecordBatch):
    """N games of Patchwork under one rule set, stored as a structured numpy array."""

    DTYPE = STATE_DTYPE
    DTYPE_NAME = "patchwork_env.engine.kernels.STATE_DTYPE"
    N_ACTIONS = N_ACTIONS
    KERNELS = _KERNELS
    ERROR_TEXT = _ERROR_TEXT
    ERR_OUT_OF_RANGE = kernels.ERR_OUT_OF_RANGE
    format_action = staticmethod(format_action)
    check_actions = staticmethod(check_kernel)

    def __init__(self, state: np.ndarray, rules: str | Rules = "default",
                 rng: np.random.Generator | None = None) -> None:
        self._hold(state, rng)
        self.rules = get_rules(rules)
        self.tables = RuleTables.of(self.rules)
        self.move_args = self.tables.move_args

    # ----- construction -------------------------------------------------------------
    @classmethod
    def new(cls, n: int, seed: int | None = None, rules: str | Rules = "default") -> GameBatch:
        """``n`` games with random setups, reproducible from ``seed``."""
        if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 1:
            raise ValueError(f"a batch needs at least one game, got n={n!r}")
        batch = cls(np.zeros(int(n), STATE_DTYPE), rules,
                    np.random.default_rng(check_seed(seed)))
        batch.reset()
        return batch

    @classmethod
    def from_setups(cls, circles: Any, first_players: Any, rules: str | Rules = "default",
                    seed: int | None = None) -> GameBatch:
        """Games with explicit circles (patch ids clockwise from the neutral token)."""
        circles = [check_circle(c) for c in circles]
        if not circles:
            raise ValueError("a batch needs at least one game, got no circles")
        first = check_first_players(first_players, len(circles))
        batch = cls(np.zeros(len(circles), STATE_DTYPE), rules, np.random.default_rng(seed))
        set_up_games(batch.state, np.arange(len(circles)),
                     np.array(circles, np.int8).reshape(-1, N_PATCHES),
                     first, batch.rules.start_buttons)
        return batch

    @classmethod
    def from_seeds(cls, seeds: Sequence[int], rules: str | Rules = "default") -> GameBatch:
        """One game per seed, each set up exactly as ``Game.new(seed)`` would."""
        setups = [random_setup(np.random.default_rng(s)) for s in seeds]
        return cls.from_setups([c for c, _ in setups], [f for _, f in setups], rules,
                               seed=seeds[0] if len(seeds) else None)

    # ----- resetting ----------------------------------------------------------------
    def reset(self, rows: Any = None, rng: np.random.Generator | None = None) -> None:
        """Start new random games in ``rows`` (all rows by default)."""
        idx = np.arange(len(self)) if rows is None else np.atleast_1d(np.arange(len(self))[rows])
        seed = self._seed(rng)
        self._kernel("start_games", len(idx))(self._state, idx, seed, FIRST_PATCH_ID,
                                         self.rules.start_buttons)

    def reset_done(self, rng: np.random.Generator | None = None) -> np.ndarray:
        """Start new random games wherever a game is over; returns the rows reset.

        The same as ``reset(rows, rng)`` with those rows, in one compiled pass.
        """
        rows = np.empty(len(self), np.int64)
        seed = self._seed(rng)
        n = restart_finished(self._state, seed, FIRST_PATCH_ID, self.rules.start_buttons, rows)
        return rows[:n]

    # ----- field views ----------------------------------------------------------------
    @property
    def position(self) -> np.ndarray:
        """``(N, 2)`` token of each player on the time track."""
        return self._views["position"]

    @property
    def income(self) -> np.ndarray:
        """``(N, 2)`` button symbols on each player's quilt."""
        return self._views["income"]

    # ----- batch operations --------------------------------------------------------------
    def playout(self, rng: np.random.Generator | int | None = None, until: Any = None) -> None:
        """Play every unfinished game with uniformly random legal moves: to its end, or,
        with ``until`` (a seat per game, or one for all), until that seat is to move."""
        seed = self._seed(rng)
        if isinstance(until, np.ndarray) and until.dtype == np.int8 and until.shape == (len(self),):
            stop = until  # a seat per game already in the kernel's form
        else:
            stop = np.full(len(self), -1, np.int8)
            if until is not None:
                stop[:] = until
        self._kernel("playout")(self._state, seed, stop, *self.move_args)

    def scores(self) -> np.ndarray:
        """``(N, 2) int64``: the current score of each player."""
        out = np.empty((len(self), 2), np.int64)
        self._kernel("scores")(self.state, self.tables.bonus_points, out)
        return out

    def winners(self) -> np.ndarray:
        """``(N,) int64``: the winner of each finished game, -1 where still playing."""
        out = np.empty(len(self), np.int64)
        self._kernel("winners")(self.state, self.tables.bonus_points, out)
        return out

    def describe(self, row: int = 0) -> str:
        """A one-line summary of game ``row``."""
        s = self.state[row]
        return (f"to_move={int(s['to_move'])} position={s['position'].tolist()} "
                f"buttons={s['buttons'].tolist()} income={s['income'].tolist()}")

    def __repr__(self) -> str:
        return f"GameBatch(n={len(self)}, rules={self.rules}, over={int(self.done.sum())})"


def sample_legal(mask: np.ndarray, rng: np.random.Generator | int | None = None) -> np.ndarray:
    """``(N,) int64``: an action drawn uniformly from each row of a ``(N, 2026)`` legal mask.

    Rows with no legal action give -1. ``rng`` is a Generator or an integer seed.
    """
    mask = np.asarray(mask)
    if mask.ndim != 2 or mask.shape[1] != N_ACTIONS:
        raise ValueError(f"a legal mask has shape (N, {N_ACTIONS}), got {mask.shape}")
    if mask.dtype != np.bool_:
        mask = mask.astype(np.bool_)
    out = np.empty(len(mask), np.int64)
    seed = seed_from(np.random.default_rng() if rng is None else rng)
    _kernel("sample_mask", len(mask))(np.ascontiguousarray(mask).view(np.uint8), seed, out)
    return out


__all__ = ["NO_ACTION", "STATE_DTYPE", "GameBatch", "check_circle", "random_setup",
           "random_setups", "sample_legal"]
