"""The AEC env's flat observation mode: a Box observation with the mask in ``infos``,
the same games as the dict mode, PettingZoo's API test, and SuperSuit's observation
wrappers on it."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium import spaces
from pettingzoo.test import api_test

import patchwork_env
from patchwork_env.data.actions import N_ACTIONS


def play(env, seed: int, moves: int = 400):
    """Observations and masks along a game played with the lowest legal action."""
    env.reset(seed=seed)
    seen = []
    for _ in env.agent_iter(moves):
        obs, _, terminated, truncated, info = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        mask = obs["action_mask"] if isinstance(obs, dict) else info["action_mask"]
        seen.append((obs["observation"] if isinstance(obs, dict) else obs, mask.copy()))
        env.step(int(np.flatnonzero(mask)[0]))
    return seen


def test_flat_observations_are_a_box_with_the_mask_in_infos():
    env = patchwork_env.env(observation_mode="flat")
    space = env.observation_space("player_0")
    assert isinstance(space, spaces.Box) and space.shape == (1189,)
    env.reset(seed=1)
    obs, _, _, _, info = env.last()
    assert space.contains(obs)
    assert info["action_mask"].dtype == np.int8 and info["action_mask"].shape == (N_ACTIONS,)
    other = "player_1" if env.agent_selection == "player_0" else "player_0"
    assert not env.infos[other]["action_mask"].any()


def test_flat_and_dict_modes_play_the_same_game():
    flat = play(patchwork_env.env(observation_mode="flat"), seed=5)
    full = play(patchwork_env.env(), seed=5)
    assert len(flat) == len(full)
    for (obs_a, mask_a), (obs_b, mask_b) in zip(flat, full, strict=True):
        np.testing.assert_array_equal(obs_a, obs_b)
        np.testing.assert_array_equal(mask_a, mask_b)


def test_flat_mode_passes_the_pettingzoo_api_test():
    api_test(patchwork_env.env(observation_mode="flat"), num_cycles=20)


def test_an_unknown_observation_mode_is_refused():
    with pytest.raises(ValueError, match="observation_mode"):
        patchwork_env.env(observation_mode="image")


def test_supersuit_observation_wrappers_accept_the_flat_env():
    ss = pytest.importorskip("supersuit")
    env = patchwork_env.env(observation_mode="flat")
    env = ss.dtype_v0(env, np.float64)
    env = ss.normalize_obs_v0(env, env_min=0.0, env_max=1.0)
    env = ss.frame_stack_v1(env, 2)
    env = ss.flatten_v0(env)
    env.reset(seed=0)
    obs, _, _, _, info = env.last()
    assert obs.shape == (2 * 1189,) and obs.dtype == np.float64
    assert obs.min() >= 0.0 and obs.max() <= 1.0
    env.step(int(np.flatnonzero(info["action_mask"])[0]))
