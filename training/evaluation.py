"""Measuring the learner: paired-seat matches against fixed players, with intervals.

The games are played and summarised by the code of ``evaluate.py`` (the ``agents``
package: the same setup seeds, :func:`~agents.arena.play_match` with seats swapped, the
same Wilson intervals), so the win rates logged during training are those a tournament
reports. The learner is a :class:`~patchwork_env.agents.policy_agent.PolicyAgent` playing
its most likely move: the code the ``ppo`` agent plays a saved model with.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

import numpy as np
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from tqdm import tqdm

from patchwork_env import GameBatch, agents
from patchwork_env.agents.policy_agent import PolicyAgent
from patchwork_env.evaluation.arena import GameRecord, play_match
from patchwork_env.evaluation.tournament import Pairing, setup_seeds, summarise

EVAL_SEED = 1
"""The tournament seed of the evaluations during training."""
FINAL_EVAL_SEED = 2
"""The tournament seed of the evaluation at the end of a run: other setups than those that
chose the best checkpoint."""

Progress = Callable[[int, int], None]
"""Called as ``progress(games_finished, turns_played)`` while a match is played."""


class _WatchedLearner(PolicyAgent):
    """The learner, reporting each of its turns (one call of ``act`` for all its games)."""

    def __init__(self, policy: MaskableActorCriticPolicy, on_turn: Callable[[], None]) -> None:
        super().__init__(policy, deterministic=True, spec="learner")
        self.on_turn = on_turn

    def act(self, batch: GameBatch, rows: np.ndarray) -> np.ndarray:
        actions = super().act(batch, rows)
        self.on_turn()
        return actions


def evaluate(policy: MaskableActorCriticPolicy, opponent: str, games: int,
             seed: int = EVAL_SEED, progress: Progress | None = None) -> Pairing:
    """Play ``games`` paired games (``games / 2`` setups, seats swapped) against the agent
    ``opponent`` (a registry spec), as ``evaluate.py --games games --seed seed`` would;
    ``progress`` hears of every turn and finished game."""
    counts = {"games": 0, "turns": 0}

    def report(key: str) -> None:
        counts[key] += 1
        if progress is not None:
            progress(counts["games"], counts["turns"])

    def game_over(_: GameRecord) -> None:
        report("games")

    learner = _WatchedLearner(policy, lambda: report("turns"))
    records = play_match(learner, agents.make(opponent, seed=seed), setup_seeds(seed, games),
                         on_game_over=game_over)
    return summarise("learner", opponent, records)


def evaluate_with_bar(policy: MaskableActorCriticPolicy, opponent: str, games: int,
                      seed: int, desc: str, enabled: bool = True) -> Pairing:
    """:func:`evaluate` with a progress bar of its games on stderr (its turns beside it, so
    that it moves while the games, all played at once, are under way)."""
    with tqdm(total=games, unit="game", desc=desc, disable=not enabled, file=sys.stderr,
              dynamic_ncols=True, leave=False) as bar:
        def progress(finished: int, turns: int) -> None:
            bar.n = finished
            bar.set_postfix_str(f"turn {turns}", refresh=True)

        return evaluate(policy, opponent, games, seed, progress)


def describe(result: Pairing) -> str:
    """``vs greedy:  61.0% of 400 games (95% CI 56.1%..65.6%), mean score difference +4.4``."""
    lo, hi = result.ci_a
    return (f"vs {result.b}: {result.win_rate_a:6.1%} of {result.games} games "
            f"(95% CI {lo:.1%}..{hi:.1%}), mean score difference {result.mean_diff:+.1f}")
