"""The PettingZoo AEC environment: PettingZoo's own checks, masks against the engine,
illegal moves, rewards and infos at the end, reset options, rendering and its manual."""

from __future__ import annotations

import pickle
import re
from collections.abc import Callable

import numpy as np
import pettingzoo
import pytest
from pettingzoo.test import api_test, parallel_api_test, seed_test
from pettingzoo.utils.conversions import turn_based_aec_to_parallel

import patchwork_env
from patchwork_env import ADVANCE, LEATHER_BASE, N_ACTIONS, Game, Rules
from patchwork_env.views.observation import layout

pytestmark = pytest.mark.filterwarnings("ignore:ignoring unknown reset options")

Policy = Callable[[np.ndarray, np.ndarray], np.ndarray]


# ---------------------------------------------------------------------------------------
# scripted players, shared with the single-agent and vector env tests


def always_advance(obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """Advance whenever allowed (else the first leather cell): a sure way to lose."""
    return np.array([ADVANCE if m[ADVANCE] else np.flatnonzero(m)[0] for m in masks])


def first_buy(obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """The lowest legal action: a buy whenever one is affordable."""
    return np.array([np.flatnonzero(m)[0] for m in masks])


def middle_move(obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """The middle legal action: deterministic, yet varied."""
    return np.array([np.flatnonzero(m)[len(np.flatnonzero(m)) // 2] for m in masks])


def replay_in_aec(seed: int, learner: int, learner_moves: list[int], opponent: Policy,
                  **kwargs) -> tuple[list[np.ndarray], list[np.ndarray], float, np.ndarray]:
    """Play ``env()`` from ``reset(seed)``: seat ``learner`` plays ``learner_moves`` in order,
    the other seat ``opponent``. Returns what the learner saw before each of its moves
    (observations, masks), its final reward and its final observation."""
    env = patchwork_env.env(**kwargs)
    env.reset(seed=seed)
    me = f"player_{learner}"
    seen, masks, moves = [], [], iter(learner_moves)
    while not env.terminations[me]:
        agent = env.agent_selection
        obs = env.observe(agent)
        if agent == me:
            seen.append(obs["observation"])
            masks.append(obs["action_mask"])
            env.step(next(moves))
        else:
            env.step(int(opponent(obs["observation"][None], obs["action_mask"][None])[0]))
    assert next(moves, None) is None, "the game ended before all learner moves were played"
    return seen, masks, env.rewards[me], env.observe(me)["observation"]


def play_until_over(env, policies: dict[str, Policy]) -> str:
    """Play ``env`` (already reset) until the game is over, each agent by its policy;
    returns the agent that made the last move."""
    while not all(env.terminations.values()):
        agent = env.agent_selection
        obs = env.observe(agent)
        env.step(int(policies[agent](obs["observation"][None], obs["action_mask"][None])[0]))
    return agent


# ---------------------------------------------------------------------------------------
# PettingZoo's checks


@pytest.mark.filterwarnings("ignore:Observation space for each agent probably")
@pytest.mark.filterwarnings("ignore:Observation is not a NumPy array")
def test_pettingzoo_api_test():
    api_test(patchwork_env.env(), num_cycles=200)


def test_pettingzoo_seed_test():
    seed_test(patchwork_env.env, num_cycles=200)


def test_parallel_api_through_turn_based_conversion():
    parallel_api_test(turn_based_aec_to_parallel(patchwork_env.env()), num_cycles=200)


@pytest.mark.skipif(not hasattr(pettingzoo, "make"),
                    reason="this PettingZoo has no registry (pettingzoo.make came in 1.27)")
def test_registered_with_pettingzoo():
    env = pettingzoo.make("aec", "patchwork_env/patchwork-v0")
    env.reset(seed=0)
    assert env.unwrapped.metadata["name"] == "patchwork_v0"
    assert set(env.possible_agents) == {"player_0", "player_1"}


def test_spaces_are_cached_per_agent():
    env = patchwork_env.env()
    for agent in env.possible_agents:
        assert env.observation_space(agent) is env.observation_space(agent)
        assert env.action_space(agent) is env.action_space(agent)
        assert env.observation_space(agent)["action_mask"].dtype == np.int8


def test_pickle_round_trip_keeps_the_position():
    env = patchwork_env.env()
    env.reset(seed=4)
    rng = np.random.default_rng(0)
    for _ in range(15):
        env.step(int(rng.choice(np.flatnonzero(env.observe(env.agent_selection)["action_mask"]))))
    copy = pickle.loads(pickle.dumps(env))
    assert copy.agent_selection == env.agent_selection
    for _ in range(40):
        a, b = env.observe(env.agent_selection), copy.observe(copy.agent_selection)
        np.testing.assert_array_equal(a["observation"], b["observation"])
        np.testing.assert_array_equal(a["action_mask"], b["action_mask"])
        if env.terminations[env.agent_selection]:
            break
        action = int(rng.choice(np.flatnonzero(a["action_mask"])))
        env.step(action)
        copy.step(action)


# ---------------------------------------------------------------------------------------
# masks, turns, illegal moves


def test_masks_match_the_engine_in_random_games():
    rng = np.random.default_rng(1)
    env = patchwork_env.env()
    repeats = 0
    for seed in range(10):
        env.reset(seed=seed)
        shadow = Game.new(seed=seed)
        previous = None
        while not shadow.is_over:
            agent = env.agent_selection
            assert agent == f"player_{shadow.to_move}"
            repeats += agent == previous
            mask = env.observe(agent)["action_mask"]
            other = env.observe(f"player_{1 - shadow.to_move}")["action_mask"]
            assert mask.dtype == np.int8 and mask.shape == (N_ACTIONS,)
            np.testing.assert_array_equal(np.flatnonzero(mask), shadow.legal_actions())
            assert not other.any()
            action = int(rng.choice(shadow.legal_actions()))
            env.step(action)
            shadow.step(action)
            previous = agent
        assert all(env.terminations.values())
    assert repeats > 0, "an agent behind on the track moves again"


def test_illegal_move_ends_the_game_with_a_penalty():
    env = patchwork_env.env()
    env.reset(seed=2)
    mover = env.agent_selection
    mask = env.observe(mover)["action_mask"]
    illegal = int(np.flatnonzero(mask == 0)[0])
    env.step(illegal)
    assert all(env.terminations.values())
    assert env.rewards[mover] == -1
    assert env.rewards[next(a for a in env.agents if a != mover)] == 0


def test_illegal_penalty_is_configurable_and_bounds_are_checked():
    env = patchwork_env.env(illegal_reward=-5.0)
    env.reset(seed=2)
    mover = env.agent_selection
    env.step(LEATHER_BASE)  # no leather patch is pending at the start
    assert env.rewards[mover] == -5
    env.reset(seed=2)
    with pytest.raises(ValueError, match=f"action {N_ACTIONS} is outside"):
        env.step(N_ACTIONS)


def test_raw_env_refuses_an_illegal_move_and_keeps_the_position():
    env = patchwork_env.raw_env()
    env.reset(seed=3)
    before = env.game.state_dict()
    with pytest.raises(ValueError, match="leather"):
        env.step(LEATHER_BASE)
    with pytest.raises(ValueError, match="None"):
        env.step(None)
    assert env.game.state_dict() == before
    assert not any(env.terminations.values())


def test_step_before_reset_is_refused():
    with pytest.raises(Exception, match="reset"):
        patchwork_env.env().step(ADVANCE)
    for call in (lambda e: e.step(ADVANCE), lambda e: e.observe("player_0")):
        with pytest.raises(RuntimeError, match="reset"):
            call(patchwork_env.raw_env())


# ---------------------------------------------------------------------------------------
# rewards and infos


def test_a_scripted_loss_pays_minus_one_and_reports_the_scores():
    env = patchwork_env.env()
    env.reset(seed=5)
    last = play_until_over(env, {"player_0": always_advance, "player_1": first_buy})
    assert env.agent_selection != last  # the other agent is shown the end first
    s0, s1 = env.unwrapped.game.scores()
    assert s0 < s1 and env.unwrapped.game.winner == 1
    assert env.rewards == {"player_0": -1, "player_1": 1}
    for agent in env.agents:
        assert env.infos[agent] == {"scores": {"player_0": s0, "player_1": s1},
                                    "winner": 1}


def test_score_reward_is_the_scaled_difference():
    env = patchwork_env.env(reward="score", score_scale=0.05)
    env.reset(seed=6)
    play_until_over(env, {"player_0": first_buy, "player_1": always_advance})
    s0, s1 = env.unwrapped.game.scores()
    assert s0 > s1
    assert env.rewards["player_0"] == pytest.approx(0.05 * (s0 - s1))
    assert env.rewards["player_1"] == pytest.approx(-0.05 * (s0 - s1))


def test_each_agent_reads_its_final_reward_once_then_leaves():
    env = patchwork_env.env()
    env.reset(seed=7)
    policies = {"player_0": middle_move, "player_1": first_buy}
    final = {}
    for agent in env.agent_iter():
        obs, reward, terminated, truncated, info = env.last()
        if terminated or truncated:
            assert agent not in final
            final[agent] = (reward, info["winner"])
            env.step(None)
        else:
            assert reward == 0
            env.step(int(policies[agent](obs["observation"][None], obs["action_mask"][None])[0]))
    assert env.agents == []
    winner = final["player_0"][1]
    assert {a: r for a, (r, _) in final.items()} == {
        a: 1 if a == f"player_{winner}" else -1 for a in ("player_0", "player_1")}


# ---------------------------------------------------------------------------------------
# reset


def test_seed_gives_the_setup_of_game_new():
    env = patchwork_env.raw_env()
    for seed in (0, 11, 12345):
        env.reset(seed=seed)
        expected = Game.new(seed=seed)
        assert env.game.circle == expected.circle
        assert env.agent_selection == f"player_{expected.to_move}"
    env.reset(seed=3)
    first = env.game.circle
    env.reset()
    second = env.game.circle
    env.reset(seed=3)
    env.reset()
    assert env.game.circle == second != first


def test_reset_options_set_up_the_game():
    env = patchwork_env.raw_env()
    circle = list(range(32, 0, -1)) + [0]
    env.reset(seed=1, options={"circle": circle, "first_player": 1, "rules": "revised"})
    assert env.game.circle == circle
    assert env.agent_selection == "player_1"
    assert env.game.rules.leather_positions == (26, 32, 38, 44, 50)


@pytest.mark.parametrize(("options", "message"), [
    ({"circle": [1, 2, 3]}, "circle"),
    ({"first_player": 2}, "first_player"),
    ({"rules": "nonsense"}, "preset"),
    ({"rules": Rules(track_end=60)}, "observation space"),
])
def test_bad_reset_options_are_refused(options, message):
    env = patchwork_env.raw_env()
    env.reset(seed=0)
    before = env.game.state_dict()
    with pytest.raises(ValueError, match=message):
        env.reset(seed=1, options=options)
    assert env.game.state_dict() == before


def test_unknown_reset_options_are_named_in_a_warning():
    env = patchwork_env.raw_env()
    with pytest.warns(UserWarning, match="colour"):
        env.reset(options={"colour": "red"})


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"reward": "points"}, "reward"), ({"score_scale": 0}, "score_scale"),
    ({"render_mode": "video"}, "render_mode"), ({"rules": "house"}, "preset"),
])
def test_bad_constructor_arguments_are_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        patchwork_env.raw_env(**kwargs)


# ---------------------------------------------------------------------------------------
# rendering and documentation


def test_render_modes(capsys):
    for mode in ("ansi", "rgb_array", "human"):
        env = patchwork_env.env(render_mode=mode)
        env.reset(seed=0)
        picture = env.render()
        if mode == "ansi":
            assert isinstance(picture, str) and "player 0" in picture
        elif mode == "rgb_array":
            assert picture.dtype == np.uint8 and picture.ndim == 3 and picture.shape[2] == 3
        else:
            assert picture is None and "player 0" in capsys.readouterr().out
    with pytest.warns(UserWarning, match="render_mode"):
        env = patchwork_env.env()
        env.reset(seed=0)
        assert env.render() is None


def test_the_documented_observation_table_matches_the_layout():
    rows = re.findall(r"\|\s*(\d+) - (\d+)\s*\|\s*`(\w+)`\s*\|",
                      patchwork_env.raw_env.__doc__)
    lay = layout(Rules())
    assert [(int(a), int(b) + 1, name) for a, b, name in rows] == [
        (f.start, f.stop, f.name) for f in lay.fields]
    assert f"| ({lay.size},)" in patchwork_env.raw_env.__doc__


def test_infos_have_the_same_keys_and_types_at_every_step():
    env = patchwork_env.env()
    env.reset(seed=8)
    kinds = set()
    for _ in env.agent_iter():
        obs, _, terminated, truncated, info = env.last()
        kinds.add((tuple(sorted(info)), type(info["winner"]), tuple(sorted(info["scores"]))))
        assert info["winner"] == (env.unwrapped.game.winner if terminated else -1)
        env.step(None if terminated or truncated
                 else int(np.flatnonzero(obs["action_mask"])[0]))
    assert kinds == {(("scores", "winner"), int, ("player_0", "player_1"))}


@pytest.mark.parametrize("mode", ["dict", "flat"])
def test_every_observation_is_the_position_seen_afresh_in_arrays_of_its_own(mode):
    """The observation a move prepares for the next mover equals one computed from the
    position, and no two calls share arrays."""
    from patchwork_env.views.observation import SingleGameObserver

    env = patchwork_env.raw_env(observation_mode=mode)
    observer = SingleGameObserver(Rules())
    env.reset(seed=9)
    for agent in env.agent_iter():
        first, second = env.observe(agent), env.observe(agent)
        to_move = agent == env.agent_selection and not env.terminations[agent]
        obs, mask = observer(env.game.batch.state, int(agent[-1]), to_move)
        if mode == "dict":
            for part in ("observation", "action_mask"):
                assert first[part] is not second[part]
                np.testing.assert_array_equal(first[part], second[part])
            np.testing.assert_array_equal(first["observation"], obs)
            np.testing.assert_array_equal(first["action_mask"], mask)
        else:
            assert first is not second
            np.testing.assert_array_equal(first, obs)
            np.testing.assert_array_equal(second, obs)
            np.testing.assert_array_equal(env.infos[agent]["action_mask"], mask)
        if env.terminations[agent]:
            env.step(None)
        else:
            env.step(int(middle_move(obs[None], mask[None])[0]))


def test_an_illegal_move_in_env_clears_the_mask_prepared_for_the_mover():
    env = patchwork_env.env()
    env.reset(seed=4)
    env.step(int(first_buy(None, env.observe(env.agent_selection)["action_mask"][None])[0]))
    mover = env.agent_selection  # its observation was prepared by the move just made
    assert not env.unwrapped.game.legal_mask()[LEATHER_BASE]
    env.step(LEATHER_BASE)  # illegal: the game ends
    assert env.terminations[mover]
    assert not env.observe(mover)["action_mask"].any()
