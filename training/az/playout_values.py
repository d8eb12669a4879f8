"""Value targets from random playouts, mixed with the games' outcomes.

A fresh network knows nothing, and the outcome of one self-play game is a noisy label for
every position of that game. The mean result of ``k`` random playouts from a position
(:func:`~patchwork_env.agents.playouts.playout_values`, one compiled call for thousands of
positions) is a label of its own for each position, and already a useful value: plain
Monte Carlo search with such playouts beats the greedy player. Early in a run the value
target mixes this estimate with the game's outcome (:func:`mixed_targets`), and the mix
moves towards the outcome as the network's own play takes over (see
``AZOptions.playout_weight``).
"""

from __future__ import annotations

import numpy as np

from patchwork_env.agents.playouts import playout_values

__all__ = ["mixed_targets", "playout_values"]


def mixed_targets(outcomes: np.ndarray, estimates: np.ndarray, weight: float) -> np.ndarray:
    """``weight * estimates + (1 - weight) * outcomes``, as ``float32``."""
    if not 0.0 <= weight <= 1.0:
        raise ValueError(f"the playout weight must lie in [0, 1], got {weight}")
    return (weight * estimates + (1.0 - weight) * outcomes).astype(np.float32)
