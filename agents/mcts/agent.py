"""The Monte Carlo tree search player (UCT with random rollouts; see :mod:`.search`).

Its budget is either a number of simulations per move (``mcts:400``: deterministic for a
seed) or a time per move (``mcts:1s``, ``mcts:0.25s``: as many simulations as fit, run in
compiled chunks between clock checks). Moves with only one sensible choice cost nothing:
a pending leather patch is placed by the heuristic and a lone legal move is played at once.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from patchwork_env import ADVANCE, GameBatch
from patchwork_env.agents.base import Agent, check_rows
from patchwork_env.agents.heuristic import DEFAULT_WEIGHTS, Weights, best_leather
from patchwork_env.agents.mcts.search import Tree, run_simulations
from patchwork_env.data.tables import RuleArrays

DEFAULT_EXPLORATION = 0.6
"""UCT exploration constant for win rates in [0, 1] (how it compares with others: the
Agents page of the docs)."""
MAX_NODES = 1 << 19
"""Node limit of a timed search (about 140 MB); a full tree keeps searching without growing."""
_FIRST_CHUNK = 64
_CHUNK_SECONDS = 0.02


MAX_SIMULATIONS = 10_000_000
"""The largest simulation budget (the tree for a move is allocated up front)."""
MAX_SECONDS = 3600.0


@dataclass(frozen=True)
class Budget:
    """Simulations per move, or seconds per move (exactly one is set)."""

    simulations: int | None = None
    seconds: float | None = None

    @classmethod
    def parse(cls, text: str) -> Budget:
        """``"400"`` (simulations) or ``"1s"`` / ``"0.5s"`` (seconds); ``ValueError`` otherwise."""
        t = text.strip().lower()
        try:
            if t.endswith("s"):
                seconds = float(t[:-1])
                if 0 < seconds <= MAX_SECONDS:
                    return cls(seconds=seconds)
            elif 0 < int(t) <= MAX_SIMULATIONS:
                return cls(simulations=int(t))
        except ValueError:
            pass
        raise ValueError(f"bad MCTS budget {text!r}: expected simulations per move (1 to "
                         f"{MAX_SIMULATIONS:,}, e.g. 400) or seconds per move (up to "
                         f"{MAX_SECONDS:g}, e.g. 1s)")

    def __str__(self) -> str:
        return f"{self.simulations}" if self.simulations is not None else f"{self.seconds:g}s"


class MCTSAgent(Agent):
    """UCT over the four choices of each turn, random rollouts, win/loss backups."""

    def __init__(self, budget: Budget | str = "400", seed: int | None = None,
                 exploration: float = DEFAULT_EXPLORATION,
                 weights: Weights = DEFAULT_WEIGHTS) -> None:
        super().__init__(seed)
        self.budget = Budget.parse(budget) if isinstance(budget, str) else budget
        self.spec = f"mcts:{self.budget}"
        self.exploration = exploration
        self.weights = weights
        first = self.budget.simulations + 1 if self.budget.simulations else 1 << 15
        self._tree = Tree(first)
        self.last_simulations = 0
        """Simulations run for the latest move (for benchmarks)."""

    def act(self, batch: GameBatch, rows: np.ndarray) -> np.ndarray:
        rows = check_rows(batch, rows)
        rules = batch.tables.arrays
        return np.array([self._choose(batch.state[r], rules) for r in rows], np.int64)

    def _choose(self, state: np.void, rules: RuleArrays) -> int:
        if state["pending_leather"] > 0:
            return int(best_leather(state, rules, self.weights))
        self._tree.start(state)
        if (self._tree.children[0] >= 0).sum() == 1:  # only advancing is possible
            self.last_simulations = 0
            return ADVANCE
        seed = self.rng.integers(2**63)
        if self.budget.simulations is not None:
            self._run(self.budget.simulations, seed, rules)
            self.last_simulations = self.budget.simulations
        else:
            self.last_simulations = self._run_for(self.budget.seconds, seed, rules)
        moves = self._tree.root_moves()
        # most visited; ties go to more wins, then to the first in slot order
        action, _, _ = max(moves, key=lambda m: (m[1], m[2]))
        return action

    def _run(self, n: int, rng: np.uint64 | int, rules: RuleArrays) -> np.uint64:
        """Run ``n`` simulations on the tree; the state of the rollout generator after them."""
        tree = self._tree
        tree.size, rng = run_simulations(*tree.arrays(), tree.size, n, np.uint64(rng), rules,
                                         self.weights, self.exploration)
        return rng

    def _run_for(self, seconds: float, rng: int, rules: RuleArrays) -> int:
        """Simulate in chunks until ``seconds`` have passed; returns the simulations run."""
        start = time.perf_counter()
        deadline = start + seconds
        done = 0
        chunk = _FIRST_CHUNK
        while True:
            if self._tree.size + chunk > self._tree.capacity and self._tree.capacity < MAX_NODES:
                self._tree = self._tree.grown(min(2 * self._tree.capacity, MAX_NODES))
            rng = self._run(chunk, rng, rules)
            done += chunk
            now = time.perf_counter()
            left = deadline - now
            if left <= 0:
                return done
            rate = done / max(now - start, 1e-9)
            chunk = int(max(1, min(rate * _CHUNK_SECONDS, rate * left)))
