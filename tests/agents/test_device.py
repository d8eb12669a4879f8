"""Where a network runs: the device and precision choices, the az network and agents on a
device, ``@DEVICE`` in agent specs and ``evaluate.py --device``.

Everything runs on the CPU device; a machine without CUDA is simulated where a refusal is
checked, so these tests mean the same on a GPU machine. The CUDA paths themselves run
only where CUDA is present.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from patchwork_env import GameBatch, agents
from patchwork_env.agents import AgentSpecError, split_device
from patchwork_env.agents.az.agent import AZAgent, AZPolicyAgent
from patchwork_env.agents.az.net import AZNet, load_az_net, make_evaluator, save_az_net
from patchwork_env.agents.device import (
    DeviceError,
    Uploader,
    autocast,
    check_precision,
    resolve_device,
)
from patchwork_env.views.observation import observe
from tests import ROOT

CPU = torch.device("cpu")
needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device here")


@pytest.fixture
def no_cuda(monkeypatch: pytest.MonkeyPatch) -> None:
    """This machine as one without CUDA or MPS."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: False)


@pytest.fixture
def two_gpus(monkeypatch: pytest.MonkeyPatch) -> None:
    """This machine as one with two CUDA devices (for the choice of a name only)."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: False)


def tiny_net() -> AZNet:
    torch.manual_seed(0)
    return AZNet(kind="shaped", hidden=32, layers=1, maps=4).eval()


def observations(n: int = 6) -> tuple[np.ndarray, np.ndarray]:
    batch = GameBatch.new(n, seed=3)
    return observe(batch.state, batch.rules), batch.legal_mask()


# ----- resolve_device and the precisions -------------------------------------------------

def test_cpu_is_the_cpu() -> None:
    assert resolve_device("cpu") == CPU


def test_auto_is_the_cpu_without_an_accelerator(no_cuda: None) -> None:
    assert resolve_device("auto") == CPU


def test_auto_picks_cuda_where_there_is_one(two_gpus: None) -> None:
    assert resolve_device("auto") == torch.device("cuda")


def test_a_numbered_cuda_device_is_that_device(two_gpus: None) -> None:
    assert resolve_device("cuda:1") == torch.device("cuda:1")


def test_cuda_without_cuda_is_one_line_with_the_choices(no_cuda: None) -> None:
    with pytest.raises(DeviceError) as e:
        resolve_device("cuda")
    assert str(e.value) == "--device cuda: this machine has no CUDA device (choose auto or cpu)"


def test_a_cuda_device_past_the_last_names_those_there_are(two_gpus: None) -> None:
    with pytest.raises(DeviceError, match=r"^--device cuda:2: this machine has 2 CUDA devices "
                       r"\(cuda:0 to cuda:1\) \(choose auto, cpu, cuda, cuda:0 or cuda:1\)$"):
        resolve_device("cuda:2")


def test_mps_without_mps_is_refused(no_cuda: None) -> None:
    with pytest.raises(DeviceError, match=r"^--device mps: this machine has no MPS device"):
        resolve_device("mps")


@pytest.mark.parametrize("name", ["gpu", "CUDA", "cpu:0", "cuda:", "cuda:x", ""])
def test_a_name_that_is_no_device_is_refused(name: str) -> None:
    with pytest.raises(DeviceError, match=r"not a device \(choose auto, cpu, cuda, cuda:N or "
                       r"mps\)$"):
        resolve_device(name)


@pytest.mark.parametrize(("precision", "device"), [
    ("fp32", "cpu"), ("bf16", "cpu"), ("fp32", "mps"), ("fp32", "cuda"), ("fp16", "cuda")])
def test_precisions_a_device_runs(precision: str, device: str) -> None:
    assert check_precision(precision, torch.device(device)) == precision


@pytest.mark.parametrize(("precision", "device", "message"), [
    ("fp16", "cpu", r"fp16 runs on a CUDA device only, not on cpu \(choose fp32 or bf16\)"),
    ("bf16", "mps", r"bf16 runs on a CUDA device or the CPU, not on mps \(choose fp32\)"),
    ("fp8", "cpu", r"fp8: not a precision \(choose fp32, bf16, fp16\)"),
])
def test_precisions_a_device_cannot_run_are_refused(precision: str, device: str,
                                                    message: str,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda: True)
    with pytest.raises(DeviceError, match=message):
        check_precision(precision, torch.device(device))


def test_bf16_autocast_runs_a_layer_in_bfloat16_on_the_cpu() -> None:
    layer = torch.nn.Linear(4, 3)
    with autocast(CPU, "bf16"):
        assert layer(torch.ones(2, 4)).dtype == torch.bfloat16


def test_fp32_autocast_leaves_a_layer_as_it_is() -> None:
    layer = torch.nn.Linear(4, 3)
    with autocast(CPU, "fp32"):
        assert layer(torch.ones(2, 4)).dtype == torch.float32


def test_the_uploader_hands_the_cpu_the_array_itself() -> None:
    array = np.arange(6, dtype=np.float32).reshape(2, 3)
    tensor = Uploader(CPU)(array)
    assert tensor.data_ptr() == array.ctypes.data


# ----- the network and the agents on a device --------------------------------------------

def test_the_evaluator_returns_float32_numpy_of_the_network() -> None:
    net = tiny_net()
    obs, masks = observations()
    logits, values = make_evaluator(net, "cpu")(obs, masks)
    expected = net(torch.from_numpy(obs))
    assert logits.dtype == values.dtype == np.float32
    np.testing.assert_allclose(logits, expected[0].detach().numpy(), rtol=1e-6)
    np.testing.assert_allclose(values, expected[1].detach().numpy(), rtol=1e-6)


def test_a_bf16_evaluator_returns_float32_near_the_fp32_results() -> None:
    net = tiny_net()
    obs, masks = observations()
    logits32, values32 = make_evaluator(net)(obs, masks)
    logits16, values16 = make_evaluator(net, "cpu", "bf16")(obs, masks)
    assert logits16.dtype == values16.dtype == np.float32
    np.testing.assert_allclose(values16, values32, atol=0.05)
    np.testing.assert_allclose(logits16, logits32, atol=0.1)


def test_an_evaluator_refuses_a_precision_its_device_cannot_run() -> None:
    with pytest.raises(DeviceError, match="fp16 runs on a CUDA device only"):
        make_evaluator(tiny_net(), "cpu", "fp16")


def test_a_network_file_loads_onto_the_device_asked(tmp_path: Path) -> None:
    save_az_net(tiny_net(), tmp_path / "net.pt")
    net = load_az_net(tmp_path / "net.pt", device="cpu")
    assert {p.device for p in net.parameters()} == {CPU}


def test_a_network_file_refuses_a_device_the_machine_lacks(tmp_path: Path,
                                                           no_cuda: None) -> None:
    save_az_net(tiny_net(), tmp_path / "net.pt")
    with pytest.raises(DeviceError, match="no CUDA device"):
        load_az_net(tmp_path / "net.pt", device="cuda")


def test_bf16_az_agents_play_legal_moves() -> None:
    batch = GameBatch.new(4, seed=1)
    rows = np.arange(4)
    masks = batch.legal_mask()
    for agent in (AZAgent(tiny_net(), 4, seed=0, precision="bf16"),
                  AZPolicyAgent(tiny_net(), seed=0, precision="bf16")):
        actions = agent.act(batch, rows)
        assert masks[rows, actions].all()


# ----- @DEVICE in agent specs --------------------------------------------------------------

@pytest.mark.parametrize(("spec", "split"), [
    ("az:runs/x/net.pt:64@cuda:1", ("az:runs/x/net.pt:64", "cuda:1")),
    ("az@cpu", ("az", "cpu")), ("az:64", ("az:64", None)),
    ("az:runs/me@home/net.pt", ("az:runs/me@home/net.pt", None)),
    ("az-policy:net@2.pt", ("az-policy:net@2.pt", None)),
])
def test_split_device(spec: str, split: tuple[str, str | None]) -> None:
    assert split_device(spec) == split


def test_a_spec_on_the_cpu_builds_its_agent() -> None:
    agent = agents.make("az-policy@cpu", seed=0)
    assert isinstance(agent, AZPolicyAgent)
    assert {p.device for p in agent.net.parameters()} == {CPU}


def test_az_at_cuda_without_cuda_is_a_spec_error(no_cuda: None) -> None:
    with pytest.raises(AgentSpecError) as e:
        agents.make("az@cuda")
    assert str(e.value) == ("agent 'az@cuda': device cuda: this machine has no CUDA device "
                            "(choose auto or cpu)")


def test_makes_device_is_refused_for_an_agent_with_a_network(no_cuda: None) -> None:
    with pytest.raises(AgentSpecError, match="device cuda: this machine has no CUDA device"):
        agents.make("az-policy", device="cuda")


def test_a_specs_own_device_wins_over_makes(no_cuda: None) -> None:
    agent = agents.make("az-policy@cpu", device="cuda")
    assert {p.device for p in agent.net.parameters()} == {CPU}


def test_agents_without_a_network_ignore_makes_device(no_cuda: None) -> None:
    assert agents.make("greedy", device="cuda").spec == "greedy"


@pytest.mark.parametrize(("spec", "message"), [
    ("greedy@cpu", "agent 'greedy' runs no network, so it takes no @DEVICE"),
    ("mcts:50@cuda", "agent 'mcts' runs no network"),
    ("az@", "empty device after '@'"),
    ("az@gpu", r"device gpu: not a device \(choose auto, cpu, cuda, cuda:N or mps\)"),
])
def test_bad_devices_in_specs_are_spec_errors(spec: str, message: str) -> None:
    with pytest.raises(AgentSpecError, match=message):
        agents.make(spec)


def test_a_ppo_spec_on_the_cpu_plays_its_policy_there() -> None:
    agent = agents.make("ppo@cpu", seed=0)
    assert agent.policy.device == CPU


# ----- evaluate.py --device ----------------------------------------------------------------

def run_without_cuda(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """``python evaluate.py args`` as on a machine without CUDA."""
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": ""}
    return subprocess.run([sys.executable, str(ROOT / "evaluate.py"), *args], cwd=cwd,
                          env=env, capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize(("args", "message"), [
    (("random", "greedy", "--device", "cuda"), "error: --device cuda: this machine has no CUDA "
     "device"),
    (("random", "az-policy@cuda"), "error: agent 'az-policy@cuda': device cuda: this machine "
     "has no CUDA device"),
])
def test_evaluate_refuses_cuda_without_cuda_before_any_game(args: tuple[str, ...],
                                                            message: str,
                                                            tmp_path: Path) -> None:
    done = run_without_cuda(*args, "--out", "out", cwd=tmp_path)
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith(message)
    assert list(tmp_path.iterdir()) == []


@needs_cuda
def test_the_cuda_evaluator_matches_the_cpu_one() -> None:
    obs, masks = observations()
    logits_cpu, values_cpu = make_evaluator(tiny_net(), "cpu")(obs, masks)
    evaluate = make_evaluator(tiny_net(), "cuda")
    for _ in range(2):  # the pinned buffer is reused
        logits, values = evaluate(obs, masks)
        assert logits.dtype == np.float32
        np.testing.assert_allclose(logits, logits_cpu, atol=1e-4)
        np.testing.assert_allclose(values, values_cpu, atol=1e-4)


@needs_cuda
@pytest.mark.parametrize("precision", ["fp16", "bf16"])
def test_mixed_precision_cuda_evaluators_return_float32(precision: str) -> None:
    obs, masks = observations()
    logits, values = make_evaluator(tiny_net(), "cuda", precision)(obs, masks)
    assert logits.dtype == values.dtype == np.float32 and np.isfinite(logits).all()
