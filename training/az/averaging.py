"""The network a run publishes: an exponential moving average of the learner's weights.

From one iteration to the next the learner's network wanders around what its games teach
(its strength against a fixed opponent can move by several points between neighbouring
iterations); the average of its recent weights plays better than any one of them. After
iteration ``n`` the average moves towards the learner's weights:

    average <- d_n * average + (1 - d_n) * learner,    d_n = min(decay, (1 + n) / (10 + n))

so it remembers about the last ``1 / (1 - decay)`` iterations once ``n`` is large, and
fewer while the network is young and changes fast (``d_1`` is 0.18, ``d_10`` 0.55). The
average is what ``net.pt`` holds and what the run's evaluations play; self-play and the
learner go on with the learner's own weights, so averaging leaves the training itself as
it is. ``decay`` 0 publishes the learner's network.
"""

from __future__ import annotations

import copy
from typing import Any

import torch

from patchwork_env.agents.az.net import AZNet

WARMUP = 10
"""``d_n = (1 + n) / (WARMUP + n)`` until it reaches the decay."""


def decay_at(decay: float, iteration: int) -> float:
    """The weight the average keeps after ``iteration`` (counted from 1)."""
    return min(decay, (1 + iteration) / (WARMUP + iteration))


class WeightAverage:
    """The moving average of ``net``'s weights with ``decay`` (0 < decay < 1), starting
    from its weights now; a copy of the network on its device."""

    def __init__(self, net: AZNet, decay: float) -> None:
        if not 0 < decay < 1:
            raise ValueError(f"the average's decay must lie in (0, 1), got {decay}")
        self.decay = decay
        self.net = copy.deepcopy(net).eval()
        for p in self.net.parameters():
            p.requires_grad_(False)

    @torch.no_grad()
    def update(self, net: AZNet, iteration: int) -> None:
        """Move the average towards ``net``'s weights after ``iteration``."""
        d = decay_at(self.decay, iteration)
        learner = net.state_dict()
        for name, average in self.net.state_dict().items():
            if average.is_floating_point():
                average.mul_(d).add_(learner[name], alpha=1 - d)
            else:
                average.copy_(learner[name])

    def state_dict(self) -> dict[str, Any]:
        """The average's weights, for the checkpoint."""
        return self.net.state_dict()

    def load_state_dict(self, state: dict[str, torch.Tensor]) -> None:
        """Continue from a checkpoint's average (checked by
        :func:`~.restore_checks.check_average_state`)."""
        self.net.load_state_dict(state)


def average_of(net: AZNet, decay: float) -> WeightAverage | None:
    """The average of ``net``'s weights with ``decay``, starting from them now; ``None`` for
    ``decay`` 0 (the run publishes the learner's own network)."""
    return WeightAverage(net, decay) if decay > 0 else None


__all__ = ["WARMUP", "WeightAverage", "average_of", "decay_at"]
