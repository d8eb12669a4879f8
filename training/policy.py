"""The policy networks, and a faster masked distribution over the 2026 actions.

:class:`FastMaskablePolicy` is sb3-contrib's MLP actor-critic with a distribution that
gives the same results at a fraction of the cost: the stock one normalises logits of
-1e8 (its masked value), and exponentials of such numbers take a slow path on CPU; it
also samples with ``torch.multinomial``, slow over 2026 categories. Its weights are those
of the stock policy, so an exported model loads as a plain ``MaskablePPO`` one.

:class:`PatchworkPolicy` (``--net conv``) is a small convolutional net over the quilts,
conditioned on the rest.

Most of the 2026 actions are placements (``slot * 648 + orientation * 81 + anchor``), so the
network predicts them as 24 planes over the 9x9 board (one per slot and orientation) plus
one plane for leather patches: a placement's logit is read at its anchor cell, where
the convolutions see the patch's neighbourhood. Everything that is not on the board
(buttons, time, the circle, the leather track) goes through an MLP whose output modulates
every convolution (a per-channel scale and shift) and biases each plane, which is how the
net learns which patch sits in which slot and what it is worth.

"""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np
import torch
from gymnasium import spaces
from sb3_contrib.common.maskable.distributions import (
    MaskableCategorical,
    MaskableCategoricalDistribution,
    MaybeMasks,
)
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from stable_baselines3.common.type_aliases import Schedule
from torch import nn

from patchwork_env.actions import ADVANCE, N_ACTIONS, N_CELLS
from patchwork_env.observation import QUILTS_AT
from patchwork_env.rules import BOARD_SIZE

N_PLANES = 25
"""24 buy planes (3 slots x 8 orientations) and one leather plane."""
MASKED_LOGIT = -1e8
"""The logit of an illegal action, as in sb3-contrib."""


class FastMaskableCategorical(MaskableCategorical):
    """sb3-contrib's masked categorical, normalised and sampled without the slow paths."""

    def apply_masking(self, masks: MaybeMasks) -> None:
        if masks is None:
            return super().apply_masking(masks)
        legal = torch.as_tensor(masks, dtype=torch.bool,
                                device=self.logits.device).reshape(self.logits.shape)
        if not legal.any(-1).all():  # a row with no legal action: leave it to the parent
            return super().apply_masking(masks)
        self.masks = legal
        raw = self._original_logits
        # log-sum-exp over the legal actions only, never exponentiating a masked logit
        top = raw.masked_fill(~legal, -torch.inf).amax(-1, keepdim=True).detach()
        total = (raw - top).exp().masked_fill(~legal, 0.0).sum(-1, keepdim=True)
        logits = torch.where(legal, raw - top - total.log(), MASKED_LOGIT)
        self.__dict__.pop("probs", None)
        self.logits = self._param = logits
        return None

    def sample(self, sample_shape: torch.Size = torch.Size()) -> torch.Tensor:  # noqa: B008
        if sample_shape != torch.Size():
            return super().sample(sample_shape)
        # Inverse CDF: the first action whose cumulative probability exceeds a uniform
        # draw; an action of probability 0 never is the first.
        with torch.no_grad():
            cdf = self.probs.cumsum(-1)
            u = torch.rand(cdf.shape[:-1] + (1,), device=cdf.device) * cdf[..., -1:]
            return torch.searchsorted(cdf, u, right=True).squeeze(-1)


class FastMaskableCategoricalDistribution(MaskableCategoricalDistribution):
    """:class:`MaskableCategoricalDistribution` built on :class:`FastMaskableCategorical`."""

    def proba_distribution(self, action_logits: torch.Tensor
                           ) -> FastMaskableCategoricalDistribution:
        self.distribution = FastMaskableCategorical(logits=action_logits.view(-1,
                                                                              self.action_dim))
        return self


class FastMaskablePolicy(MaskableActorCriticPolicy):
    """sb3-contrib's actor-critic with :class:`FastMaskableCategorical` (same weights)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.action_dist = FastMaskableCategoricalDistribution(N_ACTIONS)


class PatchworkNet(nn.Module):
    """Actor and critic trunks; the actor's latent *is* the 2026 action logits."""

    def __init__(self, obs_size: int, channels: int = 32, blocks: int = 4,
                 hidden: int = 256) -> None:
        super().__init__()
        board = 2 * N_CELLS
        self.context = nn.Sequential(nn.Linear(obs_size - board, hidden), nn.ReLU(),
                                     nn.Linear(hidden, hidden), nn.ReLU())
        self.stem = nn.Conv2d(2, channels, 3, padding=1)
        self.convs = nn.ModuleList(nn.Conv2d(channels, channels, 3, padding=1)
                                   for _ in range(blocks - 1))
        # One (scale, shift) pair per channel and conv layer, from the context.
        self.film = nn.Linear(hidden, 2 * channels * blocks)
        self.plane_head = nn.Conv2d(channels, N_PLANES, 1)
        self.plane_bias = nn.Linear(hidden, N_PLANES)
        self.advance_head = nn.Linear(hidden + channels, 1)
        self.value_trunk = nn.Sequential(nn.Linear(hidden + channels, hidden), nn.ReLU())
        self.channels = channels
        self.blocks = blocks
        self.latent_dim_pi = N_ACTIONS
        self.latent_dim_vf = hidden

    def small_init_layers(self) -> list[nn.Module]:
        """Layers initialised near zero: the logits (as for any policy head) and the
        modulation (so that every convolution starts unmodulated)."""
        return [self.plane_head, self.plane_bias, self.advance_head, self.film]

    def _trunk(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(board features (N, C, 9, 9), context (N, hidden))``."""
        quilts = obs[:, QUILTS_AT : QUILTS_AT + 2 * N_CELLS].reshape(-1, 2, BOARD_SIZE,
                                                                      BOARD_SIZE)
        context = self.context(obs[:, QUILTS_AT + 2 * N_CELLS :])
        film = self.film(context).view(-1, self.blocks, 2, self.channels, 1, 1)
        x = quilts
        for k, conv in enumerate([self.stem, *self.convs]):
            y = conv(x) * (1 + film[:, k, 0]) + film[:, k, 1]
            y = torch.relu(y)
            x = y if k == 0 else x + y  # residual once the width is constant
        return x, context

    def _actor(self, x: torch.Tensor, context: torch.Tensor) -> torch.Tensor:
        planes = self.plane_head(x) + self.plane_bias(context)[:, :, None, None]
        planes = planes.flatten(1)
        advance = self.advance_head(torch.cat([context, x.mean(dim=(2, 3))], dim=1))
        return torch.cat([planes[:, :ADVANCE], advance, planes[:, ADVANCE:]], dim=1)

    def _critic(self, x: torch.Tensor, context: torch.Tensor) -> torch.Tensor:
        return self.value_trunk(torch.cat([context, x.mean(dim=(2, 3))], dim=1))

    def forward(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        x, context = self._trunk(obs)
        return self._actor(x, context), self._critic(x, context)

    def forward_actor(self, obs: torch.Tensor) -> torch.Tensor:
        return self._actor(*self._trunk(obs))

    def forward_critic(self, obs: torch.Tensor) -> torch.Tensor:
        return self._critic(*self._trunk(obs))


class PatchworkPolicy(FastMaskablePolicy):
    """MaskablePPO's actor-critic with :class:`PatchworkNet` as its body.

    ``net_kwargs`` go to :class:`PatchworkNet` (``channels``, ``blocks``, ``hidden``).
    """

    def __init__(self, observation_space: spaces.Box, action_space: spaces.Discrete,
                 lr_schedule: Schedule, net_kwargs: dict[str, Any] | None = None,
                 **kwargs: Any) -> None:
        self.net_kwargs = dict(net_kwargs or {})
        super().__init__(observation_space, action_space, lr_schedule, **kwargs)

    def _get_constructor_parameters(self) -> dict[str, Any]:
        return {**super()._get_constructor_parameters(), "net_kwargs": self.net_kwargs}

    def _build_mlp_extractor(self) -> None:
        self.mlp_extractor = PatchworkNet(int(self.features_dim), **self.net_kwargs)

    def _build(self, lr_schedule: Schedule) -> None:
        # As the parent's, except that the net's actor latent already is the logits.
        self._build_mlp_extractor()
        self.action_net = nn.Identity()
        self.value_net = nn.Linear(self.mlp_extractor.latent_dim_vf, 1)
        if self.ortho_init:
            self.mlp_extractor.apply(partial(self.init_weights, gain=np.sqrt(2)))
            for layer in self.mlp_extractor.small_init_layers():
                layer.apply(partial(self.init_weights, gain=0.01))
            self.value_net.apply(partial(self.init_weights, gain=1.0))
        self.optimizer = self.optimizer_class(self.parameters(), lr=lr_schedule(1),
                                              **self.optimizer_kwargs)
