"""The policy networks, a faster masked distribution, and building a policy from its config.

Playing a learned model needs its network, so the networks live here, in the agents
layer: training builds them to learn, :mod:`.model_file` builds them to load a model
(from a small JSON-able description of the network and the weights).

:class:`FastMaskablePolicy` (``--net mlp``) is sb3-contrib's MLP actor-critic with a
distribution that gives the same results at a fraction of the cost: the stock one
normalises logits of -1e8 (its masked value), and exponentials of such numbers take a
slow path on CPU; it also samples with ``torch.multinomial``, slow over 2026 categories.
Its weights are those of the stock policy.

:class:`PatchworkPolicy` (``--net conv`` or ``--net stencil``) is a small convolutional
net over the quilts, conditioned on the rest.

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

from patchwork_env.agents.stencils import shape_tables, slot_stencils, stencil_sums
from patchwork_env.data.actions import ADVANCE, N_ACTIONS, N_CELLS, N_ORIENTATIONS, N_SLOTS
from patchwork_env.data.rules import BOARD_SIZE
from patchwork_env.views.observation import (
    PATCH_FEATURES,
    QUILTS_AT,
)

N_PLANES = N_SLOTS * N_ORIENTATIONS + 1
"""A buy plane per slot and orientation, and one leather plane."""
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
        # Log-sum-exp over the legal actions only. A masked logit is never exponentiated:
        # far above the legal ones it would overflow, and its zero gradient times the
        # infinite exponential would turn every weight into NaN.
        legal_logits = self._original_logits.masked_fill(~legal, -torch.inf)
        log_total = torch.logsumexp(legal_logits, -1, keepdim=True)
        logits = torch.where(legal, legal_logits - log_total, MASKED_LOGIT)
        self.__dict__.pop("probs", None)
        self.logits = self._param = logits
        return None

    def sample(self, sample_shape: torch.Size = torch.Size()) -> torch.Tensor:  # noqa: B008
        if sample_shape != torch.Size():
            return super().sample(sample_shape)
        # Inverse CDF: the first action whose cumulative probability exceeds a uniform
        # draw; an action of probability 0 never is the first.
        with torch.no_grad():
            probs = self.probs
            cdf = probs.cumsum(-1)
            u = torch.rand(cdf.shape[:-1] + (1,), device=cdf.device) * cdf[..., -1:]
            drawn = torch.searchsorted(cdf, u, right=True).squeeze(-1)
            # u * total can round up to the total itself: then take the last possible action
            last = probs.shape[-1] - 1 - (probs.flip(-1) > 0).int().argmax(-1)
            return torch.where(drawn < probs.shape[-1], drawn, last)


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

    def config(self) -> dict[str, int]:
        """The constructor's keyword arguments that rebuild this net (its sizes)."""
        return {"channels": self.channels, "blocks": self.blocks, "hidden": self.latent_dim_vf}

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

    @staticmethod
    def _pooled(x: torch.Tensor, context: torch.Tensor) -> torch.Tensor:
        """The context joined with the board features averaged over the board."""
        return torch.cat([context, x.mean(dim=(2, 3))], dim=1)

    def _actor(self, x: torch.Tensor, context: torch.Tensor, obs: torch.Tensor
               ) -> torch.Tensor:
        planes = self.plane_head(x) + self.plane_bias(context)[:, :, None, None]
        planes = planes.flatten(1)
        advance = self.advance_head(self._pooled(x, context))
        return torch.cat([planes[:, :ADVANCE], advance, planes[:, ADVANCE:]], dim=1)

    def _critic(self, x: torch.Tensor, context: torch.Tensor) -> torch.Tensor:
        return self.value_trunk(self._pooled(x, context))

    def forward(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        x, context = self._trunk(obs)
        return self._actor(x, context, obs), self._critic(x, context)

    def forward_actor(self, obs: torch.Tensor) -> torch.Tensor:
        return self._actor(*self._trunk(obs), obs)

    def forward_critic(self, obs: torch.Tensor) -> torch.Tensor:
        return self._critic(*self._trunk(obs))


class StencilNet(PatchworkNet):
    """:class:`PatchworkNet` whose placement logits see the patch's shape.

    The trunk turns the board into per-cell maps, mixed per slot by weights from the
    context into two maps: what covering a cell is worth and what touching it is worth.
    A placement's logit sums the first map over the cells the patch would cover and the
    second over the cells around it (the patch's stencil at that anchor, read from the
    circle in the observation), plus the slot's bias. How snugly a patch fits and what it
    leaves open are such sums, so they need not be learned anew for each shape,
    orientation and anchor; and the sums are two small matrix products.
    """

    def __init__(self, obs_size: int, channels: int = 32, blocks: int = 4,
                 hidden: int = 256, maps: int = 16) -> None:
        super().__init__(obs_size, channels, blocks, hidden)
        cells, touching = shape_tables()
        self.register_buffer("cells", torch.as_tensor(cells), persistent=False)
        self.register_buffer("touching", torch.as_tensor(touching), persistent=False)
        self.register_buffer("patch_rows", torch.as_tensor(PATCH_FEATURES), persistent=False)
        self.maps = nn.Conv2d(channels, maps, 1)
        self.n_maps = maps + 2  # and the player's own quilt and the board itself
        self.slot_weights = nn.Linear(hidden, N_SLOTS * 2 * self.n_maps)
        self.slot_bias = nn.Linear(hidden, N_SLOTS)
        self.leather_head = nn.Conv2d(channels, 1, 1)

    def config(self) -> dict[str, int]:
        return {**super().config(), "maps": self.maps.out_channels}

    def small_init_layers(self) -> list[nn.Module]:
        return [self.slot_weights, self.slot_bias, self.leather_head, self.advance_head,
                self.film]

    def _stencils(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(N, N_SLOTS, 8, 25)`` and ``(N, N_SLOTS, 8, 49)``: the stencils of the patches
        in the slots (zero where a slot is empty)."""
        return slot_stencils(obs, self.patch_rows, self.cells, self.touching)

    def _actor(self, x: torch.Tensor, context: torch.Tensor, obs: torch.Tensor
               ) -> torch.Tensor:
        n = x.shape[0]
        own = obs[:, QUILTS_AT : QUILTS_AT + N_CELLS].view(n, 1, BOARD_SIZE, BOARD_SIZE)
        maps = torch.cat([self.maps(x), own, torch.ones_like(own)], dim=1)
        weights = self.slot_weights(context).view(n, 2, N_SLOTS, self.n_maps)
        cover, touch = torch.einsum("nwsk,nkhc->nwshc", weights, maps).unbind(1)
        cells, touching = self._stencils(obs)
        buys = (stencil_sums(cover, cells, margin=0) + stencil_sums(touch, touching, margin=1)
                + self.slot_bias(context)[:, :, None, None])
        leather = self.leather_head(x).flatten(1)
        advance = self.advance_head(self._pooled(x, context))
        return torch.cat([buys.flatten(1), advance, leather], dim=1)


NETS = {"conv": PatchworkNet, "stencil": StencilNet}
"""The bodies :class:`PatchworkPolicy` can use (``net_kwargs["kind"]``)."""


class PatchworkPolicy(FastMaskablePolicy):
    """MaskablePPO's actor-critic with a :data:`NETS` body.

    ``net_kwargs``: ``kind`` (``"conv"`` by default) and the body's own arguments
    (``channels``, ``blocks``, ``hidden``, ...).
    """

    def __init__(self, observation_space: spaces.Box, action_space: spaces.Discrete,
                 lr_schedule: Schedule, net_kwargs: dict[str, Any] | None = None,
                 **kwargs: Any) -> None:
        self.net_kwargs = dict(net_kwargs or {})
        super().__init__(observation_space, action_space, lr_schedule, **kwargs)

    def _get_constructor_parameters(self) -> dict[str, Any]:
        return {**super()._get_constructor_parameters(), "net_kwargs": self.net_kwargs}

    def _build_mlp_extractor(self) -> None:
        kwargs = dict(self.net_kwargs)
        net = NETS[kwargs.pop("kind", "conv")]
        self.mlp_extractor = net(int(self.features_dim), **kwargs)

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
