"""Hostile inputs at the edges of the environments: each bad value raises the documented
error (``TypeError`` for the wrong kind, ``ValueError`` for an impossible value) with a
message that names it, and leaves the env exactly as it was; values that are fine (numpy
integers, huge seeds) keep working. Seeds are judged as ``Game.new`` judges them.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import patchwork_env
from patchwork_env import ADVANCE, LEATHER_BASE, N_ACTIONS, Game
from patchwork_env.envs.gym_env import PatchworkEnv
from patchwork_env.envs.vector_env import PatchworkVectorEnv
from patchwork_env.integrations.sb3 import PatchworkVecEnv


def names(value: Any, message: str) -> bool:
    """Whether ``message`` names ``value`` (its repr, or the int it stands for)."""
    if repr(value) in message:
        return True
    return isinstance(value, int | np.integer) and str(int(value)) in message


def aec_snapshot(aec: Any) -> tuple:
    """Everything a refused call must leave as it was in an AEC env."""
    return (aec.unwrapped.game.state_dict(), aec.agent_selection, dict(aec.rewards),
            dict(aec.terminations), dict(aec.truncations), dict(aec._cumulative_rewards))


def aec_envs() -> list[Any]:
    return [patchwork_env.env(), patchwork_env.raw_env()]


# ---------------------------------------------------------------------------------------
# seats are ints 0 or 1 everywhere


BAD_SEATS = [True, False, 1.0, np.array(1), np.bool_(True), "1", 2]


@pytest.mark.parametrize("seat", BAD_SEATS)
def test_a_learner_seat_must_be_an_int_seat_in_every_env(seat: Any) -> None:
    for make in (lambda: PatchworkEnv(learner_seat=seat),
                 lambda: PatchworkVectorEnv(2, learner_seat=seat),
                 lambda: PatchworkVecEnv(2, learner_seat=seat)):
        with pytest.raises(ValueError, match="learner_seat must be 0 or 1"):
            make()
    with pytest.raises(ValueError, match="learner_seat must be 0 or 1"):
        PatchworkEnv().reset(options={"learner_seat": seat})


@pytest.mark.parametrize("seat", BAD_SEATS)
def test_a_first_player_option_must_be_an_int_seat_in_every_env(seat: Any) -> None:
    options = {"first_player": seat}
    aec = patchwork_env.env()
    venv = PatchworkVecEnv(2)
    venv.set_options(options)
    for reset in (lambda: PatchworkEnv().reset(options=options),
                  lambda: PatchworkVectorEnv(2).reset(options=options),
                  venv.reset,
                  lambda: aec.reset(options=options)):
        with pytest.raises(ValueError, match="first_player must be 0 or 1"):
            reset()


@pytest.mark.parametrize("seed", [True, 1.5, "x", -1, [0, True, 2], [0, 1.0, 2], [0, -3, 2]])
def test_a_vector_env_seed_must_be_ints(seed: Any) -> None:
    env = PatchworkVectorEnv(3)
    env.reset(seed=0)
    before = env.batch.state.tobytes()
    with pytest.raises((TypeError, ValueError), match="seed"):
        env.reset(seed=seed)
    assert env.batch.state.tobytes() == before


# ---------------------------------------------------------------------------------------
# the AEC env's arguments


@pytest.mark.parametrize("reward", ["x", None, True, float("nan"), [1]])
def test_a_bad_illegal_reward_is_refused_when_the_env_is_made(reward: Any) -> None:
    with pytest.raises((TypeError, ValueError), match="illegal_reward"):
        patchwork_env.env(illegal_reward=reward)


@pytest.mark.parametrize("options", [[1, 2], "circle", 3])
def test_aec_reset_options_that_are_not_a_dict_are_refused(options: Any) -> None:
    for aec in (patchwork_env.env(), patchwork_env.raw_env()):
        with pytest.raises(TypeError, match="reset options must be a dict"):
            aec.reset(options=options)


@pytest.mark.parametrize("action", [True, False, np.bool_(True)])
def test_aec_step_refuses_a_bool_and_keeps_the_position(action: Any) -> None:
    for aec in (patchwork_env.env(), patchwork_env.raw_env()):
        aec.reset(seed=3)
        before = aec.unwrapped.game.state_dict()
        with pytest.raises((TypeError, AssertionError), match=r"an action is an int|action space"):
            aec.step(action)
        assert aec.unwrapped.game.state_dict() == before
        assert not any(aec.terminations.values())
        aec.step(ADVANCE)  # the game goes on
        assert aec.unwrapped.game.state_dict() != before


def test_aec_step_refuses_a_python_bool_with_a_type_error() -> None:
    aec = patchwork_env.env()
    aec.reset(seed=3)
    with pytest.raises(TypeError, match=r"an action is an int in 0\.\.2025, got bool True"):
        aec.step(True)


def test_aec_step_takes_a_zero_dimensional_integer_array() -> None:
    for aec in (patchwork_env.env(), patchwork_env.raw_env()):
        aec.reset(seed=3)
        aec.step(np.array(ADVANCE))
        assert aec.unwrapped.game.position != (0, 0)


def test_aec_observe_names_an_unknown_agent() -> None:
    aec = patchwork_env.env()
    aec.reset(seed=0)
    with pytest.raises(ValueError, match="unknown agent 'player_9'"):
        aec.observe("player_9")


def test_aec_illegal_moves_still_end_the_game_with_the_penalty() -> None:
    aec = patchwork_env.env(illegal_reward=-2)
    aec.reset(seed=2)
    mover = aec.agent_selection
    aec.step(LEATHER_BASE)  # no leather patch is pending at the start
    assert all(aec.terminations.values()) and aec.rewards[mover] == -2


# ---------------------------------------------------------------------------------------
# actions


WRONG_KIND_ACTIONS = [5.0, float(ADVANCE), np.float32(3), "5", "advance", b"5", object(),
                      1 + 0j, np.array(5.0), [5.0], np.array([1, 2]).astype(float)]
OUT_OF_RANGE_ACTIONS = [-1, N_ACTIONS, 2**70, -(2**70), np.int64(-1), np.int8(-3),
                        np.uint64(2**64 - 1), np.array(N_ACTIONS)]


@pytest.mark.parametrize("action", WRONG_KIND_ACTIONS, ids=repr)
def test_an_action_of_the_wrong_kind_raises_a_type_error_naming_it(action: Any) -> None:
    for aec in aec_envs():
        aec.reset(seed=3)
        before = aec_snapshot(aec)
        with pytest.raises(TypeError, match="action") as refused:
            aec.step(action)
        assert names(action, str(refused.value))
        assert aec_snapshot(aec) == before
        aec.step(ADVANCE)  # the game goes on
    env = PatchworkEnv(learner_seat=0)
    env.reset(seed=3)
    before = env.game.state_dict()
    with pytest.raises(TypeError, match="action") as refused:
        env.step(action)
    assert names(action, str(refused.value)) and env.game.state_dict() == before


@pytest.mark.parametrize("action", OUT_OF_RANGE_ACTIONS, ids=repr)
def test_an_action_outside_the_range_raises_a_value_error_naming_it(action: Any) -> None:
    value = int(np.asarray(action))
    for aec in aec_envs():
        aec.reset(seed=3)
        before = aec_snapshot(aec)
        with pytest.raises(ValueError, match=f"action {value} is outside 0..2025"):
            aec.step(action)
        assert aec_snapshot(aec) == before
    env = PatchworkEnv(learner_seat=0)
    env.reset(seed=3)
    before = env.game.state_dict()
    with pytest.raises(ValueError, match=f"action {value} is outside"):
        env.step(action)
    assert env.game.state_dict() == before


@pytest.mark.parametrize("action", [np.int64(ADVANCE), np.int32(ADVANCE), np.uint16(ADVANCE),
                                    np.array(ADVANCE), np.array([ADVANCE])], ids=repr)
def test_integer_numpy_actions_play_like_the_int(action: Any) -> None:
    for make in (patchwork_env.env, patchwork_env.raw_env):
        aec, twin = make(), make()
        aec.reset(seed=3)
        twin.reset(seed=3)
        aec.step(action)
        twin.step(ADVANCE)
        assert aec_snapshot(aec) == aec_snapshot(twin)
    env, twin = PatchworkEnv(learner_seat=0), PatchworkEnv(learner_seat=0)
    env.reset(seed=3)
    twin.reset(seed=3)
    assert env.step(action)[1:4] == twin.step(ADVANCE)[1:4]
    assert env.game == twin.game


def test_none_is_only_for_a_finished_agent_and_a_finished_agent_only_takes_none() -> None:
    for aec in aec_envs():
        aec.reset(seed=2)
        before = aec_snapshot(aec)
        with pytest.raises(ValueError, match="is to move: None is only for finished agents"):
            aec.step(None)
        assert aec_snapshot(aec) == before
    aec = patchwork_env.env()
    aec.reset(seed=2)
    aec.step(LEATHER_BASE)  # illegal: the game ends for both
    finished = aec.agent_selection
    with pytest.raises(ValueError, match=f"{finished} has finished: .* got int {ADVANCE}"):
        aec.step(ADVANCE)
    assert aec.agent_selection == finished
    aec.step(None)
    assert finished not in aec.agents


# ---------------------------------------------------------------------------------------
# seeds, judged as Game.new judges them


BAD_SEEDS = [True, np.bool_(True), [1, 2], (1, 2), 1.0, np.float64(1), np.array(3),
             np.array([3]), "3", b"3", -1, -(2**70), np.int64(-1)]


@pytest.mark.parametrize("seed", BAD_SEEDS, ids=repr)
def test_a_bad_seed_is_refused_as_game_new_refuses_it(seed: Any) -> None:
    with pytest.raises((TypeError, ValueError)) as by_game:
        Game.new(seed=seed)
    error = type(by_game.value)
    assert names(seed, str(by_game.value))
    for aec in aec_envs():
        aec.reset(seed=0)
        before = aec_snapshot(aec)
        with pytest.raises(error, match="seed") as refused:
            aec.reset(seed=seed)
        assert names(seed, str(refused.value)) and aec_snapshot(aec) == before
    env = PatchworkEnv()
    env.reset(seed=0)
    before = env.game.state_dict()
    with pytest.raises(error, match="seed") as refused:
        env.reset(seed=seed)
    assert names(seed, str(refused.value)) and env.game.state_dict() == before


@pytest.mark.parametrize("seed", [2**70, 2**64 + 1, np.int64(3), np.uint64(3)], ids=repr)
def test_huge_and_numpy_seeds_set_up_the_game_as_game_new(seed: Any) -> None:
    game = Game.new(seed=seed)
    for aec in aec_envs():
        aec.reset(seed=seed)
        assert aec.unwrapped.game == game
    first, again = PatchworkEnv(learner_seat=0), PatchworkEnv(learner_seat=0)
    assert np.array_equal(first.reset(seed=seed)[0], again.reset(seed=int(seed))[0])
    assert first.game == again.game


@pytest.mark.parametrize("seed", [np.array(3), np.bool_(True), np.float64(2), [0, 2**70 * -1],
                                  [True, 1], np.array([[1, 2]]), "ab"], ids=repr)
def test_a_bad_vector_env_seed_is_named_and_changes_nothing(seed: Any) -> None:
    env = PatchworkVectorEnv(2)
    env.reset(seed=0)
    before = env.batch.state.tobytes()
    with pytest.raises((TypeError, ValueError), match="seed") as refused:
        env.reset(seed=seed)
    message = str(refused.value)
    items = seed if isinstance(seed, list) else []
    assert names(seed, message) or any(names(s, message) for s in items)
    assert env.batch.state.tobytes() == before


def test_huge_vector_env_seeds_are_taken() -> None:
    env, twin = PatchworkVectorEnv(2), PatchworkVectorEnv(2)
    env.reset(seed=2**70)
    twin.reset(seed=[2**70, 2**70 + 1])
    assert env.batch.state.tobytes() == twin.batch.state.tobytes()


# ---------------------------------------------------------------------------------------
# reset options of the wrong kind


@pytest.mark.parametrize(("options", "error", "named"), [
    ({"circle": "abc"}, TypeError, "circle"),
    ({"circle": list(range(33))}, ValueError, "circle must end with patch 0"),
    ({"circle": [1] * 33}, ValueError, "circle must be a permutation"),
    ({"first_player": 0.5}, ValueError, r"first_player must be 0 or 1 or None, got 0\.5"),
    ({"first_player": "0"}, ValueError, "first_player must be 0 or 1 or None, got '0'"),
])
def test_options_of_the_wrong_kind_are_named_and_change_nothing(options: dict, error: type,
                                                                named: str) -> None:
    for aec in aec_envs():
        aec.reset(seed=0)
        before = aec_snapshot(aec)
        with pytest.raises(error, match=named):
            aec.reset(options=options)
        assert aec_snapshot(aec) == before
    for env in (PatchworkEnv(), PatchworkVectorEnv(2)):
        env.reset(seed=0)
        before = env.game.state_dict() if isinstance(env, PatchworkEnv) else \
            env.batch.state.tobytes()
        with pytest.raises(error, match=named):
            env.reset(options=options)
        after = env.game.state_dict() if isinstance(env, PatchworkEnv) else \
            env.batch.state.tobytes()
        assert after == before


def test_option_keys_and_rules_of_the_wrong_kind_are_named() -> None:
    with pytest.raises(TypeError, match=r"rules must be a preset name.*got int"):
        patchwork_env.env().reset(options={"rules": 5})
    with pytest.raises(ValueError, match=r"unknown reset options \['1'\]"):
        PatchworkEnv().reset(options={1: 2})
    with pytest.raises(ValueError, match=r"learner_seat must be 0 or 1 or None, got 0\.5"):
        PatchworkEnv().reset(options={"learner_seat": 0.5})


# ---------------------------------------------------------------------------------------
# calls out of order


def test_env_calls_before_reset_raise_runtime_errors_naming_reset() -> None:
    aec = patchwork_env.env()
    for call in (lambda: aec.step(ADVANCE), lambda: aec.observe("player_0"), aec.render,
                 aec.state, aec.agent_iter):
        with pytest.raises(RuntimeError, match=r"reset\(\) needs to be called before"):
            call()


def test_an_agent_iter_loop_that_does_not_step_raises_a_runtime_error() -> None:
    aec = patchwork_env.env()
    aec.reset(seed=0)
    loop = iter(aec.agent_iter())
    next(loop)
    with pytest.raises(RuntimeError, match="need to call step"):
        next(loop)
