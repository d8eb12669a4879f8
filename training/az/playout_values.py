"""Value targets from random playouts: what a position is worth if both players played on
at random, estimated by the engine in one compiled call.

A fresh network knows nothing, and the outcome of one self-play game is a noisy label for
every position of that game. The mean result of ``k`` random playouts from a position is a
label of its own for each position, cheap to compute with the batch engine (thousands of
playouts per second per core), and already a useful value: plain Monte Carlo search with
such playouts beats the greedy player. Early in a run the value target mixes this estimate
with the game's outcome (:func:`mixed_targets`), and the mix moves towards the outcome as
the network's own play takes over (see ``AZOptions.playout_weight``).
"""

from __future__ import annotations

import numpy as np

from patchwork_env import GameBatch
from patchwork_env.agents.az_tree import outcome_values
from patchwork_env.rules import Rules


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


def mixed_targets(outcomes: np.ndarray, estimates: np.ndarray, weight: float) -> np.ndarray:
    """``weight * estimates + (1 - weight) * outcomes``, as ``float32``."""
    if not 0.0 <= weight <= 1.0:
        raise ValueError(f"the playout weight must lie in [0, 1], got {weight}")
    return (weight * estimates + (1.0 - weight) * outcomes).astype(np.float32)
