"""Measuring the learner: paired-seat matches against fixed players, with intervals.

The games are played and summarised by the code of ``evaluate.py`` (the ``agents``
package: the same setup seeds, :func:`~agents.arena.play_match` with seats swapped, the
same Wilson intervals), so the win rates logged during training are those a tournament
reports. The learner is a :class:`~patchwork_env.agents.policy_agent.PolicyAgent` playing
its most likely move: the code the ``ppo`` agent plays a saved model with.
"""

from __future__ import annotations

from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

from patchwork_env import agents
from patchwork_env.agents.arena import play_match
from patchwork_env.agents.policy_agent import PolicyAgent
from patchwork_env.agents.tournament import Pairing, setup_seeds, summarise

EVAL_SEED = 1
"""The tournament seed of the evaluations during training."""
FINAL_EVAL_SEED = 2
"""The tournament seed of the evaluation at the end of a run: other setups than those that
chose the best checkpoint."""


def evaluate(policy: MaskableActorCriticPolicy, opponent: str, games: int,
             seed: int = EVAL_SEED) -> Pairing:
    """Play ``games`` paired games (``games / 2`` setups, seats swapped) against the agent
    ``opponent`` (a registry spec), as ``evaluate.py --games games --seed seed`` would."""
    learner = PolicyAgent(policy, deterministic=True, spec="learner")
    records = play_match(learner, agents.make(opponent, seed=seed), setup_seeds(seed, games))
    return summarise("learner", opponent, records)


def describe(result: Pairing) -> str:
    """``vs greedy:  61.0% of 400 games (95% CI 56.1%..65.6%)``."""
    lo, hi = result.ci_a
    return (f"vs {result.b}: {result.win_rate_a:6.1%} of {result.games} games "
            f"(95% CI {lo:.1%}..{hi:.1%}), mean score difference {result.mean_diff:+.1f}")
