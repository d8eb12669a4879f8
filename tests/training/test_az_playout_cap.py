"""Playout cap randomization in search-guided self-play: a fraction of the moves searched in
full (the policy targets), the rest with a cheap search that teaches the value only."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

import train
from patchwork_env.agents.az.net import make_evaluator
from patchwork_env.training.az import AZRunError, run_az
from patchwork_env.training.az.buffer import ReplayBuffer, TrainingBatch
from patchwork_env.training.az.learner import Learner
from patchwork_env.training.az.selfplay import SelfPlayWorker
from patchwork_env.training.az.selfplay.processes import WorkerPool, merge
from patchwork_env.training.az.selfplay.service import ServicePool
from patchwork_env.training.checkpoint import load_checkpoint
from tests.agents.test_az import tiny_options
from tests.training.test_az_hostile import AZ, one_line


def play(tmp_path: Path, n_games: int = 2, seed: int = 3, **kw) -> tuple:
    """A batch of self-play with tiny options's network and search, and the network."""
    opts = tiny_options(tmp_path)
    net = opts.network()
    worker = SelfPlayWorker(net.config(), opts.search_config(), opts.parallel_games, **kw)
    return worker.generate(net.state_dict(), n_games, seed), net


def test_a_full_search_fraction_of_1_plays_the_default_samples(tmp_path: Path) -> None:
    default, _ = play(tmp_path)
    full, _ = play(tmp_path, full_search_fraction=1.0, cheap_simulations=1)
    for name in ("states", "target_offsets", "target_actions", "target_probs", "values",
                 "game_ids", "winners"):
        assert np.array_equal(getattr(default, name), getattr(full, name)), name
    assert full.policy_targets.all()


def test_a_quarter_of_the_positions_are_policy_targets_reproducibly(tmp_path: Path) -> None:
    first, _ = play(tmp_path, n_games=4, full_search_fraction=0.25, cheap_simulations=1)
    again, _ = play(tmp_path, n_games=4, full_search_fraction=0.25, cheap_simulations=1)
    assert len(first) > 100
    assert 0.1 < first.policy_targets.mean() < 0.45
    assert np.array_equal(first.policy_targets, again.policy_targets)
    assert np.array_equal(first.states, again.states)


def test_merging_batches_keeps_their_flags(tmp_path: Path) -> None:
    batch, _ = play(tmp_path, full_search_fraction=0.5, cheap_simulations=1)
    merged = merge([batch, batch])
    assert np.array_equal(merged.policy_targets, np.tile(batch.policy_targets, 2))


def sampled(tmp_path: Path) -> tuple[TrainingBatch, Learner]:
    batch, net = play(tmp_path, full_search_fraction=0.5, cheap_simulations=1)
    buffer = ReplayBuffer(10_000)
    buffer.add(batch)
    return buffer.sample(64, np.random.default_rng(0)), Learner(net)


def test_the_policy_loss_ignores_the_samples_that_are_not_targets(tmp_path: Path) -> None:
    full, learner = sampled(tmp_path)
    keep = full.policy_targets
    assert 0 < int(keep.sum()) < len(keep)
    garbage = full.target_probs.clone()
    garbage[~keep] = torch.rand_like(garbage[~keep]) * 50
    noisy = TrainingBatch(full.observations, full.masks, full.target_index, garbage,
                          full.values, keep)
    only = TrainingBatch(full.observations[keep], full.masks[keep], full.target_index[keep],
                         full.target_probs[keep], full.values[keep])
    with torch.no_grad():
        assert torch.allclose(learner.losses(noisy)["policy"], learner.losses(only)["policy"])


def test_the_value_loss_counts_every_sample(tmp_path: Path) -> None:
    full, learner = sampled(tmp_path)
    every = TrainingBatch(full.observations, full.masks, full.target_index, full.target_probs,
                          full.values)
    with torch.no_grad():
        assert torch.allclose(learner.losses(full)["value"], learner.losses(every)["value"])


def test_a_buffer_state_round_trips_the_flags(tmp_path: Path) -> None:
    batch, _ = play(tmp_path, full_search_fraction=0.5, cheap_simulations=1)
    buffer = ReplayBuffer(10_000)
    buffer.add(batch)
    restored = ReplayBuffer(10_000)
    restored.load_state_dict(buffer.state_dict())
    assert np.array_equal(restored.chunks[0].policy_targets, batch.policy_targets)


def test_a_buffer_state_without_flags_loads_as_all_targets(tmp_path: Path) -> None:
    batch, _ = play(tmp_path, full_search_fraction=0.5, cheap_simulations=1)
    buffer = ReplayBuffer(10_000)
    buffer.add(batch)
    state = buffer.state_dict()
    del state["policy_targets"]
    restored = ReplayBuffer(10_000)
    restored.load_state_dict(state)
    assert restored.chunks[0].policy_targets.all()


def test_a_buffer_state_with_bad_flags_is_refused(tmp_path: Path) -> None:
    batch, _ = play(tmp_path)
    buffer = ReplayBuffer(10_000)
    buffer.add(batch)
    state = buffer.state_dict()
    state["policy_targets"] = state["policy_targets"][:-1]
    with pytest.raises(ValueError, match="policy_targets"):
        ReplayBuffer(10_000).load_state_dict(state)


def test_a_run_with_cheap_searches_trains(tmp_path: Path) -> None:
    opts = tiny_options(tmp_path, full_search_fraction=0.5, cheap_simulations=1)
    run_az(opts, log=lambda *args, **kw: None)
    assert (tmp_path / "checkpoint.pt").exists()


def test_the_learner_steps_follow_the_policy_targets(tmp_path: Path) -> None:
    """A cheaply searched move adds a value sample but no learner step, so a run with cheap
    searches learns as much per policy target as the default run, not per position."""
    opts = tiny_options(tmp_path, iterations=1, batch_size=8, sample_reuse=4.0, **CAP)
    last = run_az(opts, log=lambda *args, **kw: None)
    flags = load_checkpoint(tmp_path / "checkpoint.pt")["buffer"]["policy_targets"]
    targets = int(flags.sum())
    assert 0 < targets < len(flags)
    assert last["learner_steps"] == -(-4 * targets // 8)


@pytest.mark.parametrize(("args", "flag"), [
    (["--full-search-fraction", "1.5"], "--full-search-fraction"),
    (["--cheap-simulations", "3", "--full-search-fraction", "0.5"], "--cheap-simulations"),
    (["--cheap-simulations=-1"], "--cheap-simulations"),
])
def test_bad_playout_cap_options_are_refused_in_one_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str],
        flag: str) -> None:
    assert train.main([*AZ, *args, "--run-dir", str(tmp_path / "run")]) == 2
    one_line(capsys.readouterr().err, "train.py: error:", flag)


def test_cheap_simulations_above_simulations_is_an_az_run_error(tmp_path: Path) -> None:
    with pytest.raises(AZRunError, match="--cheap-simulations"):
        tiny_options(tmp_path, simulations=2, cheap_simulations=3,
                     full_search_fraction=0.5).check()


CAP = {"full_search_fraction": 0.5, "cheap_simulations": 1}


def test_worker_processes_search_with_the_cap(tmp_path: Path) -> None:
    opts = tiny_options(tmp_path)
    net = opts.network()
    pool = WorkerPool(net.config(), opts.search_config(), n_workers=2, parallel_games=2,
                      worker_options=CAP)
    try:
        batch = pool.generate(net.state_dict(), 2, seed=3)
    finally:
        pool.close()
    assert 0 < batch.policy_targets.mean() < 1


def test_service_workers_search_with_the_cap(tmp_path: Path) -> None:
    opts = tiny_options(tmp_path)
    net = opts.network().eval()
    pool = ServicePool(make_evaluator(net), opts.search_config(), n_workers=2,
                       parallel_games=2, obs_size=net.obs_size, worker_options=CAP)
    try:
        batch = pool.generate(None, 2, seed=3)
    finally:
        pool.close()
    assert 0 < batch.policy_targets.mean() < 1
