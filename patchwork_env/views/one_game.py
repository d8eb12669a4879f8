"""What the one-game views share, whichever game they play: one game held as a batch of one.

:class:`~patchwork_env.views.game.Game` (Patchwork) and
:class:`~patchwork_env.views.draft_game.DraftGame` (Patchwork Draft) are thin views over
their batch engine's batch of one game. :class:`OneGame` holds what they do alike: reading
whose turn it is, the buttons, quilts, scores and winner; listing, masking and playing
legal moves through the batch engine's compiled one-game kernels; copying, comparing and
writing the state dict. Each game names its batch class, its action count, its kernels
and its state dict writer; everything that differs between the games stays in its view.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any, ClassVar, Self

import numpy as np

from patchwork_env.data.tables import words_to_cells
from patchwork_env.data.validation import as_action


class OneGame:
    """One game viewed through a batch of one; a game's view sets the class variables."""

    __slots__ = ("_batch", "_buffer", "_state")

    batch_type: ClassVar[type]
    """The game's batch class (``GameBatch``, ``DraftBatch``)."""
    n_actions: ClassVar[int]
    """The size of the game's action space."""
    kernels: ClassVar[ModuleType]
    """The game's rules kernels, for their step codes ``OK`` and ``ERR_OUT_OF_RANGE``."""
    legal_actions_one: ClassVar[Callable[..., int]]
    """Compiled ``(states, row, out) -> count``: the legal actions of game ``row``."""
    checked_step_one: ClassVar[Callable[..., int]]
    """Compiled ``(states, row, action, *move_args) -> error code``: play it if legal."""
    state_to_dict: ClassVar[Callable[..., dict[str, Any]]]
    """``(state record, rules) -> dict``: the game's state dict."""

    def __init__(self, batch: Any) -> None:
        if len(batch) != 1:
            raise ValueError(f"a {type(self).__name__} views a batch of exactly one game, "
                             f"got {len(batch)}")
        self._batch = batch
        self._state = batch.state
        self._buffer = np.empty(self.n_actions, np.int16)

    @classmethod
    def from_batch(cls, batch: Any, row: int) -> Self:
        """A game holding a copy of game ``row`` of ``batch``."""
        return cls(cls.batch_type(batch.state[row : row + 1].copy(), batch.rules, batch.rng))

    def state_dict(self) -> dict[str, Any]:
        """The whole position as a JSON-ready dict (hidden information included)."""
        return type(self).state_to_dict(self._state[0], self.rules)

    # ----- reading the position -------------------------------------------------------
    @property
    def batch(self) -> Any:
        """The one-game batch this game lives in."""
        return self._batch

    @property
    def rules(self) -> Any:
        """The game's rules."""
        return self._batch.rules

    @property
    def to_move(self) -> int | None:
        """The player to move, or ``None`` once the game is over."""
        p = int(self._state[0]["to_move"])
        return None if p < 0 else p

    @property
    def is_over(self) -> bool:
        """Whether the game has ended."""
        return bool(self._state[0]["to_move"] < 0)

    @property
    def buttons(self) -> tuple[int, int]:
        """Each player's buttons."""
        return tuple(self._state[0]["buttons"].tolist())

    def quilt_cells(self, player: int) -> list[int]:
        """The covered cells of ``player``'s quilt."""
        words = self._state[0]["quilt"][player]
        return words_to_cells(int(words[0]), int(words[1]))

    def scores(self) -> tuple[int, int]:
        """Each player's score under the game's scoring, at any point of the game."""
        return tuple(self._batch.scores()[0].tolist())

    @property
    def winner(self) -> int | None:
        """The winner once the game is over (the game's rules break ties)."""
        w = int(self._batch.winners()[0])
        return None if w < 0 else w

    # ----- moving --------------------------------------------------------------------------
    def legal_actions(self) -> np.ndarray:
        """The legal actions, sorted (empty once the game is over)."""
        n = type(self).legal_actions_one(self._state, 0, self._buffer)
        return self._buffer[:n].astype(np.int64)

    def legal_mask(self) -> np.ndarray:
        """``(n_actions,) bool`` mask of the legal actions."""
        return self._batch.legal_mask()[0]

    def step(self, action: int) -> None:
        """Play ``action`` in place; an illegal action raises ``ValueError``, changing
        nothing."""
        a = as_action(action)  # TypeError unless an int; any size, so nothing wraps
        if not 0 <= a < self.n_actions:
            raise ValueError(self._batch.illegal_message(0, a, self.kernels.ERR_OUT_OF_RANGE))
        error = type(self).checked_step_one(self._state, 0, a, *self._batch.move_args)
        if error != self.kernels.OK:
            raise ValueError(self._batch.illegal_message(0, a, error))

    def copy(self) -> Self:
        """An independent copy of the game."""
        return type(self)(self.batch_type(self._state.copy(), self.rules, self._batch.rng))

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self.state_dict() == other.state_dict()

    __hash__ = None  # type: ignore[assignment]


__all__ = ["OneGame"]
