"""evaluate.py as a user meets it: run as a program in a fresh folder.

Each run writes a new results folder, an existing one is replaced only when asked, bad
input is one line on stderr with exit status 2 and leaves nothing behind, and the help and
the pictures say what they show.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.programs.program_runs import one_line_error, run


def test_evaluate_writes_a_new_folder_each_time(tmp_path: Path) -> None:
    outs = []
    for _ in range(2):
        done = run("evaluate.py", "random", "greedy", "--games", "2", "--jobs", "1",
                   cwd=tmp_path)
        assert done.returncode == 0, done.stderr[-2000:]
        (line,) = [s for s in done.stdout.splitlines() if s.startswith("results written to")]
        outs.append(line.split()[3].rstrip("/"))
    assert outs[0] != outs[1]
    for out in outs:
        assert Path(out).parent == Path("results")
        assert sorted(p.name for p in (tmp_path / out).iterdir()) == [
            "elo.png", "results.csv", "results.json", "scores.png"]


def test_evaluate_refuses_to_replace_results_unless_asked(tmp_path: Path) -> None:
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "results.json").write_text("{}")
    args = ["random", "greedy", "--games", "2", "--jobs", "1", "--out", "mine"]
    err = one_line_error(run("evaluate.py", *args, cwd=tmp_path))
    assert "mine already holds results" in err and "--overwrite" in err
    assert (tmp_path / "mine" / "results.json").read_text() == "{}"
    done = run("evaluate.py", *args, "--overwrite", cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert (tmp_path / "mine" / "results.json").read_text() != "{}"
    err = one_line_error(run("evaluate.py", "random", "greedy", "--overwrite", cwd=tmp_path))
    assert "give --out" in err


@pytest.mark.parametrize(("argv", "message"), [
    (["--games", "100000000000000000000"], "at most 1,000,000"),
    (["--games", "-2"], "--games must be a positive even number"),
    (["--seed", "-1"], "--seed must be non-negative"),
    (["--jobs", "-3"], "--jobs must be at least 1"),
    (["--out", "afile/x"], "cannot create the folder afile/x"),
    (["--out", "afile"], "afile is a file, not a folder"),
    (["--out", "new/deeper", "--rules", "house"], "unknown rules preset"),
    (["ppo:broken.pt", "--out", "new/deeper", "--games", "2"], "cannot load broken.pt"),
])
def test_evaluate_bad_input_is_one_line_and_leaves_nothing(argv: list[str], message: str,
                                                           tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("")
    (tmp_path / "broken.pt").write_text("garbage")
    err = one_line_error(run("evaluate.py", "random", "greedy", *argv, cwd=tmp_path))
    assert message in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile", "broken.pt"]


def test_evaluate_help_lists_specs_and_presets(tmp_path: Path) -> None:
    from patchwork_env.data.rules import PRESETS

    done = run("evaluate.py", "--help", cwd=tmp_path)
    assert done.returncode == 0
    for spec in ("random", "greedy", "mcts[:N|:Ss]", "ppo[:PATH]", "ppo-sample[:PATH]"):
        assert f"\n  {spec} " in done.stdout, spec
    for preset in PRESETS:
        assert f"\n  {preset} " in done.stdout, preset


def test_scores_follow_the_elo_ranking_and_label_their_lines(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import json

    import matplotlib.figure

    import evaluate

    drawn: dict[str, Any] = {}
    real_plot = evaluate.plot_scores

    def plot_scores(path: Path, specs: list[str], *rest: Any) -> None:
        drawn["specs"] = list(specs)
        real_plot(path, specs, *rest)

    def savefig(fig: matplotlib.figure.Figure, path: Any, *args: Any, **kwargs: Any) -> None:
        if Path(path).name == "scores.png":
            (ax,) = fig.axes
            drawn["legend"] = [t.get_text() for t in ax.get_legend().get_texts()]
            drawn["ticks"] = [t.get_text() for t in ax.get_xticklabels()]
        Path(path).write_bytes(b"png")

    monkeypatch.setattr(evaluate, "plot_scores", plot_scores)
    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", savefig)
    assert evaluate.main(["random", "greedy", "--games", "4", "--jobs", "1",
                          "--out", str(tmp_path)]) == 0
    elo = json.loads((tmp_path / "results.json").read_text())["elo"]
    ranking = sorted(elo, key=lambda s: -elo[s]["rating"])
    assert drawn["specs"] == ranking == ["greedy", "random"]
    assert drawn["ticks"] == ["1. greedy", "2. random"]
    assert "median score" in drawn["legend"] and "score 0" in drawn["legend"]
