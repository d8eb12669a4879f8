"""The az network's resnet body, and the shaped body whose placement head it shares."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

import train
from patchwork_env.agents.az.net import MASKED_LOGIT, AZNet, load_az_net, save_az_net
from patchwork_env.agents.shipped import AZ_MODEL
from patchwork_env.training.az.limits import check_memory
from patchwork_env.training.az.options import AZOptions
from patchwork_env.views.observation import QUILTS_AT, observe
from tests import ROOT
from tests.agents.test_az import midgame_batch

FIXTURE = ROOT / "tests" / "data" / "shaped_logits.npz"
"""Observations and what the ``shaped`` body computed of them before its placement head
was shared with the resnet body: a fresh network (seed 7, hidden 24, layers 1, maps 3) and
the shipped models/az.pt."""


def small_resnet(seed: int = 0) -> AZNet:
    torch.manual_seed(seed)
    return AZNet(kind="resnet", hidden=16, channels=8, blocks=2, maps=4).eval()


def observations(n: int = 6, seed: int = 3) -> tuple[torch.Tensor, torch.Tensor]:
    batch = midgame_batch(n, seed)
    return (torch.from_numpy(observe(batch.state, batch.rules)),
            torch.from_numpy(batch.legal_mask()))


def test_resnet_gives_a_logit_per_action_and_a_value_in_range() -> None:
    obs, _ = observations()
    logits, value = small_resnet()(obs)
    assert logits.shape == (len(obs), 2026) and value.shape == (len(obs),)
    assert torch.isfinite(logits).all() and (value.abs() <= 1).all()


def test_resnet_masks_illegal_actions() -> None:
    obs, mask = observations()
    logits, _ = small_resnet()(obs, mask)
    assert (logits[~mask] == MASKED_LOGIT).all() and (logits[mask] > MASKED_LOGIT).all()


def test_forward_is_the_first_two_of_the_outputs() -> None:
    obs, mask = observations()
    net = small_resnet()
    out = net.outputs(obs, mask)
    logits, value = net(obs, mask)
    assert torch.equal(out.logits, logits) and torch.equal(out.value, value) and out.aux == {}


def test_resnet_placements_see_the_opponents_quilt_through_the_trunk() -> None:
    obs, _ = observations()
    net = small_resnet()
    other = obs.clone()
    other[:, QUILTS_AT + 81 : QUILTS_AT + 162] = 1 - other[:, QUILTS_AT + 81 : QUILTS_AT + 162]
    with torch.no_grad():
        for layer in (net.policy_head.slot_weights, net.policy_head.slot_bias):
            layer.weight.normal_()
    assert not torch.allclose(net(obs)[0][:, :1944], net(other)[0][:, :1944])


def test_resnet_file_round_trip_keeps_weights_and_batch_statistics(tmp_path: Path) -> None:
    obs, _ = observations()
    net = small_resnet().train()
    net(obs)  # moves BatchNorm's running statistics away from their start
    net.eval()
    save_az_net(net, tmp_path / "net.pt")
    loaded = load_az_net(tmp_path / "net.pt")
    assert loaded.config()["net"] == "az-resnet" and not loaded.training
    assert loaded.config() == net.config()
    with torch.no_grad():
        assert torch.equal(loaded(obs)[0], net(obs)[0]) and torch.equal(loaded(obs)[1],
                                                                          net(obs)[1])


def test_the_shaped_body_computes_what_it_did_before_the_resnet_shared_its_head() -> None:
    saved = np.load(FIXTURE)
    obs = torch.from_numpy(saved["observations"])
    torch.manual_seed(7)
    fresh = AZNet(kind="shaped", hidden=24, layers=1, maps=3).eval()
    shipped = load_az_net(AZ_MODEL)
    with torch.no_grad():
        for net, name in ((fresh, "fresh"), (shipped, "shipped")):
            logits, values = net(obs)
            assert list(net.state_dict()) == list(saved[f"{name}_keys"])
            np.testing.assert_allclose(logits.numpy(), saved[f"{name}_logits"], atol=1e-5)
            np.testing.assert_allclose(values.numpy(), saved[f"{name}_values"], atol=1e-6)


def test_train_py_trains_a_resnet(tmp_path: Path) -> None:
    run = tmp_path / "run"
    tiny = ["--algo", "az", "--net", "resnet", "--blocks", "1", "--channels", "8",
            "--hidden", "16", "--iterations", "1", "--games-per-iteration", "2",
            "--parallel-games", "2", "--simulations", "2", "--max-considered", "2",
            "--batch-size", "8", "--eval-every", "0", "--teacher", "", "--workers", "1",
            "--run-dir", str(run)]
    assert train.main(tiny) == 0
    net = load_az_net(run / "net.pt")
    assert net.config()["net_kwargs"] == {"hidden": 16, "channels": 8, "blocks": 1, "maps": 16}


def test_train_py_refuses_zero_blocks_in_one_line(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    assert train.main(["--net", "resnet", "--blocks", "0", "--run-dir", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err.strip()
    assert "--blocks" in err and "\n" not in err and not (tmp_path / "r").exists()


def test_the_memory_check_counts_the_resnet_blocks_and_channels() -> None:
    opts = AZOptions(net="resnet", blocks=200, channels=4_000)
    with pytest.raises(ValueError, match=r"network \(--hidden, --blocks, --channels"):
        check_memory(opts, 1189, available=64 * 10**9)
