"""A reader that closes a program's output early (``evaluate.py | head -1``): the program
ends quietly with status 141, after writing its results, with no traceback."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from patchwork_env.files.stdout import CLOSED_STDOUT_STATUS, ends_quietly_when_stdout_closes
from tests.files.faults import python_running
from tests.programs.program_runs import PPO, ROOT, TINY

SLOW_GAMES = """
import time
import patchwork_env.evaluation.tournament as tournament
real_round_robin = tournament.round_robin
def round_robin(*args, **kwargs):
    time.sleep(1.0)  # the reader is gone before the games end
    return real_round_robin(*args, **kwargs)
tournament.round_robin = round_robin
"""


def test_evaluate_writes_its_results_then_ends_quietly_when_head_has_read(
        tmp_path: Path) -> None:
    args = ["random", "greedy", "--games", "2", "--jobs", "1", "--out", "res"]
    proc = subprocess.Popen([*python_running("evaluate.py", SLOW_GAMES), *args], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    first = proc.stdout.readline()  # head -1
    proc.stdout.close()
    _, err = proc.communicate(timeout=300)
    assert first.startswith("2 agents, 1 pairings x 2 games")
    assert proc.returncode == CLOSED_STDOUT_STATUS, err[-2000:]
    assert "Traceback" not in err and "Error" not in err, err[-2000:]
    assert sorted(p.name for p in (tmp_path / "res").iterdir()) == [
        "elo.png", "results.csv", "results.json", "scores.png"]
    doc = json.loads((tmp_path / "res" / "results.json").read_text())
    assert doc["pairings"][0]["games"] == 2


@pytest.mark.parametrize("argv", [["evaluate.py", "--help"], ["train.py", "--help"],
                                  ["train.py", "--algo", "ppo", "--help"]])
def test_help_into_a_closed_pipe_is_quiet(tmp_path: Path, argv: list[str]) -> None:
    proc = subprocess.Popen([sys.executable, str(ROOT / argv[0]), *argv[1:]], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    proc.stdout.close()  # the only reader: gone before the program has started
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0  # argparse lets the help go unread, as a finished --help
    assert err == ""


def test_a_game_whose_screen_goes_away_ends_quietly(tmp_path: Path) -> None:
    proc = subprocess.Popen([sys.executable, "-m", "patchwork_env.cli.play", "--opponent",
                             "random", "--seed", "3", "--no-color", "--layout", "compact"],
                            cwd=tmp_path, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdin is not None
    assert proc.stdout.readline()
    proc.stdout.close()
    proc.stdin.write("moves\n")  # the game answers on the closed screen
    proc.stdin.flush()
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == CLOSED_STDOUT_STATUS, err[-2000:]
    assert err == ""


def test_a_broken_pipe_that_is_not_stdout_is_not_swallowed() -> None:
    @ends_quietly_when_stdout_closes
    def main() -> int:
        raise BrokenPipeError("a worker's pipe")

    with pytest.raises(BrokenPipeError, match="a worker's pipe"):
        main()


def test_a_training_run_whose_output_goes_away_keeps_what_it_saved(tmp_path: Path) -> None:
    proc = subprocess.Popen([sys.executable, str(ROOT / "train.py"), *PPO, *TINY,
                             "--total-steps", "256", "--no-plot", "--run-dir", "run"],
                            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    assert proc.stdout is not None
    proc.stdout.close()
    _, err = proc.communicate(timeout=600)
    assert proc.returncode == CLOSED_STDOUT_STATUS, err[-2000:]
    assert "Traceback" not in err and "Error" not in err, err[-2000:]
    for name in ("checkpoint.pt", "final.pt", "final.zip", "metrics.csv"):
        assert (tmp_path / "run" / name).is_file(), name
