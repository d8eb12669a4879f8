"""The Gymnasium environments of Patchwork Draft: Gymnasium's checker, registration, the same
games as the AEC env and as ``DraftGame.new``, rewards, the hidden deck order, bad input,
and the vector env against the single one."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from patchwork_env import DraftGame
from patchwork_env.data.draft_actions import DISCARD_BASE, N_DRAFT_ACTIONS
from patchwork_env.envs.draft_aec import env as aec_env
from patchwork_env.envs.draft_gym import PatchworkDraftEnv, PatchworkDraftVectorEnv
from patchwork_env.envs.vector_env import SAME_STEP
from tests.envs.test_aec import first_buy, middle_move
from tests.envs.test_vector_env import check_infos, pick

ORDER = list(range(33))


def play(e: PatchworkDraftEnv, policy, **reset_kwargs) -> tuple[list, list, tuple]:
    """One episode with ``policy``: the observations, the actions, the last step."""
    obs, info = e.reset(**reset_kwargs)
    seen, moves = [obs], []
    while True:
        mask = e.action_masks()
        np.testing.assert_array_equal(info["action_mask"], mask.astype(np.int8))
        action = int(policy(obs[None], mask[None])[0])
        moves.append(action)
        obs, reward, terminated, truncated, info = e.step(action)
        assert not truncated
        if terminated:
            return seen, moves, (obs, reward, info)
        assert reward == 0
        seen.append(obs)


def test_gymnasium_check_env() -> None:
    check_env(gym.make("patchwork_env/PatchworkDraft-v0", render_mode="ansi").unwrapped)
    check_env(PatchworkDraftEnv(opponent=middle_move, learner_seat=1), skip_render_check=True)


def test_registered_with_gymnasium() -> None:
    e = gym.make("patchwork_env/PatchworkDraft-v0", learner_seat=0)
    obs, info = e.reset(seed=0)
    assert e.observation_space.contains(obs)
    assert e.action_space.n == N_DRAFT_ACTIONS and info["action_mask"].shape == (1947,)


def test_same_game_as_the_aec_env() -> None:
    """The learner's observations and reward are those its seat gets in the AEC env."""
    e = PatchworkDraftEnv(opponent=middle_move, learner_seat=1)
    seen, moves, (final, reward, _) = play(e, first_buy, seed=8)
    a = aec_env()
    a.reset(seed=8)
    aec_seen, learner_moves = [], iter(moves)
    while not a.terminations["player_1"]:
        obs = a.observe(a.agent_selection)
        if a.agent_selection == "player_1":
            aec_seen.append(obs["observation"])
            a.step(next(learner_moves))
        else:
            a.step(int(middle_move(None, obs["action_mask"][None])[0]))
    np.testing.assert_array_equal(np.array(seen), np.array(aec_seen))
    np.testing.assert_array_equal(final, a.observe("player_1")["observation"])
    assert reward == a.rewards["player_1"]


def test_seeded_reset_sets_up_draft_game_new() -> None:
    e = PatchworkDraftEnv(learner_seat=0)
    e.reset(seed=21, options={"first_player": 0})
    assert e.game.state_dict() == DraftGame.new(seed=21, first_player=0).state_dict()


def test_the_final_reward_is_the_win_or_the_loss() -> None:
    for seed in range(6):
        _, _, (_, reward, info) = play(PatchworkDraftEnv(), first_buy, seed=seed)
        assert reward == (1.0 if info["winner"] == info["learner_seat"] else -1.0)
        assert info["is_success"] == (reward == 1.0)


def test_score_reward_is_the_scaled_difference() -> None:
    e = PatchworkDraftEnv(reward="score", score_scale=0.5, learner_seat=0)
    _, _, (_, reward, info) = play(e, first_buy, seed=1)
    assert reward == pytest.approx(0.5 * (info["scores"][0] - info["scores"][1]))


def test_the_deck_order_is_never_seen() -> None:
    e = PatchworkDraftEnv(learner_seat=0)
    a, _ = e.reset(seed=0, options={"deck": ORDER, "first_player": 0})
    b, _ = e.reset(seed=0, options={"deck": ORDER[:3] + ORDER[3:][::-1], "first_player": 0})
    np.testing.assert_array_equal(a, b)


def test_an_illegal_action_ends_the_episode_with_the_penalty() -> None:
    e = PatchworkDraftEnv(learner_seat=0, illegal_reward=-3.0)
    e.reset(seed=0, options={"first_player": 0})
    _, reward, terminated, _, info = e.step(DISCARD_BASE)
    assert terminated and reward == -3.0 and info["illegal_action"]
    with pytest.raises(RuntimeError, match="reset"):
        e.step(0)


@pytest.mark.parametrize(("action", "error"), [
    (1.5, TypeError), (True, TypeError), ("0", TypeError), (N_DRAFT_ACTIONS, ValueError),
    (-1, ValueError),
])
def test_malformed_actions_are_refused(action: object, error: type) -> None:
    e = PatchworkDraftEnv()
    e.reset(seed=0)
    before = e.game.state_dict()
    with pytest.raises(error):
        e.step(action)
    assert e.game.state_dict() == before


def test_bad_seeds_and_options_are_refused() -> None:
    e = PatchworkDraftEnv()
    with pytest.raises(ValueError, match="seed"):
        e.reset(seed=-1)
    with pytest.raises(ValueError, match="deck"):
        e.reset(options={"deck": [0, 1]})
    with pytest.raises(ValueError, match="circle"):
        e.reset(options={"circle": ORDER})
    with pytest.raises(ValueError, match="preset"):
        PatchworkDraftEnv(rules="classic")


def test_a_policy_opponent_sees_draft_observations() -> None:
    shapes = []

    def policy(obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        shapes.append((obs.shape[1], masks.shape[1]))
        return first_buy(obs, masks)

    play(PatchworkDraftEnv(opponent=policy, learner_seat=1), first_buy, seed=2,
         options={"first_player": 0})
    assert set(shapes) == {(438, N_DRAFT_ACTIONS)}


def test_render_modes() -> None:
    e = PatchworkDraftEnv(render_mode="rgb_array")
    e.reset(seed=0)
    assert e.render().shape == (600, 900, 3)
    e = PatchworkDraftEnv(render_mode="ansi")
    e.reset(seed=0)
    assert e.render() == str(e.game)


# ---------------------------------------------------------------------------------------
# the vector env


def test_make_vec_builds_the_native_vector_env() -> None:
    envs = gym.make_vec("patchwork_env/PatchworkDraft-v0", num_envs=3,
                        vectorization_mode="vector_entry_point", learner_seat=1)
    assert isinstance(envs.unwrapped, PatchworkDraftVectorEnv)
    obs, infos = envs.reset(seed=5)
    assert obs.shape == (3, 438)
    check_infos(infos, 3)
    assert infos["action_mask"].shape == (3, N_DRAFT_ACTIONS)


def test_game_i_is_draft_game_new_of_seed_plus_i() -> None:
    envs = PatchworkDraftVectorEnv(4, learner_seat=0)
    envs.reset(seed=40, options={"first_player": 0})
    for i in range(4):
        expected = DraftGame.new(seed=40 + i, first_player=0)
        assert DraftGame.from_batch(envs.batch, i).state_dict() == expected.state_dict()


def test_masks_are_the_legal_actions_of_every_game() -> None:
    envs = PatchworkDraftVectorEnv(5, seed=1)
    _, infos = envs.reset(seed=1)
    for _ in range(40):
        np.testing.assert_array_equal(infos["action_mask"],
                                      envs.batch.legal_mask().astype(np.int8))
        _, _, _, _, infos = envs.step(pick(middle_move, infos["action_mask"]))
        check_infos(infos, 5)


def test_the_same_games_as_the_single_agent_env() -> None:
    scalar = PatchworkDraftEnv(opponent=middle_move, learner_seat=1)
    envs = PatchworkDraftVectorEnv(1, opponent=middle_move, learner_seat=1)
    obs_a, info_a = scalar.reset(seed=12)
    obs_b, _ = envs.reset(seed=12)
    done = False
    while not done:
        np.testing.assert_array_equal(obs_a, obs_b[0])
        action = int(first_buy(None, info_a["action_mask"][None])[0])
        obs_a, reward_a, done, _, info_a = scalar.step(action)
        obs_b, reward_b, _, _, _ = envs.step(np.array([action]))
        assert reward_a == reward_b[0]
    np.testing.assert_array_equal(obs_a, obs_b[0])


def test_same_step_autoreset_gives_the_final_observation() -> None:
    envs = PatchworkDraftVectorEnv(4, autoreset_mode="same_step", seed=0)
    _, infos = envs.reset(seed=0)
    assert envs.metadata["autoreset_mode"] == SAME_STEP
    while True:
        _, rewards, terms, _, infos = envs.step(pick(first_buy, infos["action_mask"]))
        if terms.any():
            break
    row = int(np.flatnonzero(terms)[0])
    assert infos["_final_obs"][row] and infos["final_obs"].shape == (4, 438)
    assert infos["final_info"]["winner"][row] in (0, 1)
    assert rewards[row] in (-1.0, 1.0)


def test_bad_vector_arguments_are_refused() -> None:
    envs = PatchworkDraftVectorEnv(2)
    with pytest.raises(RuntimeError, match="reset"):
        envs.step([0, 0])
    envs.reset(seed=0)
    with pytest.raises(ValueError, match=r"outside 0\.\.1946"):
        envs.step([0, N_DRAFT_ACTIONS])
    with pytest.raises(ValueError, match="one seed per env"):
        envs.reset(seed=[1, 2, 3])
    with pytest.raises(ValueError, match="deck"):
        envs.reset(options={"deck": [3]})


def test_vector_render_draws_every_game() -> None:
    envs = PatchworkDraftVectorEnv(2, render_mode="rgb_array")
    envs.reset(seed=0)
    pictures = envs.render()
    assert len(pictures) == 2 and pictures[0].shape == (600, 900, 3)


@pytest.mark.parametrize("seed", [True, 1.5, -2, np.array(3)])
def test_bad_vector_seeds_are_refused_and_change_nothing(seed: object) -> None:
    envs = PatchworkDraftVectorEnv(2)
    envs.reset(seed=0)
    before = envs.batch.state.tobytes()
    with pytest.raises((TypeError, ValueError), match="seed"):
        envs.reset(seed=seed)
    assert envs.batch.state.tobytes() == before
