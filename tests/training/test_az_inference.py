"""Self-play processes sharing one inference service: the same games for a seed, the
service's batches holding every worker's leaves, and a dead worker or a failing network
reported in one line instead of a hang. Each test has a deadline (``deadline``)."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator

import numpy as np
import pytest

from patchwork_env.agents.az.config import SearchConfig
from patchwork_env.agents.az.net import AZNet, make_evaluator
from patchwork_env.training.az import run_az
from patchwork_env.training.az.selfplay.inference import InferenceService, RemoteEvaluator
from patchwork_env.training.az.selfplay.processes import WorkerError
from patchwork_env.training.az.selfplay.service import ServicePool
from tests.agents.test_az import tiny_options as tiny
from tests.training.test_az_workers import deadline, ended  # noqa: F401 (a fixture)

CONFIG = SearchConfig(simulations=2, max_considered=2, top_k=4)


@pytest.fixture(scope="module")
def net() -> AZNet:
    return AZNet(hidden=16, layers=1).eval()


@pytest.fixture(scope="module")
def pool(net: AZNet) -> Iterator[ServicePool]:
    pool = ServicePool(make_evaluator(net), CONFIG, n_workers=2, parallel_games=3,
                       obs_size=net.obs_size)
    yield pool
    pool.close()


def test_the_same_seed_gives_the_same_games(pool: ServicePool) -> None:
    first = pool.generate(None, 6, seed=5)
    again = pool.generate(None, 6, seed=5)
    assert first.games == again.games == 6
    assert first.states.tobytes() == again.states.tobytes()
    assert np.array_equal(first.target_probs, again.target_probs)


def test_a_round_evaluates_the_leaves_of_every_worker_together(pool: ServicePool) -> None:
    batches, leaves = pool.service.batches, pool.service.leaves
    batch = pool.generate(None, 6, seed=1)
    calls = pool.service.batches - batches
    assert pool.service.leaves - leaves == batch.stats["evaluations"]
    # A worker sends at most its 3 games' leaves at once: with every call holding one
    # worker's leaves, there would be at least a call per 3 leaves.
    assert calls < batch.stats["evaluations"] / 3


def test_a_worker_sends_no_more_leaves_than_its_block_holds(net: AZNet) -> None:
    service = InferenceService(make_evaluator(net), 1, max_leaves=2, obs_size=net.obs_size)
    try:
        remote = RemoteEvaluator(service.link(0))
        with pytest.raises(ValueError, match=r"1\.\.2 leaves at once, got 3"):
            remote(np.zeros((3, net.obs_size), np.float32), np.zeros((3, 1), bool))
        remote.close()
    finally:
        service.close()


def test_a_worker_that_dies_is_one_line_at_once(net: AZNet) -> None:
    pool = ServicePool(make_evaluator(net), CONFIG, n_workers=2, parallel_games=2,
                       obs_size=net.obs_size)
    processes = list(pool._processes)
    try:
        pool.generate(None, 2, seed=1)
        os.kill(processes[0].pid, signal.SIGKILL)
        with pytest.raises(WorkerError, match="worker 0 ended while playing") as error:
            pool.generate(None, 4, seed=2)
        assert "\n" not in str(error.value)
    finally:
        pool.close()
    assert ended(processes)


def test_a_failing_network_call_is_one_line_naming_it(net: AZNet) -> None:
    def broken(obs: np.ndarray, masks: object) -> tuple[np.ndarray, np.ndarray]:
        raise RuntimeError("out of device memory\nand a second line")

    pool = ServicePool(broken, CONFIG, n_workers=2, parallel_games=2, obs_size=net.obs_size)
    processes = list(pool._processes)
    try:
        with pytest.raises(WorkerError, match=r"network call failed: out of device memory$"):
            pool.generate(None, 4, seed=2)
    finally:
        pool.close()
    assert ended(processes)


def test_a_run_trains_with_its_leaves_evaluated_by_the_service(tmp_path) -> None:
    row = run_az(tiny(tmp_path / "run", workers=2, inference="service",
                      games_per_iteration=4), log=None)
    assert row["iteration"] == 1 and row["games"] == 4
