"""Running the top-level programs as a user does, for the tests of tests/programs.

Each runs as ``python SCRIPT args`` in a folder of the test's own; a refusal is checked to
be one line on stderr with exit status 2.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests import ROOT

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
