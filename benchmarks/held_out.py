"""How well an az run's network fits its own replay buffer, and games it never saw.

    python benchmarks/held_out.py RUN_DIR [--games 512] [--samples 8000] [--seed S]
                                          [--threads T]

The losses a run logs are those of its training minibatches, drawn from its replay buffer:
samples the network has already been trained on. This reads the run's checkpoint, plays
``--games`` new games of self-play with its network and its own search settings, and
prints the network's losses on ``--samples`` positions drawn from each (without the
symmetry augmentation): the policy's cross-entropy to the search's improved policy (and
that target's entropy, the floor), the value's squared error against the result, and how
often the network's first choice is the target's. A value loss much lower on the buffer
than on new games says the network has learned its buffer's games rather than the game.
512 games take about a minute on 2 cores.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import torch

from patchwork_env.training.az import AZOptions
from patchwork_env.training.az.buffer import ReplayBuffer
from patchwork_env.training.az.learner import Learner
from patchwork_env.training.az.selfplay import SelfPlayWorker
from patchwork_env.training.az.trainer import checkpoint_net, saved_options
from patchwork_env.training.checkpoint import CheckpointError, load_checkpoint

CHECKPOINT = "checkpoint.pt"


def fit(learner: Learner, buffer: ReplayBuffer, samples: int, seed: int) -> dict[str, float]:
    """The network's mean losses and first-choice agreement over ``samples`` positions
    drawn from ``buffer`` (in batches of at most 2,000)."""
    rng = np.random.default_rng(seed)
    sums = {"policy": 0.0, "target_entropy": 0.0, "value": 0.0, "top1": 0.0}
    done = 0
    with torch.inference_mode():
        while done < samples:
            batch = buffer.sample(min(2000, samples - done), rng)
            n = len(batch.values)
            losses = learner.losses(batch)
            logits, _ = learner.net(batch.observations, batch.masks)
            best = batch.target_index.gather(1, batch.target_probs.argmax(1, keepdim=True))
            top1 = (logits.argmax(1) == best[:, 0]).float().mean()
            for key, value in (*losses.items(), ("top1", top1)):
                if key in sums:
                    sums[key] += float(value) * n
            done += n
    return {k: v / done for k, v in sums.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", type=Path, help="an az run folder (or its checkpoint.pt)")
    parser.add_argument("--games", type=int, default=512, help="new games of self-play")
    parser.add_argument("--samples", type=int, default=8000, help="positions per source")
    parser.add_argument("--seed", type=int, default=987_654, help="seeds the new games")
    parser.add_argument("--threads", type=int, default=0, help="torch threads (0: default)")
    args = parser.parse_args()
    if args.games < 1 or args.samples < 1 or args.threads < 0:
        parser.error("--games and --samples must be at least 1, --threads not negative")
    path = args.run_dir / CHECKPOINT if args.run_dir.is_dir() else args.run_dir
    try:
        saved = load_checkpoint(path)
        opts = AZOptions(**saved_options(saved))
        net = checkpoint_net(saved, path)
        net.load_state_dict(saved["learner"]["net"])
        buffer = ReplayBuffer(opts.buffer_size, opts.rules)
        buffer.load_state_dict(saved["buffer"])
    except (CheckpointError, FileNotFoundError, KeyError, TypeError, ValueError,
            RuntimeError) as e:
        parser.error(f"{path}: {str(e).splitlines()[0] if str(e) else type(e).__name__}")
    if len(buffer) == 0:
        parser.error(f"{path}: the run's replay buffer is empty")
    if args.threads:
        torch.set_num_threads(args.threads)
    net.eval()
    learner = Learner(net, value_weight=opts.value_weight)

    worker = SelfPlayWorker(net.config(), opts.search_config(),
                            min(opts.parallel_games, args.games), opts.rules,
                            threads=args.threads or None)
    fresh_games = worker.generate(net.state_dict(), args.games, seed=args.seed)
    fresh = ReplayBuffer(len(fresh_games), opts.rules)
    fresh.add(fresh_games)

    print(f"{path}: iteration {saved['counters']['iteration']}, {opts.net} network, "
          f"{len(buffer):,} positions in the buffer; {args.games} new games "
          f"({len(fresh):,} positions)\n")
    print("| positions | policy loss | target entropy | value loss | first choice agrees |")
    print("|---|---:|---:|---:|---:|")
    for name, source in (("the replay buffer (trained on)", buffer),
                         ("new self-play games", fresh)):
        row = fit(learner, source, args.samples, seed=1)
        print(f"| {name} | {row['policy']:.3f} | {row['target_entropy']:.3f} | "
              f"{row['value']:.3f} | {row['top1']:.1%} |")
    if opts.playout_weight_at(saved["counters"]["iteration"] - 1) > 0 or \
            opts.root_value_weight > 0:
        print("\nThe buffer's value targets mix in playout estimates or root values, which "
              "the new games' (their results alone) do not.")


if __name__ == "__main__":
    main()
