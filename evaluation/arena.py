"""Playing agents against each other: paired games over one batch, every move recorded.

A match between ``a`` and ``b`` plays two games per seed: both start from the circle and
first player that the seed draws (``Game.new(seed)``; in Patchwork Draft the deck order and
first player of ``DraftGame.new(seed)``), ``a`` holding seat 0 in the first and seat 1 in
the second, so neither agent profits from a lucky setup or seat.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from patchwork_env.agents import GAMES
from patchwork_env.agents.base import Agent
from patchwork_env.data.draft_rules import DraftRules
from patchwork_env.data.rules import Rules
from patchwork_env.envs.game_kinds import KINDS


@dataclass
class GameRecord:
    """One finished game of a match, seen from the seats."""

    seed: int
    """The seed that drew the setup: the circle (the draft's deck) and the first player."""
    seat_a: int
    """The seat (player 0 or 1) agent ``a`` held."""
    scores: tuple[int, int]
    """Final score of player 0 and player 1."""
    winner: int
    """The winning seat."""
    moves: list[int] = field(default_factory=list)
    """Every action of the game in order."""

    @property
    def a_won(self) -> bool:
        return self.winner == self.seat_a

    @property
    def score_a(self) -> int:
        return self.scores[self.seat_a]

    @property
    def score_b(self) -> int:
        return self.scores[1 - self.seat_a]


def play_match(a: Agent, b: Agent, seeds: Sequence[int],
               rules: str | Rules | DraftRules = "default",
               on_game_over: Callable[[GameRecord], None] | None = None,
               game: str = "patchwork") -> list[GameRecord]:
    """Play ``a`` against ``b`` twice per seed, seats swapped, at ``game`` (one of
    :data:`~patchwork_env.agents.GAMES`, with a rules preset of that game); the records in
    seed order."""
    if game not in KINDS:
        raise ValueError(f"unknown game {game!r}: choose from {', '.join(GAMES)}")
    game_seeds = np.repeat(np.asarray(seeds, dtype=np.int64), 2)
    seat_a = np.tile([0, 1], len(seeds))
    batch = KINDS[game].batch_type.from_seeds([int(s) for s in game_seeds], rules)
    moves: list[list[int]] = [[] for _ in game_seeds]
    records: list[GameRecord | None] = [None] * len(game_seeds)
    while not batch.done.all():
        to_move = batch.to_move
        actions = np.full(len(batch), -1, np.int64)
        for agent, seat in ((a, seat_a), (b, 1 - seat_a)):
            rows = np.flatnonzero(to_move == seat)
            if len(rows):
                actions[rows] = agent.act(batch, rows)
        batch.step(actions)  # checked: an agent's illegal move is an error, not a loss
        for row in np.flatnonzero(actions >= 0):
            moves[row].append(int(actions[row]))
        finished = np.flatnonzero((actions >= 0) & batch.done)
        if len(finished):
            scores = batch.scores()
            winners = batch.winners()
            for row in finished:
                records[row] = GameRecord(int(game_seeds[row]), int(seat_a[row]),
                                          (int(scores[row, 0]), int(scores[row, 1])),
                                          int(winners[row]), moves[row])
                if on_game_over is not None:
                    on_game_over(records[row])
    return [r for r in records if r is not None]
