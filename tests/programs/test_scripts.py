"""train.py and evaluate.py as a user meets them: run as programs in a fresh folder.

Nothing a user made is replaced without being asked; bad input is one line on stderr with
exit status 2 and leaves nothing behind; the progress bars move during the long phases; the
final lines say what they measured; the help and the README say what the programs do.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any, ClassVar

import pytest

ROOT = Path(__file__).resolve().parents[2]

TINY = ["--n-envs", "8", "--n-steps", "32", "--batch-size", "128", "--n-epochs", "1",
        "--hidden", "32", "--channels", "8", "--snapshot-every", "1", "--pool-size", "2",
        "--eval-every", "256", "--checkpoint-every", "256", "--eval-games", "2",
        "--final-eval-games", "2", "--imitation-positions", "300", "--imitation-epochs", "1",
        "--threads", "1"]
"""A run small enough for a test: rollouts of 256 moves, two minibatches each."""
PPO = ["--algo", "ppo"]
"""The flag that picks MaskablePPO (``train.py`` runs the search-guided trainer by default)."""


def run(script: str, *args: str, cwd: Path, timeout: int = 300) -> subprocess.CompletedProcess:
    """``python script args`` in ``cwd``."""
    return subprocess.run([sys.executable, str(ROOT / script), *args], cwd=cwd,
                          capture_output=True, text=True, timeout=timeout)


def one_line_error(done: subprocess.CompletedProcess) -> str:
    """The error of a refused command, checked: exit status 2, one line on stderr."""
    assert done.returncode == 2, (done.returncode, done.stderr[-2000:])
    assert done.stderr.endswith("\n") and done.stderr.count("\n") == 1, done.stderr
    assert "Traceback" not in done.stderr
    return done.stderr


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` with its bytes."""
    return {str(p.relative_to(folder)): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}


# ---------------------------------------------------------------------------------------
# train.py


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A tiny run with its bar on, into a folder that holds an older run and a file of the
    user's: first refused, then run with --overwrite to 300 steps (two rollouts: 512)."""
    cwd = tmp_path_factory.mktemp("train")
    folder = cwd / "runs" / "ppo-seed0"
    (folder / "tb").mkdir(parents=True)
    (folder / "checkpoint.pt").write_bytes(b"the old run")
    (folder / "metrics.csv").write_text("steps\n0\n")
    (folder / "tb" / "events.out.tfevents.1.old").write_bytes(b"old log")
    (folder / "notes.txt").write_text("mine")
    before = snapshot(folder)
    refused = run("train.py", *PPO, *TINY, "--total-steps", "300", cwd=cwd)
    after_refusal = snapshot(folder)
    done = run("train.py", *PPO, *TINY, "--total-steps", "300", "--overwrite", "--progress",
               cwd=cwd, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return {"cwd": cwd, "folder": folder, "before": before, "refused": refused,
            "after_refusal": after_refusal, "done": done}


def test_a_new_run_refuses_a_folder_holding_a_run(tiny: dict[str, Any]) -> None:
    err = one_line_error(tiny["refused"])
    assert err.startswith("train.py: error:") and "--resume" in err and "--overwrite" in err
    assert tiny["after_refusal"] == tiny["before"]  # nothing touched


def test_overwrite_replaces_the_run_and_only_the_run(tiny: dict[str, Any]) -> None:
    from patchwork_env.training.checkpoint import load_checkpoint

    folder = tiny["folder"]
    assert load_checkpoint(folder / "checkpoint.pt")["steps"] == 512
    assert (folder / "notes.txt").read_text() == "mine"
    assert not (folder / "tb" / "events.out.tfevents.1.old").exists()
    assert [int(line.split(",")[0]) for line in
            (folder / "metrics.csv").read_text().splitlines()[1:]] == [0, 256, 512]
    assert "--overwrite: deleted the previous run's" in tiny["done"].stderr


def test_the_bar_keeps_its_total_past_the_target(tiny: dict[str, Any]) -> None:
    err = tiny["done"].stderr
    assert "training to step 512 (300 rounded up to whole rollouts of 256 moves)" in err
    bars = [s for s in re.split(r"[\r\n]", err) if s.startswith("self-play:")]
    assert bars and all(re.search(r"\| \d+/512 \[", s) for s in bars), bars[-3:]
    assert "512/512" in bars[-1]


def test_long_phases_report_progress(tiny: dict[str, Any]) -> None:
    err = tiny["done"].stderr
    assert "update 1: minibatch 1/2" in err and "update 2: minibatch 2/2" in err
    assert re.search(r"evaluating vs greedy: turn \d+", err)
    steps = re.findall(r"imitation: .*?\| (\d+)/(\d+) \[.*?epoch 1/1", err)
    assert steps and steps[-1][0] == steps[-1][1] and int(steps[-1][1]) >= 2  # per minibatch


def test_the_final_lines_say_what_they_measured(tiny: dict[str, Any]) -> None:
    out = tiny["done"].stdout
    folder = Path("runs") / "ppo-seed0"
    assert "last training evaluation (step 512; 2 games per opponent, tournament seed 1):" in out
    assert f"best policy: {folder / 'best.pt'}, the best of the run's evaluations (step" in out
    assert (f"final evaluation of {folder / 'final.pt'} on new setups (2 games per opponent,"
            " tournament seed 2):") in out
    assert f"python evaluate.py ppo:{folder / 'best.pt'} random greedy" in out
    lines = out.splitlines()
    assert sum(line.startswith("  vs ") for line in lines) == 4


def test_resume_refuses_a_target_already_reached(tiny: dict[str, Any]) -> None:
    folder = tiny["folder"]
    before = snapshot(folder)
    for extra in ([], ["--total-steps", "400"]):
        err = one_line_error(run("train.py", *PPO, "--resume", str(folder), *extra,
                                 cwd=tiny["cwd"]))
        assert "has done 512 steps" in err and "nothing to train" in err
        assert "--total-steps" in err
    assert snapshot(folder) == before


def test_a_bad_run_folder_is_one_line_and_leaves_nothing(tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("")
    err = one_line_error(run("train.py", *PPO, *TINY, "--run-dir", "afile/run", cwd=tmp_path))
    assert "cannot create the folder afile/run" in err
    if Path("/proc").is_dir():  # a folder nobody may create
        err = one_line_error(run("train.py", *PPO, *TINY, "--run-dir", "/proc/nope", cwd=tmp_path))
        assert "/proc/nope" in err
    # refused after the folder was made (the --init file is missing): it is removed again
    err = one_line_error(run("train.py", *PPO, *TINY, "--run-dir", "new/deeper/run",
                             "--init", "none.pt", cwd=tmp_path))
    assert "--init: no model file" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile"]


@pytest.mark.parametrize(("argv", "message"), [
    (["--seed", "-1"], "--seed must lie in 0..4294967295, got -1"),
    (["--seed", "99999999999999999999"], "--seed must lie in 0..4294967295"),
    (["--learning-rate", "inf"], "--learning-rate must be a finite number, got inf"),
    (["--random-weight", "inf"], "--random-weight must be a finite number"),
    (["--eval-games", "100000000000000000000"], "--eval-games must be at most 1,000,000"),
    (["--batch-size", "100000"], "more than a rollout holds (--n-envs x --n-steps = 4096)"),
    (["--n-envs", "100000000"], "moves per rollout would need about"),
    (["--imitation-positions", "1000000000000"], "--imitation-positions 1,000,000,000,000"),
    (["--total-steps", "0"], "--total-steps must be positive"),
    (["--total-steps", "12.5"], "invalid int value: '12.5'"),
    (["--resume", "runs/x", "--overwrite"], "--overwrite starts a new run"),
])
def test_bad_flags_are_one_line(argv: list[str], message: str,
                                capsys: pytest.CaptureFixture[str]) -> None:
    import train

    with pytest.raises(SystemExit) as exc:
        train.parse_options(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("train.py: error:") and message in err and err.count("\n") == 1


def test_whole_numbers_may_be_written_in_e_notation() -> None:
    import train

    assert train.parse_options(["--total-steps", "1e5"])[0].total_steps == 100_000


def test_bad_flags_exit_2_as_a_program(tmp_path: Path) -> None:
    for argv, message in ((["--seed", "-1"], "--seed must lie in"),
                          (["--n-envs", "100000000"], "moves per rollout would need about")):
        err = one_line_error(run("train.py", *PPO, *argv, cwd=tmp_path))
        assert message in err
    assert list(tmp_path.iterdir()) == []


def test_options_refuse_bad_values_when_built() -> None:
    import train

    for kwargs in ({"n_envs": 0}, {"total_steps": "many"}, {"score_scale": float("nan")},
                   {"progress": "yes"}):
        with pytest.raises(ValueError) as exc:
            train.Options(**kwargs)
        assert "\n" not in str(exc.value)


def test_resume_with_another_run_dir_is_refused(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    import train

    assert train.main([*PPO, "--resume", str(tmp_path), "--run-dir", str(tmp_path / "b")]) == 2
    assert "drop --run-dir" in capsys.readouterr().err


def test_train_py_trains_search_guided_unless_told_ppo() -> None:
    import train

    assert train.split_algo(["--iterations", "2"]) == ("az", ["--iterations", "2"])
    assert train.split_algo(["--algo", "ppo", "--seed", "1"]) == ("ppo", ["--seed", "1"])
    assert train.split_algo(["--algo=az"]) == ("az", [])


def test_train_help_states_defaults_and_times(tmp_path: Path) -> None:
    done = run("train.py", *PPO, "--help", cwd=tmp_path)
    assert done.returncode == 0
    text = " ".join(done.stdout.split())
    assert "Show a progress bar. (default: --progress)" in text
    assert "Draw learning_curve.png at the end. (default: --plot)" in text
    assert "(default: --no-overwrite)" in text
    assert "8 min 04 s on 2 otherwise idle" in text and "29 min 45 s on 2 cores shared" in text
    assert "~10 minutes" not in text


# ---------------------------------------------------------------------------------------
# evaluate.py


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


# ---------------------------------------------------------------------------------------
# the imitation phase's bars


class RecordingBar:
    """Stands in for tqdm: records the position after every update."""

    made: ClassVar[list[RecordingBar]] = []

    def __init__(self, *args: Any, total: int | None = None, **kwargs: Any) -> None:
        self.total, self.n, self.positions = total, 0, []
        RecordingBar.made.append(self)

    def update(self, n: int = 1) -> None:
        self.n += n
        self.positions.append(self.n)

    def set_postfix_str(self, *args: Any, **kwargs: Any) -> None:
        pass

    def close(self) -> None:
        pass


def test_imitation_bars_move_every_turn_and_every_minibatch(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from gymnasium import spaces

    from patchwork_env.agents.ppo.networks import FastMaskablePolicy
    from patchwork_env.data.actions import N_ACTIONS
    from patchwork_env.data.rules import get_rules
    from patchwork_env.training import imitation
    from patchwork_env.views.observation import layout

    monkeypatch.setattr(imitation, "tqdm", RecordingBar)
    RecordingBar.made.clear()
    demos = imitation.demonstrations("greedy", 400, seed=1, reward="win", score_scale=0.02,
                                     n_games=8, progress=True)
    (bar,) = RecordingBar.made
    # the first step comes after the first turn of the 8 games, long before a game ends
    assert bar.positions[0] == 8 and bar.positions[-1] == bar.total == 400
    assert len(bar.positions) > 30

    space = layout(get_rules("default")).space
    policy = FastMaskablePolicy(space, spaces.Discrete(N_ACTIONS), lambda _: 0.0, net_arch=[8])
    RecordingBar.made.clear()
    imitation.imitate(policy, demos, 3, 64, seed=0, learning_rate=1e-3, progress=True)
    (bar,) = RecordingBar.made
    assert bar.total == 3 * (len(demos) // 64)
    assert bar.positions == list(range(1, bar.total + 1))


# ---------------------------------------------------------------------------------------
# the README and the pictures


def section(title: str) -> str:
    """The text of the README's section ``## title``."""
    text = (ROOT / "README.md").read_text()
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start: end if end > 0 else None]


def test_setup_runs_the_tests_first_and_builds_the_venv_once() -> None:
    text = section("Set up")
    commands = re.findall(r"```bash\n(.*?)```", text, re.S)
    tests = next(i for i, c in enumerate(commands) if "pytest" in c)
    main_job = next(i for i, c in enumerate(commands) if "train.py" in c)
    assert tests < main_job
    assert "-m venv" in commands[tests] and "-m venv" not in commands[main_job]
    assert "pip install" not in commands[main_job]
    assert "az-playouts:runs/az-seed0/net.pt:128" in commands[main_job]
    assert "greedy mcts:100 --games 400" in commands[main_job]
    assert "final.zip" not in commands[main_job]
    assert "https://download.pytorch.org/whl/cpu" in text


def test_readme_time_figures_state_their_conditions() -> None:
    import train

    train_text = " ".join(section("Train an agent").split())
    for figure in ("8 min 04 s", "29 min 45 s"):
        assert figure in train_text and figure in " ".join((train.__doc__ or "").split())
    assert "otherwise idle" in train_text and "shared with other work" in train_text
    from patchwork_env.training.az.cli import DESCRIPTION

    az_time = "8 min 39 s on 2 otherwise idle"
    assert az_time in " ".join(section("Set up").split()) and az_time in " ".join(
        DESCRIPTION.split())


def test_every_picture_has_a_command_that_redraws_it() -> None:
    listing = (ROOT / "docs" / "README.md").read_text()
    readme = (ROOT / "README.md").read_text() + (ROOT / "models" / "README.md").read_text()
    for picture in sorted((ROOT / "docs").glob("*.png")):
        row = next((line for line in listing.splitlines() if f"`{picture.name}`" in line), "")
        assert "python " in row, f"{picture.name} has no command in docs/README.md"
        for script in re.findall(r"python ([\w/]+\.py)", row):
            assert (ROOT / script).is_file(), script
    for used in re.findall(r"\((?:\.\./)?(docs/[\w.]+\.png)\)", readme):
        assert (ROOT / used).is_file(), used


def test_learning_curves_are_redrawn_from_kept_data(tiny: dict[str, Any], tmp_path: Path) -> None:
    folder = tiny["folder"]
    done = run("docs/make_learning_curve.py", str(folder), "curve", "--into", str(tmp_path),
               cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "curve.csv").read_bytes() == (folder / "metrics.csv").read_bytes()
    picture = (tmp_path / "curve.png").read_bytes()
    (tmp_path / "curve.png").unlink()
    done = run("docs/make_learning_curve.py", str(tmp_path / "curve.csv"), "curve", "--into",
               str(tmp_path), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "curve.png").read_bytes()[:8] == picture[:8] == b"\x89PNG\r\n\x1a\n"
    err = one_line_error(run("docs/make_learning_curve.py", "nowhere", "x", cwd=tmp_path))
    assert "no metrics at nowhere" in err


def test_the_loss_curve_draws_consecutive_runs_from_their_kept_data(tmp_path: Path) -> None:
    kept = [ROOT / "docs" / "az_continued_learning_curve.csv",
            ROOT / "docs" / "az_finetuned_learning_curve.csv"]
    out = tmp_path / "losses.png"
    done = run("docs/make_loss_curve.py", f"{kept[0]}:1e-3", f"{kept[1]}:1e-4",
               "--from-iteration", "121", "--out", str(out), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    missing = run("docs/make_loss_curve.py", "nowhere.csv:1e-3", "--out", str(out),
                  cwd=tmp_path)
    assert missing.returncode == 2 and "nowhere.csv" in missing.stderr


def test_the_position_picture_is_drawn_where_asked(tmp_path: Path) -> None:
    out = tmp_path / "position.png"
    done = run("docs/make_position_png.py", "--out", str(out), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "to move" in done.stdout


def test_the_time_to_strength_picture_redraws_from_its_kept_data(tmp_path: Path) -> None:
    done = run("docs/make_time_to_strength.py", "--az",
               str(ROOT / "docs" / "time_to_strength_az.csv"), "--ppo",
               str(ROOT / "docs" / "time_to_strength_ppo.csv"), "--ppo-warm-start-min", "14.7",
               "--into", str(tmp_path), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "time_to_strength.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (tmp_path / "time_to_strength_az.csv").read_text() == \
        (ROOT / "docs" / "time_to_strength_az.csv").read_text()
