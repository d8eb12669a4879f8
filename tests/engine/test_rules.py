"""Sections 2 to 5 of the rules page (docs/rules.md): setup, whose turn, advance, buying
and placing a patch. One test per rule, each on a small hand-built position, its docstring
naming the rule it checks."""

from __future__ import annotations

import pytest

from patchwork_env import ADVANCE, Game
from patchwork_env.data.patches import PATCHES
from tests.positions import CIRCLE, EMPTY, buy, position

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


# --- setup ---------------------------------------------------------------------------


def test_setup_gives_both_players_five_buttons_and_tokens_on_zero() -> None:
    """Rule 2.2: empty quilts, 5 buttons, no income, both tokens on space 0."""
    g = Game.new(seed=3)
    assert g.position == (0, 0)
    assert g.buttons == (5, 5)
    assert g.income == (0, 0)
    assert g.quilt_cells(0) == g.quilt_cells(1) == []


def test_setup_puts_patch_zero_last_in_a_random_circle() -> None:
    """Rule 2.1: the circle holds every patch, in random order, patch 0 last."""
    circles = [Game.new(seed=s).circle for s in range(20)]
    assert all(c[-1] == 0 and sorted(c) == list(range(33)) for c in circles)
    assert len({tuple(c) for c in circles}) == 20


def test_the_starting_player_is_drawn_from_the_seed_and_moves_first() -> None:
    """Rule 2.3: the starting player comes from the seed and takes the first turn."""
    starters = {Game.new(seed=s).to_move for s in range(20)}
    assert starters == {0, 1}
    assert Game.new(seed=4, first_player=1).to_move == 1


# --- whose turn ----------------------------------------------------------------------


def test_player_further_behind_moves_again() -> None:
    """Rule 3.1: the player still behind takes another turn."""
    g = position(position=(10, 14), circle=CIRCLE, to_move=0)
    g.step(buy(1, "a1"))  # patch 0: time 1 -> space 11, still behind 14
    assert g.position == (11, 14)
    assert g.to_move == 0


def test_on_the_same_space_the_player_who_arrived_last_moves() -> None:
    """Rule 3.2: on a shared space, the token that arrived last moves."""
    g = position(position=(10, 12), circle=CIRCLE, to_move=0)
    g.step(buy(0, "a1"))  # patch 1: time 2 -> lands on 12, on top of the opponent
    assert g.position == (12, 12)
    assert g.to_move == 0


def test_turn_passes_when_the_mover_goes_ahead() -> None:
    """Rule 3.1: a player who moves ahead hands the turn over."""
    g = position(position=(10, 11), circle=CIRCLE, to_move=0)
    g.step(buy(0, "a1"))
    assert g.position == (12, 11)
    assert g.to_move == 1


# --- advance -------------------------------------------------------------------------


def test_advance_moves_just_past_the_opponent_and_pays_one_button_per_space() -> None:
    """Rule 4.2: advance lands just in front of the opponent, a button a space."""
    g = position(position=(6, 9), buttons=(1, 5), to_move=0)
    g.step(ADVANCE)
    assert g.position == (10, 9)
    assert g.buttons == (1 + 4, 5)
    assert g.to_move == 1


def test_the_game_tells_the_buttons_an_advance_would_earn() -> None:
    """Rule 4.2: a button for each space to just in front of the opponent, up to the end."""
    assert position(position=(6, 9), to_move=0).advance_buttons() == 4
    assert position(position=(50, 53), to_move=0, first_to_finish=1).advance_buttons() == 3


def test_advance_is_always_legal_even_without_buttons() -> None:
    """Rules 4.2 and 4.4: advance is legal without a button; nothing else is then."""
    g = position(position=(6, 9), buttons=(0, 0), to_move=0)
    assert list(g.legal_actions()) == [ADVANCE]


def test_advance_when_the_opponent_is_on_the_last_space_stops_on_it() -> None:
    """Rules 4.2 and 6.1: advance stops on the last space."""
    g = position(position=(50, 53), buttons=(0, 0), to_move=0, first_to_finish=1)
    g.step(ADVANCE)
    assert g.position == (53, 53)
    assert g.buttons == (3, 0)
    assert g.is_over


# --- buying --------------------------------------------------------------------------


def test_buy_pays_the_cost_places_the_patch_and_moves_by_its_time() -> None:
    """Rules 4.5 and 4.7: a buy pays, sews the patch on and moves by its time."""
    g = position(position=(0, 0), buttons=(5, 5), circle=CIRCLE, to_move=0)
    g.step(buy(0, "b2"))  # patch 1 (XXX) at b2
    assert g.buttons == (3, 5)
    assert g.quilt_cells(0) == [10, 11, 12]
    assert g.position == (2, 0)


def test_only_the_next_three_patches_can_be_bought() -> None:
    """Rule 4.3: only slots 0, 1 and 2 can be bought from."""
    g = position(buttons=(50, 5), circle=CIRCLE, to_move=0)
    slots = {a // 648 for a in g.legal_actions() if a < ADVANCE}
    assert slots == {0, 1, 2}


def test_a_patch_that_costs_more_than_the_buttons_cannot_be_bought() -> None:
    """Rule 4.4: a patch costing more than the player's buttons is not for sale."""
    g = position(buttons=(6, 5), circle=CIRCLE, to_move=0)  # slot 2 = patch 3 costs 7
    slots = {a // 648 for a in g.legal_actions() if a < ADVANCE}
    assert slots == {0, 1}
    with pytest.raises(ValueError, match="cannot afford"):
        g.step(buy(2, "a1"))


def test_a_patch_must_lie_on_empty_cells() -> None:
    """Rule 5.4: a patch may not cover a covered cell."""
    g = position(quilts=("X........\n" + "\n".join(["........."] * 8), EMPTY),
                 circle=CIRCLE, to_move=0)
    with pytest.raises(ValueError, match="overlaps"):
        g.step(buy(0, "a1"))
    g.step(buy(0, "b1"))
    assert g.quilt_cells(0) == [0, 1, 2, 3]


def test_a_patch_must_lie_inside_the_board() -> None:
    """Rule 5.3: every cell of a placed patch lies on the quilt."""
    g = position(circle=CIRCLE, to_move=0)
    with pytest.raises(ValueError, match="leaves the board"):
        g.step(buy(0, "h1"))  # XXX from column h runs off the right edge


def test_a_patch_that_fits_nowhere_cannot_be_bought() -> None:
    """Rule 5.5: a patch without a legal placement cannot be bought."""
    g = position(quilts=(ALMOST_FULL, EMPTY), buttons=(50, 5), circle=CIRCLE, to_move=0)
    assert list(g.legal_actions()) == [ADVANCE]


def test_time_stops_at_the_last_space() -> None:
    """Rules 4.7 and 6.1: a buy's time move stops on the last space."""
    g = position(position=(52, 53), buttons=(10, 0), circle=CIRCLE, to_move=0,
                 first_to_finish=1)
    g.step(buy(0, "a1"))  # time 2 from 52
    assert g.position == (53, 53)


def test_the_neutral_token_moves_to_the_bought_patch() -> None:
    """Rule 4.6: the circle restarts after the bought patch, skipped ones at its end."""
    g = position(buttons=(10, 5), circle=CIRCLE, to_move=0)
    g.step(buy(2, "a1"))  # buys patch 3, the third after the token
    assert g.circle == CIRCLE[3:] + CIRCLE[:2]


def test_a_circle_with_two_patches_offers_two_slots_and_wraps() -> None:
    """Rules 4.3 and 4.6: a short circle offers fewer slots and wraps round."""
    g = position(buttons=(10, 5), circle=[1, 0], to_move=0)
    slots = {a // 648 for a in g.legal_actions() if a < ADVANCE}
    assert slots == {0, 1}
    g.step(buy(1, "a1"))
    assert g.circle == [1]


def test_an_empty_circle_leaves_only_advance() -> None:
    """Rule 4.3: with no patch left, advance is the only action."""
    g = position(buttons=(10, 5), circle=[], to_move=0)
    assert list(g.legal_actions()) == [ADVANCE]


def test_a_symmetric_patch_offers_each_distinct_placement_once() -> None:
    """Rule 5.2: every distinct placement of a symmetric patch is offered once."""
    g = position(buttons=(10, 5), circle=[4, 1, 2], to_move=0)  # XX/XX: one orientation
    square = [a for a in g.legal_actions() if a < 648]
    assert len(square) == 8 * 8
    assert len({tuple(g.action_cells(a)) for a in square}) == len(square)


def test_each_orientation_names_the_canonical_one_of_its_shape() -> None:
    """Rule 5.2: .X/XX has 4 shapes; its mirror (orientation 4) is its first quarter turn."""
    corner = PATCHES[26]
    assert [corner.canonical(o) for o in range(8)] == [0, 1, 2, 3, 1, 2, 3, 0]
    for patch in PATCHES:
        for o in range(8):
            assert patch.oriented(patch.canonical(o)) == patch.oriented(o)


def test_only_the_first_orientation_of_each_distinct_shape_is_legal() -> None:
    """Rule 5.2: only the canonical orientation of each shape is legal."""
    g = position(buttons=(10, 5), circle=[26, 1, 2], to_move=0)  # .X/XX: 4 distinct shapes
    orientations = {(a % 648) // 81 for a in g.legal_actions() if a < 648}
    assert orientations == {0, 1, 2, 3}
    with pytest.raises(ValueError, match="not canonical"):
        g.step(buy(0, "a1", orientation=4))
