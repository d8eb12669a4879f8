"""Bad input raises a clear error and leaves the game exactly as it was."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import pytest

from patchwork_env import ADVANCE, Game, GameBatch, Rules, get_rules
from tests.positions import position


@pytest.fixture
def game() -> Game:
    g = Game.new(seed=1)
    for a in (ADVANCE, ADVANCE, ADVANCE):
        g.step(a)
    return g


@pytest.mark.parametrize(
    ("action", "error", "match"),
    [
        (2026, ValueError, "out of range"),
        (-1, ValueError, "out of range"),
        (1.0, TypeError, "an action is an int"),
        ("advance", TypeError, "an action is an int"),
        (True, TypeError, "an action is an int"),
        (1945, ValueError, "no leather patch is pending"),
    ],
)
def test_a_bad_action_raises_and_changes_nothing(game: Game, action: Any, error: type,
                                                 match: str) -> None:
    before = game.state_dict()
    with pytest.raises(error, match=match):
        game.step(action)
    assert game.state_dict() == before


def test_an_overlapping_buy_raises_and_changes_nothing() -> None:
    g = position(buttons=(20, 5), circle=[1, 0, 2], to_move=0)
    g.step(0)  # XXX on a1..c1
    g2 = position(quilts=("XXX......\n" + "\n".join(["........."] * 8),) * 2,
                  buttons=(20, 5), circle=[1, 0, 2], to_move=0)
    before = g2.state_dict()
    with pytest.raises(ValueError, match=r"illegal action 648 \(buy slot 1 o0 at a1\)"):
        g2.step(648)
    assert g2.state_dict() == before


def test_a_move_after_the_end_raises() -> None:
    g = position(position=(53, 53), to_move=-1, first_to_finish=0)
    with pytest.raises(ValueError, match="game is over"):
        g.step(ADVANCE)


def test_unknown_rules_preset() -> None:
    with pytest.raises(ValueError, match="unknown rules preset 'house'"):
        Game.new(rules="house")
    with pytest.raises(TypeError, match="rules must be"):
        get_rules(3)  # type: ignore[arg-type]


def test_impossible_rules_are_refused() -> None:
    with pytest.raises(ValueError, match="strictly increasing"):
        Rules(leather_positions=(26, 20))
    with pytest.raises(ValueError, match="must lie on spaces"):
        Rules(income_positions=(5, 60))
    with pytest.raises(ValueError, match="bonus_size"):
        Rules(bonus_size=10)


@pytest.mark.parametrize(
    ("circle", "match"),
    [
        (list(range(1, 33)), "hold the 33 patch ids"),
        (list(range(1, 33)) + [1], "permutation"),
        (list(range(33)), "must end with patch 0"),
    ],
)
def test_a_circle_must_be_a_permutation_with_patch_zero_last(circle: list[int],
                                                             match: str) -> None:
    with pytest.raises(ValueError, match=match):
        Game.new(circle=circle)


def test_first_player_must_be_zero_or_one() -> None:
    with pytest.raises(ValueError, match="first_player"):
        Game.new(first_player=2)


def corrupt(d: dict[str, Any], key: str, value: Any) -> dict[str, Any]:
    d = copy.deepcopy(d)
    d[key] = value
    return d


@pytest.mark.parametrize(
    ("key", "value", "match"),
    [
        ("position", [3], "two values"),
        ("position", [3, 80], r"'position' must be in 0\.\.53"),
        ("buttons", [-1, 5], "'buttons' must be in"),
        ("buttons", ["5", 5], "must be an int"),
        ("quilt", ["01" * 40, "0" * 81], "81 characters"),
        ("circle", [1, 1, 2], "repeats a patch id"),
        ("circle", [40], "'circle' must be in 0..32"),
        ("to_move", 1, "ahead on the time track"),
        ("to_move", None, "not over"),
        ("bonus_owner", 0, "no full 7x7 square"),
        ("income", [9, 9], "income of player 0 is 9"),
        ("pending_leather", 9, "'pending_leather' must be in"),
        ("cell_patches", [[0] * 81, [-1] * 81], "do not cover the cells"),
    ],
)
def test_a_malformed_state_dict_is_refused(game: Game, key: str, value: Any,
                                          match: str) -> None:
    d = game.state_dict()
    assert d["position"][0] < d["position"][1] or key != "to_move" or value is None
    with pytest.raises((ValueError, TypeError), match=match):
        Game.from_dict(corrupt(d, key, value))


def test_a_state_dict_with_missing_or_unknown_keys_is_refused(game: Game) -> None:
    d = game.state_dict()
    del d["buttons"]
    with pytest.raises(ValueError, match=r"lacks the keys \['buttons'\]"):
        Game.from_dict(d)
    with pytest.raises(ValueError, match="unknown keys"):
        Game.from_dict({**game.state_dict(), "colour": 1})
    with pytest.raises(TypeError, match="must be a dict"):
        Game.from_dict([1, 2])  # type: ignore[arg-type]


def test_batch_step_names_the_bad_game_and_changes_no_game() -> None:
    batch = GameBatch.new(8, seed=3)
    actions = batch.random_actions(np.random.default_rng(0))
    actions[5] = 2025 if actions[5] != 2025 else 2024  # no leather is pending at the start
    before = batch.state.copy()
    with pytest.raises(ValueError, match="game 5: illegal action"):
        batch.step(actions)
    assert (batch.state == before).all()
    with pytest.raises(ValueError, match=r"one action per game: shape \(8,\)"):
        batch.step(actions[:3])
    with pytest.raises(TypeError, match="integers"):
        batch.step(actions.astype(float))


def test_batch_step_leaves_games_given_minus_one_alone() -> None:
    batch = GameBatch.new(4, seed=3)
    before = batch.state.copy()
    actions = batch.random_actions(np.random.default_rng(0))
    actions[[0, 2]] = -1
    batch.step(actions)
    assert (batch.state[[0, 2]] == before[[0, 2]]).all()
    assert (batch.state[[1, 3]] != before[[1, 3]]).all()


def test_unchecked_batch_step_is_available_for_masked_actions() -> None:
    a = GameBatch.new(16, seed=3)
    b = a.copy()
    actions = a.random_actions(np.random.default_rng(0))
    a.step(actions)
    b.step(actions, check=False)
    assert (a.state == b.state).all()


@pytest.mark.parametrize("out", [np.zeros((3, 2026), np.bool_), np.zeros((4, 2026), np.uint8),
                                 np.zeros((4, 4052), np.bool_)[:, ::2], [[False] * 2026] * 4])
def test_legal_mask_refuses_an_out_array_it_cannot_fill(out: Any) -> None:
    batch = GameBatch.new(4, seed=3)
    with pytest.raises(ValueError, match=r"out must be .* of shape \(4, 2026\)"):
        batch.legal_mask(out=out)


def test_legal_mask_fills_the_out_array_given() -> None:
    batch = GameBatch.new(4, seed=3)
    out = np.zeros((4, 2026), np.bool_)
    assert batch.legal_mask(out=out) is out
    assert (out == batch.legal_mask()).all() and out.any()


def test_a_batch_needs_at_least_one_game() -> None:
    with pytest.raises(ValueError, match="at least one game"):
        GameBatch.new(0)


def test_a_recorded_state_with_impossible_totals_is_refused(game: Game) -> None:
    d = game.state_dict()
    del d["cell_patches"]
    with pytest.raises(ValueError, match="do not add up"):
        Game.from_dict(corrupt(d, "income", [9, 9]))
    with pytest.raises(ValueError, match="does not match the patches bought"):
        Game.from_dict(corrupt(d, "quilt", ["1" * 10 + "0" * 71, d["quilt"][1]]))


def test_a_patch_on_both_quilts_is_refused() -> None:
    g = position(buttons=(20, 5), circle=[1, 0, 2] + list(range(3, 33)), to_move=0)
    g.step(0)
    d = g.state_dict()
    d["cell_patches"][1] = list(d["cell_patches"][0])
    d["quilt"][1] = d["quilt"][0]
    with pytest.raises(ValueError, match="patch 1 is on a quilt and also elsewhere"):
        Game.from_dict(d)


def test_a_pickled_batch_keeps_its_field_views_on_its_own_state() -> None:
    import pickle

    batch = pickle.loads(pickle.dumps(GameBatch.new(2, seed=0)))
    batch.step(batch.random_actions(0))
    np.testing.assert_array_equal(batch.to_move, batch.state["to_move"])
    np.testing.assert_array_equal(batch.buttons, batch.state["buttons"])
