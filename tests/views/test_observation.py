"""The observation vector: each field on hand-built positions, ego-centric symmetry,
completeness (the state can be read back from it), batch = single path, and bounds."""

from __future__ import annotations

import numpy as np
import pytest

from patchwork_env import PATCHES, Game, GameBatch, Rules, get_rules
from patchwork_env.engine.kernels import STATE_DTYPE
from patchwork_env.envs.rewards import check_reward, final_rewards
from patchwork_env.views.observation import (
    LEATHER_AT,
    PATCH_FEATURES,
    SLOT_FEATURES,
    layout,
    observe,
    observe_batch,
)
from tests.positions import EMPTY, position

LAYOUT = layout(get_rules("default"))

MINE = """
XXX......
XXX......
.........
.........
.........
.........
.........
.........
........X
"""
THEIRS = """
.........
.........
.........
.........
....X....
.........
.........
.........
.........
"""


def seen_by(game, seat):
    return LAYOUT.split(observe_batch(game.batch, seat)[0])


@pytest.fixture
def hand_built():
    """Player 1 to move with a leather patch pending; player 0 holds the bonus tile."""
    return position(quilts=(MINE, THEIRS), position=(10, 25), buttons=(12, 3),
                    income=(4, 1), circle=[5, 17, 0], to_move=1, pending_leather=1,
                    bonus_owner=0)


def test_layout_is_contiguous_and_documented_size():
    assert [f.name for f in LAYOUT.fields] == [
        "quilts", "position", "buttons", "income", "income_ahead", "to_move",
        "pending_leather", "bonus", "finished_first", "circle", "leather_track"]
    stops = [0] + [f.stop for f in LAYOUT.fields]
    assert [f.start for f in LAYOUT.fields] == stops[:-1]
    assert LAYOUT.size == 1189 == LAYOUT.space.shape[0]
    assert LAYOUT.space.dtype == np.float32


def test_every_field_of_a_hand_built_position(hand_built):
    mine = seen_by(hand_built, 0)
    np.testing.assert_array_equal(mine["quilts"][0].reshape(81) == 1,
                                  np.array(list(MINE.replace("\n", ""))) == "X")
    np.testing.assert_array_equal(mine["quilts"][1].reshape(81) == 1,
                                  np.array(list(THEIRS.replace("\n", ""))) == "X")
    np.testing.assert_allclose(mine["position"], [10 / 53, 25 / 53])
    np.testing.assert_allclose(mine["buttons"], [12 / 50, 3 / 50])
    np.testing.assert_allclose(mine["income"], [0.4, 0.1])
    # income spaces 11..53 lie ahead of space 10 (8 of 9); 29..53 ahead of space 25 (5)
    np.testing.assert_allclose(mine["income_ahead"], [8 / 9, 5 / 9])
    np.testing.assert_array_equal(mine["to_move"], [0, 1])
    np.testing.assert_array_equal(mine["pending_leather"], [0, 1])
    np.testing.assert_array_equal(mine["bonus"], [1, 0])
    np.testing.assert_array_equal(mine["finished_first"], [0, 0])
    # leather patches lie beyond the furthest token (25): spaces 26, 32, 38, 44
    np.testing.assert_array_equal(np.flatnonzero(mine["leather_track"]), [26, 32, 38, 44])
    circle = mine["circle"]
    np.testing.assert_allclose(circle[0, :4], [1, 2 / 10, 2 / 6, 0])  # patch 5
    shape = circle[0, 4:].reshape(5, 5)
    assert np.flatnonzero(shape).tolist() == [0, 1, 5, 6, 7]  # "XX./XXX"
    np.testing.assert_allclose(circle[1, :4], [1, 4 / 10, 2 / 6, 1 / 3])  # patch 17
    np.testing.assert_array_equal(circle[3:], 0)


def test_the_opponent_sees_the_same_position_from_the_other_side(hand_built):
    mine, theirs = seen_by(hand_built, 0), seen_by(hand_built, 1)
    for name in ("quilts", "position", "buttons", "income", "income_ahead", "to_move",
                 "pending_leather", "bonus", "finished_first"):
        np.testing.assert_array_equal(theirs[name], mine[name][::-1], err_msg=name)
    np.testing.assert_array_equal(theirs["circle"], mine["circle"])
    np.testing.assert_array_equal(theirs["leather_track"], mine["leather_track"])


def swap_seats(state: np.ndarray) -> np.ndarray:
    """The same games with the two players' seats exchanged."""
    out = state.copy()
    for name in ("quilt", "cell_patches", "buttons", "position", "income"):
        out[name] = state[name][:, ::-1]
    for name in ("to_move", "bonus_owner", "first_to_finish"):
        out[name] = np.where(state[name] >= 0, 1 - state[name], state[name])
    return out


@pytest.fixture(scope="module")
def played() -> GameBatch:
    """300 games stopped after different numbers of random moves (some finished)."""
    batch = GameBatch.new(300, seed=1)
    rng = np.random.default_rng(1)
    stop = rng.integers(0, 90, size=len(batch))
    for t in range(90):
        acts = batch.random_actions(rng)
        acts[stop <= t] = -1
        batch.step(acts)
    return batch


def test_observation_depends_on_the_seat_not_the_player_number(played):
    batch = played
    seats = np.random.default_rng(2).integers(0, 2, size=len(batch))
    swapped = swap_seats(batch.state)
    np.testing.assert_array_equal(observe_batch(batch, seats),
                                  observe(swapped, batch.rules, 1 - seats))


def decode(obs: np.ndarray) -> dict:
    """Read the position back from one observation (observer = seat 0 of the result)."""
    f = LAYOUT.split(obs)
    circle = []
    for row in f["circle"]:
        if row[0] == 0:
            break
        matches = np.flatnonzero((row == PATCH_FEATURES).all(axis=1))
        assert len(matches) == 1, "every patch has its own features"
        circle.append(int(matches[0]))
    seat_of = {(0, 0): -1, (1, 0): 0, (0, 1): 1}
    return {
        "quilts": (f["quilts"].reshape(2, 81) == 1).tolist(),
        "position": np.rint(f["position"] * 53).astype(int).tolist(),
        "buttons": np.rint(f["buttons"] * 50).astype(int).tolist(),
        "income": np.rint(f["income"] * 10).astype(int).tolist(),
        "to_move": seat_of[tuple(f["to_move"].astype(int))],
        "pending_leather": int(f["pending_leather"].sum()),
        "bonus_owner": seat_of[tuple(f["bonus"].astype(int))],
        "first_to_finish": seat_of[tuple(f["finished_first"].astype(int))],
        "circle": circle,
    }


def test_the_position_can_be_read_back_from_the_observation(played):
    for row in range(0, len(played), 6):
        game = Game.from_batch(played, row)
        for seat in (0, 1):
            d = game.state_dict()
            order = [seat, 1 - seat]
            other = {-1: -1, seat: 0, 1 - seat: 1}
            expected = {
                "quilts": [[c == "1" for c in d["quilt"][p]] for p in order],
                "position": [d["position"][p] for p in order],
                "buttons": [d["buttons"][p] for p in order],
                "income": [d["income"][p] for p in order],
                "to_move": other[-1 if d["to_move"] is None else d["to_move"]],
                "pending_leather": d["pending_leather"],
                "bonus_owner": other[d["bonus_owner"]],
                "first_to_finish": other[d["first_to_finish"]],
                "circle": d["circle"],
            }
            assert decode(observe_batch(game.batch, seat)[0]) == expected


def test_batch_path_equals_one_game_at_a_time(played):
    # 300 games take the multi-threaded kernel, one game the serial one
    seats = np.random.default_rng(5).integers(0, 2, size=len(played))
    whole = observe_batch(played, seats)
    for row in range(0, len(played), 7):
        alone = Game.from_batch(played, row).batch
        np.testing.assert_array_equal(whole[row], observe_batch(alone, seats[row])[0])


def test_observations_stay_inside_the_space_and_default_to_the_mover(played):
    batch = played
    obs = observe_batch(batch)
    assert all(LAYOUT.space.contains(o) for o in obs)
    movers = np.maximum(batch.to_move, 0)
    np.testing.assert_array_equal(obs, observe_batch(batch, movers))
    assert batch.done.any()  # finished games are covered too


def test_a_token_on_a_leather_space_has_taken_its_patch():
    game = position(position=(26, 3))
    assert np.flatnonzero(seen_by(game, 1)["leather_track"]).tolist() == [32, 38, 44]


def test_leather_track_follows_the_rules():
    rules = Rules(leather_positions=(3, 50), track_end=60)
    game = position(rules=rules, position=(4, 2))
    lay = layout(rules)
    obs = lay.split(observe_batch(game.batch, 0)[0])
    assert lay.size == LEATHER_AT + 61
    assert np.flatnonzero(obs["leather_track"]).tolist() == [50]
    np.testing.assert_allclose(obs["position"], [4 / 60, 2 / 60])


def test_an_empty_board_with_an_empty_circle():
    game = position(quilts=(EMPTY, EMPTY), circle=[])
    obs = seen_by(game, 0)
    assert not obs["quilts"].any() and not obs["circle"].any()


def test_out_buffer_is_filled_in_place(played):
    batch = played[np.arange(5)]
    out = np.full((5, LAYOUT.size), 9.0, np.float32)
    assert observe_batch(batch, 1, out=out) is out
    np.testing.assert_array_equal(out, observe_batch(batch, 1))


@pytest.mark.parametrize(("players", "error"), [
    (2, ValueError), (np.array([0, 1, 2]), ValueError), (np.array([0, 1]), ValueError),
    (np.array([0.0, 1.0, 0.0]), TypeError), (np.array([[0, 1, 0]]), ValueError),
])
def test_bad_players_are_refused(players, error):
    with pytest.raises(error, match="players"):
        observe_batch(GameBatch.new(3, seed=0), players)


def test_bad_state_or_out_is_refused():
    batch = GameBatch.new(2, seed=0)
    with pytest.raises(ValueError, match="out must be"):
        observe_batch(batch, out=np.zeros((2, 5), np.float32))
    with pytest.raises(TypeError, match="STATE_DTYPE"):
        observe(np.zeros(2), batch.rules)
    assert observe(np.zeros(0, STATE_DTYPE), batch.rules).shape == (0, LAYOUT.size)


def test_split_names_the_size_it_expects():
    with pytest.raises(ValueError, match="1189"):
        LAYOUT.split(np.zeros(10))


def test_patch_features_describe_every_patch():
    assert PATCH_FEATURES.shape == (33, SLOT_FEATURES)
    for p in PATCHES:
        assert PATCH_FEATURES[p.id, 4:].sum() == p.size
        np.testing.assert_allclose(PATCH_FEATURES[p.id, 1:4] * [10, 6, 3],
                                   [p.cost, p.time, p.income], rtol=1e-6)


def test_final_rewards_win_and_score():
    scores = np.array([[10, -4], [3, 3], [-20, 5]])
    winners = np.array([0, 1, 1])
    players = np.array([1, 0, 1])
    np.testing.assert_array_equal(final_rewards(scores, winners, players), [-1, -1, 1])
    np.testing.assert_allclose(final_rewards(scores, winners, players, "score", 0.1),
                               [-1.4, 0.0, 2.5], rtol=1e-6)


@pytest.mark.parametrize(("reward", "scale"), [("points", 0.1), ("win", 0), ("score", -1)])
def test_bad_reward_settings_are_refused(reward, scale):
    with pytest.raises(ValueError, match=r"reward|score_scale"):
        check_reward(reward, scale)
