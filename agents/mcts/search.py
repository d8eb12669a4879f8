"""Compiled UCT search: the tree, the selection, the rollouts and the backups in one call.

The tree branches on the four decisions of a turn: buy the patch in slot 0, 1 or 2, or
advance. Where a bought patch goes is decided by the placement policy of
:func:`.heuristic.best_placement`, and leather patches won on the way are placed by
:func:`.heuristic.best_leather`, so every node is a position where a player chooses among
at most four moves. Branching over every placement instead spreads the simulations over
hundreds of near-identical children and plays weaker (the Agents page of the docs has the
match).

Each simulation walks down by UCT, adds one node, plays the game from it to the end with
uniformly random legal moves (the engine's compiled sampler and rules) and backs up the
win or loss. The tree lives in preallocated arrays owned by :class:`Tree`, so a search can
be run in chunks (for a time budget) without losing anything between calls. Patchwork
Draft's search (:mod:`.draft_search`) keeps its games in the same tree and chooses and
backs up by the same :func:`uct_select` and :func:`back_up`.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from patchwork_env.agents.heuristic import (
    Weights,
    best_placement,
    can_buy,
    fits_anywhere,
    play_and_settle,
)
from patchwork_env.data.actions import ADVANCE, N_SLOTS
from patchwork_env.engine.batch_kernels import play_randomly
from patchwork_env.engine.kernels import STATE_DTYPE, winner

N_MOVES = N_SLOTS + 1
"""Children per node: buy from each slot, then advance."""
ADVANCE_MOVE = N_SLOTS
ILLEGAL = -1
"""A child entry of a move that is not legal."""
UNEXPANDED = 0
"""A child entry of a legal move not yet tried (the root is node 0, never a child)."""


class Tree:
    """The arrays of one search tree (node 0 is the root) over the states of ``dtype``
    with ``n_moves`` moves per node (Patchwork's by default; the draft's search,
    :mod:`.draft_search`, keeps its games in a tree of its own dtype)."""

    def __init__(self, capacity: int, dtype: np.dtype = STATE_DTYPE,
                 n_moves: int = N_MOVES) -> None:
        self.states = np.zeros(capacity, dtype)
        self.children = np.zeros((capacity, n_moves), np.int32)
        """Child node of each move, ``-1`` if the move is illegal, ``0`` if not yet added."""
        self.actions = np.zeros(capacity, np.int16)
        """The engine action that led into each node."""
        self.movers = np.zeros(capacity, np.int8)
        """The player who moved into each node."""
        self.visits = np.zeros(capacity, np.int32)
        self.wins = np.zeros(capacity, np.float64)
        """Simulations through the node won by its mover."""
        self.size = 0

    @property
    def capacity(self) -> int:
        return len(self.states)

    def arrays(self) -> tuple:
        """The arrays in the order :func:`run_simulations` takes them."""
        return self.states, self.children, self.actions, self.movers, self.visits, self.wins

    def start(self, root: np.void) -> None:
        """Make ``root`` (a ``STATE_DTYPE`` record) the root of an empty tree."""
        self.states[0] = root
        init_node(self.states, self.children, self.visits, self.wins, 0)
        self.size = 1

    def grown(self, capacity: int) -> Tree:
        """A copy of this tree with room for ``capacity`` nodes."""
        bigger = type(self)(capacity)
        for old, new in zip(self.arrays(), bigger.arrays(), strict=True):
            new[: self.size] = old[: self.size]
        bigger.size = self.size
        return bigger

    def root_moves(self) -> list[tuple[int, int, float]]:
        """``(action, visits, wins)`` of each child of the root."""
        kids = self.children[0]
        return [(int(self.actions[c]), int(self.visits[c]), float(self.wins[c]))
                for c in kids if c > 0]


@njit(cache=True)
def init_node(states, children, visits, wins, node):
    """Clear the statistics of ``node`` and mark which of its four moves are legal."""
    s = states[node]
    visits[node] = 0
    wins[node] = 0.0
    for k in range(N_MOVES):
        children[node, k] = ILLEGAL
    if s.to_move < 0:
        return
    children[node, ADVANCE_MOVE] = UNEXPANDED
    p = s.to_move
    for slot in range(N_SLOTS):
        if can_buy(s, slot) and fits_anywhere(s.quilt[p, 0], s.quilt[p, 1], s.circle[slot]):
            children[node, slot] = UNEXPANDED


@njit(cache=True)
def _rollout(s, rng, rules):
    """Play ``s`` to its end with uniform random moves; ``(rng, winner)``."""
    rng = play_randomly(s, rng, -1, rules.income_before, rules.leather_spaces,
                        rules.bonus_masks, rules.track_end)
    return rng, winner(s, rules.bonus_points)


@njit(cache=True)
def uct_select(children, visits, wins, node, c_explore):
    """The UCT choice among the children of a fully expanded ``node``."""
    log_n = np.log(max(visits[node], 1))
    best = -1
    best_u = -np.inf
    for k in range(children.shape[1]):
        child = children[node, k]
        if child <= 0:
            continue
        n = visits[child]
        u = wins[child] / n + c_explore * np.sqrt(log_n / n)
        if u > best_u:
            best_u = u
            best = child
    return best


@njit(cache=True)
def run_simulations(states, children, actions, movers, visits, wins, size, n_sims, rng, rules,
                    w: Weights, c_explore):
    """Run ``n_sims`` simulations from node 0 under ``rules`` (a
    :class:`~patchwork_env.data.tables.RuleArrays`); returns ``(new_size, new_rng)``.

    Nodes are added while there is room; a full tree keeps searching, its new leaves just
    are not stored.
    """
    capacity = states.shape[0]
    path = np.empty(256, np.int64)
    scratch = np.empty(1, STATE_DTYPE)
    for _ in range(n_sims):
        node = 0
        depth = 0
        path[0] = 0
        while True:
            s = states[node]
            if s.to_move < 0:
                who = winner(s, rules.bonus_points)
                break
            move = -1
            for k in range(N_MOVES):
                if children[node, k] == UNEXPANDED:
                    move = k
                    break
            if move < 0:
                node = uct_select(children, visits, wins, node, c_explore)
                depth += 1
                path[depth] = node
                continue
            a = ADVANCE if move == ADVANCE_MOVE else best_placement(s, move, rules, w)
            if size < capacity:
                leaf = size
                size += 1
                states[leaf] = s
                actions[leaf] = a
                movers[leaf] = s.to_move
                play_and_settle(states[leaf], a, rules, w)
                init_node(states, children, visits, wins, leaf)
                children[node, move] = leaf
                depth += 1
                path[depth] = leaf
                scratch[0] = states[leaf]
            else:
                scratch[0] = s
                play_and_settle(scratch[0], a, rules, w)
            rng, who = _rollout(scratch[0], rng, rules)
            break
        back_up(path, depth, movers, visits, wins, who)
    return size, rng


@njit(cache=True, inline="always")
def back_up(path, depth, movers, visits, wins, who):
    """Count one more visit on each node of ``path[:depth + 1]``, and a win on those whose
    mover is ``who``."""
    for d in range(depth + 1):
        n = path[d]
        visits[n] += 1
        if movers[n] == who:
            wins[n] += 1.0
