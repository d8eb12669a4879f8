"""A search-guided run across a two-node Ray cluster on this machine: the same samples as
worker processes play for the same seed, with the leaves evaluated by each actor or by
one inference service actor. Skipped when Ray is not installed."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from patchwork_env.training.az import run_az
from patchwork_env.training.checkpoint import load_checkpoint
from tests import ROOT
from tests.agents.test_az import tiny_options
from tests.training.ray_cluster import RUN

pytestmark = pytest.mark.skipif(importlib.util.find_spec("ray") is None,
                                reason="Ray is not installed")


def on_two_nodes(run_dir: Path, *flags: str) -> dict:
    """Run :mod:`tests.training.ray_cluster` into ``run_dir``; what it prints."""
    done = subprocess.run([sys.executable, "-m", "tests.training.ray_cluster", str(run_dir),
                           *flags], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def samples(run_dir: Path) -> dict[str, torch.Tensor]:
    """The replay buffer of a run's checkpoint."""
    return load_checkpoint(run_dir / "checkpoint.pt")["buffer"]


@pytest.mark.parametrize("inference", ["local", "service"])
def test_two_iterations_across_two_nodes_play_the_samples_of_local_workers(
        tmp_path: Path, inference: str) -> None:
    cluster = on_two_nodes(tmp_path / "cluster",
                           *(["--inference"] if inference == "service" else []))
    assert cluster["nodes"] == 2
    run_az(tiny_options(tmp_path / "local", inference=inference, **RUN), log=None)
    on_cluster, here = samples(tmp_path / "cluster"), samples(tmp_path / "local")
    assert on_cluster["added"] == here["added"] > 0
    for name in ("states", "offsets", "actions", "probs", "values"):
        assert torch.equal(on_cluster[name], here[name]), name
