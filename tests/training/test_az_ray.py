"""Search-guided self-play with its workers as Ray actors: the same samples as worker
processes would play, and a run that trains with them.

Skipped when Ray is not installed (``pip install -e ".[rllib]"``), except the check that a
run asking for Ray without it is refused by name.
"""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from patchwork_env.agents.az.config import SearchConfig
from patchwork_env.agents.az.net import AZNet
from patchwork_env.training.az import AZRunError, run_az
from patchwork_env.training.az.selfplay import SelfPlayWorker
from patchwork_env.training.az.selfplay.processes import merge, shares, worker_seeds
from tests.agents.test_az import tiny_options as tiny

HAS_RAY = importlib.util.find_spec("ray") is not None
needs_ray = pytest.mark.skipif(not HAS_RAY, reason="Ray is not installed")
CONFIG = SearchConfig(simulations=3, max_considered=4, top_k=8)
"""The actors' search, with 3 games in flight."""


@pytest.mark.skipif(HAS_RAY, reason="Ray is installed")
def test_a_run_on_ray_without_ray_is_refused_by_name(tmp_path) -> None:
    with pytest.raises(AZRunError, match=r"--ray-address: .*pip install"):
        run_az(tiny(tmp_path / "run", ray_address="local"), log=None)
    assert not (tmp_path / "run").exists()


@needs_ray
def test_ray_actors_play_the_games_worker_processes_would(local_ray) -> None:
    from patchwork_env.training.az.selfplay.ray_actors import RayWorkerPool

    net = AZNet(hidden=16, layers=1)
    weights = net.state_dict()
    pool = RayWorkerPool(net.config(), CONFIG, n_workers=2, parallel_games=3)
    try:
        on_ray = pool.generate(weights, 5, seed=7)
    finally:
        pool.close()
    here = SelfPlayWorker(net.config(), CONFIG, parallel_games=3)
    expected = merge([here.generate(weights, n, s)
                      for n, s in zip(shares(5, 2), worker_seeds(7, 2), strict=True)])
    assert on_ray.games == 5
    np.testing.assert_array_equal(on_ray.states, expected.states)
    np.testing.assert_array_equal(on_ray.target_actions, expected.target_actions)
    np.testing.assert_array_equal(on_ray.target_probs, expected.target_probs)
    np.testing.assert_array_equal(on_ray.values, expected.values)


@needs_ray
def test_a_run_trains_with_its_self_play_on_ray_actors(local_ray, tmp_path) -> None:
    row = run_az(tiny(tmp_path / "run", ray_address="local", workers=2,
                      games_per_iteration=4), log=None)
    assert row["iteration"] == 1 and row["games"] == 4
    assert (tmp_path / "run" / "net.pt").is_file()


@needs_ray
def test_actors_the_cluster_has_no_room_for_are_refused_at_once(local_ray) -> None:
    from patchwork_env.training.az.selfplay.ray_actors import RayWorkerPool
    from patchwork_env.training.az.selfplay.ray_service import RayServicePool

    config = AZNet(hidden=16, layers=1).config()
    with pytest.raises(ValueError, match=r"3 Ray workers of 1 CPU.* need 3 CPUs; the cluster "
                                         r"has 2$"):
        RayWorkerPool(config, CONFIG, n_workers=3, parallel_games=3)
    with pytest.raises(ValueError, match=r"and an inference service need 3 CPUs; the cluster "
                                         r"has 2$"):
        RayServicePool(config, CONFIG, n_workers=2, parallel_games=3)
