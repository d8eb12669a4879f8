"""Hand-built positions for the rule tests: ASCII quilts written straight into a state.

Positions are written into the state record directly (not through ``Game.from_dict``), so
a test can set up exactly the situation a rule is about without playing up to it.
"""

from __future__ import annotations

import numpy as np

from patchwork_env import Game, GameBatch, Rules
from patchwork_env.data.actions import N_CELLS, encode_buy, parse_cell
from patchwork_env.data.patches import LEATHER_ID
from patchwork_env.data.tables import cells_to_words
from patchwork_env.engine.kernels import STATE_DTYPE

EMPTY = "\n".join(["........."] * 9)
FULL = "\n".join(["XXXXXXXXX"] * 9)

CIRCLE = [1, 0, 3, 4, 2, *range(5, 33)]
"""A circle whose first patches are easy to reason about: 1 = XXX (cost 2, time 2),
0 = XX (cost 2, time 1), 3 = XXXXX (cost 7, time 1, income 1), 4 = XX/XX (cost 6, time 5,
income 2), 2 = XXXX (cost 3, time 3, income 1)."""


def buy(slot: int, at: str, orientation: int = 0) -> int:
    """The action buying the patch of ``slot`` in ``orientation`` anchored at cell ``at``."""
    return encode_buy(slot, orientation, parse_cell(at))


def cells(picture: str) -> list[int]:
    """Cells marked ``X`` (or any letter) in a 9-line picture of a quilt."""
    rows = [r.strip() for r in picture.strip().splitlines()]
    assert len(rows) == 9 and all(len(r) == 9 for r in rows), "a quilt picture is 9x9"
    return [r * 9 + c for r, row in enumerate(rows) for c, ch in enumerate(row) if ch != "."]


def position(
    *,
    quilts: tuple[str, str] = (EMPTY, EMPTY),
    position: tuple[int, int] = (0, 0),
    buttons: tuple[int, int] = (5, 5),
    income: tuple[int, int] = (0, 0),
    circle: list[int] | None = None,
    to_move: int = 0,
    pending_leather: int = 0,
    bonus_owner: int = -1,
    first_to_finish: int = -1,
    rules: str | Rules = "default",
) -> Game:
    """A game in exactly the given position."""
    state = np.zeros(1, STATE_DTYPE)
    s = state[0]
    for p, picture in enumerate(quilts):
        covered = cells(picture)
        s["quilt"][p] = cells_to_words(covered)
        s["cell_patches"][p] = -1
        s["cell_patches"][p, covered] = LEATHER_ID
    s["position"] = position
    s["buttons"] = buttons
    s["income"] = income
    circle = list(range(1, 33)) + [0] if circle is None else circle
    s["circle"] = -1
    s["circle"][: len(circle)] = circle
    s["circle_len"] = len(circle)
    s["to_move"] = to_move
    s["pending_leather"] = pending_leather
    s["bonus_owner"] = bonus_owner
    s["first_to_finish"] = first_to_finish
    return Game(GameBatch(state, rules))


def empty_cells(game: Game, player: int) -> int:
    """The number of empty cells of ``player``'s quilt."""
    return N_CELLS - len(game.quilt_cells(player))
