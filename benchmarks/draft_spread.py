"""How far apart Patchwork Draft's agents play, under its rules and under other rule data.

    python benchmarks/draft_spread.py [--games N] [--seed S] [--simulations K]

For each rule set below, plays ``greedy`` against ``random``, ``mcts:K`` against ``greedy``
and a search that *sees the deck's hidden order* against ``greedy`` (``N`` paired games
each, the setups drawn from ``S``), and prints the win rates with 95% intervals, the
share of tied games and the mean final scores. The rule sets are the default (rules 13.1
and 13.5 of docs/rules.md), no stars, every patch starred, nine star squares, and 10 or
20 starting buttons instead of 5.

The deck-seeing search is the same UCT on the true game, one tree of ``K`` simulations.
No player may read that order: its row measures what the search gains over ``greedy``
once nothing is hidden from it, so whether the hidden deck is what keeps the fair search
close to ``greedy``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from patchwork_env import agents
from patchwork_env.agents.base import Agent
from patchwork_env.agents.mcts.draft_agent import DraftMCTSAgent
from patchwork_env.data.draft_rules import DraftRules
from patchwork_env.data.patches import PATCHES
from patchwork_env.engine.draft_batch import DraftBatch
from patchwork_env.evaluation.arena import play_match
from patchwork_env.evaluation.ratings import wilson_interval

NINE_SQUARES = (10, 13, 16, 37, 40, 43, 64, 67, 70)
"""b2 e2 h2 b5 e5 h5 b8 e8 h8: a star square in the middle of each 3x3 block."""

RULE_SETS: dict[str, DraftRules] = {
    "default": DraftRules(),
    "no stars": DraftRules(starred_patches=(), star_squares=()),
    "every patch starred": DraftRules(starred_patches=tuple(p.id for p in PATCHES)),
    "nine star squares": DraftRules(star_squares=NINE_SQUARES),
    "10 starting buttons": DraftRules(start_buttons=10),
    "20 starting buttons": DraftRules(start_buttons=20),
}
"""The rule sets compared: the default and one change each."""


class DeckSeeingMCTS(DraftMCTSAgent):
    """The draft's UCT searching the true game, hidden deck order included: a bound for
    what any searching player could gain, never a fair player."""

    def __init__(self, simulations: int, seed: int) -> None:
        super().__init__(str(simulations), seed=seed, deal_simulations=simulations)
        self.spec = f"deck-seeing mcts:{simulations}"

    def view(self, batch: DraftBatch, row: int) -> DraftBatch:
        return batch[row : row + 1]

    def deal(self, game: DraftBatch, deals: np.random.Generator) -> DraftBatch:
        return game


def row(rules_name: str, a: Agent, b: Agent, seeds: range, rules: DraftRules) -> str:
    """One table row: ``a`` against ``b``, paired games on ``seeds``."""
    start = time.perf_counter()
    records = play_match(a, b, seeds, rules=rules, game="draft")
    wins = sum(r.a_won for r in records)
    lo, hi = wilson_interval(wins, len(records))
    ties = np.mean([r.score_a == r.score_b for r in records])
    score_a = np.mean([r.score_a for r in records])
    score_b = np.mean([r.score_b for r in records])
    return (f"| {rules_name} | {a.spec} vs {b.spec} | {100 * wins / len(records):.1f}% "
            f"| [{100 * lo:.1f}, {100 * hi:.1f}] | {100 * ties:.0f}% "
            f"| {score_a:.1f} / {score_b:.1f} | {time.perf_counter() - start:.0f} s |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, default=400, help="paired games per row (even)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--simulations", type=int, default=1000,
                        help="simulations per move of both searches")
    args = parser.parse_args()
    if args.games < 2 or args.games % 2 or args.seed < 0 or args.simulations < 1:
        parser.error("--games must be even and at least 2, --seed at least 0 and "
                     "--simulations at least 1")
    seeds = range(args.seed * 1_000_000, args.seed * 1_000_000 + args.games // 2)
    print("| rules | pairing | win rate of the first | 95% CI | ties | mean scores | time |")
    print("|---|---|---:|---|---:|---|---:|")
    for name, rules in RULE_SETS.items():
        greedy = agents.make("greedy", seed=1, game="draft")
        pairings = [(agents.make("greedy", seed=1, game="draft"),
                     agents.make("random", seed=2, game="draft")),
                    (agents.make(f"mcts:{args.simulations}", seed=3, game="draft"), greedy),
                    (DeckSeeingMCTS(args.simulations, seed=4), greedy)]
        for a, b in pairings:
            print(row(name, a, b, seeds, rules), flush=True)


if __name__ == "__main__":
    main()
