"""The Gumbel search's steps for one game, compiled, and the batch loops that run them over
many games (driven by :mod:`.search`).

Each step is a function of one game's tree, as mctx writes its search for one tree and
maps it over the batch: :func:`init_root` (the root and its legal actions),
:func:`simulate` (one simulation's walk down the tree), :func:`write_leaf` (the leaf's
position and legal mask, for the network) and :func:`expand_leaf` (the network's answer
stored and backed up). The batch loops (``*_kernel``) run a step over games with
``prange``, and :mod:`.search` compiles each serial and multi-threaded;
:func:`start_halving` and :func:`finish_roots` run once per search. ``tree`` is a
:class:`~.tree.Tree`, ``params`` the :class:`~.config.KernelParams` of the search's config
and ``rules`` a :class:`~.tree.RuleArrays`; the selection rules are in :mod:`.selection`.

A batch loop only calls its step: numba's multi-threaded loops can lose writes made
through a named tuple's fields in the loop's own body, but not in the functions it calls.
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


@njit(cache=True)
def init_root(tree, g, root):
    """Make ``root`` the root of game ``g``'s empty tree and list all its legal actions as
    edges; whether it has more than one (else there is nothing to search)."""
    m = tree.visits.shape[1]
    tree.states[g * m] = root
    tree.n_nodes[g] = 1
    tree.visits[g, 0] = 0
    tree.value_sum[g, 0] = 0.0
    tree.value0[g, 0] = 0.0
    tree.mover[g, 0] = root.to_move
    tree.depth[g] = 0
    tree.path[g, 0] = 0
    tree.n_chosen[g] = 0
    a_scratch = tree.a_scratch[g]
    count = enumerate_legal(tree.states[g * m], a_scratch)
    for e in range(count):
        tree.e_action[g, e] = a_scratch[e]
        tree.e_child[g, e] = NO_CHILD
    tree.edge_start[g, 0] = 0
    tree.edge_count[g, 0] = count
    tree.n_edges[g] = count
    return count > 1


@njit(cache=True)
def simulate(tree, g, target, params, rules):
    """One simulation of game ``g``: walk down from the root (Gumbel sequential halving
    there, with ``target`` the visits a root action must have to be chosen now; the
    deterministic rule below), create the node of the first missing edge, and either
    return True (it needs the network's evaluation) or, if the game is over there (or the
    walk ends on a finished game), back up the true result at once."""
    states, visits, value0, e_child, path = (tree.states, tree.visits, tree.value0,
                                             tree.e_child, tree.path)
    base = g * visits.shape[1]
    node = 0
    d = 0
    path[g, 0] = 0
    while True:
        if node == 0:
            i = root_select(tree, g, target, params)
            e = tree.chosen[g, i]
        else:
            e = interior_select(tree, g, node, params)
        child = e_child[g, e]
        d += 1
        tree.depth[g] = d
        if child == NO_CHILD:
            child = tree.n_nodes[g]
            tree.n_nodes[g] += 1
            states[base + child] = states[base + node]
            apply_action(states[base + child], tree.e_action[g, e], rules.income_before,
                         rules.leather_spaces, rules.bonus_masks, rules.track_end)
            tree.mover[g, child] = states[base + node].to_move
            visits[g, child] = 0
            tree.value_sum[g, child] = 0.0
            tree.edge_start[g, child] = 0
            tree.edge_count[g, child] = 0
            e_child[g, e] = child
            if node == 0:
                tree.c_child[g, i] = child
            path[g, d] = child
            if states[base + child].to_move < 0:
                value0[g, child] = outcome_value(states[base + child], 0, rules.bonus_points,
                                                 params.score_weight, params.score_scale)
                backup(tree, g, value0[g, child])
                return False
            return True
        path[g, d] = child
        node = child
        if states[base + node].to_move < 0:
            backup(tree, g, value0[g, node])
            return False


@njit(cache=True)
def write_leaf(tree, g, leaf_state, mask):
    """Copy game ``g``'s leaf position to the record ``leaf_state`` and its legal mask to
    the byte row ``mask``."""
    m = tree.visits.shape[1]
    leaf_state[0] = tree.states[g * m + tree.path[g, tree.depth[g]]]
    write_legal_mask(leaf_state[0], mask)


@njit(cache=True)
def expand_leaf(tree, g, logits, value, params):
    """Store the evaluation ``logits`` (a row over all actions), ``value`` (for the player
    to move) of game ``g``'s leaf: its edges (at the root, the listed legal actions;
    elsewhere the ``top_k`` legal actions of highest logit) with their priors, then back
    the value up."""
    e_action, e_logit, e_prior, e_child = tree.e_action, tree.e_logit, tree.e_prior, tree.e_child
    top_k = params.top_k
    node = tree.path[g, tree.depth[g]]
    s = tree.states[g * tree.visits.shape[1] + node]
    a_scratch, q = tree.a_scratch[g], tree.q_scratch[g]
    if node != 0:
        listed = enumerate_legal(s, a_scratch)
        start = tree.n_edges[g]
        count = min(listed, top_k)
        if listed <= top_k:
            for e in range(listed):
                e_action[g, start + e] = a_scratch[e]
        else:
            for e in range(listed):
                q[e] = logits[a_scratch[e]]
            if params.every_choice:
                lift_choice_bests(q, a_scratch, listed, CHOICE_LIFT, tree.h_scratch[g])
            keep = a_scratch[N_ACTIONS:]
            top_indices(q, listed, top_k, keep, q[listed:], tree.h_scratch[g])
            for e in range(top_k):
                e_action[g, start + e] = a_scratch[keep[e]]
        tree.edge_start[g, node] = start
        tree.edge_count[g, node] = count
        tree.n_edges[g] = start + count
    start, count = tree.edge_start[g, node], tree.edge_count[g, node]
    top = -np.inf
    for e in range(count):
        x = logits[e_action[g, start + e]]
        e_logit[g, start + e] = x
        e_child[g, start + e] = NO_CHILD
        top = max(top, np.float64(x))
    total = 0.0
    for e in range(count):
        q[e] = np.exp(e_logit[g, start + e] - top)
        total += q[e]
    for e in range(count):
        e_prior[g, start + e] = q[e] / total
    v = np.float64(value)
    tree.value0[g, node] = v if s.to_move == 0 else -v
    backup(tree, g, tree.value0[g, node])


# ---------------------------------------------------------------------------------------
# the batch loops

def init_roots_kernel(tree, n, roots, active):
    """:func:`init_root` of game ``g`` at ``roots[g]``; ``active[g]``: whether it is
    searched."""
    for g in prange(n):
        active[g] = init_root(tree, g, roots[g])


def select_kernel(tree, n, considered, active, needs_eval, params, rules):
    """:func:`simulate` of every active game (``considered[g]``: the visits a root action
    must have to be chosen now); ``needs_eval[g]``: whether its new leaf needs the
    network."""
    for g in prange(n):
        needs_eval[g] = active[g] and simulate(tree, g, considered[g], params, rules)


def write_leaves_kernel(tree, rows, leaf_states, masks):
    """:func:`write_leaf` of game ``rows[j]`` into ``leaf_states[j]`` and ``masks[j]``."""
    for j in prange(rows.shape[0]):
        write_leaf(tree, rows[j], leaf_states[j:j + 1], masks[j])


def expand_kernel(tree, rows, logits, values, params):
    """:func:`expand_leaf` of game ``rows[j]`` with ``logits[j]``, ``values[j]``."""
    for j in prange(rows.shape[0]):
        expand_leaf(tree, rows[j], logits[j], values[j], params)


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


BATCH_LOOPS = {"init_roots": init_roots_kernel, "select": select_kernel,
               "write_leaves": write_leaves_kernel, "expand": expand_kernel}
"""The loops over games that :mod:`.search` compiles serial and multi-threaded."""
