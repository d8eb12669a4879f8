"""DraftBatch: N games of Patchwork Draft in one numpy record array, and their operations.

The draft's counterpart of :class:`~patchwork_env.engine.batch.GameBatch`: every operation
(``legal_mask``, ``step``, ``random_actions``, ``playout``, ``scores``, ``winners``,
``reset``, ``redeal``) is one compiled call over the batch, multi-threaded for large
batches. Actions are those of ``Discrete(1947)`` (rule 13.9 of docs/rules.md).

The deck's order is hidden from both players (rule 13.1); :meth:`DraftBatch.redeal` gives
a copy whose unseen deck is reshuffled, for agents that search over the orders they
cannot see.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import numpy as np

from patchwork_env.data.draft_actions import N_DRAFT_ACTIONS, format_draft_action
from patchwork_env.data.draft_rules import DraftRules, get_draft_rules
from patchwork_env.data.patches import N_PATCHES
from patchwork_env.data.validation import (
    check_first_players,
    check_seat,
    check_seed,
)
from patchwork_env.engine import draft_kernels as dk
from patchwork_env.engine.batch import _kernel as main_kernel
from patchwork_env.engine.compiling import compile_serial_and_parallel, pick
from patchwork_env.engine.draft_batch_kernels import (
    DRAFT_BATCH_KERNELS,
    check_kernel,
    restart_finished,
    set_up_games,
)
from patchwork_env.engine.draft_kernels import DRAFT_STATE_DTYPE
from patchwork_env.engine.record_batch import RecordBatch, seed_from

_ERROR_TEXT = {
    dk.ERR_GAME_OVER: "the game is over",
    dk.ERR_OUT_OF_RANGE: f"it is out of range 0..{N_DRAFT_ACTIONS - 1}",
    dk.ERR_BAD_PLACEMENT: (
        "that orientation is not canonical for the patch or the patch leaves the board"
    ),
    dk.ERR_TOO_EXPENSIVE: "the player cannot afford the patch",
    dk.ERR_OVERLAP: "the patch overlaps the quilt",
    dk.ERR_CAN_BUY: "a discard is legal only when no face-up patch can be bought",
}

_KERNELS = {name: compile_serial_and_parallel(fn) for name, fn in DRAFT_BATCH_KERNELS.items()}


def _kernel(name: str, n: int) -> Any:
    return pick(_KERNELS[name], n)


def check_deck(deck: Any) -> np.ndarray:
    """A deck order (the three face-up patches, then the deck from the top) as an int8
    array; ``ValueError`` unless it holds each of the 33 patch ids once."""
    arr = np.asarray(deck)
    if arr.dtype.kind not in "iu":
        raise TypeError(f"deck must hold ints, got dtype {arr.dtype}")
    if arr.shape != (N_PATCHES,):
        raise ValueError(f"deck must hold the {N_PATCHES} patch ids, got shape {arr.shape}")
    if sorted(arr.tolist()) != list(range(N_PATCHES)):
        raise ValueError(f"deck must be a permutation of the patch ids 0..{N_PATCHES - 1}")
    return arr.astype(np.int8)


def draft_random_setups(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    """``n`` random deck orders ``(n, 33)`` and first players ``(n,)`` (rule 13.1), drawn as
    :meth:`DraftBatch.reset` draws them from the same generator."""
    decks = np.empty((n, N_PATCHES), np.int8)
    first = np.empty(n, np.int8)
    _kernel("setups", n)(seed_from(rng), decks, first)
    return decks, first


def draft_random_setup(rng: np.random.Generator, deck: Any = None,
                       first_player: int | None = None) -> tuple[np.ndarray, int]:
    """A random deck order and first player drawn from ``rng`` (rule 13.1); a ``deck`` or
    ``first_player`` given replaces its drawn part (both are drawn, so the generator moves
    on the same way)."""
    decks, first = draft_random_setups(rng, 1)
    first_player = check_seat(first_player, "first_player", allow_none=True)
    return (decks[0] if deck is None else check_deck(deck),
            int(first[0]) if first_player is None else first_player)


@functools.lru_cache(maxsize=64)
def star_args(rules: DraftRules) -> tuple[np.uint64, np.uint64, np.uint64]:
    """The star rule (13.5) as the move kernels take it: starred patch bits, star squares."""
    lo, hi = rules.star_words
    return np.uint64(rules.starred_bits), np.uint64(lo), np.uint64(hi)


def sample_draft_legal(mask: np.ndarray, rng: np.random.Generator | int | None = None
                       ) -> np.ndarray:
    """``(N,) int64``: an action drawn uniformly from each row of a ``(N, 1947)`` legal mask
    (-1 for a row with none); the main game's sampler, on the draft's width."""
    mask = np.asarray(mask)
    if mask.ndim != 2 or mask.shape[1] != N_DRAFT_ACTIONS:
        raise ValueError(f"a draft legal mask has shape (N, {N_DRAFT_ACTIONS}), got {mask.shape}")
    rows = np.ascontiguousarray(mask.astype(np.bool_, copy=False)).view(np.uint8)
    out = np.empty(len(mask), np.int64)
    seed = seed_from(np.random.default_rng() if rng is None else rng)
    main_kernel("sample_mask", len(mask))(rows, seed, out)
    return out


class DraftBatch(RecordBatch):
    """N games of Patchwork Draft under one rule set, stored as a structured numpy array."""

    DTYPE = DRAFT_STATE_DTYPE
    DTYPE_NAME = "patchwork_env.engine.draft_kernels.DRAFT_STATE_DTYPE"
    N_ACTIONS = N_DRAFT_ACTIONS
    KERNELS = _KERNELS
    ERROR_TEXT = _ERROR_TEXT
    ERR_OUT_OF_RANGE = dk.ERR_OUT_OF_RANGE
    format_action = staticmethod(format_draft_action)
    check_actions = staticmethod(check_kernel)

    def __init__(self, state: np.ndarray, rules: str | DraftRules = "default",
                 rng: np.random.Generator | None = None) -> None:
        self._hold(state, rng)
        self.rules = get_draft_rules(rules)
        self.move_args = star_args(self.rules)
        """The rule arguments every move kernel takes, in order."""

    # ----- construction -------------------------------------------------------------
    @classmethod
    def new(cls, n: int, seed: int | None = None,
            rules: str | DraftRules = "default") -> DraftBatch:
        """``n`` games with random setups, reproducible from ``seed``."""
        if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 1:
            raise ValueError(f"a batch needs at least one game, got n={n!r}")
        batch = cls(np.zeros(int(n), DRAFT_STATE_DTYPE), rules,
                    np.random.default_rng(check_seed(seed)))
        batch.reset()
        return batch

    @classmethod
    def from_setups(cls, decks: Any, first_players: Any, rules: str | DraftRules = "default",
                    seed: int | None = None) -> DraftBatch:
        """Games with explicit deck orders (face-up patches first, then the deck from the
        top) and first players."""
        decks = [check_deck(d) for d in decks]
        if not decks:
            raise ValueError("a batch needs at least one game, got no decks")
        first = check_first_players(first_players, len(decks))
        batch = cls(np.zeros(len(decks), DRAFT_STATE_DTYPE), rules,
                    np.random.default_rng(check_seed(seed)))
        set_up_games(batch.state, np.arange(len(decks)), np.array(decks, np.int8), first,
                     batch.rules.start_buttons)
        return batch

    @classmethod
    def from_seeds(cls, seeds: Sequence[int], rules: str | DraftRules = "default"
                   ) -> DraftBatch:
        """One game per seed, each set up exactly as ``DraftGame.new(seed)`` would."""
        setups = [draft_random_setup(np.random.default_rng(check_seed(s))) for s in seeds]
        return cls.from_setups([d for d, _ in setups], [f for _, f in setups], rules,
                               seed=seeds[0] if len(seeds) else None)

    def redeal(self, seed: np.random.Generator | int) -> DraftBatch:
        """A copy of the games with each face-down deck reshuffled from ``seed``: what the
        players can see (quilts, buttons, points, the face-up row, the set of patches
        still in the deck, whose turn) is unchanged; only the hidden order differs."""
        copy = self.copy()
        copy._kernel("redeal")(copy._state, seed_from(seed))
        return copy

    # ----- resetting ----------------------------------------------------------------
    def reset(self, rows: Any = None, rng: np.random.Generator | None = None) -> None:
        """Start new random games in ``rows`` (all rows by default)."""
        idx = np.arange(len(self)) if rows is None else np.atleast_1d(np.arange(len(self))[rows])
        seed = self._seed(rng)
        self._kernel("start_games", len(idx))(self._state, idx, seed, self.rules.start_buttons)

    def reset_done(self, rng: np.random.Generator | None = None) -> np.ndarray:
        """Start new random games wherever a game is over; returns the rows reset."""
        rows = np.empty(len(self), np.int64)
        seed = self._seed(rng)
        n = restart_finished(self._state, seed, self.rules.start_buttons, rows)
        return rows[:n]

    # ----- field views ----------------------------------------------------------------
    @property
    def points(self) -> np.ndarray:
        """``(N, 2)`` row, column and star points of each player (rules 13.4, 13.5)."""
        return self._views["points"]

    @property
    def face_up(self) -> np.ndarray:
        """``(N, 3)`` patch id of each slot of the face-up row, -1 for an empty slot."""
        return self._views["row"]

    @property
    def deck_size(self) -> np.ndarray:
        """``(N,)`` patches left in each face-down deck."""
        return N_PATCHES - self._views["drawn"].astype(np.int64)

    # ----- batch operations --------------------------------------------------------------
    def playout(self, rng: np.random.Generator | int | None = None, until: Any = None) -> None:
        """Play every unfinished game with uniformly random legal moves: to its end, or,
        with ``until`` (a seat per game, or one for all), until that seat is to move."""
        stop = np.full(len(self), -1, np.int8)
        if until is not None:
            stop[:] = until
        self._kernel("playout")(self._state, self._seed(rng),
                                      stop, *self.move_args)

    def scores(self) -> np.ndarray:
        """``(N, 2) int64``: the current score of each player (rule 13.8)."""
        out = np.empty((len(self), 2), np.int64)
        self._kernel("scores")(self.state, out)
        return out

    def winners(self) -> np.ndarray:
        """``(N,) int64``: the winner of each finished game, -1 where still playing."""
        out = np.empty(len(self), np.int64)
        self._kernel("winners")(self.state, out)
        return out

    def __repr__(self) -> str:
        return (f"DraftBatch(n={len(self)}, rules={self.rules}, "
                f"over={int(self.done.sum())})")


__all__ = ["DRAFT_STATE_DTYPE", "DraftBatch", "check_deck", "draft_random_setup",
           "draft_random_setups", "sample_draft_legal", "star_args"]
