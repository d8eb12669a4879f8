"""Top-k selection for the search's compiled code: the ``k`` largest of a row of values,
and the lift that makes them include the best action of every choice of the turn.

:func:`top_indices` picks the Gumbel-top-k actions at the root and the edges an inner node
keeps; :func:`lift_choice_bests` (with ``SearchConfig.every_choice``) arranges that the
best action of each choice (each slot, advancing) comes before any second-best one.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from patchwork_env.data.actions import ADVANCE, N_BUY_ACTIONS, SLOT_STRIDE


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
