"""A warm start for search-guided training: the network a run starts from
(:func:`start_net`: fresh, or an ``--init`` file), which first imitates a teacher.

A fresh network's prior is uniform over the ~2,000 actions, so the search's few
simulations go to random placements and self-play learns slowly what any sensible player
knows. As for PPO runs (:mod:`patchwork_env.training.imitation`), a teacher from the
agent registry (``greedy`` by default in ``train.py``) plays games against itself; the
network learns its moves (one-hot policy targets) and the positions' values (the games'
outcomes, mixed with random-playout estimates as in the first iteration of self-play),
through the same learner and minibatches as the search's samples.
"""

from __future__ import annotations

import dataclasses
import math
import sys
from typing import Any

import numpy as np
import torch
from tqdm import tqdm

from patchwork_env.agents.az.games import PATCHWORK, AZGame
from patchwork_env.agents.az.net import AZNet, check_weights, load_az_net
from patchwork_env.data.rules import Rules
from patchwork_env.training.az.aux_targets import final_targets
from patchwork_env.training.az.buffer import ReplayBuffer
from patchwork_env.training.az.learner import Learner
from patchwork_env.training.az.options import AZOptions, AZRunError
from patchwork_env.training.az.selfplay import SelfPlayBatch
from patchwork_env.training.az.value_targets import mixed_targets
from patchwork_env.training.imitation import demonstrations


def teacher_samples(teacher: str, positions: int, seed: int, rules: Rules,
                    score_weight: float, score_scale: float, playout_weight: float,
                    playouts: int, progress: bool = False, game: AZGame = PATCHWORK
                    ) -> SelfPlayBatch:
    """At least ``positions`` positions of ``teacher``'s play of ``game`` (Patchwork by
    default) as search-style samples."""
    demos = demonstrations(teacher, positions, seed, reward="win", score_scale=1.0,
                           progress=progress, rules=rules, game=game.name)
    n = len(demos)
    movers = demos.states["to_move"].astype(np.int64)
    values = np.empty(n, np.float64)
    game.outcome_values(demos.final_states, movers, game.bonus_points(rules), score_weight,
                        score_scale, values)
    values = values.astype(np.float32)
    if playout_weight > 0:
        if progress:
            print(f"random playouts: {playouts} from each of {n} positions", file=sys.stderr)
        estimates = game.playout_values(demos.states, rules, playouts, seed, score_weight,
                                        score_scale)
        values = mixed_targets(values, estimates, playout_weight)
    score_diffs, final_quilts = (final_targets(demos.states, demos.final_states, rules)
                                 if game is PATCHWORK else (None, None))
    return SelfPlayBatch(states=demos.states, target_offsets=np.arange(n + 1, dtype=np.int64),
                         target_actions=demos.actions.astype(np.int64),
                         target_probs=np.ones(n, np.float32), values=values,
                         root_values=np.full(n, np.nan, np.float32),
                         game_ids=np.zeros(n, np.int64), winners=np.zeros(0, np.int64),
                         games=0, score_diffs=score_diffs, final_quilts=final_quilts)


def imitate(learner: Learner, samples: SelfPlayBatch, rules: Rules, epochs: float,
            batch_size: int, seed: int, augment: bool, progress: bool = False,
            game: AZGame = PATCHWORK) -> dict[str, Any]:
    """``epochs`` passes (in minibatch steps) of ``learner`` over ``samples`` of ``game``;
    the mean losses of the last tenth of the steps. ``progress``: a bar of the steps on
    stderr."""
    buffer = ReplayBuffer(len(samples), rules, game)
    buffer.add(samples)
    rng = np.random.default_rng([seed, 2])
    steps = max(1, math.ceil(epochs * len(samples) / batch_size))
    losses = [learner.step(buffer.sample(batch_size, rng, augment))
              for _ in tqdm(range(steps), desc="imitation", unit="step", disable=not progress,
                            file=sys.stderr, dynamic_ncols=True, leave=False)]
    tail = losses[-max(1, steps // 10):]
    return {"steps": steps, **{k: float(np.mean([x[k] for x in tail])) for k in tail[0]}}


VALUE_IN = "value_head.0.weight"
"""The value head's first layer, wider where the value reads the score head."""


def start_net(opts: AZOptions) -> AZNet:
    """The network a new run starts from: ``init``'s, or fresh weights from the seed.
    :class:`AZRunError` naming the file for an ``init`` that cannot be read or whose shapes
    are not the options'."""
    if not opts.init:
        return opts.network()
    try:
        net = load_az_net(opts.init, game=opts.game)
    except (OSError, ValueError) as e:
        raise AZRunError(f"--init: {e}") from None
    # heads the file lacks start fresh (a value head that reads the score head, with no
    # weight on it); everything else must fit
    grow = ((opts.aux_heads and not net.aux)
            or (opts.value_reads_score and not net.value_reads_score))
    as_file = {"value_reads_score": net.value_reads_score}
    if not net.aux:
        as_file.update(score_head_weight=0.0, ownership_weight=0.0)
    with torch.random.fork_rng():
        expected = opts.network()
        bare = dataclasses.replace(opts, **as_file).network() if grow else expected
    try:
        check_weights(bare, net.state_dict())
    except ValueError as e:
        raise AZRunError(f"--init: {opts.init} does not fit --net {opts.net}, --hidden "
                         f"{opts.hidden}, --layers {opts.layers}, --blocks {opts.blocks}, "
                         f"--channels {opts.channels} and --rules {opts.rules}: {e}") from None
    if grow:
        state = net.state_dict()
        first, wanted = state[VALUE_IN], expected.state_dict()[VALUE_IN]
        if first.shape != wanted.shape:  # the value head reads the score head too:
            state[VALUE_IN] = torch.cat(  # it starts by giving it no weight
                [first, first.new_zeros(len(first), wanted.shape[1] - first.shape[1])], dim=1)
        expected.load_state_dict(state, strict=False)
        return expected.eval()
    return net
