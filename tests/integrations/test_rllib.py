"""The RLlib integration: the multi-agent env against RLlib's own checks and the engine,
the action-masking module, and one PPO self-play iteration in a local Ray.

Skipped when Ray RLlib is not installed (``pip install -e ".[rllib]"``).
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("ray.rllib")
pytest.importorskip("torch")

import gymnasium as gym
import torch
from ray.rllib.core.columns import Columns

from patchwork_env import ADVANCE, N_ACTIONS, Game
from patchwork_env.integrations import rllib as pw
from patchwork_env.views.observation import observe


def rllib_env_check():
    """RLlib's own env check: ``ray.rllib.utils.check_env`` where this Ray has it, else
    the multi-agent check it calls."""
    import ray.rllib.utils as utils

    if hasattr(utils, "check_env"):
        return utils.check_env
    from ray.rllib.utils.pre_checks.env import check_multiagent_environments

    return check_multiagent_environments


def play_through_env(seed: int, rng: np.random.Generator) -> None:
    """Random legal moves through the env, checked move by move against the engine."""
    env = pw.PatchworkMultiAgentEnv()
    obs, infos = env.reset(seed=seed)
    game = Game.new(seed=seed)
    assert infos == {}
    moves = 0
    while True:
        agent = f"player_{game.to_move}"
        assert list(obs) == [agent]  # only the player to move observes
        np.testing.assert_array_equal(
            obs[agent]["observations"], observe(game.batch.state, game.rules, game.to_move)[0])
        legal = np.flatnonzero(obs[agent]["action_mask"])
        np.testing.assert_array_equal(legal, game.legal_actions())
        assert env.observation_spaces[agent].contains(obs[agent])
        action = int(rng.choice(legal))
        game.step(action)
        moves += 1
        obs, rewards, terminateds, truncateds, infos = env.step({agent: np.int64(action)})
        assert truncateds == {"__all__": False}
        if terminateds["__all__"]:
            break
        assert rewards == {agent: 0.0} and infos == {}
    assert game.is_over and env.game == game
    winner = f"player_{game.winner}"
    assert rewards == {a: 1.0 if a == winner else -1.0 for a in pw.AGENTS}
    assert set(obs) == set(pw.AGENTS) and all(o["action_mask"].sum() == 0 for o in obs.values())
    scores = dict(zip(pw.AGENTS, game.scores(), strict=True))
    assert infos == {a: {"scores": scores, "winner": winner, "illegal_move": False}
                     for a in pw.AGENTS}
    assert moves > 20 and env.illegal_moves == 0


def test_the_env_passes_rllibs_own_check() -> None:
    env = pw.PatchworkMultiAgentEnv()
    rllib_env_check()(env)  # steps a random action: almost surely illegal, which ends it
    assert env.illegal_moves in (0, 1)


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4])
def test_random_games_run_to_the_end_as_in_the_engine(seed: int) -> None:
    play_through_env(seed, np.random.default_rng(seed))


def test_an_illegal_move_ends_the_game_and_is_counted() -> None:
    env = pw.PatchworkMultiAgentEnv({"illegal_reward": -2.0})
    obs, _ = env.reset(seed=0)
    (agent,) = obs
    illegal = int(np.flatnonzero(obs[agent]["action_mask"] == 0)[0])
    obs, rewards, terminateds, _, infos = env.step({agent: illegal})
    other = next(a for a in pw.AGENTS if a != agent)
    assert terminateds["__all__"] and rewards == {agent: -2.0, other: 0.0}
    assert infos[agent] == {"illegal_move": True, "illegal_action": illegal, "offender": agent}
    assert env.illegal_moves == 1
    with pytest.raises(RuntimeError, match="reset"):
        env.step({agent: ADVANCE})


def test_illegal_raise_leaves_the_game_unchanged() -> None:
    env = pw.PatchworkMultiAgentEnv({"illegal": "raise"})
    obs, _ = env.reset(seed=1)
    (agent,) = obs
    before = env.game
    with pytest.raises(ValueError):
        env.step({agent: int(np.flatnonzero(obs[agent]["action_mask"] == 0)[0])})
    assert env.game == before and env.illegal_moves == 0
    with pytest.raises(ValueError, match="to move"):
        env.step({next(a for a in pw.AGENTS if a != agent): ADVANCE})


def test_config_and_reset_options_are_checked() -> None:
    with pytest.raises(ValueError, match="unknown env_config"):
        pw.PatchworkMultiAgentEnv({"rule": "revised"})
    with pytest.raises(ValueError, match="illegal"):
        pw.PatchworkMultiAgentEnv({"illegal": "ignore"})
    env = pw.PatchworkMultiAgentEnv({"rules": "revised", "reward": "score"})
    circle = Game.new(seed=5).circle
    obs, _ = env.reset(options={"circle": circle, "first_player": 1})
    assert list(obs) == ["player_1"] and env.game.circle == circle
    with pytest.raises(ValueError, match="unknown reset options"):
        env.reset(options={"learner_seat": 0})


def make_module(hidden: tuple[int, ...] = (32,)) -> pw.MaskedPPOModule:
    env = pw.PatchworkMultiAgentEnv()
    return pw.MaskedPPOModule(observation_space=env.observation_spaces["player_0"],
                              action_space=env.action_spaces["player_0"],
                              model_config={"hidden": list(hidden)})


def test_the_module_masks_every_forward_pass_and_leaves_the_batch_alone() -> None:
    module = make_module()
    rng = np.random.default_rng(0)
    games = [Game.new(seed=s) for s in range(4)]
    for g in games[1:]:
        for _ in range(int(rng.integers(1, 15))):
            g.step(int(rng.choice(g.legal_actions())))
    obs = np.concatenate([observe(g.batch.state, g.rules, g.to_move) for g in games])
    masks = np.stack([g.legal_mask() for g in games]).astype(np.int8)
    batch = {Columns.OBS: {"observations": torch.from_numpy(obs),
                           "action_mask": torch.from_numpy(masks)}}
    for forward in (module.forward_inference, module.forward_exploration,
                    module.forward_train):
        logits = forward(batch)[Columns.ACTION_DIST_INPUTS]
        assert logits.shape == (4, N_ACTIONS)
        assert torch.all(logits[~torch.from_numpy(masks.astype(bool))] == pw.MASKED_LOGIT)
        dist = module.get_exploration_action_dist_cls().from_logits(logits)
        samples = dist.sample(sample_shape=torch.Size([200])).numpy()
        assert masks[np.arange(4), samples].all()
        assert masks[np.arange(4), dist.to_deterministic().sample().numpy()].all()
        assert torch.isfinite(dist.entropy()).all() and torch.isfinite(dist.logp(
            torch.from_numpy(samples[0]))).all()
        assert set(batch[Columns.OBS]) == {"observations", "action_mask"}
    out = module.forward_train(batch)
    values = module.compute_values(batch)
    assert values.shape == (4,)
    torch.testing.assert_close(module.compute_values(batch, out[Columns.EMBEDDINGS]), values)


def test_the_module_refuses_an_observation_without_a_mask() -> None:
    with pytest.raises(ValueError, match="action_mask"):
        pw.MaskedPPOModule(observation_space=gym.spaces.Box(0, 1, (1189,), np.float32),
                           action_space=gym.spaces.Discrete(N_ACTIONS))


def test_module_action_plays_a_whole_game_of_legal_moves() -> None:
    module = make_module()
    game = Game.new(seed=3)
    while not game.is_over:
        game.step(pw.module_action(module, game))  # an illegal move would raise
    with pytest.raises(ValueError, match="over"):
        pw.module_action(module, game)


def test_one_ppo_selfplay_iteration_samples_only_legal_moves(local_ray) -> None:
    config = (pw.selfplay_config(num_env_runners=0, train_batch_size=256, minibatch_size=128,
                                 num_epochs=1, hidden=(32,), seed=0)
              .environment(disable_env_checking=True))  # its random action would be illegal
    assert config.policy_mapping_fn("player_0") == config.policy_mapping_fn("player_1")
    algo = pw.build_algo(config)
    try:
        result = algo.train()
        runners = result["env_runners"]
        assert result["training_iteration"] == 1
        assert result["num_env_steps_sampled_lifetime"] >= 256
        assert runners["num_episodes"] >= 1
        assert runners["illegal_moves"] == 0
        assert set(runners["agent_episode_returns_mean"]) == set(pw.AGENTS)
        assert result["learners"][pw.SHARED_MODULE]["num_module_steps_trained"] > 0
        env = algo.env_runner.env  # a vector of envs on recent Ray, one env on Ray 2.40
        envs = [e.unwrapped for e in getattr(env, "envs", [env])]
        assert envs and sum(e.illegal_moves for e in envs) == 0
        module = algo.get_module(pw.SHARED_MODULE)
        game = Game.new(seed=0)
        while not game.is_over:
            game.step(pw.module_action(module, game))
    finally:
        algo.stop()
