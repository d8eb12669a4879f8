"""RecordBatch: what every batch of games stored as one numpy record array shares.

A game's batch class (``GameBatch``, ``DraftBatch``) names its record type, its rules, its
action space and its compiled kernels; holding the array, its field views, copying,
slicing, pickling, the fields every game has (whose turn, buttons, quilts) and the moves
every game makes alike (the legal mask, checking and playing one action per game, the
message that refuses one, random legal actions) live here once.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from patchwork_env.data.validation import ActionOutOfRange, as_actions
from patchwork_env.engine.compiling import pick


class RecordBatch:
    """N games held in one structured numpy array of the subclass's :attr:`DTYPE`."""

    DTYPE: np.dtype
    """The record type of one game."""
    DTYPE_NAME: str
    """Where :attr:`DTYPE` is defined, for the error a wrong array gets."""
    rules: Any
    N_ACTIONS: int
    """The size of the game's action space."""
    KERNELS: dict[str, Any]
    """The game's compiled batch kernels by name, each a serial and a parallel version
    (:func:`~patchwork_env.engine.compiling.compile_serial_and_parallel`)."""
    ERROR_TEXT: dict[int, str]
    """Why an action is refused, by the game's error code."""
    ERR_OUT_OF_RANGE: int
    """The game's error code for an action outside ``0..N_ACTIONS - 1``."""
    move_args: tuple[Any, ...]
    """What the compiled step takes after the states and the actions."""

    @staticmethod
    def format_action(action: int) -> str:
        """An action id in the game's notation."""
        raise NotImplementedError

    @staticmethod
    def check_actions(states: np.ndarray, actions: np.ndarray, errors: np.ndarray) -> int:
        """Compiled: each action's error code into ``errors``; the first refused row, or -1."""
        raise NotImplementedError

    def _seed(self, rng: np.random.Generator | int | None) -> np.uint64:
        """A kernel's seed from ``rng``, or from the batch's own generator when ``None``."""
        return seed_from(self.rng if rng is None else rng)

    def _kernel(self, name: str, n: int | None = None) -> Any:
        """The compiled kernel ``name``, parallel for a batch of ``n`` (default: all) games
        where that pays."""
        return pick(self.KERNELS[name], len(self) if n is None else n)

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

    # ----- moves every game makes alike ---------------------------------------------------
    def legal_mask(self, out: np.ndarray | None = None) -> np.ndarray:
        """``(N, N_ACTIONS) bool``: the legal actions of every game (none once it is over).

        ``out``, if given, must be a C-contiguous writeable ``(N, N_ACTIONS)`` bool array;
        it is filled and returned.
        """
        shape = (len(self), self.N_ACTIONS)
        if out is None:
            out = np.empty(shape, dtype=np.bool_)
        elif not (isinstance(out, np.ndarray) and out.dtype == np.bool_ and out.shape == shape
                  and out.flags.c_contiguous and out.flags.writeable):
            got = (f"{out.dtype} array of shape {out.shape}" if isinstance(out, np.ndarray)
                   else type(out).__name__)
            raise ValueError(f"out must be a writeable C-contiguous bool array of shape "
                             f"{shape}, got {got}")
        self._kernel("legal_mask")(self.state, out)
        return out

    def step(self, actions: Any, check: bool = True) -> None:
        """Play one action per game; ``-1`` leaves a game as it is.

        With ``check`` (the default) every action is validated first and an illegal one
        raises ``ValueError`` naming the game, the action and the reason, with no game
        changed. ``check=False`` is the fast path for callers whose actions come from the
        legal mask: it skips the legality test but not the bounds, so an action outside
        the action space or in a finished game still leaves that game as it is. An action
        that does not fit in 64 signed bits raises ``ValueError`` either way.
        """
        try:
            acts = as_actions(actions, len(self), "game")
        except ActionOutOfRange as e:
            raise ValueError(self.illegal_message(e.row, e.action, self.ERR_OUT_OF_RANGE)
                             ) from None
        if check:
            errors = np.empty(len(self), np.int8)
            bad = type(self).check_actions(self.state, acts, errors)
            if bad >= 0:
                raise ValueError(self.illegal_message(bad, int(acts[bad]), int(errors[bad])))
        self._kernel("step")(self._state, acts, *self.move_args)

    def illegal_message(self, row: int, action: int, error: int) -> str:
        """The message for refusing ``action`` in game ``row`` with error code ``error``."""
        what = self.format_action(action) if 0 <= action < self.N_ACTIONS else str(action)
        prefix = f"game {row}: " if len(self) > 1 else ""
        return f"{prefix}illegal action {action} ({what}): {self.ERROR_TEXT[error]}"

    def random_actions(self, rng: np.random.Generator | int | None = None) -> np.ndarray:
        """``(N,) int64``: one uniformly random legal action per game, -1 where over."""
        out = np.empty(len(self), np.int64)
        self._kernel("random_actions")(self._state, self._seed(rng), out)
        return out


def seed_from(rng: np.random.Generator | int) -> np.uint64:
    """A seed for a compiled kernel: the next raw draw of a Generator, or an int seed."""
    if isinstance(rng, np.random.Generator):
        return np.uint64(rng.bit_generator.random_raw())
    if isinstance(rng, bool) or not isinstance(rng, int | np.integer):
        raise TypeError(f"rng must be a numpy Generator or an int seed, got {type(rng).__name__}")
    return np.uint64(int(rng) % 2**64)


__all__ = ["RecordBatch", "seed_from"]
