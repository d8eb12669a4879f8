"""Misbehaving opponents and bad arguments: a clear error, never a hang, and no harm done.

Every kind of misbehaviour, in the Gymnasium env, the Gymnasium vector env and the SB3
vector env, and in both forms an opponent takes (an agent with ``act(batch, rows)``, a
policy ``(observations, masks) -> actions``): the failing call raises a ``ValueError``
naming the opponent (or the opponent's own exception) within a deadline, leaves the env
exactly as it was (observation, masks, state bytes), and the next well-behaved step plays
exactly as in a twin env that never saw the failure. Bad arguments are in
``test_hostile_inputs.py``.
"""

from __future__ import annotations

import signal
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import pytest

from patchwork_env import ADVANCE, GameBatch
from patchwork_env.engine.batch import sample_legal
from patchwork_env.envs.gym_env import PatchworkEnv
from patchwork_env.envs.vector_env import PatchworkVectorEnv
from patchwork_env.integrations.sb3 import PatchworkVecEnv
from patchwork_env.views.observation import observe

DEADLINE = 10.0
"""Seconds any one call may take before the test fails as a hang."""


class Hang(BaseException):  # not an Exception: nothing under test may catch it
    """Raised in the test when a call does not return in time."""


@contextmanager
def deadline(seconds: float = DEADLINE) -> Iterator[None]:
    """Fail with :class:`Hang` (instead of blocking the suite) if the block runs too long."""
    def expire(signum: int, frame: Any) -> None:
        raise Hang(f"no answer within {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


class Boom(Exception):
    """The opponent's own error."""


class Unconvertible:
    """An object numpy cannot turn into an array."""

    def __array__(self, *args: Any, **kwargs: Any) -> np.ndarray:
        raise RuntimeError("cannot be converted")


def first_illegal(masks: np.ndarray) -> np.ndarray:
    return np.argmin(masks, axis=1)  # the first action each mask refuses


def middle_moves(masks: np.ndarray) -> np.ndarray:
    """The middle legal action of each mask: deterministic, so a twin plays the same."""
    return np.array([np.flatnonzero(m)[len(np.flatnonzero(m)) // 2] for m in masks])


def broken(masks: np.ndarray) -> Any:
    raise Boom("the opponent broke")


# what a misbehaving opponent returns for the masks of the games it must move in
BEHAVIOURS: dict[str, Callable[[np.ndarray], Any]] = {
    "raises": broken,
    "minus_one": lambda masks: np.full(len(masks), -1),
    "illegal": first_illegal,
    "floats": lambda masks: np.full(len(masks), float(ADVANCE)),
    "wrong_length": lambda masks: np.full(len(masks) + 1, ADVANCE),
    "none": lambda masks: None,
    "scalar": lambda masks: ADVANCE,
    "unconvertible": lambda masks: Unconvertible(),
    "bools": lambda masks: np.ones(len(masks), np.bool_),
    "beyond_64_bits": lambda masks: np.full(len(masks), 2**64 - 1, np.uint64),
    "huge_ints": lambda masks: [2**70] * len(masks),
    "strings": lambda masks: [str(ADVANCE)] * len(masks),
}
MUST_RETURN = (ValueError, "opponent flaky must return .* integer actions")
EXPECTED: dict[str, tuple[type[BaseException], str]] = {
    "raises": (Boom, "the opponent broke"),
    "minus_one": (ValueError, r"opponent flaky returned action -1, outside 0\.\.2025"),
    "illegal": (ValueError, "opponent flaky played an illegal move"),
    "floats": MUST_RETURN,
    "wrong_length": MUST_RETURN,
    "none": MUST_RETURN,
    "scalar": MUST_RETURN,
    "unconvertible": MUST_RETURN,
    "bools": MUST_RETURN,
    "beyond_64_bits": (ValueError, "opponent flaky returned action 18446744073709551615"),
    "huge_ints": MUST_RETURN,
    "strings": MUST_RETURN,
    "plays_itself": (ValueError, "opponent flaky changed the games"),
}


class Flaky:
    """Plays :func:`middle_moves` until told to misbehave: with ``behaviour`` on every
    call, or only from call number ``fail_from`` on (counted in ``calls``)."""

    def __init__(self) -> None:
        self.behaviour: str | None = None
        self.fail_from: int | None = None
        self.calls = 0

    def choose(self, masks: np.ndarray) -> Any:
        self.calls += 1
        if self.fail_from is not None and self.calls >= self.fail_from:
            return first_illegal(masks)
        if self.behaviour is not None and self.behaviour != "plays_itself":
            return BEHAVIOURS[self.behaviour](masks)
        return middle_moves(masks)


class FlakyAgent(Flaky):
    """The agent form, ``act(batch, rows)``; ``plays_itself`` steps the batch it is shown
    (and returns the move it played)."""

    spec = "flaky"

    def act(self, batch: GameBatch, rows: np.ndarray) -> Any:
        masks = batch.legal_mask()[rows]
        moves = self.choose(masks)
        if self.behaviour == "plays_itself":
            played = np.full(len(batch), -1)
            played[rows] = moves
            batch.step(played)
        return moves


class FlakyPolicy(Flaky):
    """The policy form, ``(observations, masks) -> actions``."""

    __name__ = "flaky"

    def __call__(self, observations: np.ndarray, masks: np.ndarray) -> Any:
        return self.choose(masks)


# ---------------------------------------------------------------------------------------
# the three single-agent envs, driven the same way


class Driver:
    """Builds, resets, steps and inspects one kind of env with ``n`` games."""

    def __init__(self, kind: str, opponent: Any, learner_seat: int = 0) -> None:
        self.kind = kind
        if kind == "gym":
            self.env: Any = PatchworkEnv(opponent=opponent, learner_seat=learner_seat)
            self.n = 1
        elif kind == "vector":
            self.env = PatchworkVectorEnv(3, opponent=opponent, seed=5,
                                          learner_seat=learner_seat)
            self.n = 3
        else:
            self.env = PatchworkVecEnv(3, opponent=opponent, seed=5, learner_seat=learner_seat)
            self.n = 3

    def reset(self, seed: int = 5, first_player: int | None = None) -> None:
        options = None if first_player is None else {"first_player": first_player}
        if self.kind in ("gym", "vector"):
            self.env.reset(seed=seed, options=options)
        else:
            self.env.seed(seed)
            self.env.set_options(options)
            self.env.reset()

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(observations, rewards, over)`` of one step with ``actions`` (one per game)."""
        if self.kind == "gym":
            obs, reward, over, *_ = self.env.step(int(actions[0]))
            return obs[None], np.array([reward]), np.array([over])
        obs, rewards, over, *_ = self.env.step(actions)
        return obs, np.asarray(rewards), np.asarray(over)

    def state(self) -> bytes:
        batch = self.env.game.batch if self.kind == "gym" else self.env.batch
        return batch.state.tobytes()

    def snapshot(self) -> tuple[np.ndarray, np.ndarray, bytes]:
        """What the learner sees (observation, masks) and the games' state bytes."""
        if self.kind == "gym":
            game = self.env.game
            obs = observe(game.batch.state, game.rules, self.env.learner_seat)
            masks = self.env.action_masks()[None]
        else:
            obs = self.env.duel.observe()
            masks = self.env.action_masks()
        return obs, masks, self.state()

    def advance(self) -> np.ndarray:
        """Advance in every game (legal for the learner: no leather is pending)."""
        return np.full(self.n, ADVANCE)


KINDS = ["gym", "vector", "sb3"]
FORMS = {"agent": FlakyAgent, "policy": FlakyPolicy}


@pytest.fixture(scope="module", autouse=True)
def compiled() -> None:
    """Every env played once outside any deadline: compiling the engine takes its time."""
    for kind in KINDS:
        for form in FORMS.values():
            env = Driver(kind, form())
            env.reset(first_player=1)
            env.step(env.advance())


def same(a: tuple[np.ndarray, np.ndarray, bytes], b: tuple[np.ndarray, np.ndarray, bytes]
         ) -> bool:
    return (np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1]) and a[2] == b[2])


def pair(kind: str, form: str) -> tuple[Driver, Any, Driver]:
    """An env with a flaky opponent, that opponent, and a twin that stays well-behaved;
    both reset alike, the learner to move."""
    opponent = FORMS[form]()
    env, twin = Driver(kind, opponent), Driver(kind, FORMS[form]())
    with deadline():
        env.reset()
        twin.reset()
    assert same(env.snapshot(), twin.snapshot())
    return env, opponent, twin


BEHAVIOUR_NAMES = [*BEHAVIOURS, "plays_itself"]
CASES = [(form, b) for form in FORMS for b in BEHAVIOUR_NAMES
         if not (form == "policy" and b == "plays_itself")]  # a policy never sees the games


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(("form", "behaviour"), CASES)
def test_an_opponent_failing_in_step_raises_and_changes_nothing(kind: str, form: str,
                                                                behaviour: str) -> None:
    env, opponent, twin = pair(kind, form)
    before = env.snapshot()
    opponent.behaviour = behaviour
    error, match = EXPECTED[behaviour]
    with deadline(), pytest.raises(error, match=match):
        env.step(env.advance())  # the opponent must answer the learner's advance
    assert same(env.snapshot(), before), "the failed step changed the env"
    opponent.behaviour = None
    with deadline():
        got = env.step(env.advance())
        want = twin.step(twin.advance())
    assert all(np.array_equal(a, b) for a, b in zip(got, want, strict=True))
    assert env.state() == twin.state(), "the env did not go on as if nothing had failed"


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("behaviour", BEHAVIOUR_NAMES)
def test_an_opponent_failing_on_its_opening_move_in_reset_changes_nothing(
        kind: str, behaviour: str) -> None:
    env, opponent, _ = pair(kind, "agent")
    before = env.snapshot()
    opponent.behaviour = behaviour
    error, match = EXPECTED[behaviour]
    with deadline(), pytest.raises(error, match=match):
        env.reset(seed=6, first_player=1)  # the opponent (seat 1) opens every game
    assert same(env.snapshot(), before), "the failed reset changed the env"
    opponent.behaviour = None
    with deadline():
        env.step(env.advance())  # the game that was there goes on
        env.reset(seed=6, first_player=1)  # and the reset now works


@pytest.mark.parametrize("kind", KINDS)
def test_an_opponent_failing_in_the_first_reset_leaves_the_env_unstarted(kind: str) -> None:
    opponent = FlakyAgent()
    opponent.behaviour = "minus_one"
    env = Driver(kind, opponent)
    with deadline(), pytest.raises(ValueError, match="opponent flaky returned action -1"):
        env.reset(first_player=1)
    with pytest.raises(RuntimeError, match="reset"):
        env.step(env.advance())
    opponent.behaviour = None
    with deadline():
        env.reset(first_player=1)
        env.step(env.advance())


@pytest.mark.parametrize("kind", ["vector", "sb3"])
def test_an_opponent_failing_late_in_a_step_undoes_the_whole_step(kind: str) -> None:
    """Random learner moves until games have ended and restarted (on the next step with
    next-step autoreset, within the ending step with same-step autoreset). Before each
    step, the same step is tried with an opponent that fails on its last call of the step
    (after the learner's moves, its earlier replies, a restart and its opening moves): the
    failed try leaves the env as it was, and the real step then plays as in the twin."""
    env, opponent, twin = pair(kind, "agent")
    twin_opponent = twin.env.duel.opponent.agent
    rng = np.random.default_rng(1)
    restarted = tried = 0
    ended_before = False
    with deadline(60):
        while restarted < 2:
            actions = sample_legal(env.snapshot()[1], rng)
            actions[actions < 0] = ADVANCE  # the move of a game that restarts is not used
            calls = twin_opponent.calls
            want = twin.step(actions)
            used = twin_opponent.calls - calls
            if used:
                before = env.snapshot()
                opponent.fail_from = opponent.calls + used
                with pytest.raises(ValueError, match="opponent flaky played an illegal move"):
                    env.step(actions)
                assert same(env.snapshot(), before), "the failed step changed the env"
                opponent.fail_from = None
                opponent.calls -= used
                tried += 1
            got = env.step(actions)
            assert all(np.array_equal(a, b) for a, b in zip(got, want, strict=True))
            assert env.state() == twin.state()
            ended = bool(want[2].any())
            restarted += ended if kind == "sb3" else ended_before
            ended_before = ended
    assert tried > 10


class SlowAgent(FlakyAgent):
    """A well-behaved opponent that takes 0.2 s per call."""

    def act(self, batch: GameBatch, rows: np.ndarray) -> Any:
        time.sleep(0.2)
        return super().act(batch, rows)


@pytest.mark.parametrize("kind", KINDS)
def test_a_slow_opponent_is_waited_for_and_plays_like_a_fast_one(kind: str) -> None:
    slow, fast = Driver(kind, SlowAgent()), Driver(kind, FlakyAgent())
    with deadline():
        slow.reset(first_player=1)
        fast.reset(first_player=1)
        got = slow.step(slow.advance())
        want = fast.step(fast.advance())
    assert all(np.array_equal(a, b) for a, b in zip(got, want, strict=True))
    assert slow.state() == fast.state()
