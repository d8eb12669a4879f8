"""Every benchmark script runs to its table at smoke size, so that none of them rots.

Each runs as a program, the way the README quotes it, with settings small enough for a test;
what is checked is that it finishes and prints its table, never a speed.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from patchwork_env.training.az import run_az
from tests import ROOT
from tests.agents.test_az import tiny_options


def bench(script: str, *args: str, cwd: Path) -> str:
    """``python benchmarks/SCRIPT args``'s standard output; fails the test on an error."""
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / script), *args],
                          cwd=cwd, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def test_engine_benchmark(tmp_path: Path) -> None:
    out = bench("engine.py", "--seconds", "0.02", "--repeats", "1", cwd=tmp_path)
    assert "plies/s" in out


def test_env_benchmark_compares_with_connect_four(tmp_path: Path) -> None:
    out = bench("envs.py", "--seconds", "0.05", "--repeats", "1", cwd=tmp_path)
    assert "| AEC random play, connect_four_v3 raw_env (no wrappers) | moves/s |" in out
    assert "PatchworkVecEnv n_envs=512" in out
    assert "| AEC replay, patchwork_v0 raw_env (no wrappers) | moves/s |" in out
    # one ratio line per loop and interface, each with its own number
    for loop in ("random play", "replay"):
        for interface in ("env()", "raw_env (no wrappers)"):
            line = f"AEC patchwork_v0 / connect_four_v3, {loop}, {interface}: "
            assert re.search(re.escape(line) + r"\d+\.\d+x \(median of 1 paired", out), line


def test_mcts_benchmark(tmp_path: Path) -> None:
    out = bench("mcts.py", "--simulations", "200", "--positions", "1", cwd=tmp_path)
    assert "sims/s wall" in out


def test_draft_spread_benchmark_plays_every_rule_set(tmp_path: Path) -> None:
    out = bench("draft_spread.py", "--games", "2", "--simulations", "20", cwd=tmp_path)
    rows = [line for line in out.splitlines() if " vs " in line]
    assert len(rows) == 6 * 3
    assert sum("deck-seeing mcts:20 vs greedy" in row for row in rows) == 6


def test_training_benchmark_prints_the_split(tmp_path: Path) -> None:
    out = bench("training.py", "--batches", "8", "--threads", "1", "--moves", "1",
                "--hidden", "32", cwd=tmp_path)
    assert "| tree % " in out


def test_search_settings_benchmark(tmp_path: Path) -> None:
    out = bench("search_settings.py", "--evaluations", "4", "--opponent", "random",
                "--games", "2", "--jobs", "1", "--settings", "{}", json.dumps({"top_k": 2}),
                cwd=tmp_path)
    assert "| setting |" in out and "top_k" in out


def test_held_out_benchmark_reads_a_run(tmp_path: Path) -> None:
    run_az(tiny_options(tmp_path / "run", games_per_iteration=4, parallel_games=4), log=None)
    out = bench("held_out.py", str(tmp_path / "run"), "--games", "2", "--samples", "20",
                "--threads", "1", cwd=tmp_path)
    assert "new self-play games" in out


def test_selfplay_workers_benchmark_compares_the_ways(tmp_path: Path) -> None:
    out = bench("selfplay_workers.py", "--setups", "in-process", "local:2", "service:2",
                "--games", "4", "--parallel-games", "2", "--simulations", "2", "--hidden", "16",
                "--rounds", "1", cwd=tmp_path)
    for setup in ("in-process", "local:2", "service:2"):
        assert re.search(rf"\| {setup} \| [\d,]+ \([\d,]+-[\d,]+\) \| \d+\.\d\d \|", out), setup


def test_accelerator_check_runs_every_step_at_smoke_size(tmp_path: Path) -> None:
    out = bench("accelerator.py", "--smoke", cwd=tmp_path)
    assert "| resnet 1x8 | 2 |" in out and "2 CPU threads" in out
    assert "az:" in out and "greedy" in out  # the evaluation's table
    assert not list(tmp_path.iterdir())  # its files went to a temporary folder
