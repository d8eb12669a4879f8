"""Throughput of the learning interfaces, measured side by side in one run.

* AEC random play: moves per second through ``patchwork_env.env()`` and through
  PettingZoo's ``connect_four_v3``, with the same loop (``last()``, a uniformly random legal
  action from the mask, ``step()``; finished agents' ``None`` steps are not counted); once
  with PettingZoo's standard wrappers (as ``env()`` and ``pettingzoo.make`` build them)
  and once on the bare ``raw_env``, since the wrappers cost both games the same time.
* ``PatchworkVecEnv`` (SB3) against the random opponent: learner steps per second (one
  step of one game) at several ``n_envs``, the learner's actions drawn by the engine's
  random sampler and :meth:`action_masks` read after every step, as MaskablePPO does.
* The native Gymnasium vector env (``gymnasium.make_vec(...,
  vectorization_mode="vector_entry_point")``), the same loop, masks read from
  ``info["action_mask"]``.

Each figure is the median of several timed repeats after a warm-up (the two AEC envs
alternate, one round timing both, and their ratio is the median of the rounds' ratios);
VecEnv figures are given with numba limited to one thread and with all its threads. Prints
a markdown table; asserts nothing. Usage: ``python benchmarks/envs.py [--quick]
[--repeats N] [--seconds S] [--no-vector]``. connect_four_v3 draws with pygame, which the
``dev`` extra installs (``pip install -e ".[dev]"``).
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from collections.abc import Callable

import numba
import numpy as np
import pettingzoo

import patchwork_env
from patchwork_env.sb3 import PatchworkVecEnv


def aec_moves_per_second(make_env: Callable[[], object], seconds: float, seed: int) -> float:
    """Random-play moves per second of an AEC env over whole games for ``seconds``."""
    env = make_env()
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    moves = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        for _ in env.agent_iter():
            obs, _, terminated, truncated, _ = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            legal = np.flatnonzero(obs["action_mask"])
            env.step(int(legal[rng.integers(len(legal))]))
            moves += 1
        env.reset()
    return moves / (time.perf_counter() - start)


def vec_steps_per_second(n_envs: int, seconds: float, seed: int) -> float:
    """Learner steps per second of a ``PatchworkVecEnv`` against the random opponent."""
    venv = PatchworkVecEnv(n_envs, opponent="random", seed=seed)
    venv.reset()
    rng = np.random.default_rng(seed)
    batch = venv.batch
    steps = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        venv.step(batch.random_actions(rng))
        venv.action_masks()
        steps += n_envs
    return steps / (time.perf_counter() - start)


def vector_steps_per_second(n_envs: int, seconds: float, seed: int) -> float:
    """Learner steps per second of the native Gymnasium vector env against random."""
    import gymnasium

    envs = gymnasium.make_vec("patchwork_env/Patchwork-v0", num_envs=n_envs,
                              vectorization_mode="vector_entry_point")
    envs.reset(seed=seed)
    rng = np.random.default_rng(seed)
    batch = envs.unwrapped.batch
    steps = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        actions = batch.random_actions(rng)
        actions[actions < 0] = 0  # a game restarting on this step ignores its action
        envs.step(actions)
        steps += n_envs
    return steps / (time.perf_counter() - start)


def _connect_four_module():
    """PettingZoo's connect_four module; ``SystemExit`` naming the fix if it cannot load
    (it needs pygame)."""
    try:
        from pettingzoo.classic.connect_four import connect_four
    except ModuleNotFoundError as e:
        raise SystemExit(f"connect_four_v3 cannot be imported ({e}): install pygame, e.g. "
                         'pip install -e ".[dev]"') from None
    return connect_four


def connect_four() -> object:
    """PettingZoo's connect_four_v3 as its registry builds it (the same standard wrappers)."""
    return pettingzoo.make("aec", "classic/connect_four-v3")


def connect_four_raw_env() -> object:
    """connect_four_v3 without PettingZoo's wrappers."""
    return _connect_four_module().raw_env()


def median_of(repeats: int, measure: Callable[[], float]) -> float:
    measure()  # warm-up: compilation, caches
    return float(np.median([measure() for _ in range(repeats)]))


def paired_medians(repeats: int, ours: Callable[[], object], theirs: Callable[[], object],
                   seconds: float) -> tuple[float, float, tuple[float, float, float]]:
    """Both envs' median moves/s over ``repeats`` rounds that time one right after the
    other, and the median (with the lowest and highest) of the rounds' ratios: on a shared
    machine the load drifts, and a ratio within a round sees the same load on both."""
    aec_moves_per_second(ours, seconds, 0)  # warm-up: compilation, caches
    aec_moves_per_second(theirs, seconds, 0)
    rounds = [(aec_moves_per_second(ours, seconds, r), aec_moves_per_second(theirs, seconds, r))
              for r in range(repeats)]
    pw, c4 = (float(np.median(column)) for column in zip(*rounds, strict=True))
    per_round = [a / b for a, b in rounds]
    return pw, c4, (float(np.median(per_round)), min(per_round), max(per_round))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="shorter timings")
    parser.add_argument("--repeats", type=int, default=5, help="timed rounds per figure")
    parser.add_argument("--seconds", type=float, default=None,
                        help="length of one timed run (default 2, or 0.5 with --quick)")
    parser.add_argument("--no-vector", dest="vector", action="store_false",
                        help="skip the native Gymnasium vector env rows")
    args = parser.parse_args()
    seconds = args.seconds if args.seconds is not None else 0.5 if args.quick else 2.0
    repeats = 3 if args.quick else args.repeats
    if seconds <= 0 or repeats < 1:
        parser.error("--seconds must be > 0 and --repeats >= 1")
    _connect_four_module()  # before any timing: a missing pygame stops it with the fix
    all_threads = numba.get_num_threads()

    rows: list[tuple[str, str, float]] = []
    pairs = {"env()": (patchwork_env.env, connect_four),
             "raw_env (no wrappers)": (patchwork_env.raw_env, connect_four_raw_env)}
    ratios = {}
    for label, (ours, theirs) in pairs.items():
        pw, c4, ratio = paired_medians(repeats, ours, theirs, seconds)
        rows.append((f"AEC random play, patchwork_v0 {label}", "moves/s", pw))
        rows.append((f"AEC random play, connect_four_v3 {label}", "moves/s", c4))
        ratios[label] = ratio
    for threads in sorted({1, all_threads}):
        numba.set_num_threads(threads)
        for n in (1, 64, 512):
            rate = median_of(repeats, lambda n=n: vec_steps_per_second(n, seconds, 0))
            rows.append((f"PatchworkVecEnv n_envs={n}, {threads} thread(s)", "learner steps/s",
                         rate))
        if args.vector:
            for n in (64, 512):
                rate = median_of(repeats, lambda n=n: vector_steps_per_second(n, seconds, 0))
                rows.append((f"Gymnasium vector env n_envs={n}, {threads} thread(s)",
                             "learner steps/s", rate))
    numba.set_num_threads(all_threads)

    print(f"# {platform.machine()}, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}; "
          f"numba {numba.__version__}, {all_threads} threads, layer "
          f"{numba.threading_layer()}, OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY')}; "
          f"median of {repeats} x {seconds:g} s\n")
    print("| measurement | unit | rate |")
    print("|---|---|---:|")
    for name, unit, rate in rows:
        print(f"| {name} | {unit} | {rate:,.0f} |")
    print()
    for label, (ratio, low, high) in ratios.items():
        print(f"AEC patchwork_v0 / connect_four_v3, {label}: {ratio:.2f}x (median of "
              f"{repeats} paired rounds; lowest {low:.2f}x, highest {high:.2f}x)")


if __name__ == "__main__":
    main()
