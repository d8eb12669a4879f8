"""Patch stencils for placement heads: the cells a patch covers and touches at each anchor.

A placement's logit can be a sum of per-cell maps over the cells the patch would cover
(and those around it), so that how snugly a patch fits need not be learned anew for each
shape, orientation and anchor. This module holds the tables and the two tensor operations
such heads share (the PPO :class:`~.networks.StencilNet` and the az network's ``shaped``
body); it needs torch only.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from torch.nn import functional as F

from patchwork_env.data.actions import N_CELLS, N_ORIENTATIONS, N_SLOTS
from patchwork_env.data.patches import N_PATCHES, PATCHES
from patchwork_env.data.rules import BOARD_SIZE
from patchwork_env.data.tables import PLACEMENT_MASKS
from patchwork_env.views.observation import CIRCLE_AT, PATCH_FEATURES, SHAPE_SIZE, SLOT_FEATURES


def shape_tables() -> tuple[np.ndarray, np.ndarray]:
    """Every patch in every orientation as a stencil: ``(33, 8, 25)`` cells on a 5x5 grid
    whose corner is the anchor, and ``(33, 8, 49)`` the cells touching it on a 7x7 grid
    one cell up and left of the anchor."""
    cells = np.zeros((N_PATCHES, N_ORIENTATIONS, SHAPE_SIZE, SHAPE_SIZE), np.float32)
    for patch in PATCHES:
        for o in range(N_ORIENTATIONS):
            for r, c in patch.oriented(o):
                cells[patch.id, o, r, c] = 1.0
    grown = np.pad(cells, ((0, 0), (0, 0), (1, 1), (1, 1)))
    touching = np.zeros_like(grown)
    for dr, dc in ((-1, 0), (1, 0), (0, -1), (0, 1)):
        touching = np.maximum(touching, np.roll(grown, (dr, dc), axis=(2, 3)))
    touching *= 1.0 - grown
    return (cells.reshape(N_PATCHES, N_ORIENTATIONS, -1),
            touching.reshape(N_PATCHES, N_ORIENTATIONS, -1))


def stencil_sums(maps: torch.Tensor, stencils: torch.Tensor, margin: int) -> torch.Tensor:
    """``(N, S, O, 81)``: for each anchor, the sum of ``maps[n, s]`` (``(N, S, 9, 9)``)
    over the cells of each stencil ``stencils[n, s, o]`` (``(N, S, O, k * k)``, a k x k grid
    whose corner lies ``margin`` cells up and left of the anchor); cells off the board
    count 0."""
    n, slots = maps.shape[:2]
    size = math.isqrt(stencils.shape[-1])
    padded = F.pad(maps, (margin, size - 1 - margin, margin, size - 1 - margin))
    # (N, S, 9, 9, k, k) windows as a view; torch's im2col is far slower on CPU
    windows = padded.unfold(2, size, 1).unfold(3, size, 1).reshape(n, slots, N_CELLS,
                                                                   size * size)
    return torch.einsum("nsoc,nsac->nsoa", stencils, windows)


def slot_stencils(obs: torch.Tensor, patch_rows: torch.Tensor, cells: torch.Tensor,
                  touching: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``(N, N_SLOTS, 8, 25)`` and ``(N, N_SLOTS, 8, 49)``: the stencils (of
    :func:`shape_tables`) of the patches in the slots, found by matching each slot's
    features in the observation against ``patch_rows`` (``PATCH_FEATURES``); zero where a
    slot is empty."""
    rows = obs[:, CIRCLE_AT : CIRCLE_AT + N_SLOTS * SLOT_FEATURES].view(-1, N_SLOTS,
                                                                        SLOT_FEATURES)
    which = ((rows[:, :, None, :] - patch_rows).abs().sum(-1) < 1e-3).to(cells.dtype)
    return (torch.einsum("nsp,pok->nsok", which, cells),
            torch.einsum("nsp,pok->nsok", which, touching))


def placement_tables() -> np.ndarray:
    """``(33, 162, 648) float32``: for each patch and placement code (``orientation * 81 +
    anchor``) that lies on the board, 1 at the cells it covers (rows 0..80) and at the
    cells beside it, on the board and not covered (rows 81..161); read from the engine's
    placement bitboards."""
    bits = np.arange(64, dtype=np.uint64)
    words = PLACEMENT_MASKS[..., :, None] >> bits & np.uint64(1)  # (33, 648, 2, 64)
    covered = words.reshape(N_PATCHES, -1, 128)[:, :, :N_CELLS].astype(bool)
    grid = covered.reshape(N_PATCHES, -1, BOARD_SIZE, BOARD_SIZE)
    beside = np.zeros_like(grid)
    beside[..., 1:, :] |= grid[..., :-1, :]
    beside[..., :-1, :] |= grid[..., 1:, :]
    beside[..., :, 1:] |= grid[..., :, :-1]
    beside[..., :, :-1] |= grid[..., :, 1:]
    beside &= ~grid
    table = np.concatenate([covered, beside.reshape(covered.shape)], axis=2)
    return np.ascontiguousarray(table.transpose(0, 2, 1), dtype=np.float32)


def slot_patches(obs: torch.Tensor, patch_keys: torch.Tensor) -> torch.Tensor:
    """``(N, N_SLOTS) int64``: the patch in each slot, read from the observation's slot
    features (``patch_keys``: :func:`patch_keys`); -1 where a slot is empty."""
    rows = obs[:, CIRCLE_AT : CIRCLE_AT + N_SLOTS * SLOT_FEATURES].view(-1, N_SLOTS,
                                                                        SLOT_FEATURES)
    keys = rows.double() @ _KEY_WEIGHTS.to(rows.device)
    distance, which = (keys[:, :, None] - patch_keys).abs().min(-1)
    return torch.where(distance < _KEY_TOLERANCE, which, torch.full_like(which, -1))


_KEY_WEIGHTS = torch.as_tensor(np.random.default_rng(0).uniform(1.0, 2.0, SLOT_FEATURES))
"""A fixed projection of a slot's features to one number that tells the patches apart."""


def patch_keys() -> torch.Tensor:
    """``(33,) float64``: each patch's slot features projected as :func:`slot_patches`
    projects a slot's."""
    keys = torch.as_tensor(PATCH_FEATURES).double() @ _KEY_WEIGHTS
    gaps = (keys[:, None] - keys[None, :]).abs() + torch.eye(len(keys)) * 1e9
    assert float(gaps.min()) > 100 * _KEY_TOLERANCE, "the projection must tell patches apart"
    return keys


_KEY_TOLERANCE = 1e-4


def placement_sums(cover: torch.Tensor, touch: torch.Tensor, patches: torch.Tensor,
                   table: torch.Tensor) -> torch.Tensor:
    """``(N, S, 648)``: for each placement code of the patch in each slot, the sum of
    ``cover[n, s]`` (``(N, S, 81)``) over the cells it covers plus that of ``touch[n, s]``
    over the cells beside it (``table``: :func:`placement_tables`); 0 for an empty slot.

    The (game, slot) pairs are grouped by patch, so each group is one small matrix product
    with that patch's table."""
    n, slots = patches.shape
    maps = torch.cat([cover, touch], dim=-1).reshape(n * slots, 2 * N_CELLS)
    flat = patches.reshape(-1)
    order = torch.argsort(flat, stable=True)
    ids, counts = torch.unique_consecutive(flat[order], return_counts=True)
    parts = []
    for p, rows in zip(ids.tolist(), torch.split(order, counts.tolist()), strict=True):
        chunk = maps.index_select(0, rows)
        parts.append(chunk @ table[p] if p >= 0 else chunk.new_zeros(len(rows), table.shape[-1]))
    grouped = torch.cat(parts)
    return grouped.index_select(0, torch.argsort(order)).view(n, slots, -1)
