"""One game's search tree, as the compiled search sees it: its arrays and the rules that
read and update a node (driven over a batch by :mod:`.az_kernels`).

Every game of a batch has its own tree in preallocated arrays, indexed ``[game, node]``
(node 0 is the root; a tree holds at most one node per simulation plus the root). A node
stores its position (a :data:`~patchwork_env.engine.kernels.STATE_DTYPE` record, copied from its
parent and stepped with the engine's ``apply_action``), its visit count, the sum of the
values backed up through it *from the point of view of the player who moved into it*
(``mover``; the root's mover is the player to move there), and the value of its own
evaluation for player 0 (``value0``: the network's for an inner node, the true result for
a finished game). Its edges lie in a flat per-game pool: ``edge_start``/``edge_count``
point at the legal actions kept there with their prior logits, prior probabilities and
child nodes (0: not yet created; the root is nobody's child). The root keeps every legal
action, an inner node the ``top_k`` of highest prior.

Values are signed by who moved, not by depth: in Patchwork a player often moves several
times in a row, and a backup adds ``value0`` to every node on the path whose mover is
player 0 and subtracts it from the others.

The selection rules are those of Gumbel MuZero: :func:`root_select` (sequential halving
over the Gumbel-top-k actions) and :func:`interior_select` (the deterministic
``argmax pi' - N / (1 + sum N)``), both on ``sigma(completed Q)``. ``params`` is the
float tuple ``(c_visit, c_scale, rescale, top_k, every_choice)``: with ``every_choice``
(1.0), the root's considered actions and an inner node's kept edges include the best
action (by prior, at the root by Gumbel + prior) of every choice of the turn (each slot,
advancing) before second-best ones, as :func:`lift_choice_bests` arranges.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from patchwork_env.data.actions import ADVANCE, N_BUY_ACTIONS, SLOT_STRIDE
from patchwork_env.engine.kernels import score, winner

NO_CHILD = 0
"""An edge whose child is not created yet (the root is node 0 and nobody's child)."""
_TINY = 1e-30


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


# ---------------------------------------------------------------------------------------
# the tree: a tuple of arrays, in this order (GumbelSearch allocates it)

(STATES, VISITS, VALUE_SUM, VALUE0, MOVER, EDGE_START, EDGE_COUNT, N_NODES, N_EDGES,
 E_ACTION, E_LOGIT, E_PRIOR, E_CHILD, PATH, DEPTH, Q_SCRATCH, A_SCRATCH, CHOSEN, N_CHOSEN,
 C_SCORE, C_PRIOR, C_CHILD, H_SCRATCH) = range(23)
"""Positions of the tree's arrays: states ``[game * nodes + node]``; per node ``[game,
node]``: visits, value sum (for its mover), value0, mover, edge start and count; per game:
nodes and edges used; per edge ``[game, edge]``: action, prior logit, prior probability,
child; the current path and its depth; scratch rows (``2 * N_ACTIONS`` floats, ``N_ACTIONS
+ max(top_k, max_considered)`` int16); the root edges that
sequential halving considers (``[game, i]``: edge number; their number per game) with,
side by side for a compact walk, their ``gumbel + logit``, prior and child; a histogram
scratch row. No loop allocates: numba may hoist an allocation out of a ``prange`` loop
and share it between threads."""


@njit(cache=True, inline="always")
def raw_value(tree, g, node):
    """The node's own evaluation for the player to move there."""
    m = tree[VISITS].shape[1]
    v = tree[VALUE0][g, node]
    return v if tree[STATES][g * m + node].to_move == 0 else -v


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
    c_visit, c_scale, rescale = params[0], params[1], params[2]
    scale = (c_visit + max_n) * c_scale
    if rescale > 0.0:
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
    visits, wsum, e_prior, e_child = tree[VISITS], tree[VALUE_SUM], tree[E_PRIOR], tree[E_CHILD]
    start, count = tree[EDGE_START][g, node], tree[EDGE_COUNT][g, node]
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
    """The considered root action (its index in ``CHOSEN``) of highest
    ``gumbel + logit + sigma(completed Q)`` among those visited exactly ``target`` times
    (any considered one if none is: a safeguard). Every visited root edge is considered,
    so the walk reads only the compact arrays of the considered ones."""
    visits, wsum = tree[VISITS], tree[VALUE_SUM]
    n, score, prior, child = tree[N_CHOSEN][g], tree[C_SCORE][g], tree[C_PRIOR][g], tree[C_CHILD][g]
    q = tree[Q_SCRATCH][g]
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
    complete_and_sigma(q, n, mixed, max_n, tree[EDGE_COUNT][g, 0] > n_visited, params)
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
    visits, e_logit, e_child = tree[VISITS], tree[E_LOGIT], tree[E_CHILD]
    start, count = tree[EDGE_START][g, node], tree[EDGE_COUNT][g, node]
    q = tree[Q_SCRATCH][g]
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


@njit(cache=True, inline="always")
def backup(tree, g, v0):
    """Add the value ``v0`` (player 0's view) to every node on game ``g``'s path, signed by
    each node's mover."""
    visits, wsum, mover, path, depth = (tree[VISITS], tree[VALUE_SUM], tree[MOVER], tree[PATH],
                                        tree[DEPTH])
    for i in range(depth[g] + 1):
        nd = path[g, i]
        visits[g, nd] += 1
        wsum[g, nd] += v0 if mover[g, nd] == 0 else -v0


@njit(cache=True, inline="always")
def kth_largest(keys, n, k):
    """The ``k``-th largest (``k >= 1``) of ``keys[:n]`` by quickselect; reorders them."""
    lo = 0
    hi = n - 1
    target = k - 1
    while lo < hi:
        a, b, c = keys[lo], keys[(lo + hi) >> 1], keys[hi]
        if (a >= b) == (b >= c):
            pivot = b
        elif (b >= a) == (a >= c):
            pivot = a
        else:
            pivot = c
        i = lo
        j = hi
        while i <= j:  # descending order
            while keys[i] > pivot:
                i += 1
            while keys[j] < pivot:
                j -= 1
            if i <= j:
                keys[i], keys[j] = keys[j], keys[i]
                i += 1
                j -= 1
        if target <= j:
            hi = j
        elif target >= i:
            lo = i
        else:
            return keys[target]
    return keys[target]


CHOICE_LIFT = 1024.0
"""What :func:`lift_choice_bests` adds: more than any spread of logits and Gumbel draws."""


@njit(cache=True, inline="always")
def choice_of(action):
    """The choice of a turn an action makes: 0..2 buy from that slot, 3 advance, 4 place a
    leather patch."""
    if action < N_BUY_ACTIONS:
        return action // SLOT_STRIDE
    return 3 if action == ADVANCE else 4


N_CHOICES = 5
"""Choices of a turn, as :func:`choice_of` numbers them."""


@njit(cache=True)
def lift_choice_bests(values, actions, n, lift, best):
    """Add ``lift`` to the largest of ``values[:n]`` among the actions (``actions[:n]``) of
    each choice of the turn, so that a top-k selection after it keeps the best action of
    every choice (buying from each slot, advancing) before any second-best one; calling it
    again with ``-lift`` undoes it (the lifted values are still their choices' largest).
    ``best``: an int scratch of at least :data:`N_CHOICES` entries."""
    best[:N_CHOICES] = -1
    for i in range(n):
        c = choice_of(actions[i])
        if best[c] < 0 or values[i] > values[best[c]]:
            best[c] = i
    for c in range(N_CHOICES):
        if best[c] >= 0:
            values[best[c]] += lift


BUCKETS = 64
"""Value buckets of :func:`top_indices` (its histogram scratch has this many entries)."""


@njit(cache=True, inline="always")
def top_indices(values, n, k, out, keys, hist):
    """Write to ``out[:k]`` the indices of the ``k`` largest of ``values[:n]`` (``k <= n``),
    in increasing order; of equal values the smaller index is kept.

    A histogram of :data:`BUCKETS` equal buckets between the min and the max finds the
    bucket the ``k``-th largest lies in; a quickselect among that bucket's values (into
    the scratch ``keys``) finds it exactly. ``hist``: an int scratch of ``BUCKETS``.
    """
    lo = values[0]
    hi = values[0]
    for i in range(n):
        lo = min(lo, values[i])
        hi = max(hi, values[i])
    if not hi > lo:
        for i in range(k):
            out[i] = i
        return
    scale = BUCKETS / (hi - lo)
    hist[:] = 0
    for i in range(n):
        hist[min(np.int64((values[i] - lo) * scale), BUCKETS - 1)] += 1
    above = 0
    b = BUCKETS - 1
    while above + hist[b] < k:
        above += hist[b]
        b -= 1
    c = 0
    for i in range(n):
        if min(np.int64((values[i] - lo) * scale), BUCKETS - 1) == b:
            keys[c] = values[i]
            c += 1
    threshold = kth_largest(keys, c, k - above)
    ties = k - above  # how many of the bucket's values equal to the threshold to take
    for i in range(n):
        x = values[i]
        if x > threshold and min(np.int64((x - lo) * scale), BUCKETS - 1) == b:
            ties -= 1
    m = 0
    for i in range(n):
        x = values[i]
        bucket = min(np.int64((x - lo) * scale), BUCKETS - 1)
        if bucket > b or (bucket == b and (x > threshold or (x == threshold and ties > 0))):
            if bucket == b and not x > threshold:
                ties -= 1
            out[m] = i
            m += 1
