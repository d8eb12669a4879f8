"""``train.py --algo az``: the command line of the search-guided trainer.

Every field of :class:`~.options.AZOptions` is a flag (``--simulations 32``,
``--games-per-iteration 256``, ...). A run refused before it starts (a bad option, a folder
in use or holding another run, a checkpoint or records that cannot be trusted) or a
network that diverged ends with one line and exit status 2; a file that cannot be written
(a full disk) or a self-play process that died, with one line and exit status 1; a Ctrl-C,
with one line and exit status 130, and a ``SIGTERM`` (``kill PID``, a cluster's scheduler)
the same way with 143. Each leaves the last checkpoint to resume from.
"""

from __future__ import annotations

import sys

from patchwork_env.files.atomic import WriteError
from patchwork_env.files.termination import INTERRUPTED_STATUS
from patchwork_env.training.az.options import AZOptions, AZRunError
from patchwork_env.training.az.selfplay.processes import WorkerError
from patchwork_env.training.az.trainer import CHECKPOINT, NET_FILE, run_az
from patchwork_env.training.checkpoint import CheckpointError
from patchwork_env.training.cli import dataclass_parser

DESCRIPTION = """\
Search-guided self-play (AlphaZero with Gumbel search) on the batch engine: many games
advance together, the leaves of all their searches are evaluated by the network in one
batch, and the network learns the search's improved policy and the games' outcomes.

    python train.py                                  # the default run, into runs/az-seed0
    python train.py --resume --run-dir runs/az-seed0 --iterations 40
    python evaluate.py az-playouts:runs/az-seed0/net.pt:128 greedy mcts:100 --games 400
    python train.py --game draft --run-dir runs/az-draft

A run imitates a teacher first (greedy by default), mixes random-playout estimates into
its first value targets and the search's root values into all of them, and plays
self-play in two processes where the machine has 2 CPUs; models/README.md gives the
commands that trained the shipped models/az.pt, with its curves and results.
MaskablePPO: train.py --algo ppo (its flags: train.py --algo ppo --help)."""


def main(argv: list[str]) -> int:
    """Run the search-guided trainer with the command line ``argv``; the exit status."""
    parser = dataclass_parser(AZOptions, "train.py --algo az", DESCRIPTION)
    args = parser.parse_args(argv)
    opts = AZOptions(**vars(args))
    try:
        row = run_az(opts)
    except (AZRunError, CheckpointError, ValueError) as e:
        print(f"train.py: error: {e}", file=sys.stderr)
        return 2
    except (WriteError, WorkerError) as e:
        print(f"train.py: error: {e}; continue from the last checkpoint with --resume",
              file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        saved = (opts.folder() / CHECKPOINT).is_file()
        print("\ntrain.py: interrupted; " + ("continue from the last checkpoint with --resume"
                                            if saved else "nothing was saved"),
              file=sys.stderr)
        return INTERRUPTED_STATUS
    if row:
        print("last iteration: " + ", ".join(f"{k} {v}" for k, v in row.items()))
    net = opts.folder() / NET_FILE
    if opts.game == "patchwork":
        print(f"evaluate the network: python evaluate.py az-playouts:{net}:128 greedy "
              "mcts:100 --games 400")
    return 0


__all__ = ["DESCRIPTION", "main"]
