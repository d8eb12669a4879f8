"""train.py as a user meets it: run as a program in a fresh folder.

Nothing a user made is replaced without being asked; bad input is one line on stderr with
exit status 2 and leaves nothing behind; the progress bars move during the long phases; the
final lines say what they measured; the help states the defaults.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, ClassVar

import pytest

from tests.programs.program_runs import PPO, TINY, one_line_error, run, snapshot


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


def test_train_help_states_defaults(tmp_path: Path) -> None:
    done = run("train.py", *PPO, "--help", cwd=tmp_path)
    assert done.returncode == 0
    text = " ".join(done.stdout.split())
    assert "Show a progress bar. (default: --progress)" in text
    assert "Draw learning_curve.png at the end. (default: --plot)" in text
    assert "(default: --no-overwrite)" in text


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
