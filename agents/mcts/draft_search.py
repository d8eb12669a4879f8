"""UCT search for Patchwork Draft, on one dealing of its hidden deck.

The walk is the main game's (:func:`.search.simulate`: down by UCT, one node added, a game
played to its end with uniformly random legal moves, the win or loss backed up) on the same
tree (:class:`.search.Tree`, here over draft states); this module gives it the draft's
pieces: the moves of a node, the action of a move, the compiled draft rules and winner.

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
from patchwork_env.agents.mcts.search import ILLEGAL, UNEXPANDED, Tree, simulate
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
def _play(s, a, rules, w):
    """Play the action ``a`` in ``s``."""
    apply_action(s, a, rules[0], rules[1], rules[2])


@njit(cache=True)
def _rollout(s, rng, rules, w):
    """Play ``s`` to its end with uniform random moves; ``(rng, winner)``."""
    rng = play_randomly(s, rng, -1, rules[0], rules[1], rules[2])
    return rng, winner(s)


@njit(cache=True)
def _outcome(s, rules):
    """The winner of the finished game ``s`` (rule 13.8)."""
    return winner(s)


def run_draft_simulations(tree: DraftTree, n_sims: int, rng: np.uint64,
                          rules: tuple[np.uint64, np.uint64, np.uint64], w: DraftWeights,
                          c_explore: float) -> np.uint64:
    """Run ``n_sims`` simulations on ``tree`` under the star rule ``rules`` (a batch's
    ``move_args``) with :func:`.search.simulate`; returns the rollout generator's new
    state."""
    tree.size, rng = simulate(init_draft_node, move_action, _play, _rollout, _outcome,
                              *tree.arrays(), tree.size, n_sims, np.uint64(rng), rules, w,
                              c_explore)
    return np.uint64(rng)
