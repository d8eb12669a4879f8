"""UCT search for Patchwork Draft, on one dealing of its hidden deck.

The draft's counterpart of :mod:`.search`: the same tree (:class:`.search.Tree`, here over
draft states), the same UCT choice and backup (:func:`.search.uct_select`,
:func:`.search.back_up`) and the same walk: down by UCT, one node added, the game played to
its end with uniformly random legal moves (the engine's compiled draft rules), the win or
loss backed up. The walk is a compiled loop of its own, which calls the draft's functions
where Patchwork's calls Patchwork's. (One loop taking each game's functions as arguments
compiles and runs as fast, but numba's cache of it breaks: its index records those
functions, which another process cannot restore; uncached, every process would compile it
anew.)

A node branches on at most three moves, one per slot of the face-up row: buy that slot's
patch, placed where :func:`.draft_greedy.best_buy` puts it, or, where the player can buy
nothing (rule 13.6), discard it. The tree is searched on a copy of the game whose unseen
deck has been redealt (:meth:`~patchwork_env.engine.draft_batch.DraftBatch.redeal`): the
agent (:mod:`.draft_agent`) searches many such dealings and adds up their roots.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from patchwork_env.agents.draft_greedy import DraftWeights, best_buy
from patchwork_env.agents.mcts.search import ILLEGAL, UNEXPANDED, Tree, back_up, uct_select
from patchwork_env.data.actions import N_SLOTS
from patchwork_env.data.draft_actions import DISCARD_BASE
from patchwork_env.engine.draft_batch_kernels import play_randomly
from patchwork_env.engine.draft_kernels import (
    DRAFT_STATE_DTYPE,
    affordable,
    apply_action,
    fits_somewhere,
    winner,
)
from patchwork_env.engine.kernels import empty_words

N_DRAFT_MOVES = N_SLOTS
"""Children per node: one per slot of the face-up row (a buy, or a discard)."""


class DraftTree(Tree):
    """The arrays of one draft search tree (node 0 is the root)."""

    def __init__(self, capacity: int) -> None:
        super().__init__(capacity, DRAFT_STATE_DTYPE, N_DRAFT_MOVES)

    def start(self, root: np.void) -> None:
        """Make ``root`` (a ``DRAFT_STATE_DTYPE`` record) the root of an empty tree."""
        self.states[0] = root
        init_draft_node(self.states, self.children, self.visits, self.wins, 0)
        self.size = 1


@njit(cache=True)
def init_draft_node(states, children, visits, wins, node):
    """Clear the statistics of ``node`` and mark which of its moves are legal: the buyable
    slots (rule 13.2), or, when there is none, every slot holding a patch (rule 13.6)."""
    s = states[node]
    visits[node] = 0
    wins[node] = 0.0
    for k in range(N_DRAFT_MOVES):
        children[node, k] = ILLEGAL
    if s.to_move < 0:
        return
    p = s.to_move
    empty_lo, empty_hi = empty_words(s, p)
    can_buy = False
    for slot in range(N_SLOTS):
        if affordable(s, p, slot) and fits_somewhere(s.row[slot], empty_lo, empty_hi):
            children[node, slot] = UNEXPANDED
            can_buy = True
    if not can_buy:
        for slot in range(N_SLOTS):
            if s.row[slot] >= 0:
                children[node, slot] = UNEXPANDED


@njit(cache=True)
def move_action(s, move, rules, w):
    """The engine action of ``move`` (a slot) in ``s``: its best buy, or its discard where
    the player to move can buy nothing from it."""
    a, _ = best_buy(s, s.to_move, move, rules[0], rules[1], rules[2], w)
    return a if a >= 0 else DISCARD_BASE + move


@njit(cache=True)
def run_draft_loop(states, children, actions, movers, visits, wins, size, n_sims, rng,
                   star_bits, star_lo, star_hi, w, c_explore):
    """Run ``n_sims`` simulations from node 0 under the star rule ``star_*`` (a batch's
    ``move_args``); returns ``(new_size, new_rng)``. The walk of
    :func:`.search.run_simulations`, with the draft's moves, rules and winner."""
    capacity = states.shape[0]
    path = np.empty(256, np.int64)
    scratch = np.empty(1, DRAFT_STATE_DTYPE)
    rules = (star_bits, star_lo, star_hi)
    for _ in range(n_sims):
        node = 0
        depth = 0
        path[0] = 0
        while True:
            s = states[node]
            if s.to_move < 0:
                who = winner(s)
                break
            move = -1
            for k in range(N_DRAFT_MOVES):
                if children[node, k] == UNEXPANDED:
                    move = k
                    break
            if move < 0:
                node = uct_select(children, visits, wins, node, c_explore)
                depth += 1
                path[depth] = node
                continue
            a = move_action(s, move, rules, w)
            if size < capacity:
                leaf = size
                size += 1
                states[leaf] = s
                actions[leaf] = a
                movers[leaf] = s.to_move
                apply_action(states[leaf], a, star_bits, star_lo, star_hi)
                init_draft_node(states, children, visits, wins, leaf)
                children[node, move] = leaf
                depth += 1
                path[depth] = leaf
                scratch[0] = states[leaf]
            else:
                scratch[0] = s
                apply_action(scratch[0], a, star_bits, star_lo, star_hi)
            rng = play_randomly(scratch[0], rng, -1, star_bits, star_lo, star_hi)
            who = winner(scratch[0])
            break
        back_up(path, depth, movers, visits, wins, who)
    return size, rng


def run_draft_simulations(tree: DraftTree, n_sims: int, rng: np.uint64,
                          rules: tuple[np.uint64, np.uint64, np.uint64], w: DraftWeights,
                          c_explore: float) -> np.uint64:
    """Run ``n_sims`` simulations on ``tree`` under the star rule ``rules`` (a batch's
    ``move_args``); returns the rollout generator's new state."""
    tree.size, rng = run_draft_loop(*tree.arrays(), tree.size, n_sims, np.uint64(rng), *rules,
                                    w, c_explore)
    return np.uint64(rng)
