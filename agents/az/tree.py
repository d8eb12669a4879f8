"""The search tree of a batch of games, as the compiled search sees it: :class:`Tree`, a
named tuple of preallocated arrays, and the rules that read and update a node.

Every game of a batch has its own tree, indexed ``[game, node]`` (node 0 is the root; a
tree holds at most one node per simulation plus the root). A node stores its position (a
:data:`~patchwork_env.engine.kernels.STATE_DTYPE` record, copied from its parent and
stepped with the engine's ``apply_action``), its visit count, the sum of the values backed
up through it *from the point of view of the player who moved into it* (``mover``; the
root's mover is the player to move there), and the value of its own evaluation for player
0 (``value0``: the network's for an inner node, the true result for a finished game). Its
edges lie in a flat per-game pool: ``edge_start``/``edge_count`` point at the legal
actions kept there with their prior logits, prior probabilities and child nodes
(:data:`NO_CHILD`: not yet created). The root keeps every legal action, an inner node the
``top_k`` of highest prior.

Values are signed by who moved, not by depth: in Patchwork a player often moves several
times in a row, and a backup adds ``value0`` to every node on the path whose mover is
player 0 and subtracts it from the others. The selection rules are in :mod:`.selection`,
the loops over games in :mod:`.kernels`.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from patchwork_env.agents.az.topk import BUCKETS
from patchwork_env.data.actions import N_ACTIONS
from patchwork_env.engine.kernels import STATE_DTYPE, score, winner

NO_CHILD = 0
"""An edge whose child is not created yet (the root is node 0 and nobody's child)."""


class Tree(NamedTuple):
    """The trees of ``G`` games of ``M = simulations + 1`` nodes and ``E = N_ACTIONS +
    simulations * top_k`` edges each, ``C = max_considered`` (see the module docstring).
    No loop allocates: numba may hoist an allocation out of a ``prange`` loop and share it
    between threads, so every scratch row is here."""

    states: np.ndarray
    """``(G * M,) STATE_DTYPE``: node ``n`` of game ``g``'s position at ``[g * M + n]``."""
    visits: np.ndarray
    """``(G, M) int32``: visits of each node."""
    value_sum: np.ndarray
    """``(G, M) float64``: sum of the values backed up through each node, for its mover."""
    value0: np.ndarray
    """``(G, M) float64``: each node's own evaluation, for player 0."""
    mover: np.ndarray
    """``(G, M) int8``: the player who moved into each node."""
    edge_start: np.ndarray
    """``(G, M) int32``: each node's first edge in the game's pool."""
    edge_count: np.ndarray
    """``(G, M) int32``: each node's number of edges."""
    n_nodes: np.ndarray
    """``(G,) int32``: nodes used."""
    n_edges: np.ndarray
    """``(G,) int32``: edges used."""
    e_action: np.ndarray
    """``(G, E) int16``: each edge's action."""
    e_logit: np.ndarray
    """``(G, E) float32``: each edge's prior logit."""
    e_prior: np.ndarray
    """``(G, E) float32``: each edge's prior probability."""
    e_child: np.ndarray
    """``(G, E) int32``: each edge's child node (:data:`NO_CHILD`: none yet)."""
    path: np.ndarray
    """``(G, M + 1) int32``: the nodes of the current walk, root first."""
    depth: np.ndarray
    """``(G,) int32``: the index in ``path`` of the walk's last node."""
    q_scratch: np.ndarray
    """``(G, 2 * N_ACTIONS) float64``: scratch row of values."""
    a_scratch: np.ndarray
    """``(G, N_ACTIONS + max(top_k, C)) int16``: scratch row of actions and indices."""
    chosen: np.ndarray
    """``(G, C) int32``: the root edges sequential halving considers."""
    n_chosen: np.ndarray
    """``(G,) int32``: how many it considers."""
    c_score: np.ndarray
    """``(G, C) float64``: their ``gumbel + logit``, side by side for a compact walk."""
    c_prior: np.ndarray
    """``(G, C) float64``: their prior probabilities."""
    c_child: np.ndarray
    """``(G, C) int32``: their child nodes."""
    h_scratch: np.ndarray
    """``(G, BUCKETS) int32``: histogram scratch row of :func:`.topk.top_indices`."""


def new_tree(n_games: int, simulations: int, top_k: int, max_considered: int,
             state_dtype: np.dtype = STATE_DTYPE) -> Tree:
    """An empty :class:`Tree` for ``n_games`` searches of ``simulations`` simulations of a
    game whose positions are ``state_dtype`` records (Patchwork's by default)."""
    g, m, c = n_games, simulations + 1, max_considered
    edges = N_ACTIONS + simulations * top_k
    return Tree(
        states=np.zeros(g * m, state_dtype), visits=np.zeros((g, m), np.int32),
        value_sum=np.zeros((g, m), np.float64), value0=np.zeros((g, m), np.float64),
        mover=np.zeros((g, m), np.int8), edge_start=np.zeros((g, m), np.int32),
        edge_count=np.zeros((g, m), np.int32), n_nodes=np.zeros(g, np.int32),
        n_edges=np.zeros(g, np.int32), e_action=np.zeros((g, edges), np.int16),
        e_logit=np.zeros((g, edges), np.float32), e_prior=np.zeros((g, edges), np.float32),
        e_child=np.zeros((g, edges), np.int32), path=np.zeros((g, m + 1), np.int32),
        depth=np.zeros(g, np.int32), q_scratch=np.zeros((g, 2 * N_ACTIONS), np.float64),
        a_scratch=np.zeros((g, N_ACTIONS + max(top_k, c)), np.int16),
        chosen=np.zeros((g, c), np.int32), n_chosen=np.zeros(g, np.int32),
        c_score=np.zeros((g, c), np.float64), c_prior=np.zeros((g, c), np.float64),
        c_child=np.zeros((g, c), np.int32), h_scratch=np.zeros((g, BUCKETS), np.int32))


@njit(cache=True)
def outcome_value(s, p, bonus_points, score_weight, score_scale):
    """The result of the finished game ``s`` for player ``p`` in [-1, 1]: +1 a win, -1 a
    loss, mixed with weight ``score_weight`` with the score difference / ``score_scale``
    (clipped to [-1, 1])."""
    v = 1.0 if winner(s, bonus_points) == p else -1.0
    if score_weight > 0.0:
        diff = (score(s, p, bonus_points) - score(s, 1 - p, bonus_points)) / score_scale
        v = (1.0 - score_weight) * v + score_weight * min(1.0, max(-1.0, diff))
    return v


@njit(cache=True)
def outcome_values(states, players, bonus_points, score_weight, score_scale, out):
    """``out[i]``: :func:`outcome_value` of finished game ``states[i]`` for ``players[i]``."""
    for i in range(states.shape[0]):
        out[i] = outcome_value(states[i], players[i], bonus_points, score_weight, score_scale)


@njit(cache=True, inline="always")
def raw_value(tree, g, node):
    """The node's own evaluation for the player to move there."""
    m = tree.visits.shape[1]
    v = tree.value0[g, node]
    return v if tree.states[g * m + node].to_move == 0 else -v


@njit(cache=True, inline="always")
def backup(tree, g, v0):
    """Add the value ``v0`` (player 0's view) to every node on game ``g``'s path, signed by
    each node's mover."""
    visits, wsum, mover, path = tree.visits, tree.value_sum, tree.mover, tree.path
    for i in range(tree.depth[g] + 1):
        nd = path[g, i]
        visits[g, nd] += 1
        wsum[g, nd] += v0 if mover[g, nd] == 0 else -v0
