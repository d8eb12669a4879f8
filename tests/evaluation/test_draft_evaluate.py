"""evaluate.py --game draft: tournaments of Patchwork Draft's agents, and the refusal of
agents, presets and options that belong to the other game."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

import evaluate
from patchwork_env.agents import make
from patchwork_env.evaluation.arena import play_match
from patchwork_env.evaluation.tournament import make_tasks
from patchwork_env.views.draft_game import DraftGame


def test_a_tiny_draft_tournament_writes_its_files(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture) -> None:
    assert evaluate.main(["--game", "draft", "random", "greedy", "mcts:10", "--games", "4",
                          "--seed", "5", "--jobs", "1", "--out", str(tmp_path)]) == 0
    printed = capsys.readouterr().out
    assert printed.startswith("Patchwork Draft: 3 agents")
    assert "random vs greedy" in printed and "Elo (random = 0)" in printed
    for name in ("results.json", "results.csv", "elo.png", "scores.png"):
        assert (tmp_path / name).stat().st_size > 0
    doc = json.loads((tmp_path / "results.json").read_text())
    assert doc["settings"]["game"] == "draft" and doc["settings"]["rules"] == "default"
    assert [(p["a"], p["b"], p["games"]) for p in doc["pairings"]] == [
        ("random", "greedy", 4), ("random", "mcts:10", 4), ("greedy", "mcts:10", 4)]
    assert set(doc["elo"]) == {"random", "greedy", "mcts:10"}


def test_every_draft_game_replays_from_its_seed_and_moves(tmp_path: Path) -> None:
    assert evaluate.main(["--game", "draft", "random", "greedy", "--games", "4", "--jobs",
                          "1", "--rules", "no-stars", "--out", str(tmp_path)]) == 0
    with (tmp_path / "results.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 4
    for row in rows:
        game = DraftGame.new(int(row["seed"]), rules="no-stars")
        for move in row["moves"].split():
            game.step(int(move))
        assert game.is_over and game.scores() == (int(row["score0"]), int(row["score1"]))
        assert row["winner_agent"] == row[f"player{row['winner']}"]


def test_a_draft_match_swaps_seats_on_each_setup() -> None:
    records = play_match(make("greedy", 0, game="draft"), make("random", 1, game="draft"),
                         [11, 12], game="draft")
    assert [(r.seed, r.seat_a) for r in records] == [(11, 0), (11, 1), (12, 0), (12, 1)]


def test_draft_tasks_carry_their_game() -> None:
    tasks = make_tasks(["random", "greedy"], 8, seed=0, rules="no-stars", game="draft")
    assert {(t.game, t.rules) for t in tasks} == {("draft", "no-stars")}


@pytest.mark.parametrize(("argv", "message"), [
    (["random", "ppo"], "agent 'ppo' does not play Patchwork Draft"),
    (["random", "ppo-sample"], "agent 'ppo-sample' does not play Patchwork Draft"),
    (["random", "human"], "agent 'human' does not play Patchwork Draft"),
    (["random", "mcts:lots"], "bad MCTS budget"),
    (["random", "greedy", "--rules", "revised"],
     "unknown rules preset 'revised' for --game draft"),
    (["random", "greedy", "--rules", "default", "--game", "chess"], "invalid choice: 'chess'"),
])
def test_draft_tournaments_refuse_the_other_games_options(argv: list[str], message: str,
                                                          tmp_path: Path,
                                                          capsys: pytest.CaptureFixture
                                                          ) -> None:
    out = tmp_path / "out"
    with pytest.raises(SystemExit) as exit_info:
        evaluate.main(["--game", "draft", *argv, "--out", str(out)])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
    assert not out.exists()


def test_the_draft_presets_are_not_patchwork_presets(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(SystemExit) as exit_info:
        evaluate.main(["random", "greedy", "--rules", "no-stars", "--out", str(tmp_path / "o")])
    assert exit_info.value.code == 2
    assert "unknown rules preset 'no-stars'" in capsys.readouterr().err


def test_the_help_lists_the_draft_agents_and_presets(capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(SystemExit):
        evaluate.main(["--help"])
    text = capsys.readouterr().out
    draft = text[text.index("with --game draft (Patchwork Draft), agent specs"):]
    for entry in ("random", "greedy", "mcts[:N|:Ss]", "default", "no-stars"):
        assert f"\n  {entry} " in draft, entry
    assert "\n  ppo" not in draft
