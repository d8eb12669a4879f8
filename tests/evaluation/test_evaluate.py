"""evaluate.py end to end on tiny tournaments, and its refusal of bad input."""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import evaluate
from patchwork_env import Game
from patchwork_env.evaluation.tournament import make_tasks, round_robin
from tests import ROOT


def test_tiny_tournament_writes_its_files(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    assert evaluate.main(["random", "greedy", "mcts:20", "--games", "4", "--seed", "5",
                          "--jobs", "1", "--out", str(tmp_path)]) == 0
    printed = capsys.readouterr().out
    assert "random vs greedy" in printed and "Elo (random = 0)" in printed
    for name in ("results.json", "results.csv", "elo.png", "scores.png"):
        assert (tmp_path / name).stat().st_size > 0
    doc = json.loads((tmp_path / "results.json").read_text())
    assert doc["agents"] == ["random", "greedy", "mcts:20"]
    assert [(p["a"], p["b"]) for p in doc["pairings"]] == [
        ("random", "greedy"), ("random", "mcts:20"), ("greedy", "mcts:20")]
    for p in doc["pairings"]:
        assert p["games"] == 4 and p["wins_a"] + p["wins_b"] == 4
        assert p["ci_a"][0] <= p["win_rate_a"] <= p["ci_a"][1]
        assert {"mean_score_a", "mean_score_b", "mean_diff"} <= set(p)
    assert doc["elo"]["random"] == {"rating": 0.0, "ci": [0.0, 0.0]}
    assert set(doc["elo"]) == set(doc["agents"])
    with (tmp_path / "results.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 12
    for row in rows:  # every game replays from its seed and moves
        game = Game.new(int(row["seed"]))
        for move in row["moves"].split():
            game.step(int(move))
        assert game.scores() == (int(row["score0"]), int(row["score1"]))
        assert row["winner_agent"] == row[f"player{row['winner']}"]


def test_results_do_not_depend_on_the_number_of_processes() -> None:
    one = round_robin(["random", "greedy"], 8, seed=2, rules="default", jobs=1)
    two = round_robin(["random", "greedy"], 8, seed=2, rules="default", jobs=2)
    assert one == two


def test_pairings_share_their_setups_and_swap_seats() -> None:
    tasks = make_tasks(["random", "greedy", "mcts"], 8, seed=0, rules="default")
    by_pairing = {}
    for t in tasks:
        by_pairing.setdefault(t.pairing, []).extend(t.seeds)
    assert len(by_pairing) == 3
    assert by_pairing[0] == by_pairing[1] == by_pairing[2] and len(by_pairing[0]) == 4
    assert len({t.agent_seeds for t in tasks}) == len(tasks)


@pytest.mark.parametrize(("argv", "message"), [
    (["random", "chess-engine"], "unknown agent 'chess-engine'"),
    (["random", "mcts:lots"], "bad MCTS budget"),
    (["random", "ppo:/no/such/model.zip"], "no model file"),
    (["random", "human"], "human cannot play in a tournament"),
    (["random", "random"], "each agent may appear once"),
    (["random"], "at least two agents"),
    (["random", "greedy", "--games", "3"], "--games must be a positive even number"),
    (["random", "greedy", "--games", "0"], "--games must be a positive even number"),
    (["random", "greedy", "--games", "ten"], "invalid int value: 'ten'"),
    (["random", "greedy", "--jobs", "0"], "--jobs must be at least 1"),
    (["random", "greedy", "--rules", "house"], "unknown rules preset 'house'"),
    (["random", "greedy", "--colour"], "unrecognized arguments: --colour"),
])
def test_bad_input_stops_before_any_game(argv: list[str], message: str, tmp_path: Path,
                                         capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "out"
    with pytest.raises(SystemExit) as exit_info:
        evaluate.main([*argv, "--out", str(out)])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
    assert not (out / "results.json").exists()


@pytest.mark.parametrize(("name", "kind"), [("model.zip", "MaskablePPO checkpoint"),
                                            ("model.pt", "policy file")])
def test_corrupt_checkpoint_stops_before_any_game(tmp_path: Path, name: str, kind: str,
                                                  capsys: pytest.CaptureFixture) -> None:
    bad = tmp_path / name
    bad.write_text("garbage")
    with pytest.raises(SystemExit) as exit_info:
        evaluate.main(["random", f"ppo:{bad}", "--out", str(tmp_path / "out")])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("error: agent 'ppo:") and kind in err
    assert err.count("\n") == 1 and not (tmp_path / "out" / "results.json").exists()


def test_the_shipped_model_plays_a_tournament(tmp_path: Path) -> None:
    assert evaluate.main(["ppo", "ppo-sample", "--games", "2", "--seed", "3", "--jobs", "1",
                          "--out", str(tmp_path)]) == 0
    doc = json.loads((tmp_path / "results.json").read_text())
    assert doc["agents"] == ["ppo", "ppo-sample"] and doc["pairings"][0]["games"] == 2


def test_command_line_exit_status(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "evaluate.py", "random", "chess-engine", "--out",
                           str(tmp_path / "out")], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 2
    assert done.stderr == ("error: unknown agent 'chess-engine': choose from random, greedy, "
                           "mcts[:N|:Ss], ppo[:PATH], ppo-sample[:PATH], "
                           "az[:PATH][:SIMS], az-playouts[:PATH][:SIMS], az-policy[:PATH], "
                           "human\n")
    assert done.stdout == ""


def test_an_evaluation_refuses_a_folder_another_program_holds(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture
                                                              ) -> None:
    from patchwork_env.files.claim import claim

    out = tmp_path / "out"
    with claim(out), pytest.raises(SystemExit) as exit_info:
        evaluate.main(["random", "greedy", "--games", "2", "--jobs", "1", "--out", str(out),
                       "--overwrite"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert f"the folder {out} is in use by another program" in err and err.count("\n") == 1
    assert list(tmp_path.iterdir()) == []


def test_an_interrupted_tournament_leaves_no_folder(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(evaluate, "round_robin", interrupted)
    assert evaluate.main(["random", "greedy", "--games", "2", "--jobs", "1"]) == 130
    assert list(tmp_path.iterdir()) == []


def test_a_terminated_tournament_leaves_no_folder_and_ends_with_143(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def terminated(*args, **kwargs):
        os.kill(os.getpid(), signal.SIGTERM)  # as `kill PID` or a scheduler would
        time.sleep(5)

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(evaluate, "round_robin", terminated)
    assert evaluate.main(["random", "greedy", "--games", "2", "--jobs", "1"]) == 143
    assert list(tmp_path.iterdir()) == []
