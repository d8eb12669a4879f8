"""The one interface every player implements, from uniform random to a person at a terminal.

An agent is batch-capable: it is handed a :class:`~patchwork_env.GameBatch` and the rows in
which it must move, and returns one legal action per row. Every agent owns a numpy
generator built from its seed, so the same seed and the same games give the same moves.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np

from patchwork_env import Game, GameBatch


class Agent(ABC):
    """A player: ``act(batch, rows)`` returns one legal action for each listed game."""

    spec: str = "agent"
    """The registry spec that builds this agent (``"greedy"``, ``"mcts:400"``, ...)."""

    def __init__(self, seed: int | None = None) -> None:
        self.seed = seed
        self.rng = np.random.default_rng(seed)

    def reseed(self, seed: int | None) -> None:
        """Restart the agent's generator from ``seed``: from here on it plays as an agent
        built with that seed would (an environment's ``reset(seed)`` calls this)."""
        self.seed = seed
        self.rng = np.random.default_rng(seed)

    @abstractmethod
    def act(self, batch: GameBatch, rows: np.ndarray) -> np.ndarray:
        """``(len(rows),) int64``: an action for each game ``batch[rows]``.

        Every listed game must be unfinished; the agent moves for whoever is to move there.
        """

    def act_game(self, game: Game) -> int:
        """The action this agent plays in a single :class:`~patchwork_env.Game`."""
        if game.is_over:
            raise ValueError("the game is over: there is no move to choose")
        return int(self.act(game.batch, np.zeros(1, np.int64))[0])

    def __repr__(self) -> str:
        return f"{type(self).__name__}(spec={self.spec!r}, seed={self.seed!r})"


def check_rows(batch: GameBatch, rows: np.ndarray) -> np.ndarray:
    """``rows`` as an int64 array; ``ValueError`` if one is out of range or its game is over."""
    rows = np.asarray(rows, dtype=np.int64).reshape(-1)
    if len(rows) and (rows.min() < 0 or rows.max() >= len(batch)):
        raise ValueError(f"rows must lie in 0..{len(batch) - 1}")
    if batch.done[rows].any():
        raise ValueError(f"no move to choose in finished games {rows[batch.done[rows]].tolist()}")
    return rows
