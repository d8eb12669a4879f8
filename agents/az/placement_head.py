"""The shape-aware placement head of the az network's ``shaped`` and ``resnet`` bodies.

A buy's logit is a sum of per-cell maps over the cells the patch would cover and touch
(:mod:`patchwork_env.agents.stencils`). Both games encode buys alike (slot, orientation,
anchor), so one head serves both: it finds the patch in each slot in the game's own
observation and adds the game's other actions (Patchwork: advancing and the leather
patches; the draft: its three discards).
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from patchwork_env.agents.az.games import get_game
from patchwork_env.agents.stencils import patch_keys, placement_sums, placement_tables, slot_patches
from patchwork_env.data.actions import N_CELLS, N_SLOTS
from patchwork_env.data.rules import BOARD_SIZE
from patchwork_env.views.draft_observation import FACE_UP_AT, FACE_UP_FEATURES, draft_layout
from patchwork_env.views.observation import QUILTS_AT

SHAPE_AT = 3
"""Where a face-up slot's 5x5 shape starts in the draft's observation of it (after
present, cost and starred)."""
_SHAPE_WEIGHTS = torch.as_tensor(np.random.default_rng(0).uniform(
    1.0, 2.0, FACE_UP_FEATURES - SHAPE_AT))
_KEY_TOLERANCE = 1e-4


def draft_patch_keys() -> torch.Tensor:
    """``(33,) float64``: each patch's shape in the draft's observation projected to one
    number (patches of one shape share a key, and their placements)."""
    shapes = torch.as_tensor(draft_layout("default").features[:, SHAPE_AT:]).double()
    return shapes @ _SHAPE_WEIGHTS


def draft_slot_patches(obs: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
    """``(N, N_SLOTS) int64``: a patch of the shape in each face-up slot of draft
    observations (the first of that shape), -1 where a slot is empty."""
    rows = obs[:, FACE_UP_AT: FACE_UP_AT + N_SLOTS * FACE_UP_FEATURES].view(
        -1, N_SLOTS, FACE_UP_FEATURES)[:, :, SHAPE_AT:]
    projected = rows.double() @ _SHAPE_WEIGHTS.to(rows.device)
    distance, which = (projected[:, :, None] - keys).abs().min(-1)
    return torch.where(distance < _KEY_TOLERANCE, which, torch.full_like(which, -1))


class ShapedPolicyHead(nn.Module):
    """The placement head of the ``shaped`` and ``resnet`` bodies: placement logits as
    stencil sums of per-cell maps.

    ``maps`` learned per-cell maps (and the player's own quilt and the board) are mixed per
    slot, by weights from a ``hidden``-wide feature vector, into a cover and a touch map
    that :func:`.stencils.placement_sums` sums over each placement's cells; the slot biases
    and the advance and leather logits (``game="draft"``: the three discards') come from
    the vector too. The learned maps are
    ``map_layer`` of its input: by default a linear layer of the vector (``shaped``), or
    for instance a 1x1 convolution of a trunk's planes (``resnet``).
    """

    def __init__(self, hidden: int, maps: int, map_layer: nn.Module | None = None,
                 game: str = "patchwork") -> None:
        super().__init__()
        self.game = get_game(game).name
        self.register_buffer("table", torch.as_tensor(placement_tables()), persistent=False)
        self.register_buffer("patch_keys", patch_keys() if self.game == "patchwork"
                             else draft_patch_keys(), persistent=False)
        self.n_maps = maps + 2  # and the player's own quilt and the board itself
        self.maps = nn.Linear(hidden, maps * N_CELLS) if map_layer is None else map_layer
        self.slot_weights = nn.Linear(hidden, 2 * N_SLOTS * self.n_maps)
        self.slot_bias = nn.Linear(hidden, N_SLOTS)
        if self.game == "patchwork":
            self.advance = nn.Linear(hidden, 1)
            self.leather = nn.Linear(hidden, N_CELLS)
        else:
            self.discard = nn.Linear(hidden, N_SLOTS)

    def small_init_layers(self) -> list[nn.Module]:
        """The layers that start near zero (a near-uniform policy)."""
        if self.game == "patchwork":
            return [self.slot_weights, self.slot_bias, self.advance, self.leather]
        return [self.slot_weights, self.slot_bias, self.discard]

    def forward(self, h: torch.Tensor, obs: torch.Tensor, planes: torch.Tensor | None = None
                ) -> torch.Tensor:
        """The (N, actions) logits of feature vectors ``h`` (N, hidden) of observations
        ``obs``; the learned maps are ``map_layer`` of ``planes`` where given, else of
        ``h``."""
        n = h.shape[0]
        own = obs[:, QUILTS_AT : QUILTS_AT + N_CELLS].view(n, 1, BOARD_SIZE, BOARD_SIZE)
        learned = self.maps(h if planes is None else planes).reshape(n, -1, BOARD_SIZE,
                                                                     BOARD_SIZE)
        maps = torch.cat([learned, own, torch.ones_like(own)], dim=1)  # (N, K, 9, 9)
        weights = self.slot_weights(h).view(n, 2, N_SLOTS, self.n_maps)
        cover, touch = torch.einsum("nwsk,nkc->nwsc", weights, maps.flatten(2)).unbind(1)
        patches = (slot_patches(obs, self.patch_keys) if self.game == "patchwork"
                   else draft_slot_patches(obs, self.patch_keys))
        buys = (placement_sums(cover, touch, patches, self.table)
                + self.slot_bias(h)[:, :, None])
        if self.game == "patchwork":
            return torch.cat([buys.flatten(1), self.advance(h), self.leather(h)], dim=1)
        return torch.cat([buys.flatten(1), self.discard(h)], dim=1)
