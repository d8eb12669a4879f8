"""Hostile but realistic input to the search-guided trainer: options out of range, a bad
``--init`` network, an ``az`` budget past its cap, a damaged records file, a full disk and a
run stopped between its records and its checkpoint."""

from __future__ import annotations

import csv
import errno
import os
from pathlib import Path

import pytest
import torch

import train
from patchwork_env import agents
from patchwork_env.agents.az.agent import MAX_EVALUATIONS
from patchwork_env.agents.az.net import AZNet, load_az_net, save_az_net
from patchwork_env.agents.model_file import ModelFileError, write_policy_file
from patchwork_env.files.atomic import WriteError
from patchwork_env.training.az import AZOptions, AZRunError, run_az
from patchwork_env.training.az import trainer as az_trainer
from patchwork_env.training.az.limits import check_memory, memory_needs
from patchwork_env.training.checkpoint import load_checkpoint
from patchwork_env.training.checks import machine_threads
from patchwork_env.training.metrics import MetricsError
from tests.agents.test_az import tiny_options as tiny

AZ = ["--algo", "az", "--iterations", "1", "--games-per-iteration", "2", "--parallel-games",
      "2", "--simulations", "2", "--max-considered", "2", "--batch-size", "8", "--hidden",
      "16", "--layers", "1", "--eval-every", "0", "--net", "mlp", "--teacher", "", "--workers",
      "1"]


def one_line(err: str, *names: str) -> str:
    """All of stderr: one line, no traceback, naming ``names``."""
    assert err.count("\n") == 1 and "Traceback" not in err, err
    for name in names:
        assert name in err, (name, err)
    return err


@pytest.mark.parametrize(("changes", "flag"), [
    ({"value_weight": float("nan")}, "--value-weight"),
    ({"gumbel_scale": float("nan")}, "--gumbel-scale"),
    ({"c_visit": float("-inf")}, "--c-visit"),
    ({"learning_rate": float("inf")}, "--learning-rate"),
    ({"weight_decay": -1.0}, "--weight-decay"),
    ({"average_decay": 1.0}, "--average-decay"),
    ({"average_decay": float("nan")}, "--average-decay"),
    ({"value_weight": -0.5}, "--value-weight"),
    ({"parallel_games": 100_000_000_000}, "--parallel-games"),
    ({"games_per_iteration": 100_000_000_000}, "--games-per-iteration"),
    ({"eval_games": 2_000_000, "eval_every": 1}, "--eval-games"),
    ({"eval_evaluations": MAX_EVALUATIONS + 1, "eval_every": 1}, "--eval-evaluations"),
    ({"simulations": 10**9}, "--simulations"),
    ({"top_k": 5000}, "--top-k"),
    ({"layers": 10**6}, "--layers"),
    ({"playouts": 10**9}, "--playouts"),
    ({"sample_reuse": 1e9}, "--sample-reuse"),
    ({"seed": 99999999999999999999}, "--seed"),
    ({"seed": -1}, "--seed"),
    ({"threads": 100_000}, "--threads"),
    ({"workers": 100_000}, "--workers"),
    ({"iterations": 10**12}, "--iterations"),
    ({"lr_drops": "5,99999999999"}, "--lr-drops"),
    ({"teacher": "human"}, "--teacher"),
    ({"eval_opponents": "greedy,human", "eval_every": 1}, "--eval-opponents"),
    ({"value_weight": True}, "--value-weight"),
])
def test_an_option_out_of_range_is_refused_by_its_flag_before_the_folder(
        tmp_path: Path, changes: dict, flag: str) -> None:
    with pytest.raises(AZRunError, match=flag) as error:
        run_az(tiny(tmp_path / "run", **changes), log=None)
    assert "\n" not in str(error.value)
    assert not (tmp_path / "run").exists()


def test_the_threads_are_bounded_by_the_machine(tmp_path: Path) -> None:
    limit = machine_threads()
    assert limit >= min(os.cpu_count() or 1, 2)
    with pytest.raises(AZRunError, match=f"--threads must be at most {limit:,}"):
        run_az(tiny(tmp_path / "run", threads=limit + 1), log=None)


def test_options_whose_arrays_do_not_fit_are_refused_naming_the_largest(tmp_path) -> None:
    with pytest.raises(AZRunError, match=r"memory.*replay buffer \(--buffer-size\)"):
        run_az(tiny(tmp_path / "run", buffer_size=10**13), log=None)
    with pytest.raises(AZRunError, match=r"search trees \(--parallel-games"):
        run_az(tiny(tmp_path / "run", parallel_games=1_000_000, simulations=50_000), log=None)
    with pytest.raises(AZRunError, match=r"network \(--hidden"):
        run_az(tiny(tmp_path / "run", hidden=65_536, layers=64), log=None)
    assert not (tmp_path / "run").exists()


def test_the_default_options_need_little_memory() -> None:
    needs = memory_needs(AZOptions(), 1189)
    assert 10**7 < sum(size for size, _ in needs.values()) < 2 * 10**9
    check_memory(AZOptions(), 1189, available=4 * 10**9)
    with pytest.raises(ValueError, match=r"this machine has 0\.1 GB"):
        check_memory(AZOptions(buffer_size=10**6), 1189, available=10**8)


@pytest.mark.parametrize(("args", "flag"), [
    (["--value-weight", "nan"], "--value-weight"),
    (["--c-visit=-inf"], "--c-visit"),
    (["--seed", "99999999999999999999"], "--seed"),
    (["--threads", "100000"], "--threads"),
    (["--parallel-games", "100000000000"], "--parallel-games"),
    (["--eval-games", "2000000", "--eval-every", "1"], "--eval-games"),
])
def test_train_py_refuses_a_bad_az_option_in_one_line_and_leaves_no_folder(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str],
        flag: str) -> None:
    assert train.main([*AZ, *args, "--run-dir", str(tmp_path / "run")]) == 2
    one_line(capsys.readouterr().err, "train.py: error:", flag)
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize(("args", "flag"), [
    (["--threads", "100000"], "--threads"),
    (["--seed", "99999999999999999999"], "--seed"),
])
def test_ppo_bounds_its_threads_and_seed_through_the_shared_checks(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str],
        flag: str) -> None:
    with pytest.raises(SystemExit) as exit_:
        train.main(["--algo", "ppo", *args, "--run-dir", str(tmp_path / "run")])
    assert exit_.value.code == 2
    one_line(capsys.readouterr().err, "train.py: error:", flag)
    assert not (tmp_path / "run").exists()


def test_a_missing_or_damaged_init_is_one_line_naming_the_file(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "missing.pt"
    assert train.main([*AZ, "--init", str(missing), "--run-dir", str(tmp_path / "a")]) == 2
    one_line(capsys.readouterr().err, "--init", str(missing))
    damaged = tmp_path / "damaged.pt"
    damaged.write_bytes(b"PK\x03\x04 not a network at all")
    assert train.main([*AZ, "--init", str(damaged), "--run-dir", str(tmp_path / "b")]) == 2
    one_line(capsys.readouterr().err, "--init", str(damaged))
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


def test_an_init_network_of_another_shape_names_a_tensor_and_both_shapes(
        tmp_path: Path) -> None:
    other = tmp_path / "other.pt"
    save_az_net(AZNet(kind="mlp", hidden=8, layers=1), other)
    with pytest.raises(AZRunError) as error:
        run_az(tiny(tmp_path / "run", init=str(other)), log=None)  # hidden 32
    message = str(error.value)
    assert str(other) in message and "--hidden 32" in message and "\n" not in message
    assert "trunk.0.weight is (8, 1189) in the file, (32, 1189) for the config" in message
    assert not (tmp_path / "run").exists()


def test_a_network_file_whose_weights_do_not_fit_its_config_says_where(tmp_path) -> None:
    path = tmp_path / "net.pt"
    config = AZNet(kind="mlp", hidden=64, layers=1).config()
    write_policy_file(path, config, AZNet(kind="mlp", hidden=32, layers=1).state_dict())
    with pytest.raises(ModelFileError) as error:
        load_az_net(path)
    message = str(error.value)
    assert str(path) in message and "do not match the config" in message
    assert "(32, 1189) in the file, (64, 1189) for the config" in message
    assert "Error(s)" not in message and "\n" not in message


@pytest.mark.parametrize("spec", ["az:99999999999999999999", f"az:{MAX_EVALUATIONS + 1}",
                                  "az-playouts:models/az.pt:99999999999999999999"])
def test_an_az_budget_past_its_cap_is_refused_naming_the_spec(spec: str) -> None:
    with pytest.raises(agents.AgentSpecError) as error:
        agents.make(spec)
    assert spec in str(error.value) and f"{MAX_EVALUATIONS:,}" in str(error.value)
    assert "\n" not in str(error.value)


# ----- records and checkpoints -----------------------------------------------------------

def metrics(folder: Path) -> list[str]:
    with open(folder / "metrics.csv", newline="") as f:
        return [r["iteration"] for r in csv.DictReader(f)]


def test_a_run_stopped_between_its_row_and_its_checkpoint_records_each_iteration_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run = tmp_path / "run"
    real_save = az_trainer.AZRun.save

    def stopping(self: az_trainer.AZRun) -> None:
        if self.iteration == 2:
            raise KeyboardInterrupt
        real_save(self)

    monkeypatch.setattr(az_trainer.AZRun, "save", stopping)
    with pytest.raises(KeyboardInterrupt):
        run_az(tiny(run, iterations=3), log=None)
    monkeypatch.undo()
    assert metrics(run) == ["1", "2"]  # the row is written first ...
    assert load_checkpoint(run / "checkpoint.pt")["counters"]["iteration"] == 1  # ... then this
    row = run_az(tiny(run, iterations=3, resume=True), log=None)
    assert row["iteration"] == 3 and metrics(run) == ["1", "2", "3"]


def test_a_resumed_run_whose_records_lost_their_header_is_refused_naming_them(
        tmp_path: Path) -> None:
    run = tmp_path / "run"
    run_az(tiny(run, iterations=2), log=None)
    lines = (run / "metrics.csv").read_text().splitlines(keepends=True)
    (run / "metrics.csv").write_text("".join(lines[1:]))
    before = (run / "checkpoint.pt").read_bytes()
    with pytest.raises(MetricsError, match=r"metrics\.csv") as error:
        run_az(tiny(run, iterations=3, resume=True), log=None)
    assert "\n" not in str(error.value)
    assert (run / "checkpoint.pt").read_bytes() == before


def test_a_full_disk_ends_the_run_in_one_line_and_it_resumes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "run"
    assert train.main([*AZ, "--run-dir", str(run)]) == 0
    real = az_trainer.save_checkpoint

    def full(path: Path, state: dict) -> None:
        raise WriteError(Path(path), OSError(errno.ENOSPC, os.strerror(errno.ENOSPC)))

    monkeypatch.setattr(az_trainer, "save_checkpoint", full)
    capsys.readouterr()
    assert train.main([*AZ, "--iterations", "2", "--resume", "--run-dir", str(run)]) == 1
    err = capsys.readouterr().err
    line = err.splitlines()[-1]
    assert "Traceback" not in err and "No space left on device" in line
    assert line.endswith("continue from the last checkpoint with --resume")
    assert load_checkpoint(run / "checkpoint.pt")["counters"]["iteration"] == 1
    monkeypatch.setattr(az_trainer, "save_checkpoint", real)
    assert train.main([*AZ, "--iterations", "2", "--resume", "--run-dir", str(run)]) == 0
    assert metrics(run) == ["1", "2"]


def test_overwrite_keeps_the_old_run_until_the_new_one_saves(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run = tmp_path / "run"
    run_az(tiny(run, iterations=2), log=None)
    (run / "notes.txt").write_text("mine")
    old = {name: (run / name).read_bytes() for name in ("checkpoint.pt", "net.pt")}

    def interrupted(self: az_trainer.AZRun, progress: bool) -> dict:
        raise KeyboardInterrupt

    monkeypatch.setattr(az_trainer.AZRun, "warm_start", interrupted)
    with pytest.raises(KeyboardInterrupt):
        run_az(tiny(run, overwrite=True, teacher="greedy", teacher_positions=50), log=None)
    assert {name: (run / name).read_bytes() for name in old} == old
    monkeypatch.undo()
    run_az(tiny(run, overwrite=True, seed=5), log=None)
    assert metrics(run) == ["1"] and (run / "notes.txt").read_text() == "mine"
    assert load_checkpoint(run / "checkpoint.pt")["options"]["seed"] == 5


def test_a_diverging_network_is_neither_saved_nor_recorded(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run = tmp_path / "run"
    run_az(tiny(run), log=None)
    saved = (run / "net.pt").read_bytes()
    real_step = az_trainer.Learner.step

    def poisoned(self: az_trainer.Learner, batch) -> dict:
        losses = real_step(self, batch)
        with torch.no_grad():
            next(self.net.parameters()).fill_(float("nan"))
        return losses

    monkeypatch.setattr(az_trainer.Learner, "step", poisoned)
    with pytest.raises(AZRunError, match=r"iteration 2 diverged.*iteration 1"):
        run_az(tiny(run, iterations=2, resume=True), log=None)
    assert (run / "net.pt").read_bytes() == saved and metrics(run) == ["1"]
