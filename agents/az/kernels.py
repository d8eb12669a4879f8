"""The batch loops of the Gumbel search over many games (driven by :mod:`.az_search`).

Each loop runs over games with ``prange`` and :mod:`.az_search` compiles it serial and
multi-threaded: :func:`init_roots_kernel` (roots and their legal actions),
:func:`select_kernel` (one simulation's walk down every tree), :func:`write_leaves_kernel`
(the leaves' positions and legal masks, for the network) and :func:`expand_kernel` (the
network's answers stored and backed up). :func:`start_halving` and :func:`finish_roots`
run once per search. The tree's layout and the per-node rules are in :mod:`.az_tree`;
``rule`` is the tuple of :func:`.heuristic.rule_args`.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from patchwork_env.agents.az.tree import (
    A_SCRATCH,
    C_CHILD,
    C_PRIOR,
    C_SCORE,
    CHOICE_LIFT,
    CHOSEN,
    DEPTH,
    E_ACTION,
    E_CHILD,
    E_LOGIT,
    E_PRIOR,
    EDGE_COUNT,
    EDGE_START,
    H_SCRATCH,
    MOVER,
    N_CHOSEN,
    N_EDGES,
    N_NODES,
    NO_CHILD,
    PATH,
    Q_SCRATCH,
    STATES,
    VALUE0,
    VALUE_SUM,
    VISITS,
    backup,
    interior_select,
    lift_choice_bests,
    node_sigma_q,
    outcome_value,
    root_select,
    top_indices,
)
from patchwork_env.data.actions import N_ACTIONS
from patchwork_env.engine.batch_kernels import enumerate_legal
from patchwork_env.engine.kernels import apply_action, write_legal_mask


def init_roots_kernel(tree, n, roots, active):
    """Make ``roots[g]`` the root of game ``g``'s empty tree and list all its legal actions
    as edges; ``active[g]``: whether it has more than one (else there is nothing to search)."""
    states, visits, e_action, e_child, a_scratch = (tree[STATES], tree[VISITS], tree[E_ACTION],
                                                     tree[E_CHILD], tree[A_SCRATCH])
    m = visits.shape[1]
    for g in prange(n):
        states[g * m] = roots[g]
        tree[N_NODES][g] = 1
        visits[g, 0] = 0
        tree[VALUE_SUM][g, 0] = 0.0
        tree[VALUE0][g, 0] = 0.0
        tree[MOVER][g, 0] = roots[g].to_move
        tree[DEPTH][g] = 0
        tree[PATH][g, 0] = 0
        tree[N_CHOSEN][g] = 0
        count = enumerate_legal(states[g * m], a_scratch[g])
        for e in range(count):
            e_action[g, e] = a_scratch[g, e]
            e_child[g, e] = NO_CHILD
        tree[EDGE_START][g, 0] = 0
        tree[EDGE_COUNT][g, 0] = count
        tree[N_EDGES][g] = count
        active[g] = count > 1


@njit(cache=True)
def start_halving(tree, n, active, draws, max_considered, every_choice):
    """Give the root edges of each active game its share of the Gumbel ``draws`` (in game
    order) and consider the ``max_considered`` of highest ``gumbel + logit`` (with
    ``every_choice``, the best of every choice of the turn among them)."""
    e_logit, e_prior, counts = tree[E_LOGIT], tree[E_PRIOR], tree[EDGE_COUNT]
    k = 0
    for g in range(n):
        if not active[g]:
            continue
        count = counts[g, 0]
        scores = tree[Q_SCRATCH][g]
        for e in range(count):
            scores[e] = draws[k] + e_logit[g, e]
            k += 1
        m = min(max_considered, count)
        chosen = tree[CHOSEN][g]
        if every_choice and m < count:
            lift_choice_bests(scores, tree[E_ACTION][g], count, CHOICE_LIFT, tree[H_SCRATCH][g])
        top_indices(scores, count, m, chosen, scores[count:], tree[H_SCRATCH][g])
        if every_choice and m < count:
            lift_choice_bests(scores, tree[E_ACTION][g], count, -CHOICE_LIFT,
                              tree[H_SCRATCH][g])
        tree[N_CHOSEN][g] = m
        for i in range(m):
            tree[C_SCORE][g, i] = scores[chosen[i]]
            tree[C_PRIOR][g, i] = e_prior[g, chosen[i]]
            tree[C_CHILD][g, i] = NO_CHILD


def select_kernel(tree, n, considered, active, needs_eval, params, rule, shaping):
    """One simulation for every active game: walk down from the root (Gumbel sequential
    halving there, the deterministic rule below), create the node of the first missing
    edge, and either mark it for evaluation or, if the game is over there (or the walk
    ends on a finished game), back up the true result at once.

    ``considered[g]``: how many visits a root action must have to be chosen now.
    ``shaping``: ``(score_weight, score_scale)`` of :func:`outcome_value`.
    """
    states, visits, value0, e_child, path = (tree[STATES], tree[VISITS], tree[VALUE0],
                                             tree[E_CHILD], tree[PATH])
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
                e = tree[CHOSEN][g, i]
            else:
                e = interior_select(tree, g, node, params)
            child = e_child[g, e]
            d += 1
            tree[DEPTH][g] = d
            if child == NO_CHILD:
                child = tree[N_NODES][g]
                tree[N_NODES][g] += 1
                states[base + child] = states[base + node]
                apply_action(states[base + child], tree[E_ACTION][g, e], rule[0], rule[1],
                             rule[2], rule[3])
                tree[MOVER][g, child] = states[base + node].to_move
                visits[g, child] = 0
                tree[VALUE_SUM][g, child] = 0.0
                tree[EDGE_START][g, child] = 0
                tree[EDGE_COUNT][g, child] = 0
                e_child[g, e] = child
                if node == 0:
                    tree[C_CHILD][g, i] = child
                path[g, d] = child
                if states[base + child].to_move < 0:
                    value0[g, child] = outcome_value(states[base + child], 0, rule[4],
                                                     shaping[0], shaping[1])
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
    states, path, depth = tree[STATES], tree[PATH], tree[DEPTH]
    m = tree[VISITS].shape[1]
    for j in prange(rows.shape[0]):
        g = rows[j]
        leaf_states[j] = states[g * m + path[g, depth[g]]]
        write_legal_mask(leaf_states[j], masks[j])


def expand_kernel(tree, rows, logits, values, params):
    """Store the evaluation ``logits[j], values[j]`` (for the player to move) of game
    ``rows[j]``'s leaf: its edges (at the root, the listed legal actions; elsewhere the
    ``top_k`` legal actions of highest logit) with their priors, then back the value up."""
    states, e_action, e_logit, e_prior, e_child = (tree[STATES], tree[E_ACTION], tree[E_LOGIT],
                                                   tree[E_PRIOR], tree[E_CHILD])
    m = tree[VISITS].shape[1]
    top_k = np.int64(params[3])
    every_choice = params[4] > 0.0
    for j in prange(rows.shape[0]):
        g = rows[j]
        node = tree[PATH][g, tree[DEPTH][g]]
        s = states[g * m + node]
        a_scratch, q = tree[A_SCRATCH][g], tree[Q_SCRATCH][g]
        if node != 0:
            listed = enumerate_legal(s, a_scratch)
            start = tree[N_EDGES][g]
            count = min(listed, top_k)
            if listed <= top_k:
                for e in range(listed):
                    e_action[g, start + e] = a_scratch[e]
            else:
                for e in range(listed):
                    q[e] = logits[j, a_scratch[e]]
                if every_choice:
                    lift_choice_bests(q, a_scratch, listed, CHOICE_LIFT, tree[H_SCRATCH][g])
                keep = a_scratch[N_ACTIONS:]
                top_indices(q, listed, top_k, keep, q[listed:], tree[H_SCRATCH][g])
                for e in range(top_k):
                    e_action[g, start + e] = a_scratch[keep[e]]
            tree[EDGE_START][g, node] = start
            tree[EDGE_COUNT][g, node] = count
            tree[N_EDGES][g] = start + count
        start, count = tree[EDGE_START][g, node], tree[EDGE_COUNT][g, node]
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
        tree[VALUE0][g, node] = v if s.to_move == 0 else -v
        backup(tree, g, tree[VALUE0][g, node])


@njit(cache=True)
def finish_roots(tree, n, active, params, offsets, t_actions, t_probs, actions, root_values):
    """The search's results for each game: the improved policy
    ``softmax(logit + sigma(completed Q))`` over all the root's legal actions (written from
    ``offsets[g]``), the action sequential halving ends on (the most visited considered
    action of highest Gumbel score), and the root's mean value for the player to move."""
    visits, e_action, e_logit = tree[VISITS], tree[E_ACTION], tree[E_LOGIT]
    for g in range(n):
        count = tree[EDGE_COUNT][g, 0]
        at = offsets[g]
        if not active[g]:
            for e in range(count):
                t_actions[at + e] = e_action[g, e]
                t_probs[at + e] = 1.0 / count
            actions[g] = e_action[g, 0]
            root_values[g] = np.nan
            continue
        q = tree[Q_SCRATCH][g]
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
        for i in range(tree[N_CHOSEN][g]):
            c = tree[C_CHILD][g, i]
            most = max(most, visits[g, c] if c != NO_CHILD else 0)
        actions[g] = e_action[g, tree[CHOSEN][g, root_select(tree, g, most, params)]]
        root_values[g] = tree[VALUE_SUM][g, 0] / max(visits[g, 0], 1)


BATCH_LOOPS = {"init_roots": init_roots_kernel, "select": select_kernel,
               "write_leaves": write_leaves_kernel, "expand": expand_kernel}
"""The loops over games that :mod:`.az_search` compiles serial and multi-threaded."""
