"""The README's set-up commands, the pictures of the documentation and the scripts that
draw them: every picture has a command that redraws it, and each script runs as a program.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from tests.programs.program_runs import ROOT, one_line_error, run


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


def test_every_picture_has_a_command_that_redraws_it() -> None:
    listing = (ROOT / "docs" / "pictures.md").read_text()
    readme = (ROOT / "README.md").read_text() + (ROOT / "models" / "README.md").read_text()
    pages = readme + "".join(p.read_text() for p in sorted((ROOT / "docs").rglob("*.md")))
    for picture in sorted((ROOT / "docs").glob("*.png")):
        row = next((line for line in listing.splitlines() if f"`{picture.name}`" in line), "")
        assert "python " in row, f"{picture.name} has no command in docs/pictures.md"
        for script in re.findall(r"python ([\w/]+\.py)", row):
            assert (ROOT / script).is_file(), script
        assert re.search(rf"\]\((?:\.\./)*(?:docs/)?{re.escape(picture.name)}\)", pages), \
            f"{picture.name} is shown on no page"
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


def test_the_one_change_picture_redraws_from_its_kept_data(tmp_path: Path) -> None:
    kept = sorted((ROOT / "docs").glob("one_change_*.csv"))
    assert len(kept) >= 2
    out = tmp_path / "runs.png"
    done = run("docs/make_comparison_curves.py", *[f"{p.stem}={p}" for p in kept],
               "--out", str(out), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    unlabelled = run("docs/make_comparison_curves.py", str(kept[0]), "--out", str(out),
                     cwd=tmp_path)
    assert unlabelled.returncode == 2 and "LABEL=CSV" in unlabelled.stderr


def test_the_web_picture_is_taken_where_asked(tmp_path: Path) -> None:
    pytest.importorskip("starlette", reason="the web extra is not installed")
    from patchwork_env.web.browser import NoBrowser, find_chromium

    try:
        find_chromium()
    except NoBrowser as e:
        pytest.skip(f"no headless browser: {e}")
    out = tmp_path / "web_play.png"
    done = run("docs/make_web_play.py", "--out", str(out), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert Image.open(out).size == (1280, 720)
    assert Image.open(tmp_path / "web_play_draft.png").size == (1280, 720)
