"""What a hostile but realistic user does to the files of the programs: fill the disk during
a checkpoint or a tournament's results, damage a run's records, point a trainer at a folder
of another run. Every refusal is one line naming what was wrong; nothing a user made is
lost or half-written, and no temporary is left behind."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

import evaluate
import train
from patchwork_env.files.atomic import WriteError
from patchwork_env.files.claim import claim
from patchwork_env.training.checkpoint import load_checkpoint, save_checkpoint
from patchwork_env.training.metrics import (
    CSV_FIELDS,
    MetricsCsv,
    MetricsError,
    MetricsLog,
    read_metrics,
)
from tests.files.faults import fill_disk_on, python_running
from tests.programs.program_runs import PPO, TINY, snapshot

GAMES = ["random", "greedy", "--games", "2", "--jobs", "1"]
RESULTS = ["elo.png", "results.csv", "results.json", "scores.png"]


def everything(folder: Path) -> list[str]:
    """Every entry under ``folder``, hidden ones too."""
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def one_line(err: str, *names: str) -> str:
    """The error of a refusal before any work: all of stderr, one line naming ``names``."""
    assert err.endswith("\n") and err.count("\n") == 1, err
    return last_line(err, *names)


def last_line(err: str, *names: str) -> str:
    """The error that ended a program: the last line of stderr (above it, what the program
    reported while it worked), naming ``names``; no traceback."""
    assert "Traceback" not in err, err
    line = err.splitlines()[-1]
    for name in names:
        assert name in line, (name, line)
    return line


# ----- a full disk -------------------------------------------------------------------------

def test_a_checkpoint_on_a_full_disk_keeps_the_earlier_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "checkpoint.pt"
    save_checkpoint(path, {"steps": 1})
    fill_disk_on(monkeypatch, "checkpoint.pt")
    with pytest.raises(WriteError) as error:
        save_checkpoint(path, {"steps": 2})
    monkeypatch.undo()
    assert str(error.value) == f"cannot write {path}: No space left on device"
    assert load_checkpoint(path)["steps"] == 1
    assert everything(tmp_path) == ["checkpoint.pt"]


def test_a_training_run_whose_disk_fills_ends_in_one_line_and_resumes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    from patchwork_env.training.ppo import run as ppo_run

    saves: list[int] = []
    real_save = ppo_run.save_checkpoint

    def save(path: Path, state: dict[str, Any]) -> None:
        saves.append(state["steps"])
        if len(saves) == 3:  # the warm start's and the first rollout's are saved
            fill_disk_on(monkeypatch, "checkpoint.pt")
        real_save(path, state)

    monkeypatch.setattr(ppo_run, "save_checkpoint", save)
    folder = tmp_path / "run"
    argv = [*PPO, *TINY, "--no-progress", "--no-plot", "--run-dir", str(folder)]
    assert train.main([*argv, "--total-steps", "768"]) == 1
    monkeypatch.undo()
    err = last_line(capsys.readouterr().err, f"cannot write {folder / 'checkpoint.pt'}",
                    "No space left on device", f"--resume {folder}")
    assert err.startswith("train.py: error:")
    assert saves == [0, 256, 512]
    assert load_checkpoint(folder / "checkpoint.pt")["steps"] == 256
    assert not [n for n in everything(folder) if n.startswith(".")]
    assert [r["steps"] for r in MetricsCsv.read(folder / "metrics.csv")] == ["0", "256", "512"]

    # the row of step 512 was written, its checkpoint was not: the resumed run plays it again
    assert train.main(["--algo", "ppo", "--resume", str(folder), "--total-steps", "768",
                       "--no-progress", "--no-plot"]) == 0
    assert [r["steps"] for r in MetricsCsv.read(folder / "metrics.csv")] == [
        "0", "256", "512", "768"]


@pytest.mark.parametrize("kill", ["before the first row", "before the second checkpoint"])
def test_a_killed_run_records_each_evaluation_once_on_resuming(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        kill: str) -> None:
    from patchwork_env.training.ppo.callback import Trainer
    from patchwork_env.training.ppo.run import Run

    calls: list[str] = []

    def killer(name: str, real: Any, at: int) -> Any:
        def call(*args: Any) -> Any:
            calls.append(name)
            if calls.count(name) == at:
                raise KeyboardInterrupt
            return real(*args)
        return call

    if kill == "before the first row":  # right after the warm start's checkpoint
        monkeypatch.setattr(Trainer, "evaluate", killer("evaluate", Trainer.evaluate, 1))
    else:  # the rows of steps 0 and 256 are written, the checkpoint of 256 is not
        monkeypatch.setattr(Run, "save", killer("save", Run.save, 2))
    folder = tmp_path / "run"
    argv = [*PPO, *TINY, "--no-progress", "--no-plot"]
    assert train.main([*argv, "--total-steps", "256", "--run-dir", str(folder)]) == 130
    monkeypatch.undo()
    assert load_checkpoint(folder / "checkpoint.pt")["steps"] == 0
    assert not [n for n in everything(folder) if n.startswith(".")]
    capsys.readouterr()
    assert train.main(["--algo", "ppo", "--resume", str(folder), "--total-steps", "256",
                       "--no-progress", "--no-plot"]) == 0
    assert [r["steps"] for r in MetricsCsv.read(folder / "metrics.csv")] == ["0", "256"]


@pytest.mark.parametrize("picture", ["elo.png", "scores.png"])
def test_a_tournament_whose_disk_fills_leaves_no_folder_behind(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        picture: str) -> None:
    fill_disk_on(monkeypatch, picture)
    out = tmp_path / "new" / "results"
    assert evaluate.main([*GAMES, "--out", str(out)]) == 1
    captured = capsys.readouterr()
    last_line(captured.err, f"cannot write {out / picture}: No space left on device")
    assert "results written" not in captured.out
    assert list(tmp_path.iterdir()) == []  # the folders the run created are gone


def test_a_tournament_whose_disk_fills_keeps_the_earlier_results_whole(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "results"
    assert evaluate.main([*GAMES, "--seed", "1", "--out", str(out)]) == 0
    (out / "mine.txt").write_text("the user's")
    before = snapshot(out)
    capsys.readouterr()
    fill_disk_on(monkeypatch, "scores.png")
    assert evaluate.main([*GAMES, "--seed", "2", "--out", str(out), "--overwrite"]) == 1
    last_line(capsys.readouterr().err, "scores.png: No space left on device")
    assert snapshot(out) == before  # the earlier tournament's four files, untouched
    assert everything(out) == sorted([*RESULTS, "mine.txt"])


def test_evaluate_as_a_program_on_a_full_disk(tmp_path: Path) -> None:
    fault = """
        import builtins
        from tests.files.faults import filling_open
        builtins.open = filling_open(builtins.open, "results.csv")
    """
    done = subprocess.run([*python_running("evaluate.py", fault), *GAMES, "--out", "res"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 1, done.stderr[-2000:]
    err = done.stderr.splitlines()[-1]  # above it: the progress bar
    assert err == f"evaluate.py: error: cannot write {Path('res') / 'results.csv'}: No space " \
                  "left on device: no results written"
    assert "Traceback" not in done.stderr
    assert list(tmp_path.iterdir()) == []


# ----- damaged records ---------------------------------------------------------------------

HEADER = ",".join(CSV_FIELDS)
ROW = ",".join(["256"] + ["0.5"] * (len(CSV_FIELDS) - 1))


@pytest.mark.parametrize(("content", "message"), [
    (f"{ROW}\n{ROW}\n".encode(), "does not have the columns of this run's metrics"),
    (b"steps,wins\n256,0.5\n", "does not have the columns of this run's metrics"),
    (f"{HEADER}\n{ROW}\n".encode() + b"\xff\xfe\x00garbage\n", "is not UTF-8 text"),
    (f"{HEADER}\n{ROW}\n256,0.5\n".encode(), "line 3: 2 values for 14 columns"),
    (f"{HEADER}\n{ROW.replace('256', 'many', 1)}\n".encode(), "line 2: steps is 'many'"),
    (f'{HEADER}\n"256,0.5\n'.encode(), "line 2: 1 values for 14 columns"),
])
def test_damaged_records_are_refused_in_one_line_naming_the_file(
        tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "metrics.csv"
    path.write_bytes(content)
    with pytest.raises(MetricsError) as error:
        MetricsCsv(path, 512)
    assert message in str(error.value) and str(path) in str(error.value)
    assert "\n" not in str(error.value)
    assert path.read_bytes() == content  # refused, not rewritten


def test_records_keep_the_rows_their_checkpoint_counts(tmp_path: Path) -> None:
    path = tmp_path / "metrics.csv"
    log = MetricsLog(path, ["iteration", "loss"], None, number_format=".6g")
    for i in (1, 2, 3):
        log.append({"iteration": i, "loss": 1 / i, "ignored": "x"})
    assert read_metrics(path) == [{"iteration": "1", "loss": "1"},
                                  {"iteration": "2", "loss": "0.5"},
                                  {"iteration": "3", "loss": "0.333333"}]
    resumed = MetricsLog(path, ["iteration", "loss"], 2)
    assert [r["iteration"] for r in read_metrics(path)] == ["1", "2"] == [
        r["iteration"] for r in resumed.rows]
    assert MetricsLog(tmp_path / "none.csv", ["iteration"], 5).rows == []
    assert read_metrics(tmp_path / "none.csv") == []
    assert everything(tmp_path) == ["metrics.csv", "none.csv"]
    with pytest.raises(MetricsError, match="cannot read"):
        read_metrics(tmp_path / "absent.csv")


def test_a_run_that_records_other_columns_keeps_the_ones_both_have(tmp_path: Path) -> None:
    path = tmp_path / "metrics.csv"
    log = MetricsLog(path, ["iteration", "loss", "vs_greedy"], None)
    log.append({"iteration": 1, "loss": 0.5, "vs_greedy": 0.25})
    with pytest.raises(MetricsError, match="does not have the columns"):
        MetricsLog(path, ["iteration", "loss", "vs_mcts"], 1)
    resumed = MetricsLog(path, ["iteration", "loss", "vs_mcts"], 1, other_columns=True)
    assert resumed.rows == read_metrics(path) == [
        {"iteration": "1", "loss": "0.5000", "vs_mcts": ""}]
    path.write_text("1,0.5\n2,0.25\n")  # its header lost
    with pytest.raises(MetricsError, match=r"metrics\.csv is not a metrics file: its first line "
                                           "names no columns"):
        MetricsLog(path, ["iteration", "loss"], 1, other_columns=True)
    assert path.read_text() == "1,0.5\n2,0.25\n"


def test_a_resumed_run_refuses_records_without_their_header(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "run"
    argv = [*PPO, *TINY, "--no-progress", "--no-plot"]
    assert train.main([*argv, "--total-steps", "256", "--run-dir", str(folder)]) == 0
    metrics = folder / "metrics.csv"
    metrics.write_text("".join(metrics.read_text().splitlines(keepends=True)[1:]))
    before = snapshot(folder)
    capsys.readouterr()
    assert train.main(["--algo", "ppo", "--resume", str(folder), "--total-steps", "512",
                       "--no-progress"]) == 2
    one_line(capsys.readouterr().err, "train.py: error:", str(metrics))
    assert snapshot(folder) == before


# ----- folders of another run ----------------------------------------------------------------

def another_run(folder: Path) -> dict[str, bytes]:
    """A run of the search-guided trainer without its checkpoint, and a file of the user's."""
    folder.mkdir(parents=True)
    (folder / "net.pt").write_bytes(b"a network")
    (folder / "metrics.csv").write_text("iteration\n1\n")
    (folder / "notes.txt").write_text("mine")
    return snapshot(folder)


def test_ppo_refuses_a_folder_with_a_network_and_records_but_no_checkpoint(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = another_run(tmp_path / "run")
    assert train.main([*PPO, *TINY, "--run-dir", str(tmp_path / "run")]) == 2
    one_line(capsys.readouterr().err, "already holds a training run", "net.pt", "metrics.csv",
             "--overwrite")
    assert snapshot(tmp_path / "run") == before


def test_the_search_guided_trainer_refuses_a_folder_with_a_network_and_records(
        tmp_path: Path) -> None:
    from patchwork_env.training.az import AZRunError, run_az
    from tests.agents.test_az import tiny_options

    before = another_run(tmp_path / "run")
    with pytest.raises(AZRunError, match=r"net\.pt") as error:
        run_az(tiny_options(tmp_path / "run"), log=None)
    assert "metrics.csv" in str(error.value) and "\n" not in str(error.value)
    assert snapshot(tmp_path / "run") == before


def test_a_tournament_refuses_a_folder_in_use_and_one_with_results(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "results"
    with claim(out):
        with pytest.raises(SystemExit) as exit_:
            evaluate.main([*GAMES, "--out", str(out), "--overwrite"])
        assert exit_.value.code == 2
        one_line(capsys.readouterr().err, f"the folder {out} is in use")
    assert not out.exists()
    assert evaluate.main([*GAMES, "--out", str(out)]) == 0
    before = snapshot(out)
    capsys.readouterr()
    with pytest.raises(SystemExit):
        evaluate.main([*GAMES, "--seed", "3", "--out", str(out)])
    one_line(capsys.readouterr().err, f"{out} already holds results", "--overwrite")
    assert snapshot(out) == before
    assert sorted(os.listdir(out)) == RESULTS
