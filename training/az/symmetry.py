"""The 8 symmetries of the quilt, applied to positions and actions (data augmentation).

Turning or mirroring both players' quilts the same way gives an equivalent position: no
rule depends on where a cell lies (the bonus square is tested in every position), so the
transformed position has the same legal moves, transformed, and the same outcome. The
replay buffer uses this to show the network each sample in one of 8 equivalent forms.

Symmetry ``g = mirror * 4 + rotation`` follows the orientation convention of the patches:
mirror the board left-right when ``mirror`` is 1, then turn it ``rotation`` quarter turns
clockwise. Index 0 is the identity.

A buy action is mapped by the cells it covers: transform them, then find the canonical
orientation and anchor of the same patch that covers exactly those cells. The table of
these (:func:`buy_code_map`) is built once, on first use. Advance stays advance; a leather
patch moves with its cell.

Patchwork Draft's positions and buys move the same way and its discards stay as they are,
but its star squares (rule 13.5) are places on the board: a symmetry that moves them
elsewhere changes the game. :func:`star_symmetries` names the symmetries that keep a set
of star squares (all 8 for the default stars, fewer or only the identity for others).
"""

from __future__ import annotations

import functools

import numpy as np

from patchwork_env.data.actions import (
    LEATHER_BASE,
    N_ACTIONS,
    N_BUY_ACTIONS,
    N_CELLS,
    N_ORIENTATIONS,
    SLOT_STRIDE,
)
from patchwork_env.data.draft_actions import N_DRAFT_ACTIONS
from patchwork_env.data.patches import N_PATCHES
from patchwork_env.data.rules import BOARD_SIZE
from patchwork_env.data.tables import PLACEMENT_LEGAL, PLACEMENT_MASKS
from patchwork_env.engine.draft_kernels import DRAFT_STATE_DTYPE
from patchwork_env.engine.kernels import STATE_DTYPE

SYMMETRIES = 8
"""Symmetries of the square board: 4 rotations, each with or without a mirror."""


def transform_cell(cell: np.ndarray | int, symmetry: np.ndarray | int) -> np.ndarray:
    """Where ``symmetry`` moves ``cell`` (both broadcast; cells ``row * 9 + col``)."""
    cell = np.asarray(cell, np.int64)
    symmetry = np.asarray(symmetry, np.int64)
    row, col = np.divmod(cell, BOARD_SIZE)
    last = BOARD_SIZE - 1
    col = np.where(symmetry >= 4, last - col, col)
    for turn in range(1, 4):
        turned = (symmetry % 4) >= turn
        row, col = np.where(turned, col, row), np.where(turned, last - row, col)
    return row * BOARD_SIZE + col


CELL_MAP = transform_cell(np.arange(N_CELLS)[None, :], np.arange(SYMMETRIES)[:, None])
"""``(8, 81) int64``: ``CELL_MAP[g, c]`` is the cell ``g`` moves ``c`` to."""

CELL_SOURCE = np.argsort(CELL_MAP, axis=1)
"""``(8, 81) int64``: ``CELL_SOURCE[g, c]`` is the cell ``g`` moves onto ``c`` (the inverse)."""


def _unpack(words: np.ndarray) -> np.ndarray:
    """``(..., 2) uint64`` bitboards -> ``(..., 81) bool`` cells."""
    raw = np.ascontiguousarray(words, dtype="<u8").view(np.uint8)
    bits = np.unpackbits(raw.reshape(*words.shape[:-1], 16), axis=-1, bitorder="little")
    return bits[..., :N_CELLS].astype(np.bool_)


def _pack(cells: np.ndarray) -> np.ndarray:
    """``(..., 81) bool`` cells -> ``(..., 2) uint64`` bitboards."""
    padded = np.zeros((*cells.shape[:-1], 128), np.bool_)
    padded[..., :N_CELLS] = cells
    raw = np.packbits(padded, axis=-1, bitorder="little")
    return raw.view("<u8").astype(np.uint64)


def _permute(values: np.ndarray, symmetry: np.ndarray) -> np.ndarray:
    """Move the last (cell) axis of ``values`` ``(N, ..., 81)`` by ``symmetry`` ``(N,)``."""
    source = CELL_SOURCE[symmetry].reshape(len(symmetry), *([1] * (values.ndim - 2)), N_CELLS)
    return np.take_along_axis(values, source, axis=-1)


def _check_symmetry(symmetry: np.ndarray | int, n: int) -> np.ndarray:
    sym = np.broadcast_to(np.asarray(symmetry), (n,))
    if sym.dtype.kind not in "iu":
        raise TypeError(f"symmetry indices must be ints, got dtype {sym.dtype}")
    if n and (sym.min() < 0 or sym.max() >= SYMMETRIES):
        raise ValueError(f"symmetry indices must be in 0..{SYMMETRIES - 1}")
    return sym.astype(np.int64)


def star_symmetries(star_squares: tuple[int, ...] | list[int]) -> np.ndarray:
    """``(k,) int64``: the symmetries (increasing, the identity first) that move the set of
    ``star_squares`` onto itself."""
    stars = np.asarray(sorted(star_squares), np.int64)
    return np.array([g for g in range(SYMMETRIES)
                     if (np.sort(CELL_MAP[g, stars]) == stars).all()], np.int64)


def transform_states(states: np.ndarray, symmetry: np.ndarray | int) -> np.ndarray:
    """A copy of the ``(N,)`` state records (Patchwork's ``STATE_DTYPE`` or the draft's)
    with both quilts of row ``i`` (and which patch lies on each cell) moved by
    ``symmetry[i]``; nothing else changes."""
    if (not isinstance(states, np.ndarray) or states.dtype not in (STATE_DTYPE,
                                                                   DRAFT_STATE_DTYPE)
            or states.ndim != 1):
        raise TypeError("states must be a 1-D array of patchwork_env.engine.kernels.STATE_DTYPE"
                        " or of the draft's DRAFT_STATE_DTYPE")
    sym = _check_symmetry(symmetry, len(states))
    out = states.copy()
    out["quilt"] = _pack(_permute(_unpack(states["quilt"]), sym))
    out["cell_patches"] = _permute(states["cell_patches"], sym)
    return out


def transform_quilts(quilts: np.ndarray, symmetry: np.ndarray | int) -> np.ndarray:
    """``(N, Q, 2) uint64`` bitboards of ``Q`` quilts per row -> ``(N, Q, 81) bool`` cells,
    row ``i``'s moved by ``symmetry[i]`` (as :func:`transform_states` moves the quilts)."""
    sym = _check_symmetry(symmetry, len(quilts))
    return _permute(_unpack(quilts), sym)


@functools.cache
def buy_code_map() -> np.ndarray:
    """``(8, 33, 648) int16``: ``[g, patch, orientation * 81 + anchor]`` -> the placement
    code of that patch covering the transformed cells, -1 where the source code is not a
    canonical placement inside the board."""
    cells = _unpack(PLACEMENT_MASKS)  # (33, 648, 81)
    out = np.full((SYMMETRIES, N_PATCHES, SLOT_STRIDE), -1, np.int16)
    patch = np.arange(N_PATCHES)[:, None]
    for g in range(SYMMETRIES):
        moved = cells[..., CELL_SOURCE[g]]
        grid = moved.reshape(N_PATCHES, SLOT_STRIDE, BOARD_SIZE, BOARD_SIZE)
        top = grid.any(axis=3).argmax(axis=2)
        left = grid.any(axis=2).argmax(axis=2)
        anchor = top * BOARD_SIZE + left
        words = _pack(moved)
        for o in range(N_ORIENTATIONS):
            code = o * N_CELLS + anchor
            hit = (PLACEMENT_LEGAL[patch, code]
                   & (PLACEMENT_MASKS[patch, code] == words).all(axis=-1))
            out[g][hit] = code[hit]
        out[g][~PLACEMENT_LEGAL] = -1
    out.setflags(write=False)
    return out


def transform_actions(states: np.ndarray, actions: np.ndarray, symmetry: np.ndarray | int,
                      rows: np.ndarray | None = None) -> np.ndarray:
    """``actions`` as they read after moving the position by the symmetry.

    ``states`` are the untransformed records (a buy names a slot; the circle, or the
    draft's face-up row, says which patch is in it). Action ``k`` belongs to state
    ``rows[k]`` (by default state ``k``) and is moved by that state's ``symmetry``. A buy
    that is no canonical placement of the patch in its slot, or names an empty slot,
    becomes -1; the draft's discards stay as they are.
    """
    draft = isinstance(states, np.ndarray) and states.dtype == DRAFT_STATE_DTYPE
    n_actions = N_DRAFT_ACTIONS if draft else N_ACTIONS
    sym = _check_symmetry(symmetry, len(states))
    acts = np.asarray(actions, np.int64)
    at = np.arange(len(acts)) if rows is None else np.asarray(rows, np.int64)
    if acts.shape != at.shape:
        raise ValueError(f"actions {acts.shape} and rows {at.shape} must have the same shape")
    if acts.size and (acts.min() < 0 or acts.max() >= n_actions):
        raise ValueError(f"actions must be in 0..{n_actions - 1}")
    g = sym[at]
    out = acts.copy()
    if not draft:
        leather = acts >= LEATHER_BASE
        out[leather] = LEATHER_BASE + CELL_MAP[g[leather], acts[leather] - LEATHER_BASE]
    buy = np.flatnonzero(acts < N_BUY_ACTIONS)
    slot, code = np.divmod(acts[buy], SLOT_STRIDE)
    if draft:
        face_up = states["row"][at[buy], slot]
        in_circle = face_up >= 0
        patch = np.where(in_circle, face_up, 0)
    else:
        in_circle = slot < states["circle_len"][at[buy]]
        patch = np.where(in_circle, states["circle"][at[buy], slot], 0)
    new_code = buy_code_map()[g[buy], patch, code]
    out[buy] = np.where(in_circle & (new_code >= 0), slot * SLOT_STRIDE + new_code, -1)
    return out


def augment(states: np.ndarray, offsets: np.ndarray, actions: np.ndarray,
            symmetry: np.ndarray | int) -> tuple[np.ndarray, np.ndarray]:
    """Move samples with CSR policy targets: row ``i``'s actions are
    ``actions[offsets[i]:offsets[i + 1]]``. Returns ``(states, actions)`` transformed;
    the offsets and the probabilities stay as they are."""
    offsets = np.asarray(offsets, np.int64)
    if offsets.shape != (len(states) + 1,) or offsets[-1] != len(actions):
        raise ValueError("offsets must have one entry per state plus one, ending at "
                         "the number of actions")
    rows = np.repeat(np.arange(len(states)), np.diff(offsets))
    new_actions = transform_actions(states, actions, symmetry, rows).astype(
        np.asarray(actions).dtype)
    return transform_states(states, symmetry), new_actions
