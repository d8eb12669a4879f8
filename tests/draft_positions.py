"""Hand-built Patchwork Draft positions for the rule tests: ASCII quilts and a fixed row
and deck written straight into a state record (not through ``DraftGame.from_dict``), so a
test can set up exactly the situation a rule is about."""

from __future__ import annotations

import numpy as np

from patchwork_env.data.draft_rules import DraftRules
from patchwork_env.data.patches import N_PATCHES
from patchwork_env.data.tables import cells_to_words
from patchwork_env.engine.draft_batch import DraftBatch
from patchwork_env.engine.draft_kernels import DRAFT_STATE_DTYPE
from patchwork_env.engine.draft_serialize import UNKNOWN_PATCH
from patchwork_env.views.draft_game import DraftGame
from tests.positions import EMPTY, cells

ROW = (1, 0, 2)
"""A face-up row that is easy to reason about: 1 = XXX (cost 2), 0 = XX (cost 2),
2 = XXXX (cost 3, starred by default)."""


def draft_position(
    *,
    quilts: tuple[str, str] = (EMPTY, EMPTY),
    buttons: tuple[int, int] = (5, 5),
    points: tuple[int, int] = (0, 0),
    row: tuple[int, int, int] = ROW,
    deck: list[int] | None = None,
    to_move: int = 0,
    first_player: int | None = None,
    rules: str | DraftRules = "default",
) -> DraftGame:
    """A draft game in exactly the given position. ``deck`` is the face-down deck from the
    top (by default every other patch, in increasing order); covered cells of a quilt
    belong to no named patch."""
    state = np.zeros(1, DRAFT_STATE_DTYPE)
    s = state[0]
    for p, picture in enumerate(quilts):
        covered = cells(picture)
        s["quilt"][p] = cells_to_words(covered)
        s["cell_patches"][p] = -1
        s["cell_patches"][p, covered] = UNKNOWN_PATCH
    s["buttons"] = buttons
    s["points"] = points
    s["row"] = row
    deck = [x for x in range(N_PATCHES) if x not in row] if deck is None else deck
    s["deck"] = -1
    s["deck"][N_PATCHES - len(deck):] = deck
    s["drawn"] = N_PATCHES - len(deck)
    s["to_move"] = to_move
    s["first_player"] = to_move if first_player is None else first_player
    return DraftGame(DraftBatch(state, rules))


def full_rows(n: int, last: str = ".........") -> str:
    """A quilt picture with its first ``n`` rows full and row ``n`` drawn as ``last``."""
    rows = ["XXXXXXXXX"] * n + [last] + ["........."] * (8 - n)
    return "\n".join(rows[:9])
