"""The SB3 vector env: the same games as the AEC env, auto-reset with terminal observations,
masks after the reset, rewards from the learner's side, seeding, and MaskablePPO on it."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("stable_baselines3")
pytest.importorskip("sb3_contrib")

from sb3_contrib import MaskablePPO
from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported

from patchwork_env import ADVANCE, LEATHER_BASE, N_ACTIONS, Game
from patchwork_env.agents.policy_agent import PolicyAgent
from patchwork_env.integrations.sb3 import PatchworkVecEnv
from patchwork_env.views.observation import observe_batch
from tests.envs.test_aec import always_advance, first_buy, middle_move, replay_in_aec


def run_episodes(venv: PatchworkVecEnv, policy, steps: int):
    """Step ``venv`` with ``policy``; per env, the first episode's learner observations and
    actions, its final reward and info. Also checks the masks after every step."""
    obs = venv.reset()
    seats = venv.learner_seats
    first = [{"seen": [], "moves": [], "end": None} for _ in range(venv.num_envs)]
    for _ in range(steps):
        masks = venv.action_masks()
        np.testing.assert_array_equal(masks, venv.batch.legal_mask())
        assert (venv.batch.to_move == venv.learner_seats).all()
        actions = policy(obs, masks)
        for i, rec in enumerate(first):
            if rec["end"] is None:
                rec["seen"].append(obs[i])
                rec["moves"].append(int(actions[i]))
        obs, rewards, dones, infos = venv.step(actions)
        for i in np.flatnonzero(dones):
            if first[i]["end"] is None:
                first[i]["end"] = (float(rewards[i]), infos[i])
        assert not rewards[~dones].any()
    return seats, first


def test_same_games_as_the_aec_env():
    venv = PatchworkVecEnv(4, opponent=middle_move, seed=30)
    seats, first = run_episodes(venv, first_buy, steps=60)
    for i, rec in enumerate(first):
        assert rec["end"] is not None, "every first game ends within 60 learner steps"
        seen, _, reward, final = replay_in_aec(30 + i, int(seats[i]), rec["moves"], middle_move)
        np.testing.assert_array_equal(np.array(rec["seen"]), np.array(seen))
        end_reward, info = rec["end"]
        assert end_reward == reward
        np.testing.assert_array_equal(info["terminal_observation"], final)
        assert info["learner_seat"] == seats[i]


def test_seeds_reproduce_the_run_and_set_up_game_new():
    runs = []
    for _ in range(2):
        venv = PatchworkVecEnv(3, seed=7)
        obs = [venv.reset()]
        rng = np.random.default_rng(0)
        for _ in range(40):
            obs.append(venv.step(venv.batch.random_actions(rng))[0])
        runs.append(np.array(obs))
    np.testing.assert_array_equal(runs[0], runs[1])
    venv = PatchworkVecEnv(4, opponent=first_buy, learner_seat=0)
    venv.seed(100)
    venv.reset()
    for i in range(4):
        expected = Game.new(seed=100 + i)
        while expected.to_move == 1:  # the opponent's opening moves
            expected.step(int(first_buy(None, expected.legal_mask()[None])[0]))
        assert Game.from_batch(venv.batch, i) == expected


@pytest.mark.parametrize("seed", [True, 1.0, -1, np.array(3), "3"], ids=repr)
def test_seed_is_read_as_game_new_reads_it_and_a_bad_one_changes_nothing(seed):
    venv, twin = PatchworkVecEnv(2, seed=7), PatchworkVecEnv(2, seed=7)
    with pytest.raises((TypeError, ValueError), match="seed") as refused:
        venv.seed(seed)
    assert repr(seed) in str(refused.value) or str(seed) in str(refused.value)
    np.testing.assert_array_equal(venv.reset(), twin.reset())  # still seeded with 7
    venv.seed(2**70)  # a huge seed and a numpy one are seeds like any other
    assert twin.seed(np.int64(2**62)) == [2**62, 2**62 + 1]
    again = PatchworkVecEnv(2)
    again.seed(2**70)
    np.testing.assert_array_equal(venv.reset(), again.reset())
    assert twin.seed(np.int64(5)) == [5, 6]


@pytest.mark.parametrize("seat", [0, 1])
def test_a_scripted_loss_pays_minus_one_in_every_env(seat):
    venv = PatchworkVecEnv(6, opponent=first_buy, seed=1, learner_seat=seat)
    _, first = run_episodes(venv, always_advance, steps=70)
    for reward, info in (rec["end"] for rec in first):
        assert reward == -1
        assert info["winner"] == 1 - seat and not info["is_success"]


def test_score_reward_is_the_scaled_difference():
    venv = PatchworkVecEnv(3, opponent=first_buy, seed=2, reward="score", score_scale=0.1)
    _, first = run_episodes(venv, always_advance, steps=70)
    for reward, info in (rec["end"] for rec in first):
        seat = info["learner_seat"]
        diff = info["scores"][seat] - info["scores"][1 - seat]
        assert reward == pytest.approx(0.1 * diff) and reward < 0


def test_auto_reset_gives_a_fresh_game_and_its_masks():
    venv = PatchworkVecEnv(2, seed=3, learner_seat=1)
    venv.reset()
    rng = np.random.default_rng(1)
    while True:
        obs, _, dones, infos = venv.step(venv.batch.random_actions(rng))
        if dones.any():
            break
    i = int(np.flatnonzero(dones)[0])
    assert not np.array_equal(infos[i]["terminal_observation"], obs[i])
    game = Game.from_batch(venv.batch, i)
    assert not game.is_over and game.to_move == 1
    assert len(game.quilt_cells(1)) == 0  # the learner has not moved in the new game
    np.testing.assert_array_equal(obs[i], observe_batch(game.batch, 1)[0])
    np.testing.assert_array_equal(venv.action_masks()[i], game.legal_mask())


def test_illegal_actions_end_only_their_game():
    venv = PatchworkVecEnv(3, seed=4, illegal_reward=-2.0)
    venv.reset()
    before = venv.batch.state.copy()
    actions = venv.batch.random_actions(np.random.default_rng(0))
    actions[1] = LEATHER_BASE  # no leather patch is pending
    _, rewards, dones, infos = venv.step(actions)
    assert dones[1] and rewards[1] == -2.0 and infos[1]["illegal_action"]
    assert not dones[[0, 2]].any()
    assert (venv.batch.state[[0, 2]] != before[[0, 2]]).any()


@pytest.mark.parametrize(("actions", "error"), [
    (np.full(2, ADVANCE), ValueError), (np.array([ADVANCE, N_ACTIONS, 0]), ValueError),
    (np.array([ADVANCE, -1, 0]), ValueError), (np.array(["a", "b", "c"]), TypeError)])
def test_malformed_actions_are_refused(actions, error):
    venv = PatchworkVecEnv(3, seed=5)
    venv.reset()
    before = venv.batch.state.copy()
    with pytest.raises(error):
        venv.step(actions)
    np.testing.assert_array_equal(venv.batch.state, before)


def test_step_before_reset_is_refused():
    with pytest.raises(RuntimeError, match="reset"):
        PatchworkVecEnv(2).step(np.full(2, ADVANCE))


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"n_envs": 0}, "n_envs"), ({"n_envs": 2, "learner_seat": 3}, "learner_seat"),
    ({"n_envs": 2, "render_mode": "human"}, "render_mode"),
    ({"n_envs": 2, "reward": "elo"}, "reward")])
def test_bad_constructor_arguments_are_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        PatchworkVecEnv(**kwargs)


def test_reset_options_and_vec_env_methods():
    venv = PatchworkVecEnv(2, learner_seat=0)
    circle = list(range(1, 33)) + [0]
    venv.set_options({"circle": circle, "first_player": 0})
    venv.reset()
    assert Game.from_batch(venv.batch, 1).circle == circle
    venv.set_options({"rules": "revised"})
    with pytest.raises(ValueError, match="unknown reset options"):
        venv.reset()
    assert is_masking_supported(venv)
    np.testing.assert_array_equal(get_action_masks(venv), venv.action_masks())
    assert venv.get_attr("render_mode") == [None, None]
    assert venv.env_is_wrapped(object) == [False, False]
    with pytest.raises(AttributeError, match="per-env method"):
        venv.env_method("close")
    with pytest.raises(ValueError, match="share"):
        venv.set_attr("render_mode", "rgb_array", indices=[0])


def test_rgb_frames_of_every_env():
    venv = PatchworkVecEnv(2, seed=0, render_mode="rgb_array")
    venv.reset()
    frames = venv.get_images()
    assert len(frames) == 2 and frames[0].dtype == np.uint8 and frames[0].ndim == 3


@pytest.fixture
def one_torch_thread():
    """Train on one thread: a smoke test on a small shared machine is faster that way."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.mark.usefixtures("one_torch_thread")
def test_maskable_ppo_trains_and_can_become_the_opponent():
    venv = PatchworkVecEnv(8, seed=0)
    model = MaskablePPO("MlpPolicy", venv, n_steps=64, batch_size=128, n_epochs=1, seed=0,
                        policy_kwargs={"net_arch": [32]}, device="cpu")
    model.learn(total_timesteps=2048)
    assert model.num_timesteps >= 2048
    venv.set_opponent(PolicyAgent.from_model(model, seed=0))
    rng = np.random.default_rng(0)
    for _ in range(30):
        masks = venv.action_masks()
        legal = [np.flatnonzero(m) for m in masks]
        venv.step(np.array([row[rng.integers(len(row))] for row in legal]))
    assert (venv.batch.to_move == venv.learner_seats).all()
