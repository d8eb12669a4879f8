"""The Monte Carlo tree search player of Patchwork Draft: determinized UCT.

The order of the face-down deck is hidden from both players (rule 13.1), so the player
never reads it. It first forgets it: its copy of the game holds the unseen patches in
increasing order, so two games that differ only in that order are, to it, the same game.
It then deals that copy out anew many times
(:meth:`~patchwork_env.engine.draft_batch.DraftBatch.redeal`, a fresh seed each time),
searches each dealing with UCT and random rollouts (:mod:`.draft_search`) for a share of
the budget, and adds up the visits and wins of the root's moves over all the dealings;
it plays the most visited. Each dealing is searched as a game without hidden
information, and the sum over many dealings averages out what any one of them reveals.

The budget is the main game's (:class:`.agent.Budget`): simulations per move
(``mcts:400``: deterministic for a seed) or seconds per move (``mcts:1s``: as many
dealings as fit). A move with only one legal choice of slot costs nothing: the patch is
placed where the greedy player (:mod:`..draft_greedy`) would place it.
"""

from __future__ import annotations

import time

import numpy as np

from patchwork_env.agents.base import Agent, check_rows
from patchwork_env.agents.draft_greedy import DEFAULT_DRAFT_WEIGHTS, DraftWeights
from patchwork_env.agents.mcts.agent import DEFAULT_EXPLORATION, Budget
from patchwork_env.agents.mcts.draft_search import (
    N_DRAFT_MOVES,
    DraftTree,
    move_action,
    run_draft_simulations,
)
from patchwork_env.engine.draft_batch import DraftBatch

DEAL_SIMULATIONS = 50
"""Simulations searched on each dealing of the unseen deck."""


def forget_deck_order(batch: DraftBatch, row: int) -> DraftBatch:
    """A copy of game ``row`` whose face-down deck holds the same patches in increasing
    order: all that a player may know of it (rule 13.1)."""
    game = batch[row : row + 1]
    state = game.state[0]
    drawn = int(state["drawn"])
    state["deck"][drawn:] = np.sort(state["deck"][drawn:])
    return game


class DraftMCTSAgent(Agent):
    """UCT over the slots of the face-up row, on many dealings of the unseen deck."""

    def __init__(self, budget: Budget | str = "400", seed: int | None = None,
                 exploration: float = DEFAULT_EXPLORATION,
                 weights: DraftWeights = DEFAULT_DRAFT_WEIGHTS,
                 deal_simulations: int = DEAL_SIMULATIONS) -> None:
        super().__init__(seed)
        self.budget = Budget.parse(budget) if isinstance(budget, str) else budget
        self.spec = f"mcts:{self.budget}"
        self.exploration = exploration
        self.weights = weights
        if deal_simulations < 1:
            raise ValueError(f"deal_simulations must be at least 1, got {deal_simulations}")
        self.deal_simulations = deal_simulations
        self._tree = DraftTree(deal_simulations + 1)
        self.root_visits = np.zeros(N_DRAFT_MOVES, np.int64)
        """Visits of each root move (slot) over every dealing of the latest search."""
        self.root_wins = np.zeros(N_DRAFT_MOVES, np.float64)
        """Wins of each root move over every dealing of the latest search."""
        self.last_simulations = 0
        """Simulations run for the latest move."""

    def act(self, batch: DraftBatch, rows: np.ndarray) -> np.ndarray:
        rows = check_rows(batch, rows)
        return np.array([self._choose(batch, int(r)) for r in rows], np.int64)

    def view(self, batch: DraftBatch, row: int) -> DraftBatch:
        """The game ``row`` as this player knows it: its deck order forgotten."""
        return forget_deck_order(batch, row)

    def deal(self, game: DraftBatch, deals: np.random.Generator) -> DraftBatch:
        """One dealing of the unseen deck of :meth:`view`'s copy, to search."""
        return game.redeal(deals)

    def _choose(self, batch: DraftBatch, row: int) -> int:
        game = self.view(batch, row)
        rules = game.move_args
        root = game.state[0]
        self._tree.start(root)
        legal = np.flatnonzero(self._tree.children[0] >= 0)
        self.root_visits[:] = 0
        self.root_wins[:] = 0.0
        self.last_simulations = 0
        if len(legal) == 1:
            return int(move_action(root, int(legal[0]), rules, self.weights))
        seed = int(self.rng.integers(2**63))
        deals = np.random.default_rng(seed)
        rollouts = np.uint64(seed)
        if self.budget.simulations is not None:
            n = self.budget.simulations
            n_deals = -(-n // self.deal_simulations)
            for k in range(n_deals):
                share = n // n_deals + (k < n % n_deals)
                rollouts = self._search(self.deal(game, deals), share, rollouts, rules)
        else:
            deadline = time.perf_counter() + self.budget.seconds
            while True:
                rollouts = self._search(self.deal(game, deals), self.deal_simulations,
                                        rollouts, rules)
                if time.perf_counter() >= deadline:
                    break
        # most visited; ties go to more wins, then to the first slot
        best = max(legal, key=lambda k: (self.root_visits[k], self.root_wins[k], -k))
        return int(move_action(root, int(best), rules, self.weights))

    def _search(self, dealt: DraftBatch, n: int, rollouts: np.uint64,
                rules: tuple[np.uint64, np.uint64, np.uint64]) -> np.uint64:
        """Search ``n`` simulations on one dealing and add its root's statistics."""
        tree = self._tree
        tree.start(dealt.state[0])
        rollouts = run_draft_simulations(tree, n, rollouts, rules, self.weights,
                                         self.exploration)
        for k, child in enumerate(tree.children[0]):
            if child > 0:
                self.root_visits[k] += tree.visits[child]
                self.root_wins[k] += tree.wins[child]
        self.last_simulations += n
        return rollouts
