"""Search-guided self-play training (AlphaZero with Gumbel search) on the batch engine.

The parts: :mod:`.options` (:class:`AZOptions`, every ``train.py --algo az`` flag),
:mod:`.selfplay` (the worker that plays games with the batched Gumbel search of
``agents/az/search.py`` and returns samples, and where such workers run: in processes, on
Ray actors, with or without one inference service for their leaves),
:mod:`.value_targets` (value targets: outcomes, random playouts, search values),
:mod:`.warm_start` (imitation of a teacher before self-play), :mod:`.buffer` (the replay
buffer of compact state records and sparse policy targets, with :mod:`.symmetry`'s
augmentation), :mod:`.learner` (the gradient step), :mod:`.monitor` (metrics, TensorBoard,
evaluations, the learning curve) and :mod:`.trainer` (the loop and its checkpoints).
"""

from patchwork_env.training.az.options import AZOptions, AZRunError
from patchwork_env.training.az.trainer import run_az

__all__ = ["AZOptions", "AZRunError", "run_az"]
