"""The greedy player: the best move one step ahead by the heuristic of :mod:`.heuristic`.

It buys the patch whose earnings over the rest of the game (income times the income spaces
still ahead, two points per covered cell) best exceed its cost and time, or advances when
nothing pays; it places each patch where the quilt stays easiest to fill (few isolated
holes, a short ragged edge, room for the next patches of the circle), fills its worst hole
with each leather patch and goes for the 7x7 bonus once a square is nearly covered.
Deterministic: the seed is accepted for the common interface only.
"""

from __future__ import annotations

import numpy as np

from patchwork_env import GameBatch
from patchwork_env.agents.base import Agent, check_rows
from patchwork_env.agents.heuristic import DEFAULT_WEIGHTS, Weights, greedy_actions


class GreedyAgent(Agent):
    """Plays the heuristic's best move (see the module docstring)."""

    spec = "greedy"

    def __init__(self, seed: int | None = None, weights: Weights = DEFAULT_WEIGHTS) -> None:
        super().__init__(seed)
        self.weights = weights

    def act(self, batch: GameBatch, rows: np.ndarray) -> np.ndarray:
        rows = check_rows(batch, rows)
        out = np.empty(len(rows), np.int64)
        greedy_actions(batch.state, rows, batch.tables.arrays, self.weights, out)
        return out
