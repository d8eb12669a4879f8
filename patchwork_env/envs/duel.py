"""The learner's games: a batch in which the learner holds one seat and an opponent the other.

A :class:`Duel` sets games up, plays the learner's moves and the opponent's replies, and
pays the learner at the end. It is the one implementation under every single-agent
interface: the Gymnasium env is a duel of one game, the Gymnasium and SB3 vector envs duels
of many. A step is a transaction: if the opponent fails in the middle of it (raises, or
returns something unplayable), every game, seat and generator is put back as it was
before the step, and the error is raised.
"""

from __future__ import annotations

import contextlib
from typing import Any, NamedTuple

import numpy as np

from patchwork_env.data.validation import check_number, check_seat
from patchwork_env.engine.batch import GameBatch
from patchwork_env.engine.draft_batch import DraftBatch
from patchwork_env.envs.game_kinds import kind_of
from patchwork_env.envs.opponents import Opponent, as_opponent
from patchwork_env.envs.rewards import check_reward, final_rewards


class Ended(NamedTuple):
    """The games a restarting :meth:`Duel.step` ended, as they stood at their end."""

    rows: np.ndarray
    observations: np.ndarray
    """``(k, D)``: the final positions, seen by the learner."""
    outcomes: list[dict[str, Any]]
    """:meth:`Duel.outcomes` of those games."""


class Duel:
    """Games in which the learner holds one seat and an :class:`~.opponents.Opponent` the
    other.

    ``learner_seat`` fixes the learner's seat; ``None`` draws it at random for every game.
    After :meth:`start` and :meth:`step` the learner is to move in every unfinished game,
    and :attr:`masks` gives its legal actions. ``batch`` is a :class:`GameBatch` or a
    :class:`DraftBatch`: the duel plays either game.
    """

    def __init__(self, batch: GameBatch | DraftBatch, opponent: Any, seed: int | None = None,
                 learner_seat: int | None = None, reward: str = "win",
                 score_scale: float = 0.02, illegal_reward: float = -1.0) -> None:
        self.learner_seat = check_seat(learner_seat, "learner_seat", allow_none=True)
        check_reward(reward, score_scale)
        self.batch = batch
        self.kind = kind_of(batch)
        """The game played (:mod:`.game_kinds`)."""
        self.opponent: Opponent = as_opponent(opponent)
        self.rng = np.random.default_rng(seed)
        """Draws setups, seats and the random opponent's moves."""
        self.reward = reward
        self.score_scale = float(score_scale)
        self.illegal_reward = check_number(illegal_reward, "illegal_reward")
        n = len(batch)
        self.seats = np.zeros(n, np.int8)
        """The learner's seat in each game."""
        self._n = n
        self._masks = np.zeros((n, self.kind.n_actions), np.bool_)
        self._row_starts = np.arange(n) * self.kind.n_actions
        self._masks_stale = True
        self._scores = np.zeros((n, 2), np.int64)
        self._winners = np.full(n, -1, np.int64)
        self._in_transaction = False
        # Bytes, not records: copying a structured array field by field is slow.
        self._state_bytes = batch.state.view(np.uint8)
        self._saved_state = np.empty_like(self._state_bytes)
        self._saved_seats = np.empty_like(self.seats)
        self.ended: Ended | None = None
        """How the games that the last restarting :meth:`step` restarted had ended."""

    def set_opponent(self, opponent: Any) -> None:
        """Let ``opponent`` (see :func:`~.opponents.as_opponent`) play from the next move."""
        self.opponent = as_opponent(opponent)

    def reseed(self, rng: np.random.Generator, seed: int | None) -> None:
        """Draw from ``rng`` from now on; given a ``seed``, the opponent is reseeded with it
        so that its own choices repeat too."""
        self.rng = rng
        if seed is not None:
            self.opponent.reseed(seed)

    def start(self, rows: np.ndarray, circles: Any = None, first_players: Any = None,
              seats: Any = None) -> None:
        """New games in ``rows``; circles (decks in the draft), first players and learner
        seats are drawn unless given. The opponent makes its opening moves where it starts."""
        with self.transaction():
            self._start(rows, circles, first_players, seats)

    def _start(self, rows: np.ndarray, circles: Any, first_players: Any, seats: Any) -> None:
        self.opponent.start_games(rows)
        if circles is None and first_players is None:
            self.batch.reset(rows, self.rng)  # draws setups as random_setups(rng) does
        else:
            drawn_circles, drawn_first = self.kind.random_setups(self.rng, len(rows))
            fresh = self.kind.batch_type.from_setups(
                drawn_circles if circles is None else circles,
                drawn_first if first_players is None else first_players, self.batch.rules)
            self.batch.state[rows] = fresh.state
        if seats is None:
            seats = (np.full(len(rows), self.learner_seat) if self.learner_seat is not None
                     else self.rng.integers(0, 2, size=len(rows)))
        self.seats[rows] = seats
        self.opponent.reply(self.batch, self.seats, self.rng)
        self._masks_stale = True

    @property
    def masks(self) -> np.ndarray:
        """``(N, n_actions) bool``: the learner's legal actions (none where a game is over)."""
        if self._masks_stale:  # computed once per position, when first asked for
            self.batch.legal_mask(out=self._masks)
            self._masks_stale = False
        return self._masks

    def observe(self, rows: np.ndarray | None = None) -> np.ndarray:
        """``(k, D) float32``: the games ``rows`` (all by default) seen by the learner."""
        observe = self.kind.observe
        if rows is None:
            return observe(self.batch.state, self.batch.rules, self.seats)
        return observe(self.batch.state.take(rows), self.batch.rules, self.seats[rows])

    def step(self, actions: np.ndarray, restart: bool = False
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Play the learner's ``actions`` (ints in range, one per game) and the replies.

        Returns ``(rewards, over, illegal)``: ``-1`` makes no move in that game (a vector
        env's game that is being restarted); an action outside :attr:`masks` ends its game
        with ``illegal_reward`` and leaves the position as it was; a finished game pays
        its final reward. With ``restart``, the games that ended start anew within the
        same transaction; how they ended is kept in :attr:`ended` first.
        """
        with self.transaction(checked=True):
            moving = actions >= 0  # -1: no move for the learner in that game
            # One look-up per game in the flattened masks; where the action is -1 it reads
            # a neighbouring entry, which `moving` discards.
            illegal = moving & ~self.masks.reshape(-1)[self._row_starts + actions]
            self.batch.step(np.where(illegal, -1, actions), check=False)
            self.opponent.reply(self.batch, self.seats, self.rng)
            self._masks_stale = True
            finished = self.batch.done
            over = finished | illegal
            rewards = np.zeros(self._n)
            if not over.any():
                return rewards, over, illegal
            if finished.any():
                self._scores, self._winners = self.batch.scores(), self.batch.winners()
                rows = np.flatnonzero(finished)
                rewards[rows] = final_rewards(self._scores[rows], self._winners[rows],
                                              self.seats[rows], self.reward, self.score_scale)
            rewards[illegal] = self.illegal_reward
            if restart:
                rows = np.flatnonzero(over)
                self.ended = Ended(rows, self.observe(rows), self.outcomes(rows, illegal[rows]))
                self._start(rows, None, None, None)
        return rewards, over, illegal

    def outcomes(self, rows: np.ndarray, illegal: np.ndarray) -> list[dict[str, Any]]:
        """How the games ``rows`` ended (as the last :meth:`step` left them), for ``info``."""
        out = []
        for seat, bad, winner, scores in zip(self.seats[rows].tolist(), illegal.tolist(),
                                             self._winners[rows].tolist(),
                                             self._scores[rows].tolist(), strict=True):
            if bad:
                out.append({"learner_seat": seat, "illegal_action": True, "is_success": False})
                continue
            out.append({"learner_seat": seat, "scores": tuple(scores), "winner": winner,
                        "is_success": winner == seat})
        return out

    def transaction(self, checked: bool = False) -> _Transaction | contextlib.nullcontext:
        """A block after whose failure every game, seat and generator is as before it
        (inside another transaction, the outer one does the work).

        ``checked``: the block's arguments are valid, so only the opponent can fail in it;
        with an :attr:`~.opponents.Opponent.infallible` opponent there is then nothing to
        undo, and no copy of the games is taken.
        """
        if self._in_transaction or (checked and self.opponent.infallible):
            return _NO_TRANSACTION
        return _Transaction(self)


_NO_TRANSACTION = contextlib.nullcontext()


class _Transaction:
    """Puts a duel's games, seats and generator back as they were if its block raises
    (:meth:`Duel.transaction` opens one only where none is open)."""

    def __init__(self, duel: Duel) -> None:
        self.duel = duel

    def __enter__(self) -> None:
        d = self.duel
        d._in_transaction = True
        np.copyto(d._saved_state, d._state_bytes)  # buffers made once: no allocation per step
        np.copyto(d._saved_seats, d.seats)
        self.rng_state = d.rng.bit_generator.state

    def __exit__(self, kind: Any, error: Any, trace: Any) -> bool:
        d = self.duel
        d._in_transaction = False
        if kind is not None:
            np.copyto(d._state_bytes, d._saved_state)
            np.copyto(d.seats, d._saved_seats)
            d.rng.bit_generator.state = self.rng_state
            d._masks_stale = True
        return False
