"""Tianshou 2.0 on the AEC env: its collectors store Patchwork's moves and infos without
NaNs (the old ``MalformedBufferError``), and ``examples/tianshou_dqn.py`` runs at smoke size.

Skipped when Tianshou is not installed (``pip install -e ".[tianshou]"``).
"""

from __future__ import annotations

import re
import subprocess
import sys
from typing import Any

import numpy as np
import pytest

pytest.importorskip("tianshou")
pytest.importorskip("torch")

from pettingzoo.utils.wrappers import BaseWrapper
from tianshou.algorithm import (
    MARLRandomDiscreteMaskedOffPolicyAlgorithm,
    MultiAgentOffPolicyAlgorithm,
)
from tianshou.data import Collector, CollectStats, VectorReplayBuffer
from tianshou.data.buffer.buffer_base import MalformedBufferError
from tianshou.env import DummyVectorEnv, PettingZooEnv

import patchwork_env
from tests import ROOT

AGENTS = ("player_0", "player_1")


class PreFixInfos(BaseWrapper):
    """The AEC infos as they were before they became type-stable: empty during the game,
    the scores and the winner's name only at the end."""

    def last(self, observe: bool = True) -> tuple[Any, ...]:
        obs, reward, terminated, truncated, info = super().last(observe)
        if not (terminated or truncated):
            return obs, reward, terminated, truncated, {}
        return obs, reward, terminated, truncated, {
            "scores": info["scores"], "winner": AGENTS[info["winner"]]}


def collect_random_games(wrap=None, n_step: int = 400) -> VectorReplayBuffer:
    """Random masked players on both seats of two games, through Tianshou's wrapper, vector
    env and collector; ``n_step`` is not a whole number of games, so games end mid-buffer
    and one is left unfinished. The collector checks the buffer for NaNs after collecting
    (``MalformedBufferError``). Returns the filled buffer."""

    def make() -> PettingZooEnv:
        aec = patchwork_env.env()
        return PettingZooEnv(wrap(aec) if wrap else aec)

    env = make()
    players = [MARLRandomDiscreteMaskedOffPolicyAlgorithm(action_space=env.action_space)
               for _ in AGENTS]
    algorithm = MultiAgentOffPolicyAlgorithm(algorithms=players, env=env)
    envs = DummyVectorEnv([make, make])
    envs.seed(0)
    np.random.seed(0)
    buffer = VectorReplayBuffer(1000, len(envs))
    collector = Collector[CollectStats](algorithm, envs, buffer, raise_on_nan_in_buffer=True)
    stats = collector.collect(n_step=n_step, reset_before_collect=True)
    assert stats.n_collected_steps == n_step and stats.n_collected_episodes >= 2
    return buffer


def test_a_collector_fills_a_buffer_without_nans() -> None:
    buffer = collect_random_games()
    assert len(buffer) == 400 and not buffer.hasnull()
    data = buffer[buffer.sample_indices(0)]  # every stored transition, in order
    assert data.obs.obs.dtype == np.float32 and data.obs.obs.shape == (400, 1189)
    assert np.isfinite(data.obs.obs).all() and np.isfinite(data.rew).all()
    assert data.obs.mask[np.arange(400), data.act].all()  # every move was legal
    winner, scores = data.info.winner, data.info.scores
    for values in (winner, scores.player_0, scores.player_1):
        assert np.issubdtype(values.dtype, np.integer)
    done = data.done.astype(bool)
    assert done.any() and not done.all()
    assert (winner[~done] == -1).all() and np.isin(winner[done], (0, 1)).all()
    assert (data.rew[~done] == 0).all()
    wins = np.where(np.arange(2) == winner[done][:, None], 1.0, -1.0)
    np.testing.assert_array_equal(data.rew[done], wins)  # +1 to the winner, -1 to the loser
    finals = np.stack([scores.player_0[done], scores.player_1[done]], axis=1)
    rows = np.arange(done.sum())
    assert (finals[rows, winner[done]] >= finals[rows, 1 - winner[done]]).all()


def test_the_nan_check_catches_the_pre_fix_infos() -> None:
    """The check above is not vacuous: with the old infos Tianshou pads the winner with
    ``None``, which its trainer reported as ``MalformedBufferError: Encountered NaNs``."""
    with pytest.raises(MalformedBufferError, match="NaN"):
        collect_random_games(PreFixInfos)


def test_the_example_trains_and_reports_a_win_rate() -> None:
    done = subprocess.run([sys.executable, str(ROOT / "examples" / "tianshou_dqn.py"),
                           "--smoke", "--seed", "1"],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert re.search(r"buffer: [\d,]+ transitions, no NaNs, infos scores and winner stored "
                     r"as int", done.stdout), done.stdout
    result = re.search(r"learner \(player_0, DQN\) against random: (\d+) of (\d+) games won",
                       done.stdout)
    assert result, done.stdout
    wins, games = map(int, result.groups())
    assert games == 4 and 0 <= wins <= games
