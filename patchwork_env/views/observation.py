"""What an agent sees: ego-centric observation vectors, filled for a whole batch at once.

An observation is one flat ``float32`` vector per game, seen from one player (the
*observer*); every pair of values lists the observer first and the opponent second.
Patchwork is a game of perfect information, so the vector holds the whole position: a
policy can act on it alone. The layout (offsets are the same under every rule set; only
``leather_track`` grows with the length of the track):

===================  ==============  ====================================================
field                shape           value
===================  ==============  ====================================================
``quilts``           (2, 9, 9)       1 on covered cells (row-major, cell = row * 9 + col)
``position``         (2,)            space on the time track / ``track_end``
``buttons``          (2,)            buttons / 50
``income``           (2,)            button symbols on the quilt / 10
``income_ahead``     (2,)            income spaces still ahead of the token / all of them
``to_move``          (2,)            1 for the player to move (both 0 once it is over)
``pending_leather``  (2,)            leather patches that player must place now
``bonus``            (2,)            1 for the holder of the 7x7 bonus tile
``finished_first``   (2,)            1 for who reached the end of the track first
``circle``           (33, 29)        row ``k``: the ``k``-th patch clockwise after the
                                     neutral token (rows 0..2 can be bought): present,
                                     cost / 10, time / 6, income / 3, then its shape as
                                     printed in the rules (orientation 0) on a 5x5 grid,
                                     row-major; rows past the end of the circle are 0
``leather_track``    (track_end+1,)  1 on each space where a leather patch still lies
===================  ==============  ====================================================

:func:`observe` fills a whole batch in one compiled call; every environment and learned
agent uses it, so every interface shares this code.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import TYPE_CHECKING, Any

import numpy as np
from numba import njit, prange

from patchwork_env.data.actions import N_ACTIONS, N_CELLS
from patchwork_env.data.patches import N_PATCHES, PATCHES
from patchwork_env.data.rules import BOARD_SIZE, Rules
from patchwork_env.engine.compiling import compile_serial_and_parallel, pick
from patchwork_env.engine.kernels import STATE_DTYPE, write_legal_mask

if TYPE_CHECKING:
    from patchwork_env.engine.batch import GameBatch

BUTTONS_SCALE = 50.0
INCOME_SCALE = 10.0
COST_SCALE = 10.0
TIME_SCALE = 6.0
PATCH_INCOME_SCALE = 3.0
SHAPE_SIZE = 5
"""Side of the grid that holds every patch shape (the largest spans 5 cells)."""

SLOT_FEATURES = 4 + SHAPE_SIZE * SHAPE_SIZE  # present, cost, time, income, 5x5 shape
MAX_INCOME = sum(p.income for p in PATCHES)
"""The most button symbols a quilt can hold (all 33 patches)."""

PAIR_FIELDS = ("position", "buttons", "income", "income_ahead", "to_move",
               "pending_leather", "bonus", "finished_first")
QUILTS_AT = 0
PAIRS_AT = QUILTS_AT + 2 * N_CELLS
CIRCLE_AT = PAIRS_AT + 2 * len(PAIR_FIELDS)
LEATHER_AT = CIRCLE_AT + N_PATCHES * SLOT_FEATURES


def _patch_features() -> np.ndarray:
    """``(33, 29) float32``: the ``circle`` entries of each patch."""
    table = np.zeros((N_PATCHES, SLOT_FEATURES), np.float32)
    for p in PATCHES:
        table[p.id, :4] = (1.0, p.cost / COST_SCALE, p.time / TIME_SCALE,
                           p.income / PATCH_INCOME_SCALE)
        for r, c in p.cells:
            table[p.id, 4 + r * SHAPE_SIZE + c] = 1.0
    return table


PATCH_FEATURES = _patch_features()


@dataclass(frozen=True)
class Field:
    """One named part of the observation vector."""

    name: str
    start: int
    shape: tuple[int, ...]
    high: float
    """Largest value the field can take (the smallest is always 0)."""

    @property
    def size(self) -> int:
        return int(np.prod(self.shape))

    @property
    def stop(self) -> int:
        return self.start + self.size


class FieldLayout:
    """Named fields laid end to end in one observation vector; the base of each game's
    layout."""

    def __init__(self, fields: list[Field]) -> None:
        self.fields: tuple[Field, ...] = tuple(fields)
        self.size: int = fields[-1].stop
        self.high = np.empty(self.size, np.float32)
        """The largest value of each entry (the smallest is 0)."""
        for f in fields:
            self.high[f.start : f.stop] = f.high

    @cached_property
    def space(self) -> Any:
        """The ``gymnasium.spaces.Box`` of one observation vector."""
        from gymnasium import spaces

        return spaces.Box(low=np.zeros(self.size, np.float32), high=self.high, dtype=np.float32)

    def split(self, obs: np.ndarray) -> dict[str, np.ndarray]:
        """Named views of an observation ``(..., size)``, each field in its own shape."""
        obs = np.asarray(obs)
        if obs.shape[-1] != self.size:
            raise ValueError(f"an observation has {self.size} values, got shape {obs.shape}")
        lead = obs.shape[:-1]
        return {f.name: obs[..., f.start : f.stop].reshape(*lead, *f.shape)
                for f in self.fields}


class ObservationLayout(FieldLayout):
    """Where each field lies in the observation vector under one rule set."""

    def __init__(self, rules: Rules) -> None:
        self.rules = rules
        max_buttons = (rules.start_buttons + rules.track_end
                       + MAX_INCOME * len(rules.income_positions))
        pair_high = {
            "position": 1.0,
            "buttons": max_buttons / BUTTONS_SCALE,
            "income": MAX_INCOME / INCOME_SCALE,
            "income_ahead": 1.0,
            "to_move": 1.0,
            "pending_leather": float(max(1, len(rules.leather_positions))),
            "bonus": 1.0,
            "finished_first": 1.0,
        }
        fields = [Field("quilts", QUILTS_AT, (2, BOARD_SIZE, BOARD_SIZE), 1.0)]
        fields += [Field(name, PAIRS_AT + 2 * k, (2,), pair_high[name])
                   for k, name in enumerate(PAIR_FIELDS)]
        fields.append(Field("circle", CIRCLE_AT, (N_PATCHES, SLOT_FEATURES), 1.0))
        fields.append(Field("leather_track", LEATHER_AT, (rules.track_end + 1,), 1.0))
        super().__init__(fields)
        self.income_spaces = np.array(rules.income_positions, np.int64)
        self.leather_spaces = np.array(rules.leather_positions, np.int64)


@lru_cache(maxsize=16)
def _layout_of(rules: Rules) -> ObservationLayout:
    return ObservationLayout(rules)


_LAST_LAYOUT: list[ObservationLayout] = []


def layout(rules: Rules) -> ObservationLayout:
    """The (cached) observation layout of a rule set."""
    # Most calls repeat the last rules object: skip hashing the dataclass for those.
    if _LAST_LAYOUT and _LAST_LAYOUT[0].rules is rules:
        return _LAST_LAYOUT[0]
    lay = _layout_of(rules)
    _LAST_LAYOUT[:] = [lay]
    return lay


# ---------------------------------------------------------------------------------------
# the compiled filler


@njit(cache=True, inline="always")
def _observe_row(s, p, row, income_spaces, leather_spaces, track_end, patch_features):
    # Every entry is written exactly once (no clearing pass): this kernel's cost is memory.
    n_income = income_spaces.shape[0]
    for k in range(2):
        pl = p if k == 0 else 1 - p
        base = QUILTS_AT + k * N_CELLS
        for w in range(2):
            bits = s.quilt[pl, w]
            for c in range(min(64, N_CELLS - 64 * w)):
                row[base + 64 * w + c] = (bits >> np.uint64(c)) & np.uint64(1)
        pos = s.position[pl]
        ahead = 0
        for x in income_spaces:
            if x > pos:
                ahead += 1
        moving = s.to_move == pl
        row[PAIRS_AT + k] = pos / track_end
        row[PAIRS_AT + 2 + k] = s.buttons[pl] / BUTTONS_SCALE
        row[PAIRS_AT + 4 + k] = s.income[pl] / INCOME_SCALE
        row[PAIRS_AT + 6 + k] = ahead / n_income if n_income else 0.0
        row[PAIRS_AT + 8 + k] = 1.0 if moving else 0.0
        row[PAIRS_AT + 10 + k] = s.pending_leather if moving else 0.0
        row[PAIRS_AT + 12 + k] = 1.0 if s.bonus_owner == pl else 0.0
        row[PAIRS_AT + 14 + k] = 1.0 if s.first_to_finish == pl else 0.0
    at = CIRCLE_AT
    for k in range(N_PATCHES):
        if k < s.circle_len:
            patch = s.circle[k]
            for j in range(SLOT_FEATURES):
                row[at + j] = patch_features[patch, j]
        else:
            for j in range(SLOT_FEATURES):
                row[at + j] = 0.0
        at += SLOT_FEATURES
    furthest = max(s.position[0], s.position[1])
    for x in range(track_end + 1):
        row[LEATHER_AT + x] = 0.0
    for x in leather_spaces:
        if x > furthest:
            row[LEATHER_AT + x] = 1.0


def _observe_kernel(state, players, out, income_spaces, leather_spaces, track_end,
                    patch_features):
    for i in prange(state.shape[0]):
        _observe_row(state[i], players[i], out[i], income_spaces, leather_spaces, track_end,
                     patch_features)


_OBSERVE_KERNELS = compile_serial_and_parallel(_observe_kernel)


def observe(state: np.ndarray, rules: Rules, players: Any = None,
            out: np.ndarray | None = None) -> np.ndarray:
    """``(N, size) float32``: each game of ``state`` seen by ``players``.

    ``players`` is one seat for every game, an ``(N,)`` array of seats, or ``None`` for the
    player to move (player 0 in finished games).
    """
    if not isinstance(state, np.ndarray) or state.ndim != 1 or (
            state.dtype is not STATE_DTYPE and state.dtype != STATE_DTYPE):
        raise TypeError("state must be a 1-D array of patchwork_env.engine.kernels.STATE_DTYPE")
    n = len(state)
    seats = _check_players(players, state)
    size = layout(rules).size
    if out is not None and (out.shape != (n, size) or out.dtype != np.float32
                            or not out.flags.c_contiguous):
        raise ValueError(f"out must be a C-contiguous float32 array of shape {(n, size)}")
    return observe_unchecked(state, rules, seats, out)


def observe_unchecked(state: np.ndarray, rules: Rules, seats: np.ndarray,
                      out: np.ndarray | None = None) -> np.ndarray:
    """:func:`observe` without its checks, for arguments valid by construction: ``state``
    a 1-D array of :data:`STATE_DTYPE`, ``seats`` an ``(N,)`` integer array of 0s and 1s,
    ``out`` ``None`` or a C-contiguous ``(N, size) float32`` array."""
    lay = layout(rules)
    if out is None:
        out = np.empty((len(state), lay.size), np.float32)
    pick(_OBSERVE_KERNELS, len(state))(state, seats, out, lay.income_spaces,
                                       lay.leather_spaces, rules.track_end, PATCH_FEATURES)
    return out


@njit(cache=True)
def observe_one(state, seat, with_mask, obs, mask, income_spaces, leather_spaces, track_end,
                patch_features):
    """Compiled: the game of the one-record array ``state`` seen by ``seat`` into ``obs``,
    and its legal mask into the bytes ``mask`` (all 0 unless ``with_mask``); the last
    arguments are :attr:`SingleGameObserver.args`."""
    # The one-record array, not its record: numba takes a record argument far more slowly.
    s = state[0]
    _observe_row(s, seat, obs, income_spaces, leather_spaces, track_end, patch_features)
    if with_mask:
        write_legal_mask(s, mask)
    else:
        mask[:] = 0


class SingleGameObserver:
    """What the player ``seat`` of one game sees, and its legal mask, in one compiled call
    with the checks and look-ups of :func:`observe` done once (the AEC env calls it at
    every move)."""

    def __init__(self, rules: Rules) -> None:
        lay = layout(rules)
        self.size = lay.size
        self.args = (lay.income_spaces, lay.leather_spaces, rules.track_end, PATCH_FEATURES)
        """The rule-set arguments that follow ``mask`` in :func:`observe_one`."""

    def __call__(self, state: np.ndarray, seat: int, with_mask: bool
                 ) -> tuple[np.ndarray, np.ndarray]:
        """``((size,) float32, (2026,) int8)``: the game of the one-record ``state`` seen
        by ``seat``, and its legal actions as 0/1 (all 0 unless ``with_mask``)."""
        obs = np.empty(self.size, np.float32)
        mask = np.empty(N_ACTIONS, np.int8)
        observe_one(state, seat, with_mask, obs, mask.view(np.uint8), *self.args)
        return obs, mask


def observe_batch(batch: GameBatch, players: Any = None,
                  out: np.ndarray | None = None) -> np.ndarray:
    """``(N, size) float32``: every game of ``batch`` seen by ``players`` (see :func:`observe`).

    ``players``: one seat for all games, an ``(N,)`` array of seats, or ``None`` for the
    player to move (player 0 in finished games).
    """
    return observe(batch.state, batch.rules, players, out)


def _check_players(players: Any, state: np.ndarray) -> np.ndarray:
    n = len(state)
    if players is None:
        return np.maximum(state["to_move"], 0).astype(np.int64)
    if isinstance(players, int | np.integer) and not isinstance(players, bool):
        if players not in (0, 1):
            raise ValueError(f"players must be 0 or 1, got {players}")
        seats = np.empty(n, np.int64)
        seats.fill(players)
        return seats
    seats = np.asarray(players)
    if seats.dtype.kind not in "iu":
        raise TypeError(f"players must be seats 0 or 1 as ints, got dtype {seats.dtype}")
    if seats.shape != (n,):
        raise ValueError(f"players needs one seat per game: shape ({n},), got {seats.shape}")
    if n and (seats.min() < 0 or seats.max() > 1):
        raise ValueError("players must be 0 or 1")
    return seats.astype(np.int64, copy=False)
