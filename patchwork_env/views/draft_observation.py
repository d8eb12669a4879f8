"""What an agent sees in Patchwork Draft: ego-centric observation vectors for a whole batch.

The draft's counterpart of :mod:`patchwork_env.views.observation`: one flat ``float32``
vector per game, seen from one player (the *observer*); every pair lists the observer
first and the opponent second. The draft hides one thing, the order of the face-down deck
(rule 13.1), and the vector never holds it: only which patches the deck still holds, which
both players know. The layout (the same under every draft rule set):

===================  ==========  =========================================================
field                shape       value
===================  ==========  =========================================================
``quilts``           (2, 9, 9)   1 on covered cells (row-major, cell = row * 9 + col)
``buttons``          (2,)        buttons / 20
``points``           (2,)        row, column and star points / 20 (rules 13.4, 13.5)
``to_move``          (2,)        1 for the player to move (both 0 once it is over)
``first_player``     (2,)        1 for the player who moved first (the other wins ties)
``lines``            (2, 18)     1 for each full row (0..8), then each full column (0..8)
``face_up``          (3, 28)     slot ``k`` of the row: present, cost / 10, starred, then
                                 the patch's shape as printed in the rules (orientation 0)
                                 on a 5x5 grid, row-major; all 0 for an empty slot
``deck``             (33,)       1 for each patch id still in the face-down deck
``deck_size``        (1,)        patches in the face-down deck / 30
``starred_patches``  (33,)       1 for each patch id that carries a star (rule 13.5)
``star_squares``     (9, 9)      1 on the star squares (rule 13.5)
===================  ==========  =========================================================

:func:`observe_draft` fills a whole batch in one compiled call; every draft environment
uses it.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np
from numba import njit, prange

from patchwork_env.data.actions import N_CELLS, N_SLOTS
from patchwork_env.data.draft_actions import N_DRAFT_ACTIONS
from patchwork_env.data.draft_rules import DraftRules, get_draft_rules
from patchwork_env.data.patches import N_PATCHES, PATCHES
from patchwork_env.data.rules import BOARD_SIZE
from patchwork_env.engine.bits import covers
from patchwork_env.engine.compiling import compile_serial_and_parallel, pick
from patchwork_env.engine.draft_kernels import DRAFT_STATE_DTYPE, LINE_MASKS, write_legal_mask
from patchwork_env.views.observation import (
    COST_SCALE,
    PATCH_FEATURES,
    SHAPE_SIZE,
    Field,
    FieldLayout,
    _check_players,
)

BUTTONS_SCALE = 20.0
POINTS_SCALE = 20.0
DECK_SCALE = float(N_PATCHES - N_SLOTS)
N_LINES = len(LINE_MASKS)
FACE_UP_FEATURES = 3 + SHAPE_SIZE * SHAPE_SIZE  # present, cost, starred, 5x5 shape

PAIR_FIELDS = ("buttons", "points", "to_move", "first_player")
QUILTS_AT = 0
PAIRS_AT = QUILTS_AT + 2 * N_CELLS
LINES_AT = PAIRS_AT + 2 * len(PAIR_FIELDS)
FACE_UP_AT = LINES_AT + 2 * N_LINES
DECK_AT = FACE_UP_AT + N_SLOTS * FACE_UP_FEATURES
DECK_SIZE_AT = DECK_AT + N_PATCHES
STARS_AT = DECK_SIZE_AT + 1
"""Where the rule set's stars begin: ``starred_patches``, then ``star_squares``."""


class DraftObservationLayout(FieldLayout):
    """Where each field lies in the draft's observation vector under one rule set."""

    def __init__(self, rules: DraftRules) -> None:
        self.rules = rules
        max_points = N_LINES + N_PATCHES  # every line, and a star for every patch
        pair_high = {"buttons": (rules.start_buttons + N_LINES) / BUTTONS_SCALE,
                     "points": max_points / POINTS_SCALE, "to_move": 1.0, "first_player": 1.0}
        fields = [Field("quilts", QUILTS_AT, (2, BOARD_SIZE, BOARD_SIZE), 1.0)]
        fields += [Field(name, PAIRS_AT + 2 * k, (2,), pair_high[name])
                   for k, name in enumerate(PAIR_FIELDS)]
        fields += [Field("lines", LINES_AT, (2, N_LINES), 1.0),
                   Field("face_up", FACE_UP_AT, (N_SLOTS, FACE_UP_FEATURES), 1.0),
                   Field("deck", DECK_AT, (N_PATCHES,), 1.0),
                   Field("deck_size", DECK_SIZE_AT, (1,), 1.0),
                   Field("starred_patches", STARS_AT, (N_PATCHES,), 1.0),
                   Field("star_squares", STARS_AT + N_PATCHES, (BOARD_SIZE, BOARD_SIZE), 1.0)]
        super().__init__(fields)
        starred = np.zeros(N_PATCHES, np.float32)
        starred[list(rules.starred_patches)] = 1.0
        squares = np.zeros(N_CELLS, np.float32)
        squares[list(rules.star_squares)] = 1.0
        self.features = np.zeros((N_PATCHES, FACE_UP_FEATURES), np.float32)
        """Row ``id``: the ``face_up`` entries of patch ``id`` under these rules."""
        self.features[:, 0] = 1.0
        self.features[:, 1] = [p.cost / COST_SCALE for p in PATCHES]
        self.features[:, 2] = starred
        self.features[:, 3:] = PATCH_FEATURES[:, 4:]
        self.stars = np.concatenate([starred, squares])
        """The ``starred_patches`` and ``star_squares`` entries, fixed by the rules."""


@lru_cache(maxsize=16)
def draft_layout(rules: str | DraftRules = "default") -> DraftObservationLayout:
    """The (cached) observation layout of a draft rule set."""
    return DraftObservationLayout(get_draft_rules(rules))


# ---------------------------------------------------------------------------------------
# the compiled filler


@njit(cache=True, inline="always")
def _observe_row(s, p, row, features, stars):
    for k in range(2):
        pl = p if k == 0 else 1 - p
        base = QUILTS_AT + k * N_CELLS
        lo = s.quilt[pl, 0]
        hi = s.quilt[pl, 1]
        for w in range(2):
            bits = s.quilt[pl, w]
            for c in range(min(64, N_CELLS - 64 * w)):
                row[base + 64 * w + c] = (bits >> np.uint64(c)) & np.uint64(1)
        row[PAIRS_AT + k] = s.buttons[pl] / BUTTONS_SCALE
        row[PAIRS_AT + 2 + k] = s.points[pl] / POINTS_SCALE
        row[PAIRS_AT + 4 + k] = 1.0 if s.to_move == pl else 0.0
        row[PAIRS_AT + 6 + k] = 1.0 if s.first_player == pl else 0.0
        for line in range(N_LINES):
            full = covers(lo, hi, LINE_MASKS[line, 0], LINE_MASKS[line, 1])
            row[LINES_AT + k * N_LINES + line] = 1.0 if full else 0.0
    for slot in range(N_SLOTS):
        patch = s.row[slot]
        at = FACE_UP_AT + slot * FACE_UP_FEATURES
        for j in range(FACE_UP_FEATURES):
            row[at + j] = features[patch, j] if patch >= 0 else 0.0
    for k in range(N_PATCHES):
        row[DECK_AT + k] = 0.0
    for k in range(s.drawn, N_PATCHES):  # which patches, never their order
        row[DECK_AT + s.deck[k]] = 1.0
    row[DECK_SIZE_AT] = (N_PATCHES - s.drawn) / DECK_SCALE
    for j in range(stars.shape[0]):
        row[STARS_AT + j] = stars[j]


def _observe_kernel(state, players, out, features, stars):
    for i in prange(state.shape[0]):
        _observe_row(state[i], players[i], out[i], features, stars)


_OBSERVE_KERNELS = compile_serial_and_parallel(_observe_kernel)


def observe_draft(state: np.ndarray, rules: str | DraftRules = "default", players: Any = None,
                  out: np.ndarray | None = None) -> np.ndarray:
    """``(N, size) float32``: each draft game of ``state`` seen by ``players``.

    ``players`` is one seat for every game, an ``(N,)`` array of seats, or ``None`` for the
    player to move (player 0 in finished games).
    """
    if not isinstance(state, np.ndarray) or state.ndim != 1 or state.dtype != DRAFT_STATE_DTYPE:
        raise TypeError("state must be a 1-D array of "
                        "patchwork_env.engine.draft_kernels.DRAFT_STATE_DTYPE")
    seats = _check_players(players, state)
    size = draft_layout(rules).size
    if out is not None and (out.shape != (len(state), size) or out.dtype != np.float32
                            or not out.flags.c_contiguous):
        raise ValueError(f"out must be a C-contiguous float32 array of shape "
                         f"{(len(state), size)}")
    return observe_draft_unchecked(state, rules, seats, out)


def observe_draft_unchecked(state: np.ndarray, rules: str | DraftRules, seats: np.ndarray,
                            out: np.ndarray | None = None) -> np.ndarray:
    """:func:`observe_draft` without its checks, for arguments valid by construction."""
    lay = draft_layout(rules)
    if out is None:
        out = np.empty((len(state), lay.size), np.float32)
    pick(_OBSERVE_KERNELS, len(state))(state, seats, out, lay.features, lay.stars)
    return out


@njit(cache=True)
def observe_draft_one(state, seat, with_mask, obs, mask, features, stars):
    """Compiled: the draft game of the one-record array ``state`` seen by ``seat`` into
    ``obs``, and its legal mask into the bytes ``mask`` (all 0 unless ``with_mask``)."""
    s = state[0]
    _observe_row(s, seat, obs, features, stars)
    if with_mask:
        write_legal_mask(s, mask)
    else:
        mask[:] = 0


class DraftSingleGameObserver:
    """What the player ``seat`` of one draft game sees, and its legal mask, in one
    compiled call (the AEC env calls it at every move)."""

    def __init__(self, rules: str | DraftRules) -> None:
        lay = draft_layout(rules)
        self.size = lay.size
        self.args = (lay.features, lay.stars)
        """The rule-set arguments that follow ``mask`` in :func:`observe_draft_one`."""

    def __call__(self, state: np.ndarray, seat: int, with_mask: bool
                 ) -> tuple[np.ndarray, np.ndarray]:
        """``((size,) float32, (1947,) int8)``: the game seen by ``seat`` and its legal
        actions as 0/1 (all 0 unless ``with_mask``)."""
        obs = np.empty(self.size, np.float32)
        mask = np.empty(N_DRAFT_ACTIONS, np.int8)
        observe_draft_one(state, seat, with_mask, obs, mask.view(np.uint8), *self.args)
        return obs, mask


__all__ = ["DraftObservationLayout", "DraftSingleGameObserver", "draft_layout",
           "observe_draft", "observe_draft_unchecked"]
