"""Auxiliary targets of search-guided training: how each position's game ended, beyond
who won.

A game's result is one number shared by its ~44 positions, and its sign is all a value
target keeps of it. The end of the game says much more, and every position of the game
can learn it: the final score difference (a distribution over :data:`SCORE_BINS` values,
not only its sign) and which cells of each quilt ended up covered. Networks built with
``aux=True`` (:class:`~patchwork_env.agents.az.net.AZNet`) predict both from every
position, which gives their trunk dense signal about the board: the targets of
KataGo's score and ownership heads, in Patchwork's terms.

Both are stored with each sample from the mover's side: ``score_diffs`` (the mover's
final score minus the opponent's) and ``final_quilts`` (``(N, 2, 2) uint64`` bitboards,
the mover's final quilt first). Positions whose game's end is unknown (the replay buffers
of older runs) carry no auxiliary targets.
"""

from __future__ import annotations

import numpy as np

from patchwork_env import GameBatch
from patchwork_env.agents.az.net import SCORE_LIMIT
from patchwork_env.data.rules import Rules
from patchwork_env.training.az.symmetry import transform_quilts


def final_targets(states: np.ndarray, final_states: np.ndarray, rules: Rules
                  ) -> tuple[np.ndarray, np.ndarray]:
    """``(score_diffs (N,) int16, final_quilts (N, 2, 2) uint64)`` of positions
    ``states`` whose games ended as ``final_states`` (one per position), each from the side
    of the player to move in the position."""
    movers = states["to_move"].astype(np.int64)
    if ((movers != 0) & (movers != 1)).any():
        raise ValueError("every position with auxiliary targets must have a player to move")
    rows = np.arange(len(states))
    scores = GameBatch(np.ascontiguousarray(final_states), rules).scores()
    diffs = scores[rows, movers] - scores[rows, 1 - movers]
    quilts = final_states["quilt"]
    own_first = np.stack([quilts[rows, movers], quilts[rows, 1 - movers]], axis=1)
    return diffs.astype(np.int16), own_first.astype(np.uint64)


def score_bins(score_diffs: np.ndarray) -> np.ndarray:
    """The score head's bin of each final score difference (clipped to the head's range)."""
    return np.clip(score_diffs.astype(np.int64), -SCORE_LIMIT, SCORE_LIMIT) + SCORE_LIMIT


def ownership(final_quilts: np.ndarray, symmetry: np.ndarray | int = 0) -> np.ndarray:
    """``(N, 162) float32`` ownership targets of ``final_quilts`` moved by ``symmetry``
    (as the replay buffer moves the sample's position): 1 where a cell ended covered."""
    cells = transform_quilts(final_quilts, symmetry)
    return cells.reshape(len(final_quilts), -1).astype(np.float32)
