"""Self-play: the worker that turns a network into samples, and where workers run.

* :mod:`.worker`: :class:`SelfPlayWorker`, which plays games with the batched Gumbel search
  and returns them as a :class:`SelfPlayBatch` of samples;
* :mod:`.processes`: several workers in processes of this machine, each with its own copy
  of the network;
* :mod:`.inference` and :mod:`.service`: worker processes that hold no network, their
  leaves evaluated together by one inference service in the learner's process, on the
  run's device;
* :mod:`.ray_actors` and :mod:`.ray_service`: the same two ways on Ray actors, on this
  machine or a cluster;
* :mod:`.pools`: which of them a run's options ask for.

Every way gives the same samples for a seed and a number of workers.
"""

from patchwork_env.training.az.selfplay.worker import SelfPlayBatch, SelfPlayWorker

__all__ = ["SelfPlayBatch", "SelfPlayWorker"]
