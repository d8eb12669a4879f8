"""Game: one game of Patchwork, a thin view over a :class:`GameBatch` of size one.

The API follows OpenSpiel's state objects: ``legal_actions``, ``step`` (apply in place),
``copy``, ``is_over``, ``scores``, ``winner``. There is no second rules implementation:
every move runs the batch engine's compiled code on a one-game state array.

>>> g = Game.new(seed=0)
>>> g.to_move in (0, 1)
True
>>> g.step(g.legal_actions()[0])
"""

from __future__ import annotations

from typing import Any

import numpy as np

from patchwork_env.data.actions import (
    ADVANCE,
    LEATHER_BASE,
    N_ACTIONS,
    N_SLOTS,
    SLOT_STRIDE,
    decode_action,
)
from patchwork_env.data.rules import Rules
from patchwork_env.data.tables import PLACEMENT_MASKS, words_to_cells
from patchwork_env.data.validation import check_seat, check_seed
from patchwork_env.engine import kernels
from patchwork_env.engine.batch import GameBatch, random_setup
from patchwork_env.engine.batch_kernels import checked_step_one, legal_actions_one
from patchwork_env.engine.serialize import state_from_dict, state_to_dict
from patchwork_env.views.one_game import OneGame
from patchwork_env.views.render import render_text


class Game(OneGame):
    """One game of Patchwork."""

    __slots__ = ()
    batch_type = GameBatch
    n_actions = N_ACTIONS
    kernels = kernels
    legal_actions_one = legal_actions_one
    checked_step_one = checked_step_one
    state_to_dict = staticmethod(state_to_dict)

    @classmethod
    def new(cls, seed: int | None = None, *, circle: Any = None, first_player: int | None = None,
            rules: str | Rules = "default") -> Game:
        """A new game: random circle and first player from ``seed`` unless given."""
        seed = check_seed(seed)
        first_player = check_seat(first_player, "first_player", allow_none=True)
        circle, first_player = random_setup(np.random.default_rng(seed), circle, first_player)
        return cls(GameBatch.from_setups([circle], [first_player], rules, seed=seed))

    @classmethod
    def from_dict(cls, d: dict[str, Any], rules: str | Rules | None = None) -> Game:
        """Rebuild a game from :meth:`state_dict` output (or a recorded state).

        A state no game can reach is refused with ``ValueError`` (``TypeError`` for a value
        of the wrong kind) naming the fields; :mod:`patchwork_env.engine.serialize` lists what is
        checked. ``rules``, if given, must agree with the dict's own ``rules``.
        """
        state, resolved = state_from_dict(d, rules)
        return cls(GameBatch(state, resolved))

    # ----- reading the position -------------------------------------------------------
    @property
    def pending_leather(self) -> int:
        """Leather patches the player to move must place before anything else."""
        return int(self._state[0]["pending_leather"])

    @property
    def position(self) -> tuple[int, int]:
        return tuple(self._state[0]["position"].tolist())

    @property
    def income(self) -> tuple[int, int]:
        return tuple(self._state[0]["income"].tolist())

    @property
    def circle(self) -> list[int]:
        """Patch ids clockwise from the neutral token; the first three can be bought."""
        return self._state[0]["circle"][: self._state[0]["circle_len"]].tolist()

    @property
    def bonus_owner(self) -> int | None:
        p = int(self._state[0]["bonus_owner"])
        return None if p < 0 else p

    @property
    def first_to_finish(self) -> int | None:
        p = int(self._state[0]["first_to_finish"])
        return None if p < 0 else p

    def advance_buttons(self) -> int:
        """Rule 4.2: the buttons the player to move would earn by advancing now (0 once the
        game is over)."""
        me = self.to_move
        if me is None:
            return 0
        target = min(self.position[1 - me] + 1, self.rules.track_end)
        return target - self.position[me]

    # ----- moving --------------------------------------------------------------------------
    def action_cells(self, action: int) -> list[int]:
        """The cells a buy or leather action would cover on the mover's quilt."""
        move = decode_action(action)
        if action == ADVANCE:
            return []
        if action >= LEATHER_BASE:
            return [move.cell]
        slot, code = divmod(int(action), SLOT_STRIDE)
        circle = self.circle
        if slot >= min(N_SLOTS, len(circle)):
            raise ValueError(f"action {action}: slot {slot} of the circle is empty")
        lo, hi = PLACEMENT_MASKS[circle[slot], code]
        if lo == 0 and hi == 0:
            raise ValueError(f"action {action}: the patch would leave the board")
        return words_to_cells(int(lo), int(hi))

    def __str__(self) -> str:
        return render_text(self, color=False)

    def __repr__(self) -> str:
        return f"Game({self._batch.describe(0)})"
