"""Training on a device: ``--device`` and ``--precision`` of both trainers, a learner in
mixed precision, checkpoints of CPU copies that resume on another device.

The runs use the CPU device; the CUDA paths run only where CUDA is present, and CUDA's
refusal is checked as on a machine without it (``CUDA_VISIBLE_DEVICES`` empty).
"""

from __future__ import annotations

import dataclasses
import io
import os
import subprocess
import sys
from collections import OrderedDict
from pathlib import Path

import numba
import numpy as np
import pytest
import torch

from patchwork_env.agents.az.net import AZNet, load_az_net
from patchwork_env.agents.device import on_cpu, use_threads
from patchwork_env.training.az import run_az
from patchwork_env.training.az.buffer import ReplayBuffer
from patchwork_env.training.az.learner import Learner
from patchwork_env.training.az.options import AZRunError
from patchwork_env.training.az.selfplay.worker import SelfPlayWorker
from patchwork_env.training.checkpoint import MAGIC, load_checkpoint
from patchwork_env.training.ppo.session import resumed_options
from tests import ROOT
from tests.agents.test_az import tiny_options as tiny

needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device here")


def train_without_cuda(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """``python train.py args`` as on a machine without CUDA."""
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": ""}
    return subprocess.run([sys.executable, str(ROOT / "train.py"), *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


def saved_tensors(path: Path) -> list[torch.Tensor]:
    """Every tensor of a checkpoint, on the device it was saved from."""
    payload = path.read_bytes()[len(MAGIC):].partition(b"\n")[2]
    found: list[torch.Tensor] = []

    def walk(value: object) -> None:
        if isinstance(value, torch.Tensor):
            found.append(value)
        elif isinstance(value, dict):
            for item in value.values():
                walk(item)
        elif isinstance(value, list | tuple):
            for item in value:
                walk(item)

    walk(torch.load(io.BytesIO(payload), weights_only=True))
    return found


# ----- the options --------------------------------------------------------------------------

@pytest.mark.parametrize(("algo", "message"), [
    ([], "train.py: error: --device cuda: this machine has no CUDA device"),
    (["--algo", "ppo"], "train.py: error: --device cuda: this machine has no CUDA device"),
])
def test_train_refuses_cuda_without_cuda_in_one_line(algo: list[str], message: str,
                                                     tmp_path: Path) -> None:
    done = train_without_cuda(*algo, "--device", "cuda", "--run-dir", "run", cwd=tmp_path)
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith(message) and "Traceback" not in done.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(("changes", "message"), [
    ({"device": "gpu"}, r"^--device gpu: not a device"),
    ({"device": "cpu", "precision": "fp16"}, r"^--precision fp16 runs on a CUDA device only"),
    ({"device": "cpu", "precision": "half"}, r"^--precision half: not a precision"),
])
def test_az_options_refuse_a_device_or_precision_the_machine_cannot_run(
        changes: dict[str, str], message: str, tmp_path: Path) -> None:
    with pytest.raises(AZRunError, match=message):
        tiny(tmp_path / "run", **changes).check()


def test_a_ppo_checkpoint_from_a_gpu_machine_resumes_with_this_command_lines_device() -> None:
    import train

    opts, _ = train.parse_options(["--device", "cpu", "--teacher", "random"])
    saved = {**dataclasses.asdict(opts), "device": "cuda:3"}
    assert resumed_options(opts, set(), saved).device == "auto"
    assert resumed_options(opts, {"device"}, saved).device == "cpu"


def test_a_ppo_checkpoint_written_before_devices_resumes() -> None:
    import train

    opts, _ = train.parse_options(["--teacher", "random"])
    saved = {k: v for k, v in dataclasses.asdict(opts).items() if k != "device"}
    assert resumed_options(opts, set(), saved).device == "auto"


# ----- the learner and the checkpoints -----------------------------------------------------

def test_a_bf16_learner_computes_float32_losses_near_fp32_ones(tmp_path: Path) -> None:
    run_az(tiny(tmp_path / "run"), log=None)
    buffer = ReplayBuffer(1000)
    buffer.load_state_dict(load_checkpoint(tmp_path / "run" / "checkpoint.pt")["buffer"])
    batch = buffer.sample(16, np.random.default_rng(0), False)
    torch.manual_seed(0)
    net = AZNet(kind="shaped", hidden=32, layers=1, maps=4)
    full = Learner(net).losses(batch)
    mixed = Learner(net, precision="bf16").losses(batch)
    assert mixed["total"].dtype == torch.float32
    mixed_total, full_total = float(mixed["total"].detach()), float(full["total"].detach())
    assert abs(mixed_total - full_total) < 0.05 * full_total


def test_the_checkpoints_copies_keep_a_state_dicts_type_and_metadata() -> None:
    state = torch.nn.BatchNorm1d(3).state_dict()
    copied = on_cpu({"net": state, "pairs": [("a", torch.ones(2))], "n": 3})
    assert type(copied["net"]) is OrderedDict
    assert copied["net"]._metadata == state._metadata
    assert copied["pairs"][0][0] == "a" and copied["n"] == 3


def test_a_bf16_run_on_the_cpu_trains_an_iteration(tmp_path: Path) -> None:
    row = run_az(tiny(tmp_path / "run", device="cpu", precision="bf16", net="shaped"),
                 log=None)
    assert row["iteration"] == 1
    assert np.isfinite([row["policy_loss"], row["value_loss"]]).all()


def test_a_checkpoint_resumes_with_another_device_and_precision(tmp_path: Path) -> None:
    run_az(tiny(tmp_path / "run", device="cpu"), log=None)
    row = run_az(tiny(tmp_path / "run", device="auto", precision="bf16", iterations=2,
                      resume=True), log=None)
    assert row["iteration"] == 2


def test_a_runs_checkpoint_holds_cpu_tensors_only(tmp_path: Path) -> None:
    """Whatever device ``auto`` picks on this machine."""
    run_az(tiny(tmp_path / "run", device="auto"), log=None)
    devices = {t.device.type for t in saved_tensors(tmp_path / "run" / "checkpoint.pt")}
    assert devices == {"cpu"}


def test_a_self_play_worker_plays_on_the_device_and_precision_given() -> None:
    opts = tiny(".", device="cpu")
    net = opts.network()
    worker = SelfPlayWorker(net.config(), opts.search_config(), 2, device="cpu",
                            precision="bf16")
    batch = worker.generate(net.state_dict(), 2, seed=0)
    assert batch.games == 2 and len(batch) > 0


# ----- on CUDA ------------------------------------------------------------------------------

@needs_cuda
@pytest.mark.parametrize("precision", ["fp32", "bf16", "fp16"])
def test_a_cuda_run_trains_and_plays_on_the_cpu(precision: str, tmp_path: Path) -> None:
    run_az(tiny(tmp_path / "run", device="cuda", precision=precision), log=None)
    devices = {t.device.type for t in saved_tensors(tmp_path / "run" / "checkpoint.pt")}
    assert devices == {"cpu"}
    net = load_az_net(tmp_path / "run" / "net.pt")
    assert {p.device.type for p in net.parameters()} == {"cpu"}
    row = run_az(tiny(tmp_path / "run", device="cpu", iterations=2, resume=True), log=None)
    assert row["iteration"] == 2


def test_use_threads_sets_the_engines_and_the_networks_threads() -> None:
    before = (numba.get_num_threads(), torch.get_num_threads())
    try:
        use_threads(1)
        assert (numba.get_num_threads(), torch.get_num_threads()) == (1, 1)
    finally:
        numba.set_num_threads(before[0])
        torch.set_num_threads(before[1])
