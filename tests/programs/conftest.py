"""The tiny training run that several program tests read, made once per session."""

from __future__ import annotations

from typing import Any

import pytest

from tests.programs.program_runs import PPO, TINY, run, snapshot


@pytest.fixture(scope="session")
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
