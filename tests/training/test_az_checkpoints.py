"""A search-guided run's checkpoint signed again with impossible contents is refused in one
line naming the checkpoint and what is wrong, before the resumed run does any work."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from patchwork_env import GameBatch
from patchwork_env.data.actions import N_ACTIONS
from patchwork_env.engine.kernels import STATE_DTYPE
from patchwork_env.training.az import run_az
from patchwork_env.training.checkpoint import CheckpointError, load_checkpoint, save_checkpoint
from tests.agents.test_az import tiny_options as tiny


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run folder after one iteration."""
    folder = tmp_path_factory.mktemp("az") / "run"
    run_az(tiny(folder), log=None)
    return folder


def states_of(saved: dict[str, Any]) -> np.ndarray:
    return saved["buffer"]["states"].numpy().view(STATE_DTYPE)


def set_states(saved: dict[str, Any], states: np.ndarray) -> None:
    saved["buffer"]["states"] = torch.from_numpy(states.view(np.uint8).copy())


def impossible_turn(saved: dict[str, Any]) -> None:
    states = states_of(saved).copy()
    states[0]["to_move"] = 7
    set_states(saved, states)


def too_many_buttons(saved: dict[str, Any]) -> None:
    states = states_of(saved).copy()
    states[3]["buttons"][0] = 30_000
    set_states(saved, states)


def illegal_action(saved: dict[str, Any]) -> None:
    states = states_of(saved)
    mask = GameBatch(states[:1].copy()).legal_mask()[0]
    actions = saved["buffer"]["actions"].clone()
    actions[0] = int(np.flatnonzero(~mask)[0])
    saved["buffer"]["actions"] = actions


def set_item(*keys: Any, value: Any) -> Callable[[dict[str, Any]], None]:
    """A change setting ``saved[k0][k1]...`` to ``value`` (a function of the old value if
    callable)."""
    def change(saved: dict[str, Any]) -> None:
        where = saved
        for key in keys[:-1]:
            where = where[key]
        where[keys[-1]] = value(where[keys[-1]]) if callable(value) else value
    return change


def first_param(saved: dict[str, Any]) -> str:
    return next(iter(saved["learner"]["net"]))


def nan_weight(saved: dict[str, Any]) -> None:
    saved["learner"]["net"][first_param(saved)][0, 0] = float("nan")


def other_shape(saved: dict[str, Any]) -> None:
    name = first_param(saved)
    saved["learner"]["net"][name] = torch.zeros(7, 3)


def nan_average(saved: dict[str, Any]) -> None:
    saved["average"][first_param(saved)][0, 0] = float("nan")


def average_of_other_shape(saved: dict[str, Any]) -> None:
    saved["average"][first_param(saved)] = torch.zeros(7, 3)


def nan_moment(saved: dict[str, Any]) -> None:
    saved["learner"]["optimizer"]["state"][0]["exp_avg_sq"][0] = float("nan")


def moment_shape(saved: dict[str, Any]) -> None:
    saved["learner"]["optimizer"]["state"][0]["exp_avg"] = torch.zeros(3)


def with_probs(change: Callable[[torch.Tensor], None]) -> Callable[[dict[str, Any]], None]:
    def apply(saved: dict[str, Any]) -> None:
        probs = saved["buffer"]["probs"].clone()
        change(probs)
        saved["buffer"]["probs"] = probs
    return apply


CASES = {
    "impossible turn": (impossible_turn, "state 0 is not one a game can reach"),
    "impossible buttons": (too_many_buttons, "state 3 is not one a game can reach"),
    "illegal action": (illegal_action, "sample 0 holds an action that is illegal"),
    "action out of range": (set_item("buffer", "actions", value=lambda a: torch.cat(
        [torch.tensor([N_ACTIONS + 9], dtype=a.dtype), a[1:]])), "actions must lie in 0..2025"),
    "NaN probability": (with_probs(lambda p: p.__setitem__(0, float("nan"))),
                        "probabilities are not all finite"),
    "negative probability": (with_probs(lambda p: p.__setitem__(0, -0.5)),
                             "probabilities are not all finite and non-negative"),
    "probabilities not summing to 1": (with_probs(lambda p: p.mul_(0.5)), "sum to"),
    "value out of range": (set_item("buffer", "values", value=lambda v: v + 3),
                           "value targets are not all in [-1, 1]"),
    "negative capacity": (set_item("buffer", "capacity", value=-5), "capacity"),
    "capacity of other options": (set_item("buffer", "capacity", value=7), "buffer_size"),
    "fewer values than states": (set_item("buffer", "values", value=lambda v: v[:-1]),
                                 "do not fit together"),
    "offsets past the targets": (set_item("buffer", "offsets", value=lambda o: o + 1),
                                 "offsets"),
    "probabilities as integers": (set_item("buffer", "probs", value=lambda p: p.long()),
                                  "probs must be a row of floats"),
    "states as floats": (set_item("buffer", "states", value=lambda s: s.float()),
                         "states must be a row of bytes"),
    "states not a tensor": (set_item("buffer", "states", value=[1, 2, 3]), "not a tensor"),
    "added fewer than held": (set_item("buffer", "added", value=1), "added"),
    "NaN weight": (nan_weight, "NaN or infinite weights"),
    "weights of another shape": (other_shape, "(7, 3) in the file"),
    "NaN weight of the average": (nan_average, "the average's weights are not all finite"),
    "average of another shape": (average_of_other_shape,
                                 "the average's weights do not fit the network"),
    "NaN optimiser moment": (nan_moment, "exp_avg_sq of parameter 0"),
    "optimiser moment of another shape": (moment_shape, "exp_avg of parameter 0 has shape (3,)"),
    "learning rate NaN": (set_item("learner", "optimizer", "param_groups", 0, "lr",
                                   value=float("nan")), "the optimiser's lr"),
    "negative step count": (set_item("learner", "steps", value=-3), "step count"),
    "negative iteration": (set_item("counters", "iteration", value=-1), "iteration"),
    "iteration not a number": (set_item("counters", "iteration", value="one"), "iteration"),
    "NaN time": (set_item("counters", "train_s", value=float("nan")), "train_s"),
    "counters not a dict": (set_item("counters", value=[1]), "counters"),
    "network of other options": (set_item("net_config", "net_kwargs", "hidden", value=10**9),
                                 "is not the one of its options"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_an_impossible_checkpoint_is_refused_naming_it_and_the_fault(
        trained: Path, tmp_path: Path, case: str) -> None:
    change, expected = CASES[case]
    folder = tmp_path / "run"
    shutil.copytree(trained, folder)
    path = folder / "checkpoint.pt"
    saved = load_checkpoint(path)
    saved.pop("format_version")
    change(saved)
    save_checkpoint(path, saved)  # signed again: the digest matches
    before = sorted(p.name for p in folder.iterdir())
    with pytest.raises(CheckpointError) as error:
        run_az(tiny(folder, iterations=2, resume=True), log=None)
    message = str(error.value)
    assert str(path) in message and expected in message and "\n" not in message, message
    assert sorted(p.name for p in folder.iterdir()) == before


def test_an_unchanged_checkpoint_signed_again_resumes(trained: Path, tmp_path: Path) -> None:
    folder = tmp_path / "run"
    shutil.copytree(trained, folder)
    path = folder / "checkpoint.pt"
    saved = load_checkpoint(path)
    saved.pop("format_version")
    save_checkpoint(path, saved)
    assert run_az(tiny(folder, iterations=2, resume=True), log=None)["iteration"] == 2
