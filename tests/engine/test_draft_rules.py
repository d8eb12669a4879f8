"""Section 13 of the rules page (docs/rules.md), Patchwork Draft: one test per rule, each
on a small hand-built position, its docstring naming the rule it checks."""

from __future__ import annotations

import numpy as np
import pytest

from patchwork_env.data.draft_actions import DISCARD_BASE, encode_discard
from patchwork_env.data.draft_rules import DraftRules
from patchwork_env.data.patches import PATCHES
from patchwork_env.views.draft_game import DraftGame
from tests.draft_positions import draft_position, full_rows
from tests.positions import EMPTY, FULL, buy, cells

DISCARDS = [DISCARD_BASE, DISCARD_BASE + 1, DISCARD_BASE + 2]
EXPENSIVE_FIRST = [32, 19, 6] + [x for x in range(33) if x not in (32, 19, 6)]
"""A deck whose face-up patches cost 10 each."""

ISOLATED_HOLES = """
.X.X.X.X.
XXXXXXXXX
.X.X.X.X.
XXXXXXXXX
.X.X.X.X.
XXXXXXXXX
.X.X.X.X.
XXXXXXXXX
.X.X.X.X.
"""


# --- 13.1 setup ---------------------------------------------------------------------------


def test_setup_gives_empty_quilts_start_buttons_and_three_face_up() -> None:
    """Rule 13.1: empty quilts, 5 buttons, no points, the deck's top three face up."""
    g = DraftGame.new(deck=list(range(33)), first_player=0)
    assert g.quilt_cells(0) == g.quilt_cells(1) == []
    assert g.buttons == (5, 5) and g.points == (0, 0)
    assert g.face_up == [0, 1, 2] and g.deck_size == 30


def test_setup_shuffles_all_33_patches_from_the_seed() -> None:
    """Rule 13.1: the deck is every patch in an order drawn from the seed."""
    decks = {tuple(DraftGame.new(seed=s).state_dict()["deck"]) for s in range(10)}
    assert len(decks) == 10
    g = DraftGame.new(seed=4)
    assert sorted(g.face_up + g.unseen) == list(range(33))


def test_first_player_is_drawn_from_the_seed_or_given() -> None:
    """Rule 13.1: the first player comes from the seed unless fixed."""
    assert {DraftGame.new(seed=s).first_player for s in range(20)} == {0, 1}
    g = DraftGame.new(seed=4, first_player=1)
    assert g.to_move == g.first_player == 1


# --- 13.2 buying --------------------------------------------------------------------------


def test_a_buy_pays_the_cost_and_places_the_patch() -> None:
    """Rule 13.2: the buyer pays the patch's button cost and it covers its cells at once."""
    g = draft_position()
    g.step(buy(0, "a1"))  # patch 1, XXX, cost 2
    assert g.buttons == (3, 5)
    assert g.quilt_cells(0) == [0, 1, 2]


def test_time_and_income_play_no_part() -> None:
    """Rule 13.2: a patch with income gives no buttons when bought."""
    g = draft_position(row=(2, 0, 1))
    g.step(buy(0, "a1"))  # patch 2, income 1
    assert g.buttons == (5 - PATCHES[2].cost, 5)


def test_an_affordable_patch_that_fits_nowhere_is_not_buyable() -> None:
    """Rules 13.2 and 13.6: a patch with no legal placement cannot be bought, so with
    nothing else to buy only the discards are legal."""
    g = draft_position(quilts=(ISOLATED_HOLES, EMPTY))
    assert g.legal_actions().tolist() == DISCARDS


# --- 13.3 refill and turns ----------------------------------------------------------------


def test_the_emptied_slot_is_refilled_from_the_top_of_the_deck_in_place() -> None:
    """Rule 13.3: the other slots keep their patches and places."""
    g = draft_position(deck=[7, 8, 9])
    g.step(buy(1, "a1"))
    assert g.face_up == [1, 7, 2] and g.deck_size == 2


def test_turns_alternate() -> None:
    """Rule 13.3: after a buy the other player moves."""
    g = draft_position()
    g.step(buy(0, "a1"))
    assert g.to_move == 1
    g.step(buy(1, "a1"))
    assert g.to_move == 0


# --- 13.4 rows and columns ----------------------------------------------------------------


def test_completing_a_row_scores_a_point_and_a_button() -> None:
    """Rule 13.4: a full row of 9 cells: 1 point and 1 bonus button."""
    g = draft_position(quilts=(full_rows(0, "XXXXXX..."), EMPTY))
    g.step(buy(0, "g1"))  # XXX on g1-i1
    assert g.points == (1, 0)
    assert g.buttons == (5 - 2 + 1, 5)


def test_completing_a_row_and_a_column_scores_both() -> None:
    """Rule 13.4: one placement completing a row and a column scores 2 points, 2 buttons."""
    quilt = "\n".join(["XXXXXX..."] + ["........X"] * 8)
    g = draft_position(quilts=(quilt, EMPTY))
    g.step(buy(0, "g1"))
    assert g.points == (2, 0)
    assert g.buttons == (5 - 2 + 2, 5)


def test_completing_two_rows_scores_two_points() -> None:
    """Rule 13.4: two rows completed by one placement, two points."""
    quilt = "\n".join(["XXXXXXXX."] * 2 + ["........."] * 7)
    g = draft_position(quilts=(quilt, EMPTY))
    g.step(buy(1, "i1", orientation=1))  # patch 0, XX upright on i1-i2
    assert g.points == (2, 0)


def test_a_line_already_full_does_not_score_again() -> None:
    """Rule 13.4: only the lines a placement completes score."""
    g = draft_position(quilts=(full_rows(1), EMPTY))
    g.step(buy(0, "a2"))
    assert g.points == (0, 0)


# --- 13.5 stars ---------------------------------------------------------------------------


def test_a_starred_patch_on_a_star_square_scores_a_point() -> None:
    """Rule 13.5: patch 2 (starred by default) covering b2 scores 1 point at once."""
    g = draft_position(row=(2, 0, 1))
    g.step(buy(0, "a2"))
    assert g.points == (1, 0)


def test_covering_several_star_squares_scores_once() -> None:
    """Rule 13.5: one point per placement, however many star squares it covers."""
    g = draft_position(row=(2, 0, 1), rules=DraftRules(star_squares=(9, 10, 11)))
    g.step(buy(0, "a2"))
    assert g.points == (1, 0)


def test_an_unstarred_patch_on_a_star_square_scores_nothing() -> None:
    """Rule 13.5: patch 1 has no star (no buttons printed on it)."""
    g = draft_position()
    g.step(buy(0, "a2"))
    assert g.points == (0, 0)


def test_a_starred_patch_off_the_star_squares_scores_nothing() -> None:
    """Rule 13.5: the star counts only on a star square."""
    g = draft_position(row=(2, 0, 1))
    g.step(buy(0, "a1"))
    assert g.points == (0, 0)


def test_the_no_stars_preset_scores_no_star_points() -> None:
    """Rule 13.5: under ``no-stars`` a patch on b2 scores nothing."""
    g = draft_position(row=(2, 0, 1), rules="no-stars")
    g.step(buy(0, "a2"))
    assert g.points == (0, 0)


# --- 13.6 cannot buy ----------------------------------------------------------------------


def test_a_player_who_cannot_afford_any_patch_may_only_discard() -> None:
    """Rule 13.6: with no buyable patch the three discards are the legal actions."""
    g = draft_position(buttons=(1, 5))
    assert g.legal_actions().tolist() == DISCARDS


def test_discarding_is_illegal_while_a_patch_can_be_bought() -> None:
    """Rule 13.6: discarding is legal only when nothing can be bought."""
    g = draft_position()
    assert not set(DISCARDS) & set(g.legal_actions().tolist())
    with pytest.raises(ValueError, match="discard is legal only when"):
        g.step(encode_discard(0))


def test_a_discard_removes_the_patch_refills_and_passes_the_turn() -> None:
    """Rules 13.6 and 13.3: the patch leaves the game, its slot is refilled, no buttons
    change and the other player moves."""
    g = draft_position(buttons=(1, 5), deck=[7, 8])
    g.step(encode_discard(2))
    assert g.face_up == [1, 0, 7]
    assert 2 in g.discarded and g.buttons == (1, 5) and g.to_move == 1


def test_a_player_who_cannot_buy_discards_while_the_other_can() -> None:
    """Rules 13.6 and 13.7: the game goes on while one player can buy; the other discards."""
    g = draft_position(buttons=(5, 0))
    g.step(buy(0, "a1"))  # 3 buttons left, enough for the row
    assert g.to_move == 1
    assert g.legal_actions().tolist() == DISCARDS


# --- 13.7 end -----------------------------------------------------------------------------


def test_the_game_ends_at_the_refill_that_finds_the_deck_empty() -> None:
    """Rule 13.7 (a): a take with the deck empty ends the game, leaving its slot empty."""
    g = draft_position(deck=[])
    g.step(buy(0, "a1"))
    assert g.is_over and g.face_up == [None, 0, 2]


def test_drawing_the_last_patch_does_not_end_the_game() -> None:
    """Rule 13.7 (a): the refill that takes the last patch of the deck finds it not yet
    empty."""
    g = draft_position(deck=[5])
    g.step(buy(0, "a1"))
    assert not g.is_over and g.deck_size == 0


def test_the_game_ends_when_no_player_can_buy_any_patch_left() -> None:
    """Rule 13.7 (b): before a turn, no patch face up or in the deck that either player
    could buy ends the game."""
    g = draft_position(buttons=(2, 1), deck=[3, 6])
    g.step(buy(0, "a1"))  # 0 and 1 buttons left; the row costs 7, 2, 3 and the deck 10
    assert g.is_over and g.legal_actions().size == 0


def test_a_game_goes_on_by_discards_while_the_deck_holds_a_buyable_patch() -> None:
    """Rules 13.6 and 13.7 (b): no face-up patch is buyable by either player, but patch 26
    (cost 1) in the deck is, so the players discard until it comes up."""
    g = draft_position(buttons=(1, 1), deck=[3, 26])
    for mover in (0, 1):
        assert not g.is_over and g.to_move == mover
        assert g.legal_actions().tolist() == DISCARDS
        g.step(encode_discard(0))
    assert g.face_up == [26, 0, 2] and g.to_move == 0
    assert g.legal_actions().min() < DISCARD_BASE


def test_the_game_ends_when_the_last_affordable_patch_leaves_the_game() -> None:
    """Rule 13.7 (b): buying patch 26, the only patch either player can afford, leaves
    nothing but discards, so the game ends."""
    g = draft_position(buttons=(1, 1), row=(26, 0, 2), deck=[3, 6])
    g.step(buy(0, "a1"))
    assert g.is_over and g.face_up == [3, 0, 2]


def test_a_deal_nobody_can_buy_from_is_played_by_discards() -> None:
    """Rule 13.7 (b): three face-up patches costing more than the start buttons do not end
    the game while cheaper patches are in the deck; the first player discards."""
    g = DraftGame.new(deck=EXPENSIVE_FIRST, first_player=0)
    assert not g.is_over and g.legal_actions().tolist() == DISCARDS


def test_patches_that_fit_on_neither_quilt_end_the_game() -> None:
    """Rule 13.7 (b): "cannot buy" counts fit as well as cost, for both players and for
    the patches in the deck."""
    g = draft_position(quilts=(FULL, FULL))
    g.step(encode_discard(0))
    assert g.is_over


# --- 13.8 score ---------------------------------------------------------------------------


def test_the_score_is_points_plus_buttons() -> None:
    """Rule 13.8: row, column and star points plus one per button."""
    g = draft_position(points=(3, 1), buttons=(2, 7))
    assert g.scores() == (5, 8)


def test_the_higher_score_wins() -> None:
    """Rule 13.8: the higher score wins."""
    g = draft_position(points=(3, 0), buttons=(2, 4), to_move=-1, first_player=1)
    assert g.winner == 0


@pytest.mark.parametrize("first", [0, 1])
def test_a_tie_goes_to_the_player_who_moved_second(first: int) -> None:
    """Rule 13.8: equal scores: the second player wins."""
    g = draft_position(points=(1, 2), buttons=(4, 3), to_move=-1, first_player=first)
    assert g.winner == 1 - first


# --- 13.9 illegal actions -----------------------------------------------------------------


@pytest.mark.parametrize(("action", "why"), [
    (buy(2, "a1"), "cannot afford"),
    (buy(0, "a1"), "overlaps"),
    (buy(0, "a1", orientation=2), "not canonical"),
    (buy(0, "h1"), "leaves the board"),
    (1947, "out of range"),
])
def test_an_illegal_action_is_refused_and_changes_nothing(action: int, why: str) -> None:
    """Rule 13.9: an illegal action raises an error saying why, the state unchanged."""
    g = draft_position(quilts=(cells_picture([0]), EMPTY), buttons=(2, 5))
    before = g.state_dict()
    with pytest.raises(ValueError, match=why):
        g.step(action)
    assert g.state_dict() == before


def test_a_move_in_a_finished_game_is_refused() -> None:
    """Rule 13.9: no action is legal once the game is over."""
    g = draft_position(deck=[])
    g.step(buy(0, "a1"))
    with pytest.raises(ValueError, match="game is over"):
        g.step(buy(1, "a3"))


def test_a_batch_step_with_one_illegal_action_changes_no_game() -> None:
    """Rule 13.9: the batch checks every action before playing any."""
    batch = draft_position().batch
    two = type(batch)(np.concatenate([batch.state, batch.state]), batch.rules)
    before = two.state.copy()
    with pytest.raises(ValueError, match=r"game 1: .*discard is legal only when"):
        two.step([buy(0, "a1"), encode_discard(0)])
    assert (two.state == before).all()


def cells_picture(covered: list[int]) -> str:
    """A quilt picture with ``covered`` cells."""
    rows = [["."] * 9 for _ in range(9)]
    for c in covered:
        rows[c // 9][c % 9] = "X"
    picture = "\n".join("".join(r) for r in rows)
    assert cells(picture) == sorted(covered)
    return picture
