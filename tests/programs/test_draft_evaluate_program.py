"""evaluate.py --game draft as a user meets it: run as a program in a fresh folder."""

from __future__ import annotations

import json
from pathlib import Path

from tests.programs.program_runs import one_line_error, run


def test_a_draft_tournament_runs_as_a_program(tmp_path: Path) -> None:
    done = run("evaluate.py", "--game", "draft", "random", "greedy", "--games", "2", "--jobs",
               "1", "--out", "res", cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert sorted(p.name for p in (tmp_path / "res").iterdir()) == [
        "elo.png", "results.csv", "results.json", "scores.png"]
    assert json.loads((tmp_path / "res" / "results.json").read_text())["settings"]["game"] \
        == "draft"


def test_an_agent_of_the_other_game_is_one_line_and_leaves_nothing(tmp_path: Path) -> None:
    err = one_line_error(run("evaluate.py", "--game", "draft", "random", "ppo", cwd=tmp_path))
    assert "agent 'ppo' does not play Patchwork Draft" in err
    assert list(tmp_path.iterdir()) == []
