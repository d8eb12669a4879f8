"""Self-play processes under hostile conditions: a Ctrl-C reaching them, a worker killed
mid-run, a pool closed while its workers play. Each test has a deadline: a hang fails it."""

from __future__ import annotations

import os
import signal
import struct
import subprocess
import sys
import time
from collections.abc import Iterator
from multiprocessing.connection import Connection
from pathlib import Path

import pytest

from patchwork_env.agents.az.config import SearchConfig
from patchwork_env.agents.az.net import AZNet
from patchwork_env.training.az import options as options_module
from patchwork_env.training.az import run_az
from patchwork_env.training.az import trainer as az_trainer
from patchwork_env.training.az.options import AZOptions
from patchwork_env.training.az.selfplay.processes import (
    SpawnedWorkers,
    WorkerError,
    WorkerPool,
    _stop_signals_held,
    ignore_stop_signals,
    serve,
)
from patchwork_env.training.checkpoint import load_checkpoint
from tests import ROOT
from tests.agents.test_az import tiny_options as tiny

DEADLINE_S = 300


@pytest.fixture(autouse=True)
def deadline() -> Iterator[None]:
    """Fail a test that runs past :data:`DEADLINE_S` (a hang) instead of waiting forever."""
    def late(*_: object) -> None:
        raise TimeoutError(f"the test ran past its deadline of {DEADLINE_S} s")

    previous = signal.signal(signal.SIGALRM, late)
    signal.alarm(DEADLINE_S)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


def ended(processes: list, within: float = 10.0) -> bool:
    """Whether all ``processes`` end within ``within`` seconds (the pool's own thread may
    be reaping them at the same moment, so one look is not enough)."""
    stop = time.monotonic() + within
    while any(p.is_alive() for p in processes):
        if time.monotonic() > stop:
            return False
        time.sleep(0.05)
    return True


def pool_of_two() -> tuple[WorkerPool, AZNet]:
    net = AZNet(hidden=16, layers=1)
    config = SearchConfig(simulations=2, max_considered=2, top_k=4)
    return WorkerPool(net.config(), config, n_workers=2, parallel_games=2), net


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_the_workers_ignore_a_ctrl_c_or_sigterm_and_go_on_playing(signum: signal.Signals) -> None:
    pool, net = pool_of_two()
    try:
        first = pool.generate(net.state_dict(), 2, seed=3)
        processes = pool._processes()
        assert len(processes) == 2
        for process in processes:
            os.kill(process.pid, signum)
        time.sleep(0.5)
        assert all(p.is_alive() for p in processes)
        again = pool.generate(net.state_dict(), 2, seed=3)
        assert (again.states.tobytes(), again.games) == (first.states.tobytes(), first.games)
    finally:
        pool.close()
    assert ended(processes)


def test_a_worker_that_dies_is_one_line_at_once() -> None:
    pool, net = pool_of_two()
    try:
        pool.generate(net.state_dict(), 2, seed=1)
        os.kill(pool._processes()[0].pid, signal.SIGKILL)
        with pytest.raises(WorkerError, match="worker process ended") as error:
            pool.generate(net.state_dict(), 4, seed=2)
        assert "\n" not in str(error.value)
    finally:
        pool.close()


def _dies_halfway_through_its_reply(orders: Connection) -> None:
    """A worker that announces a reply of 1 MiB, writes 100 bytes of it and dies."""
    ignore_stop_signals()

    def handle(order: object) -> None:
        os.write(orders.fileno(), struct.pack("!i", 1 << 20) + bytes(100))
        os._exit(1)

    serve(orders, handle)


def test_a_worker_that_dies_halfway_through_its_reply_is_one_line_at_once() -> None:
    workers = SpawnedWorkers(_dies_halfway_through_its_reply, lambda _: (), 2, "halfway")
    try:
        with pytest.raises(WorkerError, match=r"^worker [01] ended$"):
            workers.ask([1, 2], lambda i, failure: f"worker {i} ended")
    finally:
        workers.close()
    assert ended(workers.processes)


def test_closing_the_pool_does_not_wait_for_the_games_in_play() -> None:
    net = AZNet(hidden=16, layers=1)
    pool = WorkerPool(net.config(), SearchConfig(simulations=64, max_considered=4, top_k=8),
                      n_workers=2, parallel_games=2)
    pool.generate(net.state_dict(), 2, seed=1)
    processes = pool._processes()
    for pipe in pool._workers.pipes:  # workers busy for many minutes
        pipe.send((net.state_dict(), 100_000, 2))
    time.sleep(0.5)
    start = time.perf_counter()
    pool.close()
    assert time.perf_counter() - start < 30
    assert ended(processes)


def test_a_run_whose_worker_dies_stops_with_its_checkpoint_and_resumes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run = tmp_path / "run"
    real = WorkerPool.generate
    calls: list[int] = []

    def dying(self: WorkerPool, weights: dict, n_games: int, seed: int):
        calls.append(seed)
        if len(calls) == 2:  # the second iteration's self-play: a worker is killed
            os.kill(self._processes()[0].pid, signal.SIGKILL)
        return real(self, weights, n_games, seed)

    monkeypatch.setattr(WorkerPool, "generate", dying)
    with pytest.raises(WorkerError):
        run_az(tiny(run, iterations=2, workers=2, games_per_iteration=4), log=None)
    monkeypatch.undo()
    assert load_checkpoint(run / "checkpoint.pt")["counters"]["iteration"] == 1
    row = run_az(tiny(run, iterations=2, workers=2, games_per_iteration=4, resume=True),
                 log=None)
    assert row["iteration"] == 2


STOPS = {
    "ctrl-c": (True, signal.SIGINT, 130),  # a terminal's Ctrl-C reaches every process
    "scheduler's sigterm": (True, signal.SIGTERM, 143),  # a job's processes, all of them
    "kill pid": (False, signal.SIGTERM, 143),  # the learner's process alone
}


@pytest.mark.parametrize("stop", list(STOPS))
def test_a_ctrl_c_or_sigterm_ends_a_run_with_workers_in_one_line_and_a_checkpoint(
        tmp_path: Path, stop: str) -> None:
    to_group, signum, status = STOPS[stop]
    run = tmp_path / "run"
    command = [sys.executable, str(ROOT / "train.py"), "--algo", "az", "--iterations",
               "1000", "--games-per-iteration", "4", "--parallel-games", "2", "--simulations",
               "16", "--max-considered", "4", "--top-k", "8", "--batch-size", "8", "--hidden",
               "16", "--layers", "1", "--eval-every", "0", "--net", "mlp", "--teacher", "",
               "--playout-weight", "0", "--workers", "2", "--run-dir", str(run)]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               text=True, start_new_session=True, cwd=ROOT)
    try:
        while not (run / "metrics.csv").is_file() or len(
                (run / "metrics.csv").read_text().splitlines()) < 2:
            assert process.poll() is None, process.stderr.read() if process.stderr else ""
            time.sleep(0.2)
        time.sleep(0.3)  # into the next iteration's self-play, most likely
        if to_group:
            os.killpg(process.pid, signum)
        else:
            os.kill(process.pid, signum)
        _, err = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    assert process.returncode == status, err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    last = [line for line in err.splitlines() if line.strip()][-1]
    assert last == "train.py: interrupted; continue from the last checkpoint with --resume"
    assert err.count("train.py:") == 1, err
    assert load_checkpoint(run / "checkpoint.pt")["counters"]["iteration"] >= 1
    assert group_ended(process.pid), "a self-play process outlived the run"


def group_ended(group: int, within: float = 15.0) -> bool:
    """Whether every process of the process group ``group`` ends within ``within`` s."""
    stop = time.monotonic() + within
    while time.monotonic() < stop:
        try:
            os.killpg(group, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.1)
    return False


def test_a_ctrl_c_while_workers_start_is_held_not_lost() -> None:
    with pytest.raises(KeyboardInterrupt):
        with _stop_signals_held():
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.05)
        time.sleep(0.05)


def test_by_default_self_play_runs_in_two_processes_where_there_are_two_cpus(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(options_module, "machine_cpus", lambda: 2)
    assert AZOptions().workers == -1
    assert AZOptions().with_workers().workers == 2
    assert AZOptions(workers=1).with_workers().workers == 1
    assert AZOptions(workers=3).with_workers().workers == 3


def test_a_run_on_the_default_workers_records_them_and_resumes_with_the_default(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(options_module, "machine_cpus", lambda: 2)
    run = tmp_path / "run"
    run_az(tiny(run, workers=-1, games_per_iteration=4), log=None)
    assert load_checkpoint(run / "checkpoint.pt")["options"]["workers"] == 2
    row = run_az(tiny(run, workers=-1, games_per_iteration=4, iterations=2, resume=True),
                 log=None)
    assert row["iteration"] == 2


def test_on_one_cpu_the_default_plays_in_the_learners_process_and_says_so(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(options_module, "machine_cpus", lambda: 1)
    monkeypatch.setattr(az_trainer, "machine_cpus", lambda: 1)
    run = tmp_path / "run"
    lines: list[str] = []
    run_az(tiny(run, workers=-1), log=lines.append)
    assert lines[0] == ("this machine has 1 CPU: self-play runs in the learner's process "
                        "(--workers 1), not in 2 processes")
    assert load_checkpoint(run / "checkpoint.pt")["options"]["workers"] == 1
