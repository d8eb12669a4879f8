"""How the Gumbel search searches: :class:`SearchConfig`, each setting and its default once.

The search (:class:`~.search.GumbelSearch`), the agents (:mod:`.agent`), the self-play
worker and the trainer's options (``training/az``) all take or derive their settings from
it. :data:`PLAY` is how the agents search, :data:`TRAINING` how a training run's self-play
searches unless its options say otherwise. :class:`KernelParams` is the part the compiled
loops read, as named scalars numba takes.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import NamedTuple


class KernelParams(NamedTuple):
    """The settings the compiled selection and expansion read (see :class:`SearchConfig`)."""

    c_visit: float
    c_scale: float
    rescale_values: bool
    top_k: int
    every_choice: bool
    score_weight: float
    score_scale: float


@dataclass(frozen=True)
class SearchConfig:
    """The settings of a Gumbel search (see :mod:`.search`); checked when made (a
    ``ValueError`` naming the setting out of range)."""

    simulations: int = 32
    """Simulations per search after the root's evaluation (so at most ``simulations + 1``
    network evaluations per position)."""
    max_considered: int = 16
    """Root actions sampled by Gumbel-top-k for sequential halving (``m``)."""
    top_k: int = 32
    """Legal actions kept (by prior) at inner nodes of the search."""
    gumbel_scale: float = 1.0
    """Scale of the root's Gumbel noise: 1 explores (self-play), 0 searches
    deterministically (the top ``m`` by prior)."""
    c_visit: float = 50.0
    """``sigma(q) = (c_visit + max visits) * c_scale * q`` of the completed Q values."""
    c_scale: float = 0.1
    """See ``c_visit``."""
    rescale_values: bool = True
    """Rescale the completed Q values of a node to [0, 1] by their min and max before
    ``sigma``."""
    score_weight: float = 0.0
    """Weight of the clipped score difference in a finished game's value (0: win/loss)."""
    score_scale: float = 20.0
    """Score difference that counts as a full win in that value."""
    every_choice: bool = True
    """The root's considered actions and an inner node's kept edges include the best
    action of every choice of the turn (buying from each slot, advancing) before any
    second-best one, so that one choice's many placements cannot crowd the others out of a
    small budget."""
    leaf_playouts: int = 0
    """Random playouts from each evaluated leaf (0: none), their mean result (valued as
    finished games are) mixed into the leaf's value."""
    playout_mix: float = 0.5
    """Weight of the leaf playouts' mean result in a leaf's value."""
    parallel: bool | None = False
    """Run the loops over games multi-threaded (``None``: as the engine does, from 256
    games when numba has several threads). Off by default: one simulation step of a few
    hundred games is little work, and when the cores are shared (with the network's own
    threads, or with other programs) the threads' hand-offs cost more than it."""

    def __post_init__(self) -> None:
        for name in ("max_considered", "top_k"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, got {getattr(self, name)}")
        for name in ("simulations", "leaf_playouts"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must not be negative, got {getattr(self, name)}")
        for name in ("score_weight", "playout_mix"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"{name} must lie in [0, 1], got {getattr(self, name)}")
        if not self.score_scale > 0:
            raise ValueError(f"score_scale must be positive, got {self.score_scale}")

    def replace(self, **changes: object) -> SearchConfig:
        """This config with ``changes`` (a ``TypeError`` naming an unknown setting)."""
        return dataclasses.replace(self, **changes)

    def kernel_params(self) -> KernelParams:
        """The named scalars the compiled loops take."""
        return KernelParams(float(self.c_visit), float(self.c_scale), bool(self.rescale_values),
                            int(self.top_k), bool(self.every_choice), float(self.score_weight),
                            float(self.score_scale))


PLAY = SearchConfig(max_considered=4, top_k=4, gumbel_scale=0.0)
"""How the agents search: no noise, and with ``every_choice`` the four considered root
actions are the best placement of each slot's patch and advancing, as the four-choice tree
of ``mcts`` branches (its ``simulations`` is set from the agent's evaluation budget)."""

TRAINING = SearchConfig(max_considered=4, top_k=4, score_weight=0.5)
"""How a training run's self-play searches unless its options say otherwise: as narrow as
:data:`PLAY` (4 considered root actions, 4 kept edges), so that self-play spends its
simulations on the moves the agents weigh, with Gumbel noise at the root, and finished
games valued half by win/loss and half by the clipped score difference."""
