"""The native Gymnasium vector env: built by ``make_vec``, the same games as the scalar env,
masks in ``info["action_mask"]``, type-stable infos and both autoreset modes."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest

from patchwork_env import Game
from patchwork_env.envs.gym_env import PatchworkEnv
from patchwork_env.envs.vector_env import NEXT_STEP, SAME_STEP, PatchworkVectorEnv
from tests.envs.test_aec import first_buy, middle_move

INFO_TYPES = {"action_mask": np.int8, "learner_seat": np.int64, "winner": np.int64,
              "scores": np.int64, "is_success": np.bool_, "illegal_action": np.bool_}


def pick(policy, masks: np.ndarray) -> np.ndarray:
    """``policy``'s moves; 0 in games that are over (their action is ignored)."""
    live = masks.any(axis=1)
    actions = np.zeros(len(masks), np.int64)
    if live.any():
        actions[live] = policy(None, masks[live])
    return actions


def check_infos(infos: dict, n: int) -> None:
    for key, dtype in INFO_TYPES.items():
        assert infos[key].dtype == dtype, key
        assert len(infos[key]) == n, key


def test_make_vec_builds_the_native_vector_env():
    envs = gymnasium.make_vec("patchwork_env/Patchwork-v0", num_envs=3,
                              vectorization_mode="vector_entry_point", learner_seat=1)
    assert isinstance(envs.unwrapped, PatchworkVectorEnv)
    obs, infos = envs.reset(seed=5)
    assert obs.shape == (3, *envs.single_observation_space.shape)
    assert envs.action_space.shape == (3,)
    check_infos(infos, 3)
    assert (infos["learner_seat"] == 1).all()


def test_game_i_is_game_new_of_seed_plus_i():
    envs = PatchworkVectorEnv(4, learner_seat=0)
    envs.reset(seed=40, options={"first_player": 0})  # no opening move by the opponent
    for i in range(4):
        expected = Game.new(seed=40 + i)
        assert Game.from_batch(envs.batch, i).circle == expected.circle


def test_masks_are_the_legal_actions_of_every_game():
    envs = PatchworkVectorEnv(5, seed=1)
    _, infos = envs.reset(seed=1)
    for _ in range(30):
        legal = envs.batch.legal_mask()
        np.testing.assert_array_equal(infos["action_mask"], legal.astype(np.int8))
        live = ~envs.batch.done
        assert (envs.batch.to_move[live] == infos["learner_seat"][live]).all()
        _, _, _, _, infos = envs.step(pick(middle_move, infos["action_mask"]))
        check_infos(infos, 5)


def test_the_same_games_as_the_single_agent_env():
    scalar = PatchworkEnv(opponent=middle_move, learner_seat=1)
    envs = PatchworkVectorEnv(1, opponent=middle_move, learner_seat=1)
    obs_a, info_a = scalar.reset(seed=12)
    obs_b, info_b = envs.reset(seed=12)
    done = False
    while not done:
        np.testing.assert_array_equal(obs_a, obs_b[0])
        action = first_buy(None, info_a["action_mask"][None])
        obs_a, reward_a, done, _, info_a = scalar.step(int(action[0]))
        obs_b, reward_b, term_b, _, info_b = envs.step(action)
        assert reward_a == reward_b[0] and done == term_b[0]
    assert info_b["winner"][0] == info_a["winner"]
    assert tuple(info_b["scores"][0]) == info_a["scores"]


def run_to_first_end(envs: PatchworkVectorEnv):
    _, infos = envs.reset(seed=3)
    for _ in range(200):
        obs, rewards, terms, truncs, infos = envs.step(pick(first_buy, infos["action_mask"]))
        assert not truncs.any()
        if terms.any():
            return obs, rewards, terms, infos
    raise AssertionError("no game ended within 200 steps")


def test_next_step_autoreset_restarts_on_the_following_step():
    envs = PatchworkVectorEnv(2, autoreset_mode="next_step")
    assert envs.metadata["autoreset_mode"] == NEXT_STEP
    _, rewards, terms, infos = run_to_first_end(envs)
    row = int(np.flatnonzero(terms)[0])
    assert rewards[row] in (-1.0, 1.0)
    assert infos["winner"][row] in (0, 1)
    assert (infos["winner"][~terms] == -1).all()
    _, rewards, terms, _, infos = envs.step(pick(first_buy, infos["action_mask"]))
    assert rewards[row] == 0.0 and not terms[row]
    assert infos["winner"][row] == -1
    assert not envs.batch.done[row]  # a new game, in which the learner is to move


def test_same_step_autoreset_gives_the_final_observation():
    envs = PatchworkVectorEnv(2, autoreset_mode="same_step")
    assert envs.metadata["autoreset_mode"] == SAME_STEP
    obs, _, terms, infos = run_to_first_end(envs)
    row = int(np.flatnonzero(terms)[0])
    assert infos["_final_obs"][row]
    assert not np.array_equal(infos["final_obs"][row], obs[row])
    assert infos["final_info"]["winner"][row] in (0, 1)
    assert not envs.batch.done[row]  # already restarted


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="autoreset_mode"):
        PatchworkVectorEnv(2, autoreset_mode="sometimes")
    with pytest.raises((TypeError, ValueError), match="num_envs"):
        PatchworkVectorEnv(0)
    envs = PatchworkVectorEnv(2)
    with pytest.raises(RuntimeError, match="reset"):
        envs.step([0, 0])
    envs.reset(seed=0)
    with pytest.raises(ValueError, match="outside"):
        envs.step([0, 5000])
    with pytest.raises(ValueError, match="one seed per env"):
        envs.reset(seed=[1, 2, 3])


def test_a_failing_subclass_of_the_random_opponent_leaves_the_games_as_they_were():
    """Only the built-in random opponent itself is trusted to play without a way back."""
    from patchwork_env.envs.opponents import RandomOpponent

    class Breaks(RandomOpponent):
        armed = False

        def reply(self, batch, seats, rng):
            super().reply(batch, seats, rng)
            if self.armed:
                raise RuntimeError("broke after moving")

    for mode in (NEXT_STEP, SAME_STEP):
        opponent = Breaks()
        envs = PatchworkVectorEnv(8, opponent=opponent, autoreset_mode=mode)
        envs.reset(seed=0)
        duel = envs.duel
        state, seats = duel.batch.state.tobytes(), duel.seats.copy()
        rng_state, masks = duel.rng.bit_generator.state, duel.masks.copy()
        opponent.armed = True
        with pytest.raises(RuntimeError, match="broke after moving"):
            envs.step(pick(first_buy, masks))
        assert duel.batch.state.tobytes() == state
        np.testing.assert_array_equal(duel.seats, seats)
        assert duel.rng.bit_generator.state == rng_state
        np.testing.assert_array_equal(duel.masks, masks)
