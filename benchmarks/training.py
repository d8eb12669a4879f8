"""Search-guided self-play throughput, and where its time goes.

    python benchmarks/training.py [--simulations N] [--max-considered 4] [--top-k 4]
                                  [--batches 64 256] [--threads 1 2]
                                  [--moves M | --complete-games]
                                  [--net shaped|mlp|stencil|resnet] [--hidden H]
                                  [--blocks B] [--channels C] [--seed S]

For each thread count and number of games in flight, self-play with an az network
(``--net``: the trainer's default ``shaped`` body unless told, sized as the trainer's
``--hidden``, ``--blocks`` and ``--channels``; fresh weights, ``N``
simulations per move, searching as the trainer's self-play does unless ``--max-considered``
and ``--top-k`` say otherwise) runs that many games at once, all searched together: ``M`` moves
of every game from positions drawn from all stages of earlier games (a finished game is
replaced by a new one), or with ``--complete-games`` that many complete games from their
first move (the training worker itself). It prints:

* positions/s: moves played per second of self-play (forced moves included);
* simulations/s: simulations run per second of self-play;
* net evals/s: positions the network evaluated per second of network time (its own
  throughput at that batch size);
* tree %, net %, other %: the split of self-play time between the search's tree operations
  (selection, expansion, backups, observations and masks of the leaves), the network
  calls, and the rest (stepping the games, Python).

A last table gives the tree operations alone (a network that costs nothing): their rate
in leaves per second, the ceiling the network leaves room for. torch runs on the given
number of threads; the search's loops over games run serially (its default) unless
``--threaded-tree`` puts them on the numba threads too. The default run takes well under
a minute on 2 idle cores; threaded rows measure little but waiting when other work holds
the cores.
"""

from __future__ import annotations

import argparse
import time

import numba
import numpy as np
import torch

from patchwork_env import GameBatch
from patchwork_env.agents.az.config import TRAINING, SearchConfig
from patchwork_env.agents.az.net import AZ_KINDS, AZNet, make_evaluator
from patchwork_env.agents.az.search import GumbelSearch
from patchwork_env.training.az.limits import CONV_BODIES
from patchwork_env.training.az.options import AZOptions
from patchwork_env.training.az.selfplay import SelfPlayWorker


def positions(n: int, seed: int) -> np.ndarray:
    """``n`` positions from all stages of quick self-play games (a tiny network, 2
    simulations), as state records."""
    worker = SelfPlayWorker(AZNet(hidden=8).config(), SearchConfig(simulations=2),
                            parallel_games=n)
    batch = worker.generate(None, n_games=n, seed=seed)
    rng = np.random.default_rng(seed)
    return batch.states[rng.choice(len(batch), size=n, replace=False)]


def self_play(start: np.ndarray, moves: int, config: SearchConfig, net: AZNet,
              seed: int) -> dict[str, float]:
    """Self-play statistics of ``moves`` moves of every game searched by ``config``, from
    the positions ``start`` (finished games are replaced by new ones)."""
    games = GameBatch(start.copy(), "default", np.random.default_rng(seed))
    search = GumbelSearch(len(games), config)
    evaluate = make_evaluator(net)
    rng = np.random.default_rng(seed)
    stats = {"moves": 0.0, "simulations": 0.0, "evaluations": 0.0, "tree_seconds": 0.0,
             "network_seconds": 0.0}
    began = time.perf_counter()
    for _ in range(moves):
        result = search.run(games.state.copy(), games.rules, evaluate, rng)
        games.step(result.actions, check=False)
        games.reset_done()
        st = result.stats
        stats["moves"] += len(games)
        stats["simulations"] += st.simulations
        stats["evaluations"] += st.evaluations
        stats["tree_seconds"] += st.tree_seconds
        stats["network_seconds"] += st.network_seconds
    stats["seconds"] = time.perf_counter() - began
    return stats


def complete_games(games: int, config: SearchConfig, net: AZNet,
                   seed: int) -> dict[str, float]:
    """The statistics of the training worker playing ``games`` complete games at once,
    searching by ``config``."""
    worker = SelfPlayWorker(net.config(), config, parallel_games=games)
    return worker.generate(net.state_dict(), n_games=games, seed=seed).stats


def tree_only(start: np.ndarray, config: SearchConfig, seed: int, moves: int = 3) -> float:
    """Leaves per second of the search ``config`` from ``start`` with a network that costs
    nothing."""
    rng = np.random.default_rng(seed)
    logits = rng.standard_normal((len(start), 2026)).astype(np.float32)

    def free(obs: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return logits[: len(obs)], np.zeros(len(obs), np.float32)

    search = GumbelSearch(len(start), config)
    search.run(start, "default", free, rng)
    leaves = 0
    began = time.perf_counter()
    for _ in range(moves):
        leaves += search.run(start, "default", free, rng).stats.evaluations
    return leaves / (time.perf_counter() - began)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--simulations", type=int, default=TRAINING.simulations)
    parser.add_argument("--max-considered", type=int, default=TRAINING.max_considered,
                        help="root actions sampled (default: the trainer's self-play)")
    parser.add_argument("--top-k", type=int, default=TRAINING.top_k,
                        help="edges kept at inner nodes (default: the trainer's self-play)")
    parser.add_argument("--batches", type=int, nargs="+", default=[64, 256])
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--moves", type=int, default=8)
    parser.add_argument("--complete-games", action="store_true")
    parser.add_argument("--threaded-tree", action="store_true",
                        help="run the search's loops over games on the numba threads too")
    parser.add_argument("--hidden", type=int, default=AZOptions.hidden)
    parser.add_argument("--net", choices=AZ_KINDS, default="shaped",
                        help="the network body (default: shaped, the trainer's default)")
    parser.add_argument("--blocks", type=int, default=AZOptions.blocks,
                        help="residual blocks of the resnet and stencil bodies")
    parser.add_argument("--channels", type=int, default=AZOptions.channels,
                        help="convolution channels of the resnet and stencil bodies")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    torch.manual_seed(args.seed)
    net = AZNet(kind=args.net, hidden=args.hidden, blocks=args.blocks,
                channels=args.channels).eval()
    pools = {n: positions(n, args.seed) for n in args.batches}
    how = "complete games" if args.complete_games else f"{args.moves} moves of every game"
    tree = "threaded" if args.threaded_tree else "serial"
    body = (f"{args.blocks} blocks of {args.channels} channels" if args.net in CONV_BODIES
            else f"MLP 1189-{args.hidden}-{args.hidden} trunk")
    config = TRAINING.replace(simulations=args.simulations, max_considered=args.max_considered,
                              top_k=args.top_k, parallel=args.threaded_tree)
    print(f"self-play, {args.net} network ({body}), {config.simulations} simulations per "
          f"move ({config.max_considered} considered root actions, {config.top_k} kept edges), "
          f"{how}, {tree} tree operations")
    print("| threads | games in flight | positions/s | simulations/s | net evals/s | tree % "
          "| net % | other % |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    for threads in args.threads:
        torch.set_num_threads(threads)
        numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
        for games in args.batches:
            self_play(pools[games][:8], 1, config, net, args.seed)  # warm up
            st = (complete_games(games, config, net, args.seed) if args.complete_games else
                  self_play(pools[games], args.moves, config, net, args.seed))
            total = st["seconds"]
            tree, net_share = st["tree_seconds"] / total, st["network_seconds"] / total
            print(f"| {threads} | {games} | {st['moves'] / total:,.0f} | "
                  f"{st['simulations'] / total:,.0f} | "
                  f"{st['evaluations'] / st['network_seconds']:,.0f} | {100 * tree:.1f} | "
                  f"{100 * net_share:.1f} | {100 * (1 - tree - net_share):.1f} |", flush=True)
    print("\ntree operations alone (a network that costs nothing)")
    print("| threads | games in flight | leaves/s |")
    print("|---:|---:|---:|")
    for threads in args.threads:
        numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
        for games in args.batches:
            rate = tree_only(pools[games], config, args.seed)
            print(f"| {threads} | {games} | {rate:,.0f} |", flush=True)


if __name__ == "__main__":
    main()
