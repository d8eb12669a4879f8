"""What the environments pay: the end-of-game reward of a seat, under the two schemes.

``"win"``: +1 to the winner, -1 to the loser. ``"score"``: ``score_scale`` times the
player's score minus the opponent's. Both are zero-sum; all three environments use them.
"""

from __future__ import annotations

import numpy as np

from patchwork_env.data.validation import check_number

REWARD_MODES = ("win", "score")


def check_reward(reward: str, score_scale: float) -> None:
    """``ValueError`` unless ``reward``/``score_scale`` name a valid reward scheme."""
    if reward not in REWARD_MODES:
        raise ValueError(f"reward must be one of {REWARD_MODES}, got {reward!r}")
    if not check_number(score_scale, "score_scale") > 0:
        raise ValueError(f"score_scale must be a positive number, got {score_scale!r}")


def final_rewards(scores: np.ndarray, winners: np.ndarray, players: np.ndarray,
                  reward: str = "win", score_scale: float = 0.02) -> np.ndarray:
    """``(k,) float64``: the end-of-game reward of ``players`` in finished games.

    ``"win"``: +1 to the winner, -1 to the loser. ``"score"``: ``score_scale`` times the
    player's score minus the opponent's (0 on equal scores, whoever won the tie-break).
    """
    players = np.asarray(players)
    if reward == "win":
        return np.where(np.asarray(winners) == players, 1.0, -1.0)
    rows = np.arange(len(players))
    diff = scores[rows, players] - scores[rows, 1 - players]
    return diff * float(score_scale)
