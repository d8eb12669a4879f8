"""DraftGame, the one-game API of Patchwork Draft: setup, moves, copies, equality, the text
view, and the state dict with its checks (every malformed dict refused by field name)."""

from __future__ import annotations

import copy
import json
from typing import Any

import numpy as np
import pytest

from patchwork_env.data.draft_actions import N_DRAFT_ACTIONS, encode_discard
from patchwork_env.views.draft_game import DraftGame
from tests.draft_positions import draft_position
from tests.positions import buy


def mid_game() -> DraftGame:
    """Two turns into a game dealt in id order: player 0 to move with 3 buttons."""
    g = DraftGame.new(deck=list(range(33)), first_player=0)
    g.step(buy(0, "a1"))  # player 0: patch 0 (XX), 3 buttons left
    g.step(buy(1, "a1"))  # player 1: patch 1 (XXX), 3 buttons left
    return g


# --- setup and moves ----------------------------------------------------------------------


def test_new_games_are_reproducible_from_the_seed() -> None:
    """``DraftGame.new(seed)`` deals the same game for the same seed."""
    assert DraftGame.new(seed=9) == DraftGame.new(seed=9)
    assert DraftGame.new(seed=9) != DraftGame.new(seed=10)


def test_a_rules_preset_is_chosen_by_name() -> None:
    """``rules="no-stars"`` plays without stars."""
    assert DraftGame.new(seed=1, rules="no-stars").rules.star_squares == ()


def test_the_legal_mask_matches_the_legal_actions() -> None:
    """``legal_mask`` sets exactly the entries of ``legal_actions``."""
    g = mid_game()
    mask = g.legal_mask()
    assert mask.shape == (N_DRAFT_ACTIONS,)
    assert np.flatnonzero(mask).tolist() == g.legal_actions().tolist()


def test_a_non_integer_action_is_refused_by_type() -> None:
    """``step`` takes an int; a float is a TypeError and changes nothing."""
    g = mid_game()
    with pytest.raises(TypeError):
        g.step(1.0)
    assert g == mid_game()


def test_a_copy_is_independent() -> None:
    """A move in a copy leaves the original as it was."""
    g = mid_game()
    h = g.copy()
    h.step(h.legal_actions()[0])
    assert g == mid_game() and h != g


def test_action_cells_names_the_cells_a_buy_covers() -> None:
    """``action_cells``: the cells of a buy, none for a discard."""
    g = mid_game()
    assert g.action_cells(buy(2, "a3")) == [18, 19, 20, 21]
    assert g.action_cells(encode_discard(0)) == []


def test_winner_is_none_while_playing_and_to_move_none_once_over() -> None:
    """``winner`` only once over; ``to_move`` None then."""
    g = draft_position(deck=[])
    assert g.winner is None
    g.step(buy(0, "a1"))
    assert g.to_move is None and g.winner in (0, 1)


def test_equality_compares_whole_positions() -> None:
    """Two games are equal when their states are."""
    assert mid_game() == mid_game()
    assert mid_game() != DraftGame.new(deck=list(range(33)), first_player=0)
    assert mid_game() != "a game"


# --- the text view ------------------------------------------------------------------------


def test_the_text_view_shows_quilts_buttons_points_and_the_row() -> None:
    """``str()``: the quilts with their patches, buttons, points, the row with costs."""
    text = str(mid_game())
    assert "player 0 to move" in text
    assert "buttons 3" in text and "points 0" in text
    assert "slot 2: patch 2 (2) cost 3 star" in text
    assert "deck: 28 face down" in text
    assert "1  0 0 . . . . . . .       1 1 1 . . . . . ." in text


def test_the_text_view_marks_star_squares_or_none() -> None:
    """``str()`` marks the star squares with ``*``, and says when there are none."""
    assert "star squares (*): b2, h2, e5, b8, h8" in str(mid_game())
    assert "star squares (*): none" in str(DraftGame.new(seed=0, rules="no-stars"))


# --- the state dict -----------------------------------------------------------------------


def test_a_state_dict_round_trips() -> None:
    """``from_dict(state_dict())`` is the same game, and plays on the same."""
    g = mid_game()
    h = DraftGame.from_dict(json.loads(json.dumps(g.state_dict())))
    assert h == g
    assert h.legal_actions().tolist() == g.legal_actions().tolist()


def test_a_finished_game_round_trips() -> None:
    """A game over at the empty deck (a slot empty) reloads."""
    g = DraftGame.new(seed=2)
    while not g.is_over:
        g.step(g.legal_actions()[-1])
    assert DraftGame.from_dict(g.state_dict()) == g


def _edit(key: str, value: Any) -> dict[str, Any]:
    d = copy.deepcopy(mid_game().state_dict())
    d[key] = value
    return d


def _edited(path: tuple, value: Any) -> dict[str, Any]:
    d = copy.deepcopy(mid_game().state_dict())
    target = d
    for k in path[:-1]:
        target = target[k]
    target[path[-1]] = value
    return d


MALFORMED = [
    (_edit("to_move", 2), "'to_move'"),
    (_edit("to_move", 1), "'to_move'.*'first_player'"),
    (_edit("to_move", None), "'to_move'"),
    (_edit("first_player", "0"), "'first_player'"),
    (_edit("buttons", [-1, 3]), "'buttons'"),
    (_edit("buttons", [4, 3]), "'buttons'"),
    (_edit("buttons", [3]), "'buttons'"),
    (_edit("points", [1, 0]), "'points'"),
    (_edit("quilt", ["1" * 80, "0" * 81]), "'quilt'"),
    (_edit("row", [3, 4]), "'row'"),
    (_edit("row", [3, 4, 33]), "'row'"),
    (_edit("row", [3, 4, None]), "'row'"),
    (_edit("deck", [5, 5]), "'deck'"),
    (_edit("deck", [2, *range(5, 33)]), "'row' and 'deck'"),
    (_edit("cell_patches", [[0] * 81]), "'cell_patches'"),
    (_edited(("cell_patches", 0, 2), 0), "'cell_patches' and 'quilt'"),
    (_edit("rules", {"start_buttons": -1}), "'rules'"),
]


@pytest.mark.parametrize(("d", "field"), MALFORMED)
def test_a_malformed_state_dict_is_refused_by_name(d: dict[str, Any], field: str) -> None:
    """Each impossible field gets an error that names it."""
    with pytest.raises((TypeError, ValueError), match=field):
        DraftGame.from_dict(d)


@pytest.mark.parametrize("key", ["deck", "row", "quilt"])
def test_a_state_dict_missing_a_key_is_refused(key: str) -> None:
    """A missing key is named."""
    d = mid_game().state_dict()
    del d[key]
    with pytest.raises(ValueError, match=f"lacks the keys \\['{key}'\\]"):
        DraftGame.from_dict(d)


def test_a_state_dict_with_an_unknown_key_is_refused() -> None:
    """An unknown key is named."""
    with pytest.raises(ValueError, match="unknown keys \\['circle'\\]"):
        DraftGame.from_dict({**mid_game().state_dict(), "circle": []})


def test_a_state_that_is_not_a_dict_is_refused() -> None:
    """Only a dict is read."""
    with pytest.raises(TypeError, match="must be a dict"):
        DraftGame.from_dict([1, 2])  # type: ignore[arg-type]


def test_rules_given_must_agree_with_the_dicts_rules() -> None:
    """``from_dict(d, rules)`` refuses rules that differ from ``d['rules']``."""
    with pytest.raises(ValueError, match="differs from the rules given"):
        DraftGame.from_dict(mid_game().state_dict(), rules="no-stars")


def test_a_refused_dict_leaves_no_game_behind() -> None:
    """A refused dict raises before any game exists; the source game is untouched."""
    g = mid_game()
    d = g.state_dict()
    d["points"] = [5, 5]
    with pytest.raises(ValueError):
        DraftGame.from_dict(d)
    assert g == mid_game()
