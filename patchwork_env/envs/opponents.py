"""Opponents: who plays the seat the learner does not hold in the single-agent environments.

An :class:`Opponent` moves in whole batches of games. Three kinds come with the library:

* :class:`RandomOpponent` (``"random"``): uniform over the legal moves, every run of its
  moves in the batch played by one compiled call;
* :class:`PolicyOpponent`: a policy ``(observations, masks) -> actions`` over batches,
  such as a frozen copy of the learner;
* :class:`AgentOpponent`: any object with ``act(batch, rows) -> actions`` (the interface of
  the players in :mod:`patchwork_env.agents`).

The environments take an opponent object, a policy, an agent or ``"random"``
(:func:`as_opponent`); they never look names up. Named players (``"greedy"``,
``"mcts:200"``, ...) come from the agents layer:
``patchwork_env.agents.make_opponent("greedy", seed=0)``.

Whatever an opponent returns is checked before it is played: a wrong length, a
non-integer, an action out of range, ``-1`` or an illegal move raises ``ValueError``
naming the opponent, and so does an agent that changes the games it is shown, so a
misbehaving opponent can neither hang nor corrupt a game.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any

import numpy as np

from patchwork_env.engine.batch import GameBatch
from patchwork_env.envs.game_kinds import kind_of

Policy = Callable[[np.ndarray, np.ndarray], Any]
"""``policy(observations (k, D) float32, masks (k, 2026) bool) -> (k,) actions``."""


class Opponent(ABC):
    """Plays the seat the learner does not hold."""

    name: str = "opponent"

    @abstractmethod
    def act(self, batch: GameBatch, rows: np.ndarray, rng: np.random.Generator) -> Any:
        """``(len(rows),)`` legal actions for the player to move in games ``rows``."""

    @property
    def infallible(self) -> bool:
        """Whether :meth:`reply` can never fail, so that a duel need not be ready to undo
        it: true of the built-in :class:`RandomOpponent` alone (its moves come from the
        engine's legal-move sampler), not of subclasses, which may change what it does."""
        return type(self) is RandomOpponent

    def reseed(self, seed: int | None) -> None:
        """Make the opponent's own choices repeat from ``seed`` (an env's ``reset(seed)``).

        Opponents without randomness of their own ignore it.
        """
        return

    def start_games(self, rows: np.ndarray) -> None:
        """The games ``rows`` are about to start: an opponent that picks a player per game
        (a pool of past selves, say) does it here. Most opponents ignore it."""
        return

    def reply(self, batch: GameBatch, seats: np.ndarray, rng: np.random.Generator) -> None:
        """Move in every unfinished game until the learner (``seats``) is to move again."""
        while True:
            to_move = batch.to_move
            rows = np.flatnonzero((to_move >= 0) & (to_move != seats))
            if not len(rows):
                return
            actions = np.full(len(batch), -1, np.int64)
            actions[rows] = self._checked(self.act(batch, rows, rng), len(rows),
                                          kind_of(batch).n_actions)
            try:
                batch.step(actions)
            except ValueError as e:
                raise ValueError(f"opponent {self.name} played an illegal move: {e}") from None

    def _checked(self, actions: Any, n: int, n_actions: int) -> np.ndarray:
        """``(n,) int64`` actions in ``0..n_actions - 1``; ``ValueError`` naming this
        opponent otherwise."""
        try:
            acts = np.asarray(actions)
        except Exception as e:  # an object numpy cannot turn into an array at all
            raise ValueError(f"opponent {self.name} must return {n} integer actions, got "
                             f"{type(actions).__name__} ({e})") from None
        if acts.shape != (n,) or acts.dtype.kind not in "iu":
            raise ValueError(f"opponent {self.name} must return {n} integer actions, got "
                             f"{acts.dtype} array of shape {acts.shape}")
        if acts.dtype.kind == "u" and acts.max() >= n_actions:
            raise ValueError(f"opponent {self.name} returned action {int(acts.max())}, "
                             f"outside 0..{n_actions - 1}")
        acts = acts.astype(np.int64)
        bad = (acts < 0) | (acts >= n_actions)
        if bad.any():
            raise ValueError(f"opponent {self.name} returned action {int(acts[bad][0])}, "
                             f"outside 0..{n_actions - 1}")
        return acts

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"


class RandomOpponent(Opponent):
    """Uniform over the legal moves, drawn by the engine's compiled sampler."""

    name = "random"

    def act(self, batch: GameBatch, rows: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return batch.random_actions(rng)[rows]

    def reply(self, batch: GameBatch, seats: np.ndarray, rng: np.random.Generator) -> None:
        # One compiled call plays every run of opponent moves in the batch.
        batch.playout(rng, until=seats)


class PolicyOpponent(Opponent):
    """A policy over observation and mask batches, e.g. a frozen copy of the learner."""

    def __init__(self, policy: Policy, name: str | None = None) -> None:
        self.policy = policy
        self.name = name or getattr(policy, "__name__", type(policy).__name__)

    def act(self, batch: GameBatch, rows: np.ndarray, rng: np.random.Generator) -> Any:
        seats = batch.to_move[rows].astype(np.int64)
        obs = kind_of(batch).observe(batch.state[rows], batch.rules, seats)
        return self.policy(obs, batch.legal_mask()[rows])


class AgentOpponent(Opponent):
    """An agent with ``act(batch, rows) -> actions``; ``reseed`` reaches the agent's own
    ``reseed(seed)`` where it has one."""

    def __init__(self, agent: Any) -> None:
        self.agent = agent
        self.name = getattr(agent, "spec", None) or type(agent).__name__

    def act(self, batch: GameBatch, rows: np.ndarray, rng: np.random.Generator) -> Any:
        before = batch.state.tobytes()
        actions = self.agent.act(batch, rows)
        if batch.state.tobytes() != before:  # the duel's transaction puts the games back
            raise ValueError(f"opponent {self.name} changed the games it was asked to move "
                             "in: an agent must return its actions, not play them")
        return actions

    def reseed(self, seed: int | None) -> None:
        reseed = getattr(self.agent, "reseed", None)
        if seed is not None and callable(reseed):
            reseed(seed)


def as_opponent(opponent: Any) -> Opponent:
    """An :class:`Opponent` from an opponent, ``"random"``, an agent or a policy callable."""
    if isinstance(opponent, Opponent):
        return opponent
    if isinstance(opponent, str):
        if opponent == "random":
            return RandomOpponent()
        raise ValueError(f"unknown opponent {opponent!r}: the environments know only "
                         f"'random'; build the players of the agent registry with "
                         f"patchwork_env.agents.make_opponent({opponent!r})")
    if callable(getattr(opponent, "act", None)):
        return AgentOpponent(opponent)
    if callable(opponent):
        return PolicyOpponent(opponent)
    raise TypeError("opponent must be 'random', an Opponent, an agent with act(batch, rows) "
                    f"or a policy (observations, masks) -> actions; got {type(opponent).__name__}")


__all__ = ["AgentOpponent", "Opponent", "Policy", "PolicyOpponent", "RandomOpponent",
           "as_opponent"]
