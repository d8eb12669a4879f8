"""Self-play throughput of the trainer's ways of running self-play, side by side.

    python benchmarks/selfplay_workers.py [--setups in-process local:2 service:1 service:2]
                                          [--games 256] [--parallel-games 256]
                                          [--simulations 32] [--max-considered 4] [--top-k 4]
                                          [--net shaped] [--hidden 256]
                                          [--blocks B] [--channels C] [--device cpu]
                                          [--rounds 3] [--seed 0]

Each setup is one way ``train.py --algo az`` plays an iteration's games, built by the
trainer itself (:func:`~patchwork_env.training.az.selfplay.pools.make_self_play`):

* ``in-process``: the learner's process plays every game (``--workers 1``);
* ``local:N``: ``N`` worker processes, each with its own copy of the network on the CPU
  (``--workers N --inference local``);
* ``service:N``: ``N`` worker processes whose leaves one inference service in this process
  evaluates on ``--device`` (``--workers N --inference service``).

Every round plays ``--games`` complete games per setup (the trainer's iteration, the same
seed for every setup), the setups taking turns within a round, so a machine whose speed
drifts slows them alike. Printed per setup: the median positions/s over the rounds (the
lowest and highest in brackets) and its ratio to the first setup's, the network's
evaluations/s (leaves evaluated per second of self-play) and the tree's share (the
search's time in tree operations over its tree and network time, as the trainer's
``tree_fraction``). A first call of each setup, not timed, compiles and warms it up.
"""

from __future__ import annotations

import argparse
import statistics
import time
from dataclasses import dataclass

from patchwork_env.agents.az.net import AZ_KINDS, AZNet
from patchwork_env.training.az.options import AZOptions
from patchwork_env.training.az.selfplay.pools import make_self_play


@dataclass
class Setup:
    """One way of running self-play: ``mode`` (``in-process``, ``local`` or ``service``)
    with ``workers`` processes."""

    mode: str
    workers: int

    @classmethod
    def parse(cls, text: str) -> Setup:
        """``in-process``, ``local:N`` or ``service:N``."""
        mode, _, count = text.partition(":")
        if mode == "in-process" and not count:
            return cls(mode, 1)
        if mode in ("local", "service") and count.isdigit() and int(count) >= 1:
            return cls(mode, int(count))
        raise argparse.ArgumentTypeError(f"a setup is in-process, local:N or service:N, "
                                         f"got {text!r}")

    def __str__(self) -> str:
        return self.mode if self.mode == "in-process" else f"{self.mode}:{self.workers}"

    def options(self, base: AZOptions) -> AZOptions:
        """The trainer's options of this setup."""
        inference = "service" if self.mode == "service" else "local"
        return AZOptions(**{**vars(base), "workers": self.workers, "inference": inference})


def measure(pool: object, net: AZNet, games: int, seed: int) -> dict[str, float]:
    """One iteration's self-play of ``games`` games: positions/s, network evaluations/s
    and the tree's share."""
    began = time.perf_counter()
    batch = pool.generate(net.state_dict(), games, seed)  # type: ignore[attr-defined]
    seconds = time.perf_counter() - began
    st = batch.stats
    split = st["tree_seconds"] + st["network_seconds"]
    return {"positions_per_s": st["moves"] / seconds,
            "evaluations_per_s": st["evaluations"] / seconds,
            "tree_share": st["tree_seconds"] / split if split else 0.0}


def compare(setups: list[Setup], base: AZOptions, net: AZNet, rounds: int, seed: int
            ) -> dict[str, list[dict[str, float]]]:
    """Each setup's measurements over ``rounds`` rounds (the setups taking turns)."""
    pools = {}
    try:
        for setup in setups:
            pools[str(setup)] = pool = make_self_play(net, setup.options(base))
            measure(pool, net, min(base.games_per_iteration, 2 * setup.workers), seed)
        results: dict[str, list[dict[str, float]]] = {name: [] for name in pools}
        for r in range(rounds):
            for name, pool in pools.items():
                results[name].append(measure(pool, net, base.games_per_iteration, seed + r))
        return results
    finally:
        for pool in pools.values():
            close = getattr(pool, "close", None)
            if close is not None:
                close()


def table(results: dict[str, list[dict[str, float]]]) -> str:
    """The comparison as a Markdown table."""
    lines = ["| setup | positions/s (min-max) | ratio | net evals/s | tree share |",
             "|---|---:|---:|---:|---:|"]
    first = None
    for name, rows in results.items():
        rates = [r["positions_per_s"] for r in rows]
        median = statistics.median(rates)
        first = first or median
        evals = statistics.median(r["evaluations_per_s"] for r in rows)
        tree = statistics.median(r["tree_share"] for r in rows)
        lines.append(f"| {name} | {median:,.0f} ({min(rates):,.0f}-{max(rates):,.0f}) | "
                     f"{median / first:.2f} | {evals:,.0f} | {tree:.0%} |")
    return "\n".join(lines)


def network_options(args: argparse.Namespace) -> AZOptions:
    """The trainer's options of the command line's network and search."""
    return AZOptions(games_per_iteration=args.games, parallel_games=args.parallel_games,
                     simulations=args.simulations, max_considered=args.max_considered,
                     top_k=args.top_k, net=args.net, hidden=args.hidden,
                     blocks=args.blocks, channels=args.channels, device=args.device,
                     seed=args.seed, teacher="")


def add_network_flags(parser: argparse.ArgumentParser) -> None:
    """The flags of the network and the search, as the trainer has them."""
    defaults = AZOptions()
    parser.add_argument("--games", type=int, default=defaults.games_per_iteration,
                        help="games per round and setup (an iteration's)")
    parser.add_argument("--parallel-games", type=int, default=defaults.parallel_games)
    parser.add_argument("--simulations", type=int, default=defaults.simulations)
    parser.add_argument("--max-considered", type=int, default=defaults.max_considered)
    parser.add_argument("--top-k", type=int, default=defaults.top_k)
    parser.add_argument("--net", choices=AZ_KINDS, default=defaults.net)
    parser.add_argument("--hidden", type=int, default=defaults.hidden)
    parser.add_argument("--blocks", type=int, default=defaults.blocks)
    parser.add_argument("--channels", type=int, default=defaults.channels)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--seed", type=int, default=0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--setups", type=Setup.parse, nargs="+",
                        default=[Setup.parse(s) for s in
                                 ("in-process", "local:2", "service:1", "service:2")])
    parser.add_argument("--rounds", type=int, default=3)
    add_network_flags(parser)
    args = parser.parse_args()
    base = network_options(args)
    base.check()
    net = base.network().to(args.device).eval()
    print(f"self-play of {args.games} games per round, {args.parallel_games} in flight per "
          f"worker, {args.simulations} simulations per move, {args.net} network, "
          f"device {args.device}, {args.rounds} rounds")
    print(table(compare(args.setups, base, net, args.rounds, args.seed)))


if __name__ == "__main__":
    main()
