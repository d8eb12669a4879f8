"""Random-playout values: what positions are worth if both players played on at random,
estimated by the engine in one compiled call for a whole batch.

Plain Monte Carlo search values its leaves this way, and beats the greedy player doing
so. The search-guided agents use the same estimate in two places: mixed into the value
of a search's leaves (``GumbelSearch(leaf_playouts=...)``, as AlphaGo mixed its value
network with rollouts), and as an early value target in training
(``training/az/value_targets.py``).
"""

from __future__ import annotations

import numpy as np

from patchwork_env import GameBatch
from patchwork_env.agents.az.tree import outcome_values
from patchwork_env.data.rules import Rules


def playout_values(states: np.ndarray, rules: Rules, playouts: int, seed: int,
                   score_weight: float = 0.0, score_scale: float = 20.0) -> np.ndarray:
    """``(N,) float32``: for each unfinished position of ``states``, the mean result (as the
    search values a finished game) of ``playouts`` uniformly random playouts, for the player
    to move there."""
    if playouts < 1:
        raise ValueError(f"playouts must be at least 1, got {playouts}")
    n = len(states)
    if n == 0:
        return np.zeros(0, np.float32)
    repeated = np.repeat(states, playouts)
    games = GameBatch(repeated, rules, np.random.default_rng(seed))
    games.playout()
    players = np.repeat(states["to_move"].astype(np.int64), playouts)
    out = np.empty(n * playouts, np.float64)
    outcome_values(games.state, players, rules.bonus_points, score_weight, score_scale, out)
    return out.reshape(n, playouts).mean(axis=1).astype(np.float32)


def mixed_targets(values: np.ndarray, estimates: np.ndarray, weight: float) -> np.ndarray:
    """``weight * estimates + (1 - weight) * values``, as ``float32``: a value (the
    network's, or a game's outcome) mixed with playout estimates."""
    if not 0.0 <= weight <= 1.0:
        raise ValueError(f"the playout weight must lie in [0, 1], got {weight}")
    return (weight * estimates + (1.0 - weight) * values).astype(np.float32)
