"""``GameBatch.step(actions, check=False)`` skips the legality test, never the bounds.

An action outside ``0..N_ACTIONS-1``, or any action in a finished game, leaves that game
byte for byte as it was; an action that does not fit in 64 signed bits is refused with a
``ValueError`` naming it instead of being wrapped into range.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest

from patchwork_env import ADVANCE, LEATHER_BASE, GameBatch
from patchwork_env.data.actions import N_ACTIONS
from patchwork_env.engine.compiling import PARALLEL_MIN_BATCH

OUT_OF_RANGE = (2**31, 5000, N_ACTIONS, -5, 2**62, -(2**62), -(2**63))


def test_out_of_range_actions_leave_the_games_untouched() -> None:
    # Run apart: before the bounds check, 2**31 wrote far outside the tables and crashed
    # the interpreter; a crash must fail this test, not end the test session.
    script = textwrap.dedent(f"""
        import numpy as np
        from patchwork_env import GameBatch
        for n in (1, {PARALLEL_MIN_BATCH}):
            batch = GameBatch.new(n, seed=4)
            batch.step(batch.random_actions(5))
            for bad in {OUT_OF_RANGE!r}:
                before = batch.state.tobytes()
                batch.step(np.full(n, bad, np.int64), check=False)
                assert batch.state.tobytes() == before, (n, bad)
        print("untouched")
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, f"exit {done.returncode}: {done.stderr[-2000:]}"
    assert done.stdout.strip() == "untouched"


def test_only_the_out_of_range_rows_are_skipped() -> None:
    batch = GameBatch.new(4, seed=9)
    expected = batch.copy()
    expected.step([ADVANCE, -1, ADVANCE, -1])
    batch.step(np.array([ADVANCE, 5000, ADVANCE, -5], np.int64), check=False)
    assert batch.state.tobytes() == expected.state.tobytes()


@pytest.mark.parametrize("n", [1, 3, PARALLEL_MIN_BATCH])
@pytest.mark.parametrize("action", [ADVANCE, 0, LEATHER_BASE, N_ACTIONS - 1])
def test_an_action_in_a_finished_game_changes_nothing(n: int, action: int) -> None:
    batch = GameBatch.new(n, seed=2)
    batch.playout(3)
    assert batch.done.all()
    before = batch.state.tobytes()
    winners = batch.winners()
    batch.step(np.full(n, action, np.int64), check=False)
    assert batch.state.tobytes() == before
    assert batch.done.all()
    assert (batch.winners() == winners).all()


def test_finished_games_stay_finished_beside_running_ones() -> None:
    batch = GameBatch.new(2, seed=5)
    finished = batch[0:1]
    finished.playout(1)
    batch.state[0] = finished.state[0]
    expected = batch.copy()
    expected.step([-1, ADVANCE])
    batch.step([ADVANCE, ADVANCE], check=False)
    assert batch.state.tobytes() == expected.state.tobytes()


@pytest.mark.parametrize("check", [True, False])
@pytest.mark.parametrize(
    ("actions", "named"),
    [
        (np.array([2**64 - 1], np.uint64), "18446744073709551615"),
        (np.array([np.iinfo(np.int64).max + 1], np.uint64), "9223372036854775808"),
        ([2**63], "9223372036854775808"),
        (2**63, "9223372036854775808"),
        ([2**64], "18446744073709551616"),
        ([-(2**63) - 1], "-9223372036854775809"),
    ],
)
def test_actions_beyond_64_bits_raise_naming_the_action(actions: object, named: str,
                                                        check: bool) -> None:
    batch = GameBatch.new(1, seed=1)
    before = batch.state.tobytes()
    with pytest.raises(ValueError, match=f"action {named}"):
        batch.step(actions, check=check)
    assert batch.state.tobytes() == before


def test_a_wide_action_is_named_with_its_game() -> None:
    batch = GameBatch.new(3, seed=1)
    before = batch.state.tobytes()
    with pytest.raises(ValueError, match="game 2: illegal action 9223372036854775808"):
        batch.step([ADVANCE, -1, 2**63], check=False)
    with pytest.raises(ValueError, match="game 1: illegal action 18446744073709551615"):
        batch.step(np.array([1944, 2**64 - 1, 0], np.uint64))
    assert batch.state.tobytes() == before


def test_unsigned_actions_in_range_still_play() -> None:
    batch = GameBatch.new(2, seed=8)
    expected = batch.copy()
    expected.step([ADVANCE, ADVANCE])
    batch.step(np.array([ADVANCE, ADVANCE], np.uint64), check=False)
    assert batch.state.tobytes() == expected.state.tobytes()
