"""What a search-guided run's options ask of the machine, estimated before anything is
allocated.

The large arrays of a run are the search trees of the games in flight (every game's tree is
allocated up front for all its simulations, in each self-play process), the trees of an
evaluation's games (all played at once), the replay buffer (state records and sparse
policy targets, copied once more into each checkpoint), the samples of one iteration and
of the teacher's play with their random playouts, and the network with its optimiser and a
minibatch. :func:`memory_needs` adds them up (lower estimates: a run needs at least this);
:func:`check_memory` refuses options whose total would not fit into the machine's memory,
naming the options of the largest part, rather than failing minutes later with an
out-of-memory kill.
"""

from __future__ import annotations

from typing import Any

from patchwork_env.agents.az.config import PLAY
from patchwork_env.agents.az.net import OBSERVATION_SIZE
from patchwork_env.data.actions import N_ACTIONS, N_CELLS
from patchwork_env.engine.kernels import STATE_DTYPE
from patchwork_env.training.ppo.limits import gigabytes, physical_memory

STATE_BYTES = STATE_DTYPE.itemsize
NODE_BYTES = STATE_BYTES + 4 + 8 + 8 + 1 + 4 + 4 + 4
"""One node of a search tree: its state, visits, two value sums, mover, edge range, path."""
EDGE_BYTES = 2 + 4 + 4 + 4
"""One edge: action, logit, prior, child."""
GAME_BYTES = 8 * 2 * N_ACTIONS + 2 * N_ACTIONS + N_ACTIONS + 4 * OBSERVATION_SIZE + 2 * STATE_BYTES
"""What each game in flight holds besides its nodes and edges: scratch rows, its legal
mask, its observation and its leaf state."""
TARGET_ENTRIES = 32
"""Policy-target entries per sample (a lower estimate: the legal actions the search kept)."""
SAMPLE_BYTES = STATE_BYTES + 8 + 4 + 4 + 8 + 1 + 2 + 32 + 1 + TARGET_ENTRIES * (2 + 4)
"""One sample: its state, target offset, value, search value, game id, policy-target flag,
final score difference, final quilts, auxiliary-target flag and target entries."""
SAMPLES_PER_GAME = 30
"""Positions of a game that become samples (a lower estimate)."""
PLAYOUT_BYTES = STATE_BYTES + 8
"""One random playout: a copy of its position and its result."""


def search_bytes(games: int, simulations: int, top_k: int, max_considered: int) -> int:
    """The arrays of a search of ``games`` games at once."""
    nodes = (simulations + 1) * NODE_BYTES
    edges = (N_ACTIONS + simulations * top_k) * EDGE_BYTES
    return games * (nodes + edges + GAME_BYTES + 24 * max_considered)


CONV_BODIES = ("resnet", "stencil")
"""The network bodies whose size is their blocks and channels (the others': layers)."""


def network_params(opts: Any, obs_size: int) -> int:
    """About how many weights the network of ``opts`` has."""
    params = opts.hidden * (obs_size + N_ACTIONS + 64)
    if opts.net in CONV_BODIES:
        convs = 2 * opts.blocks * 9 * opts.channels * opts.channels
        return params + opts.hidden * (opts.hidden + 2 * opts.blocks * opts.channels) + convs
    return params + (opts.layers - 1) * opts.hidden * opts.hidden


def network_bytes(opts: Any, obs_size: int) -> int:
    """About what the network takes while learning: its weights, their gradients and
    Adam's two moments."""
    return 4 * 4 * network_params(opts, obs_size)


def batch_bytes(opts: Any, obs_size: int) -> int:
    """About what a minibatch takes through the network and back (a convolutional body
    keeps some eight planes of each block for the backward pass)."""
    per_sample = 4 * obs_size + 8 * 4 * N_ACTIONS + 12 * opts.hidden * opts.layers
    if opts.net in CONV_BODIES:
        per_sample += 8 * 4 * N_CELLS * opts.channels * opts.blocks
    return opts.batch_size * per_sample


def memory_needs(opts: Any, obs_size: int) -> dict[str, tuple[int, str]]:
    """Each large part of a run of ``opts`` (an :class:`~.options.AZOptions`): its bytes
    and the options it grows with."""
    processes = opts.workers if opts.workers > 1 and not opts.ray_address else 1
    iteration_samples = opts.games_per_iteration * SAMPLES_PER_GAME
    teacher = opts.teacher_positions if opts.teacher else 0
    playouts = (max(iteration_samples, teacher) * opts.playouts * PLAYOUT_BYTES
                if opts.playout_weight > 0 else 0)
    needs = {
        "the search trees": (processes * search_bytes(opts.parallel_games, opts.simulations,
                                                      opts.top_k, opts.max_considered)
                             + opts.parallel_games * opts.leaf_playouts * PLAYOUT_BYTES,
                             "--parallel-games, --simulations, --top-k, --workers"),
        "the evaluations": (search_bytes(opts.eval_games, opts.eval_evaluations - 1,
                                         PLAY.top_k, PLAY.max_considered)
                            if opts.eval_every else 0, "--eval-games, --eval-evaluations"),
        "the replay buffer": (2 * opts.buffer_size * SAMPLE_BYTES, "--buffer-size"),
        "an iteration's samples": (iteration_samples * SAMPLE_BYTES,
                                   "--games-per-iteration"),
        "the teacher's positions": (3 * teacher * SAMPLE_BYTES, "--teacher-positions"),
        "the random playouts": (playouts, "--playouts"),
        "the network": (network_bytes(opts, obs_size) + batch_bytes(opts, obs_size),
                        "--hidden, --blocks, --channels, --batch-size"
                        if opts.net in CONV_BODIES else "--hidden, --layers, --batch-size"),
    }
    return needs


def check_memory(opts: Any, obs_size: int, available: int | None = None) -> None:
    """``ValueError`` naming the options of the largest part when a run of ``opts`` would
    need more than the machine's memory (``available`` bytes; by default
    :func:`~patchwork_env.training.ppo.limits.physical_memory`)."""
    available = physical_memory() if available is None else available
    if available is None:
        return
    needs = memory_needs(opts, obs_size)
    total = sum(size for size, _ in needs.values())
    if total <= available:
        return
    part, (size, flags) = max(needs.items(), key=lambda item: item[1][0])
    raise ValueError(f"these options would need at least {gigabytes(total)} of memory, "
                     f"{gigabytes(size)} of it for {part} ({flags}); this machine has "
                     f"{gigabytes(available)}")
