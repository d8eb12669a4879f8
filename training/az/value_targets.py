"""Value targets: the games' outcomes, mixed with random playouts and the search's values.

A fresh network knows nothing, and the outcome of one self-play game is a noisy label for
every position of that game. The mean result of ``k`` random playouts from a position
(:func:`~patchwork_env.agents.az.playouts.playout_values`, one compiled call for thousands of
positions) is a label of its own for each position, and already a useful value: plain
Monte Carlo search with such playouts beats the greedy player. Early in a run the value
target mixes this estimate with the game's outcome (:func:`mixed_targets`), and the mix
moves towards the outcome as the network's own play takes over (see
``AZOptions.playout_weight``). Both functions live with the search
(:mod:`patchwork_env.agents.az.playouts`), which mixes the same estimates into its leaves.

The search's value of each position it searched (the root's value after its simulations)
is another label with less noise than one game's outcome; :func:`bootstrapped_targets`
mixes it in (``AZOptions.root_value_weight``).
"""

from __future__ import annotations

import numpy as np

from patchwork_env.agents.az.playouts import mixed_targets, playout_values


def bootstrapped_targets(values: np.ndarray, root_values: np.ndarray, weight: float
                         ) -> np.ndarray:
    """``values`` with the search's ``root_values`` mixed in at ``weight``, where there is
    one (``NaN`` marks a forced move that was not searched: its target stays as it was)."""
    searched = ~np.isnan(root_values)
    out = values.astype(np.float32, copy=True)
    out[searched] = mixed_targets(values[searched], root_values[searched], weight)
    return out


__all__ = ["bootstrapped_targets", "mixed_targets", "playout_values"]
