"""One test per rule of RULES.md, each on a small hand-built position."""

from __future__ import annotations

import pytest

from patchwork_env import ADVANCE, LEATHER_BASE, Game, Rules
from patchwork_env.data.actions import encode_buy, encode_leather, parse_cell

from tests.positions import EMPTY, FULL, empty_cells, position

# A circle whose first patches are easy to reason about:
# 1 = XXX (cost 2, time 2), 0 = XX (cost 2, time 1), 3 = XXXXX (cost 7, time 1, income 1),
# 4 = XX/XX (cost 6, time 5, income 2), 2 = XXXX (cost 3, time 3, income 1).
CIRCLE = [1, 0, 3, 4, 2, *range(5, 33)]

ALMOST_FULL = """
XXXXXXXXX
XXXXXXXXX
XXXXXXXXX
XXXXXXXXX
XXXXXXXXX
XXXXXXXXX
XXXXXXXXX
XXXXXXXXX
XXXXXXXX.
"""

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


def buy(slot: int, at: str, orientation: int = 0) -> int:
    return encode_buy(slot, orientation, parse_cell(at))


# --- setup ---------------------------------------------------------------------------


def test_setup_gives_both_players_five_buttons_and_tokens_on_zero() -> None:
    g = Game.new(seed=3)
    assert g.position == (0, 0)
    assert g.buttons == (5, 5)
    assert g.income == (0, 0)
    assert g.quilt_cells(0) == g.quilt_cells(1) == []


def test_setup_puts_patch_zero_last_in_a_random_circle() -> None:
    circles = [Game.new(seed=s).circle for s in range(20)]
    assert all(c[-1] == 0 and sorted(c) == list(range(33)) for c in circles)
    assert len({tuple(c) for c in circles}) == 20


def test_the_starting_player_is_drawn_from_the_seed_and_moves_first() -> None:
    starters = {Game.new(seed=s).to_move for s in range(20)}
    assert starters == {0, 1}
    assert Game.new(seed=4, first_player=1).to_move == 1


# --- whose turn ----------------------------------------------------------------------


def test_player_further_behind_moves_again() -> None:
    g = position(position=(10, 14), circle=CIRCLE, to_move=0)
    g.step(buy(1, "a1"))  # patch 0: time 1 -> space 11, still behind 14
    assert g.position == (11, 14)
    assert g.to_move == 0


def test_on_the_same_space_the_player_who_arrived_last_moves() -> None:
    g = position(position=(10, 12), circle=CIRCLE, to_move=0)
    g.step(buy(0, "a1"))  # patch 1: time 2 -> lands on 12, on top of the opponent
    assert g.position == (12, 12)
    assert g.to_move == 0


def test_turn_passes_when_the_mover_goes_ahead() -> None:
    g = position(position=(10, 11), circle=CIRCLE, to_move=0)
    g.step(buy(0, "a1"))
    assert g.position == (12, 11)
    assert g.to_move == 1


# --- advance -------------------------------------------------------------------------


def test_advance_moves_just_past_the_opponent_and_pays_one_button_per_space() -> None:
    g = position(position=(6, 9), buttons=(1, 5), to_move=0)
    g.step(ADVANCE)
    assert g.position == (10, 9)
    assert g.buttons == (1 + 4, 5)
    assert g.to_move == 1


def test_advance_is_always_legal_even_without_buttons() -> None:
    g = position(position=(6, 9), buttons=(0, 0), to_move=0)
    assert list(g.legal_actions()) == [ADVANCE]


def test_advance_when_the_opponent_is_on_the_last_space_stops_on_it() -> None:
    g = position(position=(50, 53), buttons=(0, 0), to_move=0, first_to_finish=1)
    g.step(ADVANCE)
    assert g.position == (53, 53)
    assert g.buttons == (3, 0)
    assert g.is_over


# --- buying --------------------------------------------------------------------------


def test_buy_pays_the_cost_places_the_patch_and_moves_by_its_time() -> None:
    g = position(position=(0, 0), buttons=(5, 5), circle=CIRCLE, to_move=0)
    g.step(buy(0, "b2"))  # patch 1 (XXX) at b2
    assert g.buttons == (3, 5)
    assert g.quilt_cells(0) == [10, 11, 12]
    assert g.position == (2, 0)


def test_only_the_next_three_patches_can_be_bought() -> None:
    g = position(buttons=(50, 5), circle=CIRCLE, to_move=0)
    slots = {a // 648 for a in g.legal_actions() if a < ADVANCE}
    assert slots == {0, 1, 2}


def test_a_patch_that_costs_more_than_the_buttons_cannot_be_bought() -> None:
    g = position(buttons=(6, 5), circle=CIRCLE, to_move=0)  # slot 2 = patch 3 costs 7
    slots = {a // 648 for a in g.legal_actions() if a < ADVANCE}
    assert slots == {0, 1}
    with pytest.raises(ValueError, match="cannot afford"):
        g.step(buy(2, "a1"))


def test_a_patch_must_lie_on_empty_cells() -> None:
    g = position(quilts=("X........\n" + "\n".join(["........."] * 8), EMPTY),
                 circle=CIRCLE, to_move=0)
    with pytest.raises(ValueError, match="overlaps"):
        g.step(buy(0, "a1"))
    g.step(buy(0, "b1"))
    assert g.quilt_cells(0) == [0, 1, 2, 3]


def test_a_patch_must_lie_inside_the_board() -> None:
    g = position(circle=CIRCLE, to_move=0)
    with pytest.raises(ValueError, match="leaves the board"):
        g.step(buy(0, "h1"))  # XXX from column h runs off the right edge


def test_a_patch_that_fits_nowhere_cannot_be_bought() -> None:
    g = position(quilts=(ALMOST_FULL, EMPTY), buttons=(50, 5), circle=CIRCLE, to_move=0)
    assert list(g.legal_actions()) == [ADVANCE]


def test_time_stops_at_the_last_space() -> None:
    g = position(position=(52, 53), buttons=(10, 0), circle=CIRCLE, to_move=0,
                 first_to_finish=1)
    g.step(buy(0, "a1"))  # time 2 from 52
    assert g.position == (53, 53)


def test_the_neutral_token_moves_to_the_bought_patch() -> None:
    g = position(buttons=(10, 5), circle=CIRCLE, to_move=0)
    g.step(buy(2, "a1"))  # buys patch 3, the third after the token
    assert g.circle == CIRCLE[3:] + CIRCLE[:2]


def test_a_circle_with_two_patches_offers_two_slots_and_wraps() -> None:
    g = position(buttons=(10, 5), circle=[1, 0], to_move=0)
    slots = {a // 648 for a in g.legal_actions() if a < ADVANCE}
    assert slots == {0, 1}
    g.step(buy(1, "a1"))
    assert g.circle == [1]


def test_an_empty_circle_leaves_only_advance() -> None:
    g = position(buttons=(10, 5), circle=[], to_move=0)
    assert list(g.legal_actions()) == [ADVANCE]


def test_a_symmetric_patch_offers_each_distinct_placement_once() -> None:
    g = position(buttons=(10, 5), circle=[4, 1, 2], to_move=0)  # XX/XX: one orientation
    square = [a for a in g.legal_actions() if a < 648]
    assert len(square) == 8 * 8
    assert len({tuple(g.action_cells(a)) for a in square}) == len(square)


def test_only_the_first_orientation_of_each_distinct_shape_is_legal() -> None:
    g = position(buttons=(10, 5), circle=[26, 1, 2], to_move=0)  # .X/XX: 4 distinct shapes
    orientations = {(a % 648) // 81 for a in g.legal_actions() if a < 648}
    assert orientations == {0, 1, 2, 3}
    with pytest.raises(ValueError, match="not canonical"):
        g.step(buy(0, "a1", orientation=4))


# --- income ----------------------------------------------------------------------------


def test_an_income_space_pays_the_income_including_the_patch_just_placed() -> None:
    g = position(position=(4, 9), buttons=(10, 5), income=(1, 0), circle=[3, 0, 1],
                 to_move=0)
    g.step(buy(0, "a1"))  # patch 3: cost 7, time 1, income 1 -> lands on space 5
    assert g.income == (2, 0)
    assert g.buttons == (10 - 7 + 2, 5)


def test_two_income_spaces_crossed_in_one_move_pay_twice() -> None:
    g = position(position=(10, 17), buttons=(0, 0), income=(3, 0), to_move=0)
    g.step(ADVANCE)  # 10 -> 18 crosses 11 and 17
    assert g.buttons == (8 + 2 * 3, 0)


def test_passing_an_income_space_pays_too() -> None:
    g = position(position=(3, 6), buttons=(0, 0), income=(2, 0), to_move=0)
    g.step(ADVANCE)  # 3 -> 7 passes 5
    assert g.buttons == (4 + 2, 0)


# --- leather patches ---------------------------------------------------------------------


def test_the_first_player_to_pass_a_leather_space_must_place_its_patch() -> None:
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
    g = position(position=(18, 21), buttons=(0, 0), to_move=0)  # opponent took space 20
    g.step(ADVANCE)
    assert g.pending_leather == 0
    assert g.to_move == 1


def test_landing_on_a_leather_space_takes_its_patch() -> None:
    g = position(position=(18, 19), buttons=(0, 0), to_move=0)
    g.step(ADVANCE)  # lands on 20
    assert g.pending_leather == 1


# Leather spaces of the presets lie 6 apart and no patch takes more than 6 spaces, so two
# leather patches in one move need a rule set with closer spaces.
CLOSE_LEATHER = Rules(leather_positions=(20, 21))


def test_two_leather_spaces_crossed_in_one_move_give_two_patches() -> None:
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
    g = position(position=(25, 30), buttons=(10, 0), circle=CIRCLE, to_move=0,
                 pending_leather=1)
    with pytest.raises(ValueError, match="leather patch must be placed"):
        g.step(ADVANCE)


def test_a_leather_patch_won_on_a_full_quilt_is_discarded() -> None:
    g = position(quilts=(FULL, EMPTY), position=(18, 19), buttons=(0, 0), to_move=0)
    g.step(ADVANCE)  # lands on 20
    assert g.pending_leather == 0
    assert g.to_move == 1


def test_the_second_leather_patch_is_discarded_once_the_first_fills_the_quilt() -> None:
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
    g = position(quilts=(BONUS_BUT_ONE, EMPTY), buttons=(10, 5), circle=[0, 1, 2], to_move=0)
    assert g.bonus_owner is None
    g.step(buy(0, "g7"))  # XX on g7 h7 completes rows 1-7 x columns a-g
    assert g.bonus_owner == 0


def test_a_leather_placement_can_win_the_bonus_tile() -> None:
    g = position(quilts=(BONUS_BUT_ONE, EMPTY), position=(18, 19), to_move=0, circle=[])
    g.step(ADVANCE)
    g.step(encode_leather(parse_cell("g7")))
    assert g.bonus_owner == 0


def test_the_bonus_tile_is_never_lost_or_shared() -> None:
    g = position(quilts=(FULL, BONUS_BUT_ONE), position=(10, 9), bonus_owner=0,
                 buttons=(0, 9), circle=[0, 1, 2], to_move=1)
    g.step(buy(0, "g7"))
    assert g.bonus_owner == 0


def test_the_bonus_square_may_lie_anywhere_on_the_quilt() -> None:
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
    g = position(quilts=(BONUS_BUT_ONE, FULL), buttons=(20, 3), bonus_owner=-1)
    assert g.scores() == (20 - 2 * empty_cells(g, 0), 3)
    g = position(quilts=(FULL, EMPTY), buttons=(0, 0), bonus_owner=0)
    assert g.scores() == (7, -162)


def test_the_game_ends_when_both_tokens_are_on_the_last_space() -> None:
    g = position(position=(52, 53), buttons=(0, 0), to_move=0, first_to_finish=1)
    assert not g.is_over
    g.step(ADVANCE)
    assert g.is_over and g.to_move is None
    assert list(g.legal_actions()) == []
    with pytest.raises(ValueError, match="game is over"):
        g.step(ADVANCE)


def test_higher_score_wins() -> None:
    g = position(position=(52, 53), buttons=(10, 9), to_move=0, first_to_finish=1)
    g.step(ADVANCE)
    assert g.scores()[0] > g.scores()[1]
    assert g.winner == 0


def test_equal_scores_go_to_the_player_who_reached_the_end_first() -> None:
    g = position(position=(52, 53), buttons=(4, 5), to_move=0, first_to_finish=1)
    g.step(ADVANCE)
    assert g.scores() == (5 - 162, 5 - 162)
    assert g.winner == 1
    assert g.first_to_finish == 1


def test_reaching_the_end_first_is_recorded() -> None:
    g = position(position=(50, 40), buttons=(0, 0), to_move=1)
    g.step(ADVANCE)  # player 1 -> 51
    assert g.first_to_finish is None
    g = position(position=(51, 52), buttons=(10, 0), circle=CIRCLE, to_move=0)
    g.step(buy(0, "a1"))  # time 2 -> 53
    assert g.first_to_finish == 0


# --- rules are data --------------------------------------------------------------------


def test_presets_place_the_leather_patches_differently() -> None:
    for rules, leather_on_20, leather_on_50 in (("default", 1, 0), ("revised", 0, 1),
                                                ("classic", 1, 1)):
        g = position(position=(18, 19), buttons=(0, 0), to_move=0, rules=rules)
        g.step(ADVANCE)  # lands on 20
        assert g.pending_leather == leather_on_20, rules
        g = position(position=(48, 49), buttons=(0, 0), to_move=0, rules=rules)
        g.step(ADVANCE)  # lands on 50
        assert g.pending_leather == leather_on_50, rules


def test_custom_rules_change_the_track_the_income_and_the_bonus() -> None:
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
