"""The accelerator check: self-play throughput on a GPU machine, then 5 minutes of training.

    python benchmarks/accelerator.py [--device auto] [--workers 1 4 8 14]
                                     [--train-seconds 300] [--eval-games 100] [--smoke]

Made to run once on a GPU machine with 16 cores, in under 8 minutes. It prints:

1. for the trainer's default network and a residual one (``--net resnet --blocks 10
   --channels 128``), at each number of self-play workers (processes sharing one
   inference service on the device, ``train.py --inference service``): positions/s,
   network evaluations/s, the tree's share of the search's time, and the GPU's mean
   utilisation while they played (read from ``nvidia-smi``, where there is one);
2. the positions/s of the default network played in the learner's process on 2 CPU
   threads (``train.py --workers 1 --device cpu``), a baseline for the speed-ups;
3. a training run of ``--train-seconds`` (``train.py`` with ``--device``, the most workers
   and the service), stopped by Ctrl-C as a user would, and its network evaluated on the
   CPU against ``greedy`` in ``--eval-games`` paired games (``evaluate.py``).

``--smoke`` runs every step at a size of seconds (on any machine), to check the script.
Everything it writes goes to a new temporary folder, removed at the end.
"""

from __future__ import annotations

import argparse
import csv
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import torch
from selfplay_workers import Setup, measure

from patchwork_env.agents.az.config import SearchConfig
from patchwork_env.agents.device import resolve_device
from patchwork_env.training.az.options import AZOptions
from patchwork_env.training.az.selfplay import SelfPlayWorker
from patchwork_env.training.az.selfplay.pools import make_self_play

ROOT = Path(__file__).resolve().parents[1]
NETWORKS = {"shaped (default)": {}, "resnet 10x128": {"net": "resnet", "blocks": 10,
                                                        "channels": 128}}


class GPUUsage:
    """The GPU's utilisation, sampled by ``nvidia-smi`` every half second in a thread
    while the block runs (``mean`` is ``None`` where there is no ``nvidia-smi``)."""

    def __init__(self) -> None:
        self.samples: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self._stop.wait(0.5):
            try:
                out = subprocess.run(["nvidia-smi", "--query-gpu=utilization.gpu",
                                      "--format=csv,noheader,nounits"], capture_output=True,
                                     text=True, timeout=5).stdout
                self.samples.append(float(out.split()[0]))
            except (OSError, ValueError, IndexError, subprocess.SubprocessError):
                return

    def __enter__(self) -> GPUUsage:
        if shutil.which("nvidia-smi"):
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()

    @property
    def mean(self) -> float | None:
        return sum(self.samples) / len(self.samples) if self.samples else None


def throughput(options: AZOptions, setup: Setup, games: int, seed: int) -> dict[str, float]:
    """One measured self-play round of ``setup`` (after an untimed warm-up)."""
    opts = setup.options(options)
    net = opts.network().to(resolve_device(opts.device)).eval()
    pool = make_self_play(net, opts)
    try:
        measure(pool, net, setup.workers, seed)
        with GPUUsage() as gpu:
            row = measure(pool, net, games, seed)
        row["gpu"] = gpu.mean if gpu.mean is not None else float("nan")
        return row
    finally:
        close = getattr(pool, "close", None)
        if close is not None:
            close()


def compile_once() -> None:
    """Compile the engine and the search in this process first, so that the worker
    processes load them from numba's cache instead of each compiling them at once."""
    worker = SelfPlayWorker(AZOptions(hidden=8).network().config(),
                            SearchConfig(simulations=2), parallel_games=2)
    worker.generate(None, 2, seed=0)


STOP_SECONDS = 120
"""How long the training run may take to stop after its Ctrl-C before it is killed."""


def train_and_evaluate(args: argparse.Namespace, folder: Path) -> None:
    """Train for ``args.train_seconds`` (stopped by SIGINT), then evaluate on the CPU."""
    run = folder / "run"
    command = [sys.executable, str(ROOT / "train.py"), "--device", args.device,
               "--workers", str(max(args.workers)), "--inference", "service",
               "--iterations", "1000000", "--run-dir", str(run), *args.train_flags]
    print("\n$ " + " ".join(command[1:]), flush=True)
    began = time.perf_counter()
    with open(folder / "train.log", "w") as log:
        process = subprocess.Popen(command, cwd=folder, start_new_session=True, stdout=log,
                                   stderr=subprocess.STDOUT)
        try:
            process.wait(args.train_seconds)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGINT)
            try:
                process.wait(STOP_SECONDS)
            except subprocess.TimeoutExpired:
                # e.g. launched with Ctrl-C ignored (a background job of a script): never
                # leave a run behind that goes on using the machine
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
                raise SystemExit(f"the training run did not stop within {STOP_SECONDS} s "
                                 "of Ctrl-C (is SIGINT ignored here?); it was killed") from None
    print(f"trained {time.perf_counter() - began:.0f} s (exit status {process.returncode}; "
          "130: stopped by Ctrl-C as planned)")
    metrics = run / "metrics.csv"
    if not metrics.is_file():
        print((folder / "train.log").read_text()[-3000:])
        raise SystemExit("the training run wrote no metrics")
    with open(metrics, newline="") as f:
        rows = list(csv.DictReader(f))
    if rows:
        last = rows[-1]
        print(f"{last['iteration']} iterations, {last['games']} games; the last iteration: "
              f"{float(last['positions_per_s']):,.0f} positions/s, policy loss "
              f"{float(last['policy_loss']):.3f}, value loss {float(last['value_loss']):.3f}")
    net = run / "net.pt"
    evaluate = [sys.executable, str(ROOT / "evaluate.py"), f"az:{net}:32", "greedy",
                "--games", str(args.eval_games), "--device", "cpu", "--out",
                str(folder / "evaluation")]
    print("\n$ " + " ".join(evaluate[1:]), flush=True)
    subprocess.run(evaluate, cwd=folder, check=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="auto")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 4, 8, 14])
    parser.add_argument("--games-per-worker", type=int, default=64,
                        help="games each worker plays per measured round (also its games "
                             "in flight)")
    parser.add_argument("--simulations", type=int, default=32)
    parser.add_argument("--train-seconds", type=float, default=300.0)
    parser.add_argument("--eval-games", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--smoke", action="store_true",
                        help="every step at a size of seconds, on any machine")
    args = parser.parse_args()
    device = resolve_device(args.device)
    compile_once()
    args.train_flags = ["--games-per-iteration", str(16 * args.games_per_worker),
                        "--parallel-games", str(args.games_per_worker)]
    if args.smoke:
        args.workers, args.games_per_worker, args.simulations = [1, 2], 2, 2
        args.train_seconds, args.eval_games = 45.0, 2
        args.train_flags = ["--games-per-iteration", "4", "--parallel-games", "2",
                            "--simulations", "2", "--hidden", "16", "--teacher", "",
                            "--eval-every", "0", "--batch-size", "16"]
    networks = ({"shaped (default)": {"hidden": 16}, "resnet 1x8": {
        "net": "resnet", "blocks": 1, "channels": 8}} if args.smoke else NETWORKS)
    games = args.games_per_worker
    print(f"device {device} ({args.device}); {os.cpu_count()} CPUs; {args.simulations} "
          f"simulations per move; {games} games in flight per worker")
    print("| network | workers | positions/s | net evals/s | tree share | GPU util. |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, net_options in networks.items():
        options = AZOptions(parallel_games=games, simulations=args.simulations,
                            device=args.device, seed=args.seed, teacher="", **net_options)
        for workers in args.workers:
            row = throughput(options, Setup("service", workers), workers * games, args.seed)
            gpu = "n/a" if row["gpu"] != row["gpu"] else f"{row['gpu']:.0f}%"
            print(f"| {name} | {workers} | {row['positions_per_s']:,.0f} | "
                  f"{row['evaluations_per_s']:,.0f} | {row['tree_share']:.0%} | {gpu} |",
                  flush=True)
    cpu = AZOptions(parallel_games=games, simulations=args.simulations, device="cpu",
                    seed=args.seed, teacher="", **networks["shaped (default)"])
    torch.set_num_threads(2)  # the baseline: the network on 2 CPU threads
    row = throughput(cpu, Setup("in-process", 1), games, args.seed)
    print(f"| shaped (default), 2 CPU threads | 1 | {row['positions_per_s']:,.0f} | "
          f"{row['evaluations_per_s']:,.0f} | {row['tree_share']:.0%} | - |", flush=True)
    with tempfile.TemporaryDirectory() as folder:
        train_and_evaluate(args, Path(folder))


if __name__ == "__main__":
    main()
