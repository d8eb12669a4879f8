"""Gumbel MuZero's action selection on a :class:`~.tree.Tree`, compiled: at the root and
below it, both on ``sigma(completed Q)``.

* :func:`root_select`: sequential halving over the Gumbel-top-k root actions, each
  scored ``gumbel + logit + sigma(completed Q)``.
* :func:`interior_select`: the deterministic ``argmax pi'(a) - N(a) / (1 + sum N)`` with
  ``pi' = softmax(logit + sigma(completed Q))``.
* :func:`node_sigma_q`: the completed Q values (a visited child's mean value; the
  node's mixed value for the others) through ``sigma(q) = (c_visit + max N) * c_scale *
  q``, rescaled to [0, 1] first with ``rescale_values``.

``params`` is the :class:`~.config.KernelParams` of the search's config.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from patchwork_env.agents.az.tree import NO_CHILD, raw_value

_TINY = 1e-30


@njit(cache=True, inline="always")
def complete_and_sigma(q, n, mixed, max_n, others_unvisited, params):
    """Complete ``q[:n]`` (NaN: unvisited, gets the ``mixed`` value), rescale it to [0, 1]
    by its min and max (counting ``mixed`` too if ``others_unvisited``: edges left out of
    ``q`` that are unvisited), and apply ``sigma(q) = (c_visit + max_n) * c_scale * q``."""
    lo = mixed if others_unvisited else np.inf
    hi = mixed if others_unvisited else -np.inf
    for i in range(n):
        if np.isnan(q[i]):
            q[i] = mixed
        lo = min(lo, q[i])
        hi = max(hi, q[i])
    scale = (params.c_visit + max_n) * params.c_scale
    if params.rescale_values:
        scale /= max(hi - lo, 1e-8)
    else:
        lo = 0.0
    for i in range(n):
        q[i] = scale * (q[i] - lo)


@njit(cache=True, inline="always")
def mixed_value(raw, sum_n, sum_p, sum_pq):
    """The node's evaluation averaged with its visited children's prior-weighted Q."""
    return raw if sum_n == 0 else (raw + sum_n * sum_pq / sum_p) / (sum_n + 1)


@njit(cache=True, inline="always")
def node_sigma_q(tree, g, node, q, params):
    """``sigma(completed Q)`` of all the edges of ``node`` into ``q``; returns the children's
    total visits. Q of a visited child is its mean value for the player to move at
    ``node``; an unvisited one gets the node's mixed value."""
    visits, wsum, e_prior, e_child = tree.visits, tree.value_sum, tree.e_prior, tree.e_child
    start, count = tree.edge_start[g, node], tree.edge_count[g, node]
    sum_n = 0
    max_n = 0
    sum_p = 0.0
    sum_pq = 0.0
    for i in range(count):
        c = e_child[g, start + i]
        k = visits[g, c] if c != NO_CHILD else 0
        q[i] = np.nan
        if k > 0:
            value = wsum[g, c] / k
            q[i] = value
            prior = max(np.float64(e_prior[g, start + i]), _TINY)
            sum_n += k
            sum_p += prior
            sum_pq += prior * value
            max_n = max(max_n, k)
    mixed = mixed_value(raw_value(tree, g, node), sum_n, sum_p, sum_pq)
    complete_and_sigma(q, count, mixed, max_n, False, params)
    return sum_n


@njit(cache=True, inline="always")
def root_select(tree, g, target, params):
    """The considered root action (its index in ``tree.chosen``) of highest
    ``gumbel + logit + sigma(completed Q)`` among those visited exactly ``target`` times
    (any considered one if none is: a safeguard). Every visited root edge is considered,
    so the walk reads only the compact arrays of the considered ones."""
    visits, wsum = tree.visits, tree.value_sum
    n, score, prior, child = tree.n_chosen[g], tree.c_score[g], tree.c_prior[g], tree.c_child[g]
    q = tree.q_scratch[g]
    sum_n = 0
    max_n = 0
    sum_p = 0.0
    sum_pq = 0.0
    n_visited = 0
    for i in range(n):
        c = child[i]
        k = visits[g, c] if c != NO_CHILD else 0
        q[i] = np.nan
        if k > 0:
            value = wsum[g, c] / k
            q[i] = value
            p = max(prior[i], _TINY)
            sum_n += k
            sum_p += p
            sum_pq += p * value
            max_n = max(max_n, k)
            n_visited += 1
    mixed = mixed_value(raw_value(tree, g, 0), sum_n, sum_p, sum_pq)
    complete_and_sigma(q, n, mixed, max_n, tree.edge_count[g, 0] > n_visited, params)
    for restrict in (True, False):
        best = -1
        best_score = -np.inf
        for i in range(n):
            c = child[i]
            if restrict and (visits[g, c] if c != NO_CHILD else 0) != target:
                continue
            s = score[i] + q[i]
            if s > best_score:
                best_score = s
                best = i
        if best >= 0:
            return best
    return 0


@njit(cache=True, inline="always")
def interior_select(tree, g, node, params):
    """The edge of ``node`` maximising ``pi'(a) - N(a) / (1 + sum N)``, with
    ``pi' = softmax(logit + sigma(completed Q))``."""
    visits, e_logit, e_child = tree.visits, tree.e_logit, tree.e_child
    start, count = tree.edge_start[g, node], tree.edge_count[g, node]
    q = tree.q_scratch[g]
    sum_n = node_sigma_q(tree, g, node, q, params)
    top = -np.inf
    for i in range(count):
        q[i] += e_logit[g, start + i]
        top = max(top, q[i])
    total = 0.0
    for i in range(count):
        q[i] = np.exp(q[i] - top)
        total += q[i]
    best = 0
    best_score = -np.inf
    for i in range(count):
        c = e_child[g, start + i]
        k = visits[g, c] if c != NO_CHILD else 0
        s = q[i] / total - k / (1.0 + sum_n)
        if s > best_score:
            best_score = s
            best = i
    return start + best
