"""The greedy player and the heuristic it shares with MCTS."""

from __future__ import annotations

import numpy as np
import pytest

from patchwork_env import ADVANCE, LEATHER_BASE, GameBatch
from patchwork_env.agents.greedy import GreedyAgent
from patchwork_env.agents.heuristic import (
    DEFAULT_WEIGHTS,
    best_leather,
    best_placement,
    position_value,
    quilt_value,
)
from patchwork_env.agents.quilt_shape import shape_features
from patchwork_env.agents.random_agent import RandomAgent
from patchwork_env.data.actions import parse_cell
from patchwork_env.data.rules import Rules
from patchwork_env.data.tables import LIST_CODE, LIST_MASK, LIST_START, cells_to_words
from patchwork_env.evaluation.arena import play_match
from tests.positions import EMPTY, FULL, cells, position


def features(picture: str) -> tuple[int, int, int, int]:
    lo, hi = cells_to_words(cells(picture))
    return tuple(int(x) for x in shape_features(np.uint64(lo), np.uint64(hi)))


HOLES = """
XXXXXXXXX
X.XXXXXXX
XXXXXXXXX
XXXX..XXX
XXXXXXXXX
XXXXXXXXX
XXXXXXXXX
XXXXXXXXX
XXXXXXXX.
"""


def test_shape_features_of_simple_quilts() -> None:
    assert features(EMPTY) == (81, 36, 0, 0)  # the border is the whole ragged edge
    assert features(FULL) == (0, 0, 0, 0)
    # b2 and i9 are isolated (4 closed sides each), e4-f4 is a domino of two dead ends
    assert features(HOLES) == (4, 4 + 4 + 6, 2, 2)


def test_leather_fills_an_isolated_hole_first() -> None:
    game = position(quilts=(HOLES, EMPTY), pending_leather=1)
    action = best_leather(game.batch.state[0], game.batch.tables.arrays, DEFAULT_WEIGHTS)
    assert action - LEATHER_BASE in (parse_cell("b2"), parse_cell("i9"))


def test_the_heuristic_reads_each_rule_by_name() -> None:
    """The bonus tile and the income spaces still ahead are valued under the game's rules."""
    richer = Rules(bonus_points=12, income_positions=(5, 11, 17, 23, 29, 35, 41, 47, 50, 53))

    def value(rules: Rules) -> float:
        game = position(income=(3, 0), bonus_owner=0, rules=rules)
        return position_value(game.batch.state[0], 0, game.batch.tables.arrays, DEFAULT_WEIGHTS)

    assert value(richer) - value(Rules()) == pytest.approx((12 - 7) + 3 * 1)


def test_best_placement_is_the_best_quilt_value() -> None:
    """The pruned search returns exactly the argmax of the quilt value over every placement."""
    batch = GameBatch.new(60, seed=5)
    for _ in range(20):
        batch.step(batch.random_actions(1))
    rules = batch.tables.arrays
    checked = 0
    for s in batch.state:
        if s["to_move"] < 0 or s["pending_leather"]:
            continue
        p, n = s["to_move"], s["circle_len"]
        q = s["quilt"][p]
        owner = 0 if s["bonus_owner"] < 0 else (1 if s["bonus_owner"] == p else -1)
        for slot in range(min(3, n)):
            patch = s["circle"][slot]
            upcoming = np.array([s["circle"][(slot + 1 + k) % n] for k in range(n - 1)], np.int8)
            values = [(quilt_value(q[0] | m[0], q[1] | m[1], owner, upcoming, rules,
                                   DEFAULT_WEIGHTS), -j)
                      for j in range(LIST_START[patch], LIST_START[patch + 1])
                      for m in [LIST_MASK[j]] if not (q[0] & m[0] or q[1] & m[1])]
            expected = slot * 648 + int(LIST_CODE[-max(values)[1]]) if values else -1
            assert best_placement(s, slot, rules, DEFAULT_WEIGHTS) == expected
            checked += 1
    assert checked > 50


BONUS_BUT_TWO = """
XXXXXXX..
XXXXXXX..
XXXXXXX..
XXXXXXX..
XXXXXXX..
XXXXXXX..
XXXXX....
.........
.........
"""


def test_greedy_completes_the_bonus_square() -> None:
    # patches 0 (XX) and 2 (XXXX) in slots 0 and 2 can close the 7x7 square at f7-g7
    game = position(quilts=(BONUS_BUT_TWO, EMPTY), position=(30, 31), buttons=(10, 10),
                    circle=[0, *range(1, 33)])
    action = GreedyAgent().act_game(game)
    assert action != ADVANCE
    assert {parse_cell("f7"), parse_cell("g7")} <= set(game.action_cells(action))
    game.step(action)
    assert game.bonus_owner == 0


def test_greedy_takes_a_free_income_patch_over_advancing() -> None:
    # patch 16 costs nothing, takes 3 spaces and pays 1 button at each of 9 income spaces
    game = position(circle=[16, *range(1, 16), *range(17, 33), 0])
    action = GreedyAgent().act_game(game)
    assert action < ADVANCE and action // 648 == 0


@pytest.mark.parametrize("rules", ["default", "revised"])
def test_greedy_beats_random(rules: str) -> None:
    records = play_match(GreedyAgent(), RandomAgent(seed=1), range(15), rules)
    wins = sum(r.a_won for r in records)
    assert wins >= 27, f"greedy won only {wins} of 30 games against random"
    assert np.mean([r.score_a - r.score_b for r in records]) > 20
