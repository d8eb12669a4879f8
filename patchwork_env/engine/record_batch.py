"""RecordBatch: what every batch of games stored as one numpy record array shares.

A game's batch class (``GameBatch``, ``DraftBatch``) names its record type and its rules;
holding the array, its field views, copying, slicing, pickling and the fields every game
has (whose turn, buttons, quilts) live here once.
"""

from __future__ import annotations

from typing import Any

import numpy as np


class RecordBatch:
    """N games held in one structured numpy array of the subclass's :attr:`DTYPE`."""

    DTYPE: np.dtype
    """The record type of one game."""
    DTYPE_NAME: str
    """Where :attr:`DTYPE` is defined, for the error a wrong array gets."""
    rules: Any

    def _hold(self, state: np.ndarray, rng: np.random.Generator | None) -> None:
        """Take ``state`` (checked) and ``rng``, and make the field views once."""
        if not isinstance(state, np.ndarray) or state.dtype != self.DTYPE or state.ndim != 1:
            raise TypeError(f"state must be a 1-D array of {self.DTYPE_NAME}")
        self._state = state
        self.rng = rng if rng is not None else np.random.default_rng()
        """Generator used by ``reset`` and the random-move helpers when none is given."""
        # Field views of a structured array cost microseconds to make: make them once.
        self._views = {name: state[name] for name in self.DTYPE.names}

    def __getstate__(self) -> dict[str, Any]:
        # Pickled, the field views would become copies detached from the state.
        return {k: v for k, v in self.__dict__.items() if k != "_views"}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._views = {name: self._state[name] for name in self.DTYPE.names}

    def copy(self) -> Any:
        """An independent copy (the generator is copied too)."""
        rng = np.random.Generator(type(self.rng.bit_generator)())
        rng.bit_generator.state = self.rng.bit_generator.state
        return type(self)(self.state.copy(), self.rules, rng)

    def __len__(self) -> int:
        return len(self.state)

    def __getitem__(self, rows: Any) -> Any:
        """A batch over a copy of the selected games (sharing this batch's generator)."""
        return type(self)(np.atleast_1d(self.state[rows]).copy(), self.rules, self.rng)

    @property
    def state(self) -> np.ndarray:
        """The ``(N,)`` record array of :attr:`DTYPE` holding every game."""
        return self._state

    def field(self, name: str) -> np.ndarray:
        """A view of one field of every game, e.g. ``field("buttons")`` is ``(N, 2)``."""
        return self._views[name]

    @property
    def to_move(self) -> np.ndarray:
        """``(N,)`` player to move, -1 where the game is over."""
        return self._views["to_move"]

    @property
    def done(self) -> np.ndarray:
        """``(N,)`` whether each game is over."""
        return self._views["to_move"] < 0

    @property
    def buttons(self) -> np.ndarray:
        """``(N, 2)`` buttons of each player."""
        return self._views["buttons"]

    @property
    def quilts(self) -> np.ndarray:
        """``(N, 2, 2) uint64``: [game, player, word] bitboards."""
        return self._views["quilt"]
