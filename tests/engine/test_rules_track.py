"""Sections 6 to 9 of the rules page (docs/rules.md): the time track (income, leather
patches), the 7x7 bonus, end and score, rule presets. One test per rule, each on a small
hand-built position, its docstring naming the rule it checks."""

from __future__ import annotations

import pytest

from patchwork_env import ADVANCE, LEATHER_BASE, Game, Rules
from patchwork_env.data.actions import encode_leather, parse_cell
from tests.positions import CIRCLE, EMPTY, FULL, buy, empty_cells, position

BONUS_BUT_ONE = """
XXXXXXX..
XXXXXXX..
XXXXXXX..
XXXXXXX..
XXXXXXX..
XXXXXXX..
XXXXXX...
.........
.........
"""


# --- income ----------------------------------------------------------------------------


def test_an_income_space_pays_the_income_including_the_patch_just_placed() -> None:
    """Rules 6.3 and 6.4: the income paid includes the patch just bought."""
    g = position(position=(4, 9), buttons=(10, 5), income=(1, 0), circle=[3, 0, 1],
                 to_move=0)
    g.step(buy(0, "a1"))  # patch 3: cost 7, time 1, income 1 -> lands on space 5
    assert g.income == (2, 0)
    assert g.buttons == (10 - 7 + 2, 5)


def test_two_income_spaces_crossed_in_one_move_pay_twice() -> None:
    """Rule 6.4: each income space crossed in one move pays."""
    g = position(position=(10, 17), buttons=(0, 0), income=(3, 0), to_move=0)
    g.step(ADVANCE)  # 10 -> 18 crosses 11 and 17
    assert g.buttons == (8 + 2 * 3, 0)


def test_passing_an_income_space_pays_too() -> None:
    """Rule 6.4: passing an income space pays as landing on it does."""
    g = position(position=(3, 6), buttons=(0, 0), income=(2, 0), to_move=0)
    g.step(ADVANCE)  # 3 -> 7 passes 5
    assert g.buttons == (4 + 2, 0)


# --- leather patches ---------------------------------------------------------------------


def test_the_first_player_to_pass_a_leather_space_must_place_its_patch() -> None:
    """Rules 6.6, 6.7, 3.3: passing a leather space wins it, placed before all else."""
    g = position(position=(18, 19), buttons=(10, 0), circle=[2, 1, 0], to_move=0)
    g.step(buy(0, "a1"))  # XXXX, time 3: 18 -> 21 passes 20
    assert g.pending_leather == 1
    assert g.to_move == 0  # ahead, but places the patch first
    assert list(g.legal_actions()) == [LEATHER_BASE + c for c in range(4, 81)]
    g.step(encode_leather(parse_cell("e5")))
    assert g.quilt_cells(0) == [0, 1, 2, 3, parse_cell("e5")]
    assert g.pending_leather == 0
    assert g.to_move == 1


def test_a_leather_patch_already_taken_is_not_there_any_more() -> None:
    """Rule 6.6: a leather space the opponent reached holds nothing."""
    g = position(position=(18, 21), buttons=(0, 0), to_move=0)  # opponent took space 20
    g.step(ADVANCE)
    assert g.pending_leather == 0
    assert g.to_move == 1


def test_landing_on_a_leather_space_takes_its_patch() -> None:
    """Rule 6.6: landing on a leather space wins its patch."""
    g = position(position=(18, 19), buttons=(0, 0), to_move=0)
    g.step(ADVANCE)  # lands on 20
    assert g.pending_leather == 1


# Leather spaces of the presets lie 6 apart and no patch takes more than 6 spaces, so two
# leather patches in one move need a rule set with closer spaces.
CLOSE_LEATHER = Rules(leather_positions=(20, 21))


def test_two_leather_spaces_crossed_in_one_move_give_two_patches() -> None:
    """Rules 6.6 and 6.7: two leather spaces in one move give two patches in turn."""
    g = position(position=(19, 19), buttons=(10, 0), circle=[1, 0, 2], to_move=0,
                 rules=CLOSE_LEATHER)
    g.step(buy(0, "a1"))  # XXX, time 2: 19 -> 21 passes 20 and lands on 21
    assert g.pending_leather == 2
    g.step(encode_leather(9))
    assert g.pending_leather == 1 and g.to_move == 0
    with pytest.raises(ValueError, match="already covered"):
        g.step(encode_leather(9))
    g.step(encode_leather(10))
    assert g.quilt_cells(0) == [0, 1, 2, 9, 10]
    assert g.to_move == 1


def test_while_a_leather_patch_is_pending_nothing_else_is_legal() -> None:
    """Rules 4.1 and 6.7: a pending leather patch comes before any other action."""
    g = position(position=(25, 30), buttons=(10, 0), circle=CIRCLE, to_move=0,
                 pending_leather=1)
    with pytest.raises(ValueError, match="leather patch must be placed"):
        g.step(ADVANCE)


def test_a_leather_patch_won_on_a_full_quilt_is_discarded() -> None:
    """Rule 6.8: a leather patch won on a full quilt is thrown away."""
    g = position(quilts=(FULL, EMPTY), position=(18, 19), buttons=(0, 0), to_move=0)
    g.step(ADVANCE)  # lands on 20
    assert g.pending_leather == 0
    assert g.to_move == 1


def test_the_second_leather_patch_is_discarded_once_the_first_fills_the_quilt() -> None:
    """Rule 6.8: leather patches left once the quilt fills are thrown away."""
    holes = FULL.replace("XXXXXXXXX", "...XXXXX.", 1)  # a1 b1 c1 and i1 are empty
    g = position(quilts=(holes, EMPTY), position=(19, 19), buttons=(10, 0), circle=[1, 0, 2],
                 to_move=0, rules=CLOSE_LEATHER)
    g.step(buy(0, "a1"))  # fills a1..c1 and passes both leather spaces
    assert g.pending_leather == 2
    g.step(encode_leather(parse_cell("i1")))
    assert g.pending_leather == 0
    assert g.to_move == 1


# --- the 7x7 bonus -----------------------------------------------------------------------


def test_the_first_full_7x7_square_wins_the_bonus_tile() -> None:
    """Rule 7.1: completing a 7x7 square wins the bonus tile."""
    g = position(quilts=(BONUS_BUT_ONE, EMPTY), buttons=(10, 5), circle=[0, 1, 2], to_move=0)
    assert g.bonus_owner is None
    g.step(buy(0, "g7"))  # XX on g7 h7 completes rows 1-7 x columns a-g
    assert g.bonus_owner == 0


def test_a_leather_placement_can_win_the_bonus_tile() -> None:
    """Rule 7.2: a leather placement is checked for the bonus too."""
    g = position(quilts=(BONUS_BUT_ONE, EMPTY), position=(18, 19), to_move=0, circle=[])
    g.step(ADVANCE)
    g.step(encode_leather(parse_cell("g7")))
    assert g.bonus_owner == 0


def test_the_bonus_tile_is_never_lost_or_shared() -> None:
    """Rule 7.3: the bonus tile stays with its first holder."""
    g = position(quilts=(FULL, BONUS_BUT_ONE), position=(10, 9), bonus_owner=0,
                 buttons=(0, 9), circle=[0, 1, 2], to_move=1)
    g.step(buy(0, "g7"))
    assert g.bonus_owner == 0


def test_the_bonus_square_may_lie_anywhere_on_the_quilt() -> None:
    """Rule 7.1: the square may be in any of its positions on the quilt."""
    shifted = "\n".join(["........."] * 2 + [".XXXXXXX."] * 6 + [".XXXXXX.."])
    g = position(quilts=(shifted, EMPTY), position=(18, 19), to_move=0, circle=[])
    g.step(ADVANCE)
    g.step(encode_leather(parse_cell("a9")))  # outside the square: no bonus yet
    assert g.bonus_owner is None
    g = position(quilts=(shifted, EMPTY), position=(18, 19), to_move=0, circle=[])
    g.step(ADVANCE)
    g.step(encode_leather(parse_cell("h9")))
    assert g.bonus_owner == 0


# --- end and score ---------------------------------------------------------------------


def test_score_is_buttons_minus_two_per_empty_cell_plus_the_bonus() -> None:
    """Rule 8.2: buttons, minus 2 per empty cell, plus the bonus tile."""
    g = position(quilts=(BONUS_BUT_ONE, FULL), buttons=(20, 3), bonus_owner=-1)
    assert g.scores() == (20 - 2 * empty_cells(g, 0), 3)
    g = position(quilts=(FULL, EMPTY), buttons=(0, 0), bonus_owner=0)
    assert g.scores() == (7, -162)


def test_the_game_ends_when_both_tokens_are_on_the_last_space() -> None:
    """Rules 8.1 and 3.4: the game ends with both tokens on the last space."""
    g = position(position=(52, 53), buttons=(0, 0), to_move=0, first_to_finish=1)
    assert not g.is_over
    g.step(ADVANCE)
    assert g.is_over and g.to_move is None
    assert list(g.legal_actions()) == []
    with pytest.raises(ValueError, match="game is over"):
        g.step(ADVANCE)


def test_higher_score_wins() -> None:
    """Rule 8.3: the higher score wins."""
    g = position(position=(52, 53), buttons=(10, 9), to_move=0, first_to_finish=1)
    g.step(ADVANCE)
    assert g.scores()[0] > g.scores()[1]
    assert g.winner == 0


def test_equal_scores_go_to_the_player_who_reached_the_end_first() -> None:
    """Rule 8.4: a tie goes to the player who reached the last space first."""
    g = position(position=(52, 53), buttons=(4, 5), to_move=0, first_to_finish=1)
    g.step(ADVANCE)
    assert g.scores() == (5 - 162, 5 - 162)
    assert g.winner == 1
    assert g.first_to_finish == 1


def test_reaching_the_end_first_is_recorded() -> None:
    """Rule 6.9: the first player to reach the last space is recorded."""
    g = position(position=(50, 40), buttons=(0, 0), to_move=1)
    g.step(ADVANCE)  # player 1 -> 51
    assert g.first_to_finish is None
    g = position(position=(51, 52), buttons=(10, 0), circle=CIRCLE, to_move=0)
    g.step(buy(0, "a1"))  # time 2 -> 53
    assert g.first_to_finish == 0


# --- rules are data --------------------------------------------------------------------


def test_presets_place_the_leather_patches_differently() -> None:
    """Rule 9.2: the presets differ in their leather spaces."""
    for rules, leather_on_20, leather_on_50 in (("default", 1, 0), ("revised", 0, 1),
                                                ("classic", 1, 1)):
        g = position(position=(18, 19), buttons=(0, 0), to_move=0, rules=rules)
        g.step(ADVANCE)  # lands on 20
        assert g.pending_leather == leather_on_20, rules
        g = position(position=(48, 49), buttons=(0, 0), to_move=0, rules=rules)
        g.step(ADVANCE)  # lands on 50
        assert g.pending_leather == leather_on_50, rules


def test_custom_rules_change_the_track_the_income_and_the_bonus() -> None:
    """Rule 9.1: every field of a rule set changes what the engine plays."""
    rules = Rules(leather_positions=(3,), income_positions=(2, 10), track_end=10,
                  start_buttons=1, bonus_size=1, bonus_points=4)
    g = Game.new(seed=0, first_player=0, rules=rules)
    assert g.buttons == (1, 1)
    g.step(ADVANCE)  # player 0: 0 -> 1
    g.step(ADVANCE)  # player 1: 0 -> 2
    g.step(ADVANCE)  # player 0: 1 -> 3 passes income space 2 and takes the leather patch
    assert g.buttons == (1 + 1 + 2, 1 + 2)
    assert g.pending_leather == 1
    g.step(encode_leather(40))
    assert g.bonus_owner == 0  # with bonus_size 1 any covered cell is a full square
    assert g.scores()[0] == 4 - 2 * 80 + 4
    moves = 0
    while not g.is_over and moves < 20:
        g.step(ADVANCE)
        moves += 1
    assert g.is_over and g.position == (10, 10)
