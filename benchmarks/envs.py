"""Throughput of the learning interfaces, measured side by side in one run.

* AEC random play: moves per second through ``patchwork_env.env()`` and through
  PettingZoo's ``connect_four_v3``, with the same loop (``last()``, a uniformly random legal
  action from the mask, ``step()``; finished agents' ``None`` steps are not counted); once
  with PettingZoo's standard wrappers (as both games' ``env()`` build them)
  and once on the bare ``raw_env``, since the wrappers cost both games the same time. The
  random pick draws with Python's ``random``, whose scalar draws cost less than a numpy
  ``Generator``'s, so that little of the pick is timed as the env's; finding the legal
  entries of Patchwork's 2026-entry ``int8`` mask (``mask.nonzero()``) is still timed.
* AEC replay: the same games replayed from their recorded moves (``last()``, ``step()``,
  no pick), so the figure is the env's own cost per move, without the random agent's.
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
[--repeats N] [--seconds S] [--no-vector] [--aec-only]``. connect_four_v3 draws with
pygame, which the ``dev`` extra installs (``pip install -e ".[dev]"``).
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import time
from collections.abc import Callable

import numba
import numpy as np

import patchwork_env
from patchwork_env.integrations.sb3 import PatchworkVecEnv


def play_random_game(env: object, pick: random.Random, record: list[int] | None = None) -> int:
    """Play the AEC env's current game to its end with uniformly random legal moves drawn by
    ``pick``; the number of moves (``None`` steps of finished agents not counted), each also
    appended to ``record`` if given."""
    moves = 0
    for _ in env.agent_iter():
        obs, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        legal = obs["action_mask"].nonzero()[0]
        action = int(legal[pick.randrange(len(legal))])
        env.step(action)
        moves += 1
        if record is not None:
            record.append(action)
    return moves


def aec_moves_per_second(make_env: Callable[[], object], seconds: float, seed: int) -> float:
    """Random-play moves per second of an AEC env over whole games for ``seconds``."""
    env = make_env()
    pick = random.Random(seed)
    env.reset(seed=seed)
    moves = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        moves += play_random_game(env, pick)
        env.reset()
    return moves / (time.perf_counter() - start)


def record_random_games(make_env: Callable[[], object], games: int,
                        seed: int) -> list[list[int]]:
    """The moves of ``games`` whole random games, the first after ``reset(seed=seed)`` and
    the others after plain ``reset()`` calls, as :func:`aec_replay_moves_per_second`
    replays them."""
    env = make_env()
    pick = random.Random(seed)
    recorded: list[list[int]] = []
    for game in range(games):
        env.reset(seed=seed) if game == 0 else env.reset()
        recorded.append([])
        play_random_game(env, pick, recorded[-1])
    return recorded


def aec_replay_moves_per_second(make_env: Callable[[], object], recorded: list[list[int]],
                                seconds: float, seed: int) -> float:
    """Moves per second of an AEC env replaying ``recorded`` games (from
    :func:`record_random_games` with the same ``seed``) for at least ``seconds``: the
    env's own cost, with no agent choosing."""
    env = make_env()
    moves = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        for game, actions in enumerate(recorded):
            env.reset(seed=seed) if game == 0 else env.reset()
            replay = iter(actions)
            try:
                for _ in env.agent_iter():
                    _, _, terminated, truncated, _ = env.last()
                    env.step(None if terminated or truncated else next(replay))
            except StopIteration:
                raise RuntimeError("a replayed game outlasted its recorded moves") from None
            if next(replay, None) is not None:
                raise RuntimeError("a replayed game ended before its recorded moves did")
            moves += len(actions)
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
    """PettingZoo's connect_four_v3 as its ``env()`` builds it, with the standard wrappers
    (``pettingzoo.make`` builds the same, where the PettingZoo has it)."""
    return _connect_four_module().env()


def connect_four_raw_env() -> object:
    """connect_four_v3 without PettingZoo's wrappers."""
    return _connect_four_module().raw_env()


def median_of(repeats: int, measure: Callable[[], float]) -> float:
    measure()  # warm-up: compilation, caches
    return float(np.median([measure() for _ in range(repeats)]))


def paired_medians(repeats: int, ours: Callable[[int], float], theirs: Callable[[int], float]
                   ) -> tuple[float, float, tuple[float, float, float]]:
    """Both measurements' medians over ``repeats`` rounds that time one right after the
    other (each called with the round's seed), and the median (with the lowest and
    highest) of the rounds' ratios: on a shared machine the load drifts, and a ratio within
    a round sees the same load on both."""
    ours(0), theirs(0)  # warm-up: compilation, caches
    rounds = [(ours(r), theirs(r)) for r in range(repeats)]
    pw, c4 = (float(np.median(column)) for column in zip(*rounds, strict=True))
    per_round = [a / b for a, b in rounds]
    return pw, c4, (float(np.median(per_round)), min(per_round), max(per_round))


def random_play(make_env: Callable[[], object], seconds: float) -> Callable[[int], float]:
    """:func:`aec_moves_per_second` of ``make_env`` as a measurement of one seed."""
    return lambda seed: aec_moves_per_second(make_env, seconds, seed)


def replay(make_env: Callable[[], object], seconds: float,
           games: int = 100) -> Callable[[int], float]:
    """:func:`aec_replay_moves_per_second` of ``games`` random games of ``make_env``,
    recorded once (seed 0), as a measurement (every round replays the same games)."""
    recorded = record_random_games(make_env, games, 0)
    return lambda _: aec_replay_moves_per_second(make_env, recorded, seconds, 0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="shorter timings")
    parser.add_argument("--repeats", type=int, default=5, help="timed rounds per figure")
    parser.add_argument("--seconds", type=float, default=None,
                        help="length of one timed run (default 2, or 0.5 with --quick)")
    parser.add_argument("--no-vector", dest="vector", action="store_false",
                        help="skip the native Gymnasium vector env rows")
    parser.add_argument("--aec-only", action="store_true",
                        help="only the AEC rows (no VecEnv or vector env rows)")
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
    for loop, measure in (("random play", random_play), ("replay", replay)):
        for label, (ours, theirs) in pairs.items():
            pw, c4, ratio = paired_medians(repeats, measure(ours, seconds),
                                           measure(theirs, seconds))
            rows.append((f"AEC {loop}, patchwork_v0 {label}", "moves/s", pw))
            rows.append((f"AEC {loop}, connect_four_v3 {label}", "moves/s", c4))
            ratios[f"{loop}, {label}"] = ratio
    for threads in [] if args.aec_only else sorted({1, all_threads}):
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
