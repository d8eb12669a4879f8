"""The batch loops of the Gumbel search over many games (driven by :mod:`.search`).

Each loop runs over games with ``prange`` and :mod:`.search` compiles it serial and
multi-threaded: :func:`init_roots_kernel` (roots and their legal actions),
:func:`select_kernel` (one simulation's walk down every tree), :func:`write_leaves_kernel`
(the leaves' positions and legal masks, for the network) and :func:`expand_kernel` (the
network's answers stored and backed up). :func:`start_halving` and :func:`finish_roots`
run once per search. ``tree`` is a :class:`~.tree.Tree` and ``params`` the
:class:`~.config.KernelParams` of the search's config; the selection rules are in
:mod:`.selection`. The loops name Patchwork's compiled rules (``enumerate_legal``,
``apply_action``, ``write_legal_mask``, ``outcome_value``); :mod:`.search` compiles a copy
of them for each other game with that game's functions under those names
(:data:`~.games.AZGame.kernel_functions`).

numba's multi-threaded loops lose writes made through a named tuple's fields inside the
loop's body, and inside functions inlined into it. So each loop takes the arrays and
scalars it uses out of the named tuples before its ``prange``, one assignment each (an
unpacking of several at once loses them too), and the multi-threaded version calls the
functions of :data:`TREE_FUNCTIONS` instead of inlining them (see :mod:`.search`).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from patchwork_env.agents.az.selection import interior_select, node_sigma_q, root_select
from patchwork_env.agents.az.topk import CHOICE_LIFT, lift_choice_bests, top_indices
from patchwork_env.agents.az.tree import NO_CHILD, backup, outcome_value
from patchwork_env.data.actions import N_ACTIONS
from patchwork_env.engine.batch_kernels import enumerate_legal
from patchwork_env.engine.kernels import apply_action, write_legal_mask


def init_roots_kernel(tree, n, roots, active):
    """Make ``roots[g]`` the root of game ``g``'s empty tree and list all its legal actions
    as edges; ``active[g]``: whether it has more than one (else there is nothing to search)."""
    states = tree.states
    visits = tree.visits
    value_sum = tree.value_sum
    value0 = tree.value0
    mover = tree.mover
    n_nodes = tree.n_nodes
    n_edges = tree.n_edges
    depth = tree.depth
    path = tree.path
    n_chosen = tree.n_chosen
    edge_start = tree.edge_start
    edge_count = tree.edge_count
    e_action = tree.e_action
    e_child = tree.e_child
    a_scratch = tree.a_scratch
    m = visits.shape[1]
    for g in prange(n):
        states[g * m] = roots[g]
        n_nodes[g] = 1
        visits[g, 0] = 0
        value_sum[g, 0] = 0.0
        value0[g, 0] = 0.0
        mover[g, 0] = roots[g].to_move
        depth[g] = 0
        path[g, 0] = 0
        n_chosen[g] = 0
        count = enumerate_legal(states[g * m], a_scratch[g])
        for e in range(count):
            e_action[g, e] = a_scratch[g, e]
            e_child[g, e] = NO_CHILD
        edge_start[g, 0] = 0
        edge_count[g, 0] = count
        n_edges[g] = count
        active[g] = count > 1


def select_kernel(tree, n, considered, active, needs_eval, params, move_args, bonus_points):
    """One simulation for every active game: walk down from the root (Gumbel sequential
    halving there, the deterministic rule below), create the node of the first missing
    edge, and either mark it for evaluation or, if the game is over there (or the walk
    ends on a finished game), back up the true result at once.

    ``considered[g]``: how many visits a root action must have to be chosen now;
    ``move_args``: the arguments of the game's ``apply_action`` after the state and the
    action, ``bonus_points`` the rules' argument of its ``outcome_value``
    (:class:`~.games.AZGame`).
    """
    states = tree.states
    visits = tree.visits
    value_sum = tree.value_sum
    value0 = tree.value0
    mover = tree.mover
    n_nodes = tree.n_nodes
    depth = tree.depth
    path = tree.path
    chosen = tree.chosen
    c_child = tree.c_child
    edge_start = tree.edge_start
    edge_count = tree.edge_count
    e_action = tree.e_action
    e_child = tree.e_child
    score_weight = params.score_weight
    score_scale = params.score_scale
    m = visits.shape[1]
    for g in prange(n):
        needs_eval[g] = False
        if not active[g]:
            continue
        base = g * m
        node = 0
        d = 0
        path[g, 0] = 0
        while True:
            if node == 0:
                i = root_select(tree, g, considered[g], params)
                e = chosen[g, i]
            else:
                e = interior_select(tree, g, node, params)
            child = e_child[g, e]
            d += 1
            depth[g] = d
            if child == NO_CHILD:
                child = n_nodes[g]
                n_nodes[g] += 1
                states[base + child] = states[base + node]
                apply_action(states[base + child], e_action[g, e], *move_args)
                mover[g, child] = states[base + node].to_move
                visits[g, child] = 0
                value_sum[g, child] = 0.0
                edge_start[g, child] = 0
                edge_count[g, child] = 0
                e_child[g, e] = child
                if node == 0:
                    c_child[g, i] = child
                path[g, d] = child
                if states[base + child].to_move < 0:
                    value0[g, child] = outcome_value(states[base + child], 0, bonus_points,
                                                     score_weight, score_scale)
                    backup(tree, g, value0[g, child])
                else:
                    needs_eval[g] = True
                break
            path[g, d] = child
            node = child
            if states[base + node].to_move < 0:
                backup(tree, g, value0[g, node])
                break


def write_leaves_kernel(tree, rows, leaf_states, masks):
    """Copy the leaf position of game ``rows[j]`` to ``leaf_states[j]`` and its legal mask
    to the byte row ``masks[j]``."""
    states = tree.states
    path = tree.path
    depth = tree.depth
    m = tree.visits.shape[1]
    for j in prange(rows.shape[0]):
        g = rows[j]
        leaf_states[j] = states[g * m + path[g, depth[g]]]
        write_legal_mask(leaf_states[j], masks[j])


def expand_kernel(tree, rows, logits, values, params):
    """Store the evaluation ``logits[j], values[j]`` (for the player to move) of game
    ``rows[j]``'s leaf: its edges (at the root, the listed legal actions; elsewhere the
    ``top_k`` legal actions of highest logit) with their priors, then back the value up."""
    states = tree.states
    value0 = tree.value0
    path = tree.path
    depth = tree.depth
    n_edges = tree.n_edges
    edge_start = tree.edge_start
    edge_count = tree.edge_count
    e_action = tree.e_action
    e_logit = tree.e_logit
    e_prior = tree.e_prior
    e_child = tree.e_child
    a_scratch = tree.a_scratch
    q_scratch = tree.q_scratch
    h_scratch = tree.h_scratch
    m = tree.visits.shape[1]
    top_k = params.top_k
    every_choice = params.every_choice
    for j in prange(rows.shape[0]):
        g = rows[j]
        node = path[g, depth[g]]
        s = states[g * m + node]
        actions, q = a_scratch[g], q_scratch[g]
        if node != 0:
            listed = enumerate_legal(s, actions)
            start = n_edges[g]
            count = min(listed, top_k)
            if listed <= top_k:
                for e in range(listed):
                    e_action[g, start + e] = actions[e]
            else:
                for e in range(listed):
                    q[e] = logits[j, actions[e]]
                if every_choice:
                    lift_choice_bests(q, actions, listed, CHOICE_LIFT, h_scratch[g])
                keep = actions[N_ACTIONS:]
                top_indices(q, listed, top_k, keep, q[listed:], h_scratch[g])
                for e in range(top_k):
                    e_action[g, start + e] = actions[keep[e]]
            edge_start[g, node] = start
            edge_count[g, node] = count
            n_edges[g] = start + count
        start, count = edge_start[g, node], edge_count[g, node]
        top = -np.inf
        for e in range(count):
            x = logits[j, e_action[g, start + e]]
            e_logit[g, start + e] = x
            e_child[g, start + e] = NO_CHILD
            top = max(top, np.float64(x))
        total = 0.0
        for e in range(count):
            q[e] = np.exp(e_logit[g, start + e] - top)
            total += q[e]
        for e in range(count):
            e_prior[g, start + e] = q[e] / total
        v = np.float64(values[j])
        value0[g, node] = v if s.to_move == 0 else -v
        backup(tree, g, value0[g, node])


@njit(cache=True)
def start_halving(tree, n, active, draws, max_considered, every_choice):
    """Give the root edges of each active game its share of the Gumbel ``draws`` (in game
    order) and consider the ``max_considered`` of highest ``gumbel + logit`` (with
    ``every_choice``, the best of every choice of the turn among them)."""
    e_logit, e_prior, counts = tree.e_logit, tree.e_prior, tree.edge_count
    k = 0
    for g in range(n):
        if not active[g]:
            continue
        count = counts[g, 0]
        scores = tree.q_scratch[g]
        for e in range(count):
            scores[e] = draws[k] + e_logit[g, e]
            k += 1
        m = min(max_considered, count)
        chosen = tree.chosen[g]
        if every_choice and m < count:
            lift_choice_bests(scores, tree.e_action[g], count, CHOICE_LIFT, tree.h_scratch[g])
        top_indices(scores, count, m, chosen, scores[count:], tree.h_scratch[g])
        if every_choice and m < count:
            lift_choice_bests(scores, tree.e_action[g], count, -CHOICE_LIFT,
                              tree.h_scratch[g])
        tree.n_chosen[g] = m
        for i in range(m):
            tree.c_score[g, i] = scores[chosen[i]]
            tree.c_prior[g, i] = e_prior[g, chosen[i]]
            tree.c_child[g, i] = NO_CHILD


@njit(cache=True)
def finish_roots(tree, n, active, params, offsets, t_actions, t_probs, actions, root_values):
    """The search's results for each game: the improved policy
    ``softmax(logit + sigma(completed Q))`` over all the root's legal actions (written from
    ``offsets[g]``), the action sequential halving ends on (the most visited considered
    action of highest Gumbel score), and the root's mean value for the player to move."""
    visits, e_action, e_logit = tree.visits, tree.e_action, tree.e_logit
    for g in range(n):
        count = tree.edge_count[g, 0]
        at = offsets[g]
        if not active[g]:
            for e in range(count):
                t_actions[at + e] = e_action[g, e]
                t_probs[at + e] = 1.0 / count
            actions[g] = e_action[g, 0]
            root_values[g] = np.nan
            continue
        q = tree.q_scratch[g]
        node_sigma_q(tree, g, 0, q, params)
        top = -np.inf
        for e in range(count):
            q[e] += e_logit[g, e]
            top = max(top, q[e])
        total = 0.0
        for e in range(count):
            q[e] = np.exp(q[e] - top)
            total += q[e]
        for e in range(count):
            t_actions[at + e] = e_action[g, e]
            t_probs[at + e] = q[e] / total
        most = 0
        for i in range(tree.n_chosen[g]):
            c = tree.c_child[g, i]
            most = max(most, visits[g, c] if c != NO_CHILD else 0)
        actions[g] = e_action[g, tree.chosen[g, root_select(tree, g, most, params)]]
        root_values[g] = tree.value_sum[g, 0] / max(visits[g, 0], 1)


TREE_FUNCTIONS = {"root_select": root_select, "interior_select": interior_select,
                  "backup": backup}
"""The inlined functions the batch loops call with the whole tree: the multi-threaded loops
call compiled copies of them instead."""

BATCH_LOOPS = {"init_roots": init_roots_kernel, "select": select_kernel,
               "write_leaves": write_leaves_kernel, "expand": expand_kernel}
"""The loops over games that :mod:`.search` compiles serial and multi-threaded."""
