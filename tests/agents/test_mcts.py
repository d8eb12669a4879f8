"""The MCTS player: budgets, determinism, the tree's bookkeeping, and its strength."""

from __future__ import annotations

import time

import numpy as np
import pytest

from patchwork_env import ADVANCE, Game
from patchwork_env.agents.greedy import GreedyAgent
from patchwork_env.agents.heuristic import DEFAULT_WEIGHTS
from patchwork_env.agents.mcts.agent import Budget, MCTSAgent
from patchwork_env.agents.mcts.search import Tree, run_simulations
from patchwork_env.evaluation.arena import play_match
from tests.positions import position


@pytest.mark.parametrize(("text", "budget"), [
    ("400", Budget(simulations=400)), ("1s", Budget(seconds=1.0)),
    ("0.25s", Budget(seconds=0.25)), (" 7 ", Budget(simulations=7)),
])
def test_budget_parses(text: str, budget: Budget) -> None:
    assert Budget.parse(text) == budget


@pytest.mark.parametrize("text", ["", "0", "-5", "1.5", "s", "0s", "-1s", "infs", "1m", "abc"])
def test_budget_rejects_nonsense(text: str) -> None:
    with pytest.raises(ValueError, match="bad MCTS budget"):
        Budget.parse(text)


def midgame(seed: int, moves: int = 12) -> Game:
    """A position a few random moves into a game, with no leather pending."""
    game = Game.new(seed)
    rng = np.random.default_rng(seed)
    while moves > 0 or game.pending_leather:
        game.step(int(rng.choice(game.legal_actions())))
        moves -= 1
    return game


def test_fixed_budget_is_deterministic_for_a_seed() -> None:
    game = midgame(3)
    runs = []
    for _ in range(2):
        agent = MCTSAgent("300", seed=11)
        action = agent.act_game(game)
        runs.append((action, agent._tree.root_moves()))
    assert runs[0] == runs[1]
    assert runs[0][0] in game.legal_actions()


def test_tree_statistics_add_up() -> None:
    agent = MCTSAgent("500", seed=0)
    agent.act_game(midgame(4))
    tree = agent._tree
    moves = tree.root_moves()
    assert tree.visits[0] == 500 == sum(v for _, v, _ in moves)
    assert tree.size == 501  # one node added per simulation
    assert all(0 <= w <= v for _, v, w in moves)


def test_a_full_tree_keeps_searching() -> None:
    game = midgame(5)
    tree = Tree(10)
    tree.start(game.batch.state[0])
    size, _ = run_simulations(*tree.arrays(), 1, 200, np.uint64(1), game.batch.tables.arrays,
                              DEFAULT_WEIGHTS, 0.6)
    assert size == 10
    assert tree.visits[0] == 200


def test_time_budget_is_kept() -> None:
    agent = MCTSAgent("0.1s", seed=0)
    game = midgame(7)
    assert len(game.legal_actions()) > 1  # a real choice, so the agent searches
    agent.act_game(game)  # warm up
    start = time.perf_counter()
    action = agent.act_game(game)
    assert time.perf_counter() - start < 0.5
    assert agent.last_simulations > 10
    assert action in game.legal_actions()


def test_forced_moves_cost_no_search() -> None:
    broke = position(buttons=(0, 0), circle=[9, 6, 19, *range(1, 6), 7, 8, *range(10, 19),
                                             *range(20, 33), 0])
    agent = MCTSAgent("1000", seed=0)
    assert agent.act_game(broke) == ADVANCE
    assert agent.last_simulations == 0


def test_mcts_beats_greedy() -> None:
    records = play_match(MCTSAgent("200", seed=1), GreedyAgent(), range(100, 106))
    wins = sum(r.a_won for r in records)
    assert wins >= 10, f"mcts:200 won only {wins} of 12 games against greedy"


@pytest.mark.parametrize("budget", ["100000000000000000000", "0", "-5", "1e3", "99999s", "s"])
def test_impossible_budgets_are_refused_in_one_line(budget: str) -> None:
    with pytest.raises(ValueError, match="bad MCTS budget"):
        Budget.parse(budget)
