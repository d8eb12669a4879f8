"""The network a search-guided run publishes: the moving average of the learner's weights,
which leaves the training itself as it is."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from patchwork_env.agents.az.net import AZNet, load_az_net
from patchwork_env.training.az import run_az
from patchwork_env.training.az.averaging import WeightAverage, decay_at
from patchwork_env.training.checkpoint import load_checkpoint
from tests.agents.test_az import tiny_options as tiny


def filled(value: float) -> AZNet:
    net = AZNet(hidden=4, layers=1, kind="mlp")
    with torch.no_grad():
        for p in net.parameters():
            p.fill_(value)
    return net


def weights(state: dict[str, torch.Tensor]) -> torch.Tensor:
    return torch.cat([v.flatten() for _, v in sorted(state.items())])


def test_the_first_iterations_keep_less_of_the_average() -> None:
    assert decay_at(0.9, 1) == pytest.approx(2 / 11)
    assert decay_at(0.9, 10) == pytest.approx(11 / 20)
    assert decay_at(0.9, 80) == pytest.approx(0.9)
    assert decay_at(0.9, 500) == 0.9


def test_the_average_moves_towards_the_learner_by_one_minus_the_decay() -> None:
    average = WeightAverage(filled(0.0), decay=0.9)
    average.update(filled(1.0), iteration=1)
    assert torch.allclose(weights(average.state_dict()), torch.tensor(9 / 11))
    average.update(filled(1.0), iteration=1000)
    assert torch.allclose(weights(average.state_dict()), torch.tensor(1 - 0.9 * 2 / 11))


def test_the_average_is_a_copy_the_learner_does_not_move() -> None:
    learner = filled(1.0)
    average = WeightAverage(learner, decay=0.5)
    with torch.no_grad():
        next(learner.parameters()).fill_(5.0)
    assert torch.all(weights(average.state_dict()) == 1.0)


@pytest.mark.parametrize("decay", [0.0, 1.0, -0.1])
def test_a_decay_outside_0_to_1_is_refused(decay: float) -> None:
    with pytest.raises(ValueError, match="decay"):
        WeightAverage(filled(0.0), decay=decay)


def test_a_run_publishes_the_average_and_trains_as_without_it(tmp_path: Path) -> None:
    averaged, plain = tmp_path / "averaged", tmp_path / "plain"
    run_az(tiny(averaged, iterations=2, average_decay=0.5), log=None)
    run_az(tiny(plain, iterations=2, average_decay=0.0), log=None)
    a, p = load_checkpoint(averaged / "checkpoint.pt"), load_checkpoint(plain / "checkpoint.pt")
    assert torch.equal(weights(a["learner"]["net"]), weights(p["learner"]["net"]))
    published = weights(load_az_net(averaged / "net.pt").state_dict())
    assert torch.equal(published, weights(a["average"]))
    assert not torch.equal(published, weights(a["learner"]["net"]))
    assert "average" not in p
    assert torch.equal(weights(load_az_net(plain / "net.pt").state_dict()),
                       weights(p["learner"]["net"]))


def test_a_resumed_run_publishes_what_a_run_never_stopped_does(tmp_path: Path) -> None:
    straight, stopped = tmp_path / "straight", tmp_path / "stopped"
    run_az(tiny(straight, iterations=2), log=None)
    run_az(tiny(stopped, iterations=1), log=None)
    run_az(tiny(stopped, iterations=2, resume=True), log=None)
    assert torch.equal(weights(load_az_net(straight / "net.pt").state_dict()),
                       weights(load_az_net(stopped / "net.pt").state_dict()))


def test_a_run_resumed_with_averaging_starts_its_average_from_the_learner(
        tmp_path: Path) -> None:
    folder = tmp_path / "run"
    run_az(tiny(folder, iterations=1, average_decay=0.0), log=None)
    first = weights(load_checkpoint(folder / "checkpoint.pt")["learner"]["net"])
    run_az(tiny(folder, iterations=2, resume=True, average_decay=0.9), log=None)
    second = load_checkpoint(folder / "checkpoint.pt")
    d = decay_at(0.9, 2)
    expected = d * first + (1 - d) * weights(second["learner"]["net"])
    assert torch.allclose(weights(second["average"]), expected, atol=1e-6)
    assert torch.equal(weights(load_az_net(folder / "net.pt").state_dict()),
                       weights(second["average"]))
