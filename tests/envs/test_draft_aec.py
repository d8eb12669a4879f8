"""The PettingZoo AEC environment of Patchwork Draft: PettingZoo's own checks, masks
against the engine, the hidden deck order, rewards, reset options, bad input, rendering
and its manual."""

from __future__ import annotations

import pickle
import re

import numpy as np
import pettingzoo
import pytest
from pettingzoo.test import api_test, parallel_api_test, render_test, seed_test
from pettingzoo.utils.conversions import turn_based_aec_to_parallel

from patchwork_env import DraftGame
from patchwork_env.data.draft_actions import DISCARD_BASE, N_DRAFT_ACTIONS
from patchwork_env.envs.draft_aec import env, raw_env
from patchwork_env.views.draft_observation import draft_layout

pytestmark = pytest.mark.filterwarnings("ignore:ignoring unknown reset options")

ORDER = list(range(33))


def play_out(e, rng: np.random.Generator) -> None:
    """Play ``e`` (reset) to its end with random legal moves, checking each mask against
    the engine."""
    while not all(e.terminations.values()):
        agent = e.agent_selection
        mask = e.observe(agent)["action_mask"]
        np.testing.assert_array_equal(mask, e.unwrapped.game.legal_mask().astype(np.int8))
        e.step(int(rng.choice(np.flatnonzero(mask))))


# ---------------------------------------------------------------------------------------
# PettingZoo's checks


@pytest.mark.filterwarnings("ignore:Observation space for each agent probably")
@pytest.mark.filterwarnings("ignore:Observation is not a NumPy array")
def test_pettingzoo_api_test() -> None:
    api_test(env(), num_cycles=200)


@pytest.mark.filterwarnings("ignore:Observation space for each agent probably")
def test_pettingzoo_api_test_flat() -> None:
    api_test(env(observation_mode="flat"), num_cycles=100)


def test_pettingzoo_seed_test() -> None:
    seed_test(env, num_cycles=200)


def test_pettingzoo_render_test() -> None:
    render_test(lambda render_mode=None: env(render_mode=render_mode))


def test_parallel_api_through_turn_based_conversion() -> None:
    parallel_api_test(turn_based_aec_to_parallel(env()), num_cycles=200)


@pytest.mark.skipif(not hasattr(pettingzoo, "make"),
                    reason="this PettingZoo has no registry (pettingzoo.make came in 1.27)")
def test_registered_with_pettingzoo() -> None:
    e = pettingzoo.make("aec", "patchwork_env/patchwork_draft-v0")
    e.reset(seed=0)
    assert e.unwrapped.metadata["name"] == "patchwork_draft_v0"


def test_the_spaces_are_the_drafts() -> None:
    e = env()
    assert e.metadata["name"] == "patchwork_draft_v0"
    assert e.action_space("player_0").n == N_DRAFT_ACTIONS
    space = e.observation_space("player_1")
    assert space["observation"].shape == (draft_layout("default").size,)
    assert space["action_mask"].shape == (N_DRAFT_ACTIONS,)


# ---------------------------------------------------------------------------------------
# play


def test_masks_match_the_engine_in_random_games() -> None:
    rng = np.random.default_rng(1)
    e = env()
    for seed in range(5):
        e.reset(seed=seed)
        play_out(e, rng)


def test_the_deck_order_is_never_seen() -> None:
    """Rule 13.1: games differing only in the order of the face-down deck look the same
    to both agents (observations and masks) until a refill shows the difference."""
    a, b = env(), env()
    a.reset(options={"deck": ORDER, "first_player": 0})
    b.reset(options={"deck": ORDER[:3] + ORDER[3:][::-1], "first_player": 0})
    for agent in ("player_0", "player_1"):
        oa, ob = a.observe(agent), b.observe(agent)
        np.testing.assert_array_equal(oa["observation"], ob["observation"])
        np.testing.assert_array_equal(oa["action_mask"], ob["action_mask"])


def test_the_winner_gets_one_and_the_loser_minus_one() -> None:
    e = env()
    e.reset(seed=3)
    play_out(e, np.random.default_rng(3))
    game = e.unwrapped.game
    w = f"player_{game.winner}"
    assert e.rewards[w] == 1.0 and e.rewards[f"player_{1 - game.winner}"] == -1.0
    assert e.infos[w]["winner"] == game.winner
    assert e.infos[w]["scores"] == {"player_0": game.scores()[0], "player_1": game.scores()[1]}


def test_score_reward_is_the_scaled_difference() -> None:
    e = env(reward="score", score_scale=0.5)
    e.reset(seed=4)
    play_out(e, np.random.default_rng(4))
    s0, s1 = e.unwrapped.game.scores()
    assert e.rewards["player_0"] == pytest.approx(0.5 * (s0 - s1))
    assert e.rewards["player_1"] == pytest.approx(0.5 * (s1 - s0))


def test_an_illegal_move_ends_the_game_with_a_penalty() -> None:
    e = env()
    e.reset(seed=0)
    mover = e.agent_selection
    e.step(DISCARD_BASE)  # a discard while a patch can be bought
    assert all(e.terminations.values())
    assert e.rewards[mover] == -1.0


def test_raw_env_refuses_an_illegal_move_and_keeps_the_position() -> None:
    e = raw_env()
    e.reset(seed=0)
    before = e.game.state_dict()
    with pytest.raises(ValueError, match="discard is legal only when"):
        e.step(DISCARD_BASE)
    assert e.game.state_dict() == before


# ---------------------------------------------------------------------------------------
# reset and bad input


def test_seed_gives_the_setup_of_draft_game_new() -> None:
    e = raw_env()
    for seed in (0, 11, 12345):
        e.reset(seed=seed)
        expected = DraftGame.new(seed=seed)
        assert e.game.state_dict() == expected.state_dict()
        assert e.agent_selection == f"player_{expected.to_move}"


def test_reset_options_set_up_the_game() -> None:
    e = raw_env()
    e.reset(seed=1, options={"deck": ORDER[::-1], "first_player": 1, "rules": "no-stars"})
    assert e.game.face_up == [32, 31, 30]
    assert e.agent_selection == "player_1"
    assert e.game.rules.star_squares == ()


@pytest.mark.parametrize(("options", "message"), [
    ({"deck": [1, 2, 3]}, "deck"),
    ({"first_player": 2}, "first_player"),
    ({"rules": "nonsense"}, "preset"),
])
def test_bad_reset_options_are_refused(options: dict, message: str) -> None:
    e = raw_env()
    e.reset(seed=0)
    before = e.game.state_dict()
    with pytest.raises(ValueError, match=message):
        e.reset(seed=1, options=options)
    assert e.game.state_dict() == before


@pytest.mark.parametrize(("action", "error", "message"), [
    (1.0, TypeError, "int"), (True, TypeError, "int"), ("3", TypeError, "int"),
    (N_DRAFT_ACTIONS, ValueError, "0..1946"), (-1, ValueError, "0..1946"),
    (None, ValueError, "None"),
])
def test_values_that_are_not_moves_are_refused(action: object, error: type,
                                               message: str) -> None:
    e = env()
    e.reset(seed=0)
    before = e.unwrapped.game.state_dict()
    with pytest.raises(error, match=message):
        e.step(action)
    assert e.unwrapped.game.state_dict() == before and not any(e.terminations.values())


@pytest.mark.parametrize("seed", [-1, 1.5, True, [1]])
def test_bad_seeds_are_refused(seed: object) -> None:
    with pytest.raises((TypeError, ValueError), match="seed"):
        env().reset(seed=seed)


def test_step_before_reset_and_after_the_end_are_refused() -> None:
    with pytest.raises(RuntimeError, match="reset"):
        env().step(0)
    e = env()
    e.reset(seed=2)
    play_out(e, np.random.default_rng(2))
    with pytest.raises(ValueError, match="its only action is None"):
        e.step(0)


# ---------------------------------------------------------------------------------------
# rendering and documentation


def test_render_modes(capsys: pytest.CaptureFixture) -> None:
    for mode in ("ansi", "rgb_array", "human"):
        e = env(render_mode=mode)
        e.reset(seed=0)
        picture = e.render()
        if mode == "ansi":
            assert picture == str(e.unwrapped.game)
        elif mode == "rgb_array":
            assert picture.dtype == np.uint8 and picture.shape == (600, 900, 3)
        else:
            assert picture is None and "Patchwork Draft" in capsys.readouterr().out


def test_the_documented_observation_table_matches_the_layout() -> None:
    rows = re.findall(r"\|\s*(\d+)(?: - (\d+))?\s*\|\s*`(\w+)`\s*\|", raw_env.__doc__)
    lay = draft_layout("default")
    assert [(int(a), int(b or a) + 1, name) for a, b, name in rows] == [
        (f.start, f.stop, f.name) for f in lay.fields]
    assert f"| ({lay.size},)" in raw_env.__doc__


def test_pickle_round_trip_keeps_the_position() -> None:
    e = env()
    e.reset(seed=4)
    rng = np.random.default_rng(0)
    for _ in range(6):
        e.step(int(rng.choice(np.flatnonzero(e.observe(e.agent_selection)["action_mask"]))))
    copy = pickle.loads(pickle.dumps(e))
    assert copy.agent_selection == e.agent_selection
    for agent in ("player_0", "player_1"):
        a, b = e.observe(agent), copy.observe(agent)
        np.testing.assert_array_equal(a["observation"], b["observation"])
        np.testing.assert_array_equal(a["action_mask"], b["action_mask"])
    assert copy.unwrapped.game == e.unwrapped.game
