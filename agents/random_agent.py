"""The uniform random player: every legal action equally likely."""

from __future__ import annotations

import numpy as np

from patchwork_env import GameBatch
from patchwork_env.agents.base import Agent, check_rows


class RandomAgent(Agent):
    """Draws each move uniformly from the legal mask (the engine's compiled sampler)."""

    spec = "random"

    def act(self, batch: GameBatch, rows: np.ndarray) -> np.ndarray:
        rows = check_rows(batch, rows)
        return batch[rows].random_actions(self.rng)
