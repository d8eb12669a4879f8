"""Search-guided self-play training (AlphaZero with Gumbel search) on the batch engine.

The parts: :mod:`.selfplay` (the worker that plays games with the batched Gumbel search of
``agents/az_search.py`` and returns samples), :mod:`.buffer` (the replay buffer of compact
state records and sparse policy targets), :mod:`.learner` (the gradient step) and
:mod:`.trainer` (the loop, its options and its checkpoints). ``train.py --algo az`` is
meant to call :func:`run_az` with an :class:`AZOptions`.
"""

from .trainer import AZOptions, AZRunError, run_az

__all__ = ["AZOptions", "AZRunError", "run_az"]
