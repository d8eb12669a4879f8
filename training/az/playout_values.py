"""Value targets from random playouts, mixed with the games' outcomes.

A fresh network knows nothing, and the outcome of one self-play game is a noisy label for
every position of that game. The mean result of ``k`` random playouts from a position
(:func:`~patchwork_env.agents.playouts.playout_values`, one compiled call for thousands of
positions) is a label of its own for each position, and already a useful value: plain
Monte Carlo search with such playouts beats the greedy player. Early in a run the value
target mixes this estimate with the game's outcome (:func:`mixed_targets`), and the mix
moves towards the outcome as the network's own play takes over (see
``AZOptions.playout_weight``). Both functions live with the search
(:mod:`patchwork_env.agents.playouts`), which mixes the same estimates into its leaves.
"""

from __future__ import annotations

from patchwork_env.agents.playouts import mixed_targets, playout_values

__all__ = ["mixed_targets", "playout_values"]
