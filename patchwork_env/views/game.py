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
from patchwork_env.data.validation import as_action, check_seat, check_seed
from patchwork_env.engine import kernels
from patchwork_env.engine.batch import GameBatch, random_setup
from patchwork_env.engine.batch_kernels import checked_step_one, legal_actions_one
from patchwork_env.engine.serialize import state_from_dict, state_to_dict
from patchwork_env.views.render import render_text


class Game:
    """One game of Patchwork."""

    __slots__ = ("_batch", "_buffer", "_state")

    def __init__(self, batch: GameBatch) -> None:
        if len(batch) != 1:
            raise ValueError(f"a Game views a batch of exactly one game, got {len(batch)}")
        self._batch = batch
        self._state = batch.state
        self._buffer = np.empty(N_ACTIONS, np.int16)

    @classmethod
    def new(cls, seed: int | None = None, *, circle: Any = None, first_player: int | None = None,
            rules: str | Rules = "default") -> Game:
        """A new game: random circle and first player from ``seed`` unless given."""
        seed = check_seed(seed)
        first_player = check_seat(first_player, "first_player", allow_none=True)
        circle, first_player = random_setup(np.random.default_rng(seed), circle, first_player)
        return cls(GameBatch.from_setups([circle], [first_player], rules, seed=seed))

    @classmethod
    def from_batch(cls, batch: GameBatch, row: int) -> Game:
        """A game holding a copy of game ``row`` of ``batch``."""
        return cls(GameBatch(batch.state[row : row + 1].copy(), batch.rules, batch.rng))

    @classmethod
    def from_dict(cls, d: dict[str, Any], rules: str | Rules | None = None) -> Game:
        """Rebuild a game from :meth:`state_dict` output (or a recorded state).

        A state no game can reach is refused with ``ValueError`` (``TypeError`` for a value
        of the wrong kind) naming the fields; :mod:`patchwork_env.engine.serialize` lists what is
        checked. ``rules``, if given, must agree with the dict's own ``rules``.
        """
        state, resolved = state_from_dict(d, rules)
        return cls(GameBatch(state, resolved))

    def state_dict(self) -> dict[str, Any]:
        """The whole position as a JSON-ready dict (see :mod:`patchwork_env.engine.serialize`)."""
        return state_to_dict(self._state[0], self.rules)

    # ----- reading the position -------------------------------------------------------
    @property
    def batch(self) -> GameBatch:
        """The one-game batch this game lives in."""
        return self._batch

    @property
    def rules(self) -> Rules:
        return self._batch.rules

    @property
    def to_move(self) -> int | None:
        """The player to move, or ``None`` once the game is over."""
        p = int(self._state[0]["to_move"])
        return None if p < 0 else p

    @property
    def is_over(self) -> bool:
        return bool(self._state[0]["to_move"] < 0)

    @property
    def pending_leather(self) -> int:
        """Leather patches the player to move must place before anything else."""
        return int(self._state[0]["pending_leather"])

    @property
    def position(self) -> tuple[int, int]:
        return tuple(self._state[0]["position"].tolist())

    @property
    def buttons(self) -> tuple[int, int]:
        return tuple(self._state[0]["buttons"].tolist())

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

    def quilt_cells(self, player: int) -> list[int]:
        """The covered cells of ``player``'s quilt."""
        words = self._state[0]["quilt"][player]
        return words_to_cells(int(words[0]), int(words[1]))

    def scores(self) -> tuple[int, int]:
        """Buttons - 2 x empty cells (+ bonus) for each player, at any point of the game."""
        return tuple(self._batch.scores()[0].tolist())

    @property
    def winner(self) -> int | None:
        """The winner once the game is over (ties go to who reached the end first)."""
        w = int(self._batch.winners()[0])
        return None if w < 0 else w

    # ----- moving --------------------------------------------------------------------------
    def legal_actions(self) -> np.ndarray:
        """The legal actions, sorted (empty once the game is over)."""
        n = legal_actions_one(self._state, 0, self._buffer)
        return self._buffer[:n].astype(np.int64)

    def legal_mask(self) -> np.ndarray:
        """``(2026,) bool`` mask of the legal actions."""
        return self._batch.legal_mask()[0]

    def step(self, action: int) -> None:
        """Play ``action`` in place; an illegal action raises ``ValueError``, changing nothing."""
        a = as_action(action)  # TypeError unless an int; any size, so nothing wraps
        if not 0 <= a < N_ACTIONS:
            raise ValueError(self._batch._illegal_message(0, a, kernels.ERR_OUT_OF_RANGE))
        error = checked_step_one(self._state, 0, a, *self._batch.tables.move_args)
        if error != kernels.OK:
            raise ValueError(self._batch._illegal_message(0, a, error))

    def copy(self) -> Game:
        """An independent copy of the game."""
        return Game(GameBatch(self._state.copy(), self.rules, self._batch.rng))

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

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Game):
            return NotImplemented
        return self.state_dict() == other.state_dict()

    __hash__ = None  # type: ignore[assignment]
