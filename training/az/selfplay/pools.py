"""Where a run's self-play runs, as its options ask: this process, worker processes (each
with its own network, or sharing an inference service) or Ray actors (the same two ways).

All have the interface ``generate(weights, n_games, seed) -> SelfPlayBatch``; the pools
also have ``close()``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from patchwork_env.agents.az.net import AZNet, make_evaluator
from patchwork_env.training.az.selfplay.processes import WorkerPool
from patchwork_env.training.az.selfplay.ray_actors import RayWorkerPool
from patchwork_env.training.az.selfplay.ray_service import RayServicePool
from patchwork_env.training.az.selfplay.service import ServicePool
from patchwork_env.training.az.selfplay.worker import SelfPlayWorker

if TYPE_CHECKING:
    from patchwork_env.training.az.options import AZOptions

SelfPlay = SelfPlayWorker | WorkerPool | ServicePool | RayWorkerPool | RayServicePool
"""Whatever plays a run's games."""


def uses_service(opts: AZOptions, net: AZNet) -> bool:
    """Whether the leaves go to one inference service: asked for, or ``auto`` with the
    network on an accelerator."""
    on_cpu = next(net.parameters()).device.type == "cpu"
    return opts.inference == "service" or (opts.inference == "auto" and not on_cpu)


def make_self_play(net: AZNet, opts: AZOptions) -> SelfPlay:
    """What plays ``opts``'s games with ``net`` (the learner's network, on the run's
    device): Ray actors with ``ray_address``, else worker processes with ``workers > 1`` or
    the inference service, else this process."""
    config, games, rules = opts.search_config(), opts.parallel_games, opts.rules
    service = uses_service(opts, net)
    options = {"full_search_fraction": opts.full_search_fraction,
               "cheap_simulations": opts.cheap_simulations, "game": opts.game}
    if opts.ray_address and service:
        return RayServicePool(net.config(), config, opts.workers, games, rules,
                              opts.ray_address, device=opts.device, precision=opts.precision,
                              worker_options=options)
    if opts.ray_address:
        return RayWorkerPool(net.config(), config, opts.workers, games, rules,
                             opts.ray_address, worker_options=options)
    if service:
        return ServicePool(make_evaluator(net, precision=opts.precision), config,
                           opts.workers, games, net.obs_size, rules, worker_options=options)
    if opts.workers > 1:
        return WorkerPool(net.config(), config, opts.workers, games, rules,
                          worker_options=options)
    return SelfPlayWorker(net.config(), config, games, rules,
                          device=next(net.parameters()).device, precision=opts.precision,
                          **options)


def close(self_play: SelfPlay) -> None:
    """Stop a pool's processes or actors (nothing to do for this process)."""
    if not isinstance(self_play, SelfPlayWorker):
        self_play.close()


__all__ = ["SelfPlay", "close", "make_self_play", "uses_service"]
