"""The single-agent Gymnasium view: Gymnasium's checker, seats, the same games as the AEC
env, rewards from the agent's side, illegal actions and the opponents it accepts."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from patchwork_env import ADVANCE, LEATHER_BASE, N_ACTIONS, Game
from patchwork_env.envs.gym_env import PatchworkEnv
from patchwork_env.envs.opponents import RandomOpponent, as_opponent
from tests.envs.test_aec import always_advance, first_buy, middle_move, replay_in_aec


def play(env: PatchworkEnv, policy, **reset_kwargs):
    """Play one episode with ``policy``; returns the observations, actions, last step."""
    obs, info = env.reset(**reset_kwargs)
    seen, moves = [obs], []
    while True:
        mask = env.action_masks()
        np.testing.assert_array_equal(info["action_mask"], mask.astype(np.int8))
        action = int(policy(obs[None], mask[None])[0])
        moves.append(action)
        obs, reward, terminated, truncated, info = env.step(action)
        assert not truncated
        if terminated:
            return seen, moves, (obs, reward, info)
        assert reward == 0
        seen.append(obs)


def test_gymnasium_check_env():
    check_env(gym.make("patchwork_env/Patchwork-v0", render_mode="ansi").unwrapped)
    check_env(PatchworkEnv(opponent=middle_move, learner_seat=1), skip_render_check=True)


def test_registered_with_gymnasium():
    env = gym.make("patchwork_env/Patchwork-v0", learner_seat=0)
    obs, _ = env.reset(seed=0)
    assert env.observation_space.contains(obs)
    assert env.unwrapped.learner_seat == 0


def test_same_game_as_the_aec_env():
    for seed, seat in ((3, 0), (8, 1)):
        env = PatchworkEnv(opponent=middle_move, learner_seat=seat)
        seen, moves, (final, reward, info) = play(env, first_buy, seed=seed)
        aec_seen, _, aec_reward, aec_final = replay_in_aec(seed, seat, moves, middle_move)
        assert len(seen) == len(aec_seen)
        for a, b in zip(seen, aec_seen, strict=True):
            np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(final, aec_final)
        assert reward == aec_reward
        assert info["learner_seat"] == seat


def test_seeded_reset_is_reproducible_and_sets_up_game_new():
    env = PatchworkEnv(learner_seat=0)
    runs = [play(env, middle_move, seed=21) for _ in range(2)]
    np.testing.assert_array_equal(np.array(runs[0][0]), np.array(runs[1][0]))
    assert runs[0][1] == runs[1][1]
    start = Game.new(seed=21)
    env = PatchworkEnv(learner_seat=start.to_move)  # so the opponent has not moved yet
    env.reset(seed=21)
    assert env.game == start


def test_random_seat_takes_both_seats():
    env = PatchworkEnv()
    seats = set()
    for seed in range(12):
        env.reset(seed=seed)
        seats.add(env.learner_seat)
        assert env.game.to_move == env.learner_seat  # the opponent's openings are made
    assert seats == {0, 1}


@pytest.mark.parametrize("seat", [0, 1])
def test_a_scripted_loss_pays_minus_one(seat):
    env = PatchworkEnv(opponent=first_buy, learner_seat=seat)
    _, _, (_, reward, info) = play(env, always_advance, seed=5)
    assert reward == -1
    assert info["winner"] == 1 - seat and not info["is_success"]
    assert info["scores"][seat] < info["scores"][1 - seat]


def test_score_reward_is_the_scaled_difference():
    env = PatchworkEnv(opponent=first_buy, learner_seat=1, reward="score", score_scale=0.1)
    _, _, (_, reward, info) = play(env, always_advance, seed=6)
    mine, theirs = info["scores"][1], info["scores"][0]
    assert reward == pytest.approx(0.1 * (mine - theirs)) and reward < 0


def test_illegal_action_ends_the_episode_with_the_penalty():
    env = PatchworkEnv(illegal_reward=-3.0, learner_seat=0)
    obs, _ = env.reset(seed=2)
    before = env.game.state_dict()
    obs2, reward, terminated, truncated, info = env.step(LEATHER_BASE)
    assert (reward, terminated, truncated) == (-3.0, True, False)
    assert info["illegal_action"] and not info["is_success"]
    np.testing.assert_array_equal(obs, obs2)
    assert env.game.state_dict() == before
    with pytest.raises(RuntimeError, match="reset"):
        env.step(ADVANCE)


@pytest.mark.parametrize(("action", "error"), [
    (N_ACTIONS, ValueError), (-1, ValueError), ("advance", TypeError), (1.5, TypeError),
    ([ADVANCE, ADVANCE], ValueError)])
def test_malformed_actions_are_refused(action, error):
    env = PatchworkEnv()
    env.reset(seed=0)
    before = env.game.state_dict()
    with pytest.raises(error):
        env.step(action)
    assert env.game.state_dict() == before


def test_step_before_reset_is_refused():
    with pytest.raises(RuntimeError, match="reset"):
        PatchworkEnv().step(ADVANCE)


def test_reset_options():
    env = PatchworkEnv()
    circle = list(range(1, 33)) + [0]
    env.reset(seed=0, options={"circle": circle, "first_player": 1, "learner_seat": 1})
    assert env.learner_seat == 1
    assert env.game.circle == circle and env.game.to_move == 1
    with pytest.raises(ValueError, match="unknown reset options"):
        env.reset(options={"seat": 1})
    with pytest.raises(ValueError, match="learner_seat"):
        env.reset(options={"learner_seat": 2})


# ---------------------------------------------------------------------------------------
# opponents


class LowestAgent:
    """An agent in the ``agents`` package's shape: ``act(batch, rows)``."""

    spec = "lowest"

    def act(self, batch, rows):
        return np.array([int(np.flatnonzero(batch.legal_mask()[r])[0]) for r in rows])


def test_an_agent_object_plays_like_the_same_policy():
    runs = []
    for opponent in (LowestAgent(), first_buy):
        env = PatchworkEnv(opponent=opponent, learner_seat=0)
        runs.append(play(env, middle_move, seed=9))
    assert runs[0][1] == runs[1][1]


def test_opponent_names_are_looked_up_in_the_agents_registry(monkeypatch):
    import patchwork_env.agents as registry

    made = []

    def make(spec, seed=None):
        if spec != "lowest":
            raise ValueError(f"no agent called {spec!r}")
        made.append(seed)
        return LowestAgent()

    monkeypatch.setattr(registry, "make", make)
    env = PatchworkEnv(opponent=registry.make_opponent("lowest"), learner_seat=0)
    play(env, middle_move, seed=4)
    assert made[-1] == 4  # rebuilt with the episode's seed
    with pytest.raises(ValueError, match=r"opponent 'nobody': no agent called"):
        registry.make_opponent("nobody")


def test_an_agent_of_the_registry_by_name():
    from patchwork_env import agents

    env = PatchworkEnv(opponent=agents.make_opponent("greedy"), learner_seat=1)
    runs = [play(env, middle_move, seed=3)[1] for _ in range(2)]
    assert runs[0] == runs[1]


def test_the_env_looks_up_no_names():
    with pytest.raises(ValueError, match=r"unknown opponent 'greedy'.*registry"):
        as_opponent("greedy")
    with pytest.raises(ValueError, match=r"unknown opponent 'greedy'.*registry"):
        PatchworkEnv(opponent="greedy")


def test_bad_opponents_are_refused():
    assert isinstance(as_opponent("random"), RandomOpponent)
    with pytest.raises(TypeError, match="opponent must be"):
        as_opponent(42)
    env = PatchworkEnv(opponent=lambda obs, masks: np.full(len(obs), LEATHER_BASE),
                       learner_seat=1)
    with pytest.raises(ValueError, match=r"opponent .* illegal"):
        env.reset(seed=0, options={"first_player": 0})
    env = PatchworkEnv(opponent=lambda obs, masks: [ADVANCE, ADVANCE], learner_seat=1)
    with pytest.raises(ValueError, match="must return 1 integer actions"):
        env.reset(seed=0, options={"first_player": 0})


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"learner_seat": 2}, "learner_seat"), ({"reward": "points"}, "reward"),
    ({"render_mode": "video"}, "render_mode"), ({"rules": "house"}, "preset")])
def test_bad_constructor_arguments_are_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        PatchworkEnv(**kwargs)


def test_render_modes(capsys):
    env = PatchworkEnv(render_mode="ansi")
    env.reset(seed=0)
    assert "player 0" in env.render()
    env = PatchworkEnv(render_mode="rgb_array")
    env.reset(seed=0)
    assert env.render().dtype == np.uint8
    env = PatchworkEnv(render_mode="human")
    env.reset(seed=0)
    env.step(ADVANCE)
    assert "player 0" in capsys.readouterr().out
