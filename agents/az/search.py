"""Batched Gumbel search: many games searched together, their leaves evaluated in one batch.

This is the search of Gumbel AlphaZero (Danihelka et al., "Policy improvement by planning
with Gumbel", ICLR 2022) run over a whole batch of games at once, as a vectorised tree
search runs on an accelerator: every simulation step selects one leaf in every game's
tree (compiled, :mod:`.az_kernels`), the observations of all those leaves go to the network
in a single call, and the results are expanded and backed up for all games (compiled
again, :mod:`.az_kernels`). Python only drives the loop, so the network is the cost that remains.

* At the root: Gumbel-top-k sampling of ``max_considered`` actions and sequential halving
  over the simulation budget. A root action is scored ``g(a) + logit(a) + sigma(Q(a))``;
  each simulation visits the best-scoring action among those with the visit count that
  the halving schedule (:func:`considered_visits`) asks for, so the first simulations
  take the top ``m`` actions by ``g + logit`` and later ones keep halving the set.
* Below the root: the deterministic ``argmax_a pi'(a) - N(a) / (1 + sum_b N(b))`` with
  ``pi' = softmax(logit + sigma(completed Q))``; inner nodes keep only the ``top_k``
  legal actions of highest prior.
* ``sigma(q) = (c_visit + max_b N(b)) * c_scale * q`` of the completed Q values (visited
  children: their mean value; the others: the node's mixed value), rescaled to [0, 1].
* The result: the action sequential halving ends on, and the improved policy
  ``softmax(logit + sigma(completed Q))`` over all the root's legal actions as the policy
  target.

Values are in [-1, 1] from the point of view of the player to move; finished games are
valued by their true result (win/loss, optionally mixed with the score difference). With
``leaf_playouts``, an evaluated leaf's value mixes the network's with the mean result of
that many random playouts from it (:mod:`.playouts`), as AlphaGo mixed its value network
with rollouts.
Positions with a single legal move are not searched (and cost no evaluation). Everything
is deterministic for a given generator state and network.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from patchwork_env.agents.az import tree as T
from patchwork_env.agents.az.kernels import BATCH_LOOPS, finish_roots, start_halving
from patchwork_env.agents.az.playouts import mixed_targets, playout_values
from patchwork_env.data.actions import N_ACTIONS
from patchwork_env.data.rules import Rules, get_rules
from patchwork_env.data.tables import RuleTables
from patchwork_env.engine.compiling import compile_serial_and_parallel, pick
from patchwork_env.engine.kernels import STATE_DTYPE
from patchwork_env.views.observation import layout, observe

Evaluator = Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]
"""``evaluate(observations (k, 1189) float32, masks (k, 2026) bool) -> (logits (k, 2026),
values (k,))``: the network's prior logits and its value for the player to move."""

_LOOPS = {name: compile_serial_and_parallel(fn) for name, fn in BATCH_LOOPS.items()}


def considered_visits(m: int, n: int) -> list[int]:
    """The sequential halving schedule: for each of ``n`` simulations, the visit count a
    root action must have to be chosen, with ``m`` actions considered at first.

    The budget is split over ``ceil(log2 m)`` phases; each phase gives every action still
    considered the same number of extra visits, then halves the set (keeping at least 2).
    """
    if m <= 1:
        return list(range(n))
    phases = math.ceil(math.log2(m))
    schedule: list[int] = []
    visits = [0] * m
    k = m
    while len(schedule) < n:
        extra = max(1, int(n / (phases * k)))
        for _ in range(extra):
            schedule.extend(visits[:k])
            for i in range(k):
                visits[i] += 1
        k = max(2, k // 2)
    return schedule[:n]


@dataclass
class SearchStats:
    """What one :meth:`GumbelSearch.run` cost."""

    searched: int = 0
    """Games searched (positions with more than one legal move)."""
    simulations: int = 0
    """Simulations run, all games together (``searched * simulations``)."""
    evaluations: int = 0
    """Positions sent to the network, roots included."""
    network_calls: int = 0
    terminal_leaves: int = 0
    """Simulations that ended on a finished game (no evaluation needed)."""
    playouts: int = 0
    """Random playouts run from evaluated leaves (``leaf_playouts`` per evaluation)."""
    tree_seconds: float = 0.0
    """Time in everything but the network and the playouts: tree operations, observations,
    masks."""
    network_seconds: float = 0.0
    playout_seconds: float = 0.0
    """Time in the leaves' random playouts."""


@dataclass
class SearchResult:
    """The outcome of searching ``n`` positions.

    The policy targets are sparse (CSR): game ``i``'s legal actions are
    ``target_actions[target_offsets[i]:target_offsets[i + 1]]`` with their probabilities
    in ``target_probs`` (summing to 1). A position with a single legal move has that move
    with probability 1.
    """

    actions: np.ndarray
    """``(n,) int64``: the chosen action of each game."""
    target_offsets: np.ndarray
    target_actions: np.ndarray
    target_probs: np.ndarray
    root_values: np.ndarray
    """``(n,) float32``: the search's value of each root for the player to move (NaN
    where the move was forced and nothing was searched)."""
    stats: SearchStats = field(default_factory=SearchStats)

    def policy(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        """``(actions, probabilities)`` of game ``i``'s improved policy."""
        a, b = self.target_offsets[i], self.target_offsets[i + 1]
        return self.target_actions[a:b], self.target_probs[a:b]

    def dense_policy(self) -> np.ndarray:
        """``(n, 2026) float32``: the improved policies as dense rows."""
        out = np.zeros((len(self.actions), N_ACTIONS), np.float32)
        rows = np.repeat(np.arange(len(self.actions)), np.diff(self.target_offsets))
        out[rows, self.target_actions] = self.target_probs
        return out


class GumbelSearch:
    """Gumbel search over up to ``n_games`` positions at once (see the module docstring).

    ``simulations``: simulations per search after the root's evaluation (so at most
    ``simulations + 1`` evaluations per position). ``max_considered``: the ``m`` root
    actions of Gumbel-top-k. ``top_k``: edges kept at inner nodes. ``gumbel_scale``: 1 for
    self-play, 0 for a deterministic search (top-m by prior). ``c_visit``, ``c_scale``:
    the ``sigma`` transform. ``score_weight``, ``score_scale``: the value of a finished
    game mixes win/loss with the clipped score difference / ``score_scale``. ``parallel``:
    run the loops over games multi-threaded (``None``: as the engine does, from 256 games
    when numba has several threads). Off by default: one simulation step of 256 games is
    about a millisecond of work, and when the cores are shared (with the network's own
    threads, or with other programs) the threads' hand-offs cost more than that; on 2
    busy cores the threaded loops ran 30 times slower than the serial ones.
    ``every_choice``: the root's considered actions and an inner node's kept edges include
    the best action of every choice of the turn (buying from each slot, advancing) before
    any second-best one, so that one choice's many placements cannot crowd the others out
    of a small budget. ``leaf_playouts``: random playouts from each evaluated leaf (0:
    none), whose mean result (valued as finished games are) is mixed into the leaf's value
    with weight ``playout_mix``; their seeds come from the search's generator.
    """

    def __init__(self, n_games: int, simulations: int = 32, max_considered: int = 16,
                 top_k: int = 32, gumbel_scale: float = 1.0, c_visit: float = 50.0,
                 c_scale: float = 0.1, rescale_values: bool = True,
                 score_weight: float = 0.0, score_scale: float = 20.0,
                 parallel: bool | None = False, every_choice: bool = True,
                 leaf_playouts: int = 0, playout_mix: float = 0.5) -> None:
        if n_games < 1 or simulations < 0 or max_considered < 1 or top_k < 1:
            raise ValueError("GumbelSearch needs n_games >= 1, simulations >= 0, "
                             "max_considered >= 1 and top_k >= 1")
        if not 0.0 <= score_weight <= 1.0 or score_scale <= 0:
            raise ValueError("score_weight must lie in [0, 1] and score_scale be positive")
        if leaf_playouts < 0 or not 0.0 <= playout_mix <= 1.0:
            raise ValueError("leaf_playouts must be 0 or more and playout_mix lie in [0, 1], "
                             f"got {leaf_playouts} and {playout_mix}")
        self.leaf_playouts = int(leaf_playouts)
        self.playout_mix = float(playout_mix)
        self.n_games = int(n_games)
        self.simulations = int(simulations)
        self.max_considered = int(max_considered)
        self.top_k = int(top_k)
        self.gumbel_scale = float(gumbel_scale)
        self.every_choice = bool(every_choice)
        self.params = (float(c_visit), float(c_scale), 1.0 if rescale_values else 0.0,
                       float(top_k), 1.0 if every_choice else 0.0)
        self.shaping = (float(score_weight), float(score_scale))
        self.parallel = parallel
        self.table = np.array([considered_visits(k, self.simulations)
                               for k in range(self.max_considered + 1)],
                              np.int64).reshape(self.max_considered + 1, self.simulations)
        g, m = self.n_games, self.simulations + 1
        edges = N_ACTIONS + self.simulations * self.top_k
        arrays: dict[int, np.ndarray] = {
            T.STATES: np.zeros(g * m, STATE_DTYPE),
            T.VISITS: np.zeros((g, m), np.int32),
            T.VALUE_SUM: np.zeros((g, m), np.float64),
            T.VALUE0: np.zeros((g, m), np.float64),
            T.MOVER: np.zeros((g, m), np.int8),
            T.EDGE_START: np.zeros((g, m), np.int32),
            T.EDGE_COUNT: np.zeros((g, m), np.int32),
            T.N_NODES: np.zeros(g, np.int32),
            T.N_EDGES: np.zeros(g, np.int32),
            T.E_ACTION: np.zeros((g, edges), np.int16),
            T.E_LOGIT: np.zeros((g, edges), np.float32),
            T.E_PRIOR: np.zeros((g, edges), np.float32),
            T.E_CHILD: np.zeros((g, edges), np.int32),
            T.PATH: np.zeros((g, m + 1), np.int32),
            T.DEPTH: np.zeros(g, np.int32),
            T.Q_SCRATCH: np.zeros((g, 2 * N_ACTIONS), np.float64),
            T.A_SCRATCH: np.zeros((g, N_ACTIONS + max(self.top_k, self.max_considered)),
                                  np.int16),
            T.CHOSEN: np.zeros((g, self.max_considered), np.int32),
            T.N_CHOSEN: np.zeros(g, np.int32),
            T.C_SCORE: np.zeros((g, self.max_considered), np.float64),
            T.C_PRIOR: np.zeros((g, self.max_considered), np.float64),
            T.C_CHILD: np.zeros((g, self.max_considered), np.int32),
            T.H_SCRATCH: np.zeros((g, T.BUCKETS), np.int32),
        }
        self.tree = tuple(arrays[k] for k in range(len(arrays)))
        """The arrays of every game's tree, in the order of :mod:`.az_tree`."""
        self._active = np.zeros(g, np.bool_)
        self._needs_eval = np.zeros(g, np.bool_)
        self._leaf_states = np.zeros(g, STATE_DTYPE)
        self._masks = np.zeros((g, N_ACTIONS), np.bool_)
        self._obs: np.ndarray | None = None
        self.leaf_states: np.ndarray = self._leaf_states[:0]
        """The positions of the batch being evaluated (valid during ``evaluate``)."""

    # ----- the tree, read back (tests, analysis) -------------------------------------
    def node_arrays(self, game: int) -> dict[str, np.ndarray]:
        """Copies of game ``game``'s node statistics: ``visits``, ``value_sum`` (for each
        node's mover), ``value0``, ``mover``, ``to_move``, ``parent``, ``action``."""
        states, visits, wsum, value0, mover = (self.tree[T.STATES], self.tree[T.VISITS],
                                               self.tree[T.VALUE_SUM], self.tree[T.VALUE0],
                                               self.tree[T.MOVER])
        edge_start, edge_count = self.tree[T.EDGE_START], self.tree[T.EDGE_COUNT]
        n_nodes = self.tree[T.N_NODES]
        e_action, e_child = self.tree[T.E_ACTION], self.tree[T.E_CHILD]
        m = self.simulations + 1
        k = int(n_nodes[game])
        parent = np.full(k, -1, np.int64)
        action = np.full(k, -1, np.int64)
        for node in range(k):
            a, b = edge_start[game, node], edge_start[game, node] + edge_count[game, node]
            for e in range(a, b):
                if e_child[game, e] > 0:
                    parent[e_child[game, e]] = node
                    action[e_child[game, e]] = e_action[game, e]
        return {"visits": visits[game, :k].copy(), "value_sum": wsum[game, :k].copy(),
                "value0": value0[game, :k].copy(), "mover": mover[game, :k].copy(),
                "to_move": states[game * m: game * m + k]["to_move"].copy(),
                "parent": parent, "action": action}

    # ----- searching ---------------------------------------------------------------
    def _loop(self, name: str, n: int) -> Callable[..., None]:
        """The serial or the multi-threaded version of a batch loop, for ``n`` games."""
        if self.parallel is None:
            return pick(_LOOPS[name], n)
        return _LOOPS[name][1 if self.parallel else 0]

    def run(self, states: np.ndarray, rules: str | Rules, evaluate: Evaluator,
            rng: np.random.Generator) -> SearchResult:
        """Search every position of ``states`` (a 1-D ``STATE_DTYPE`` array of at most
        ``n_games`` unfinished games) with ``evaluate`` called once per simulation step on
        the new leaves of all games together; the Gumbel noise comes from ``rng``."""
        n = len(states)
        if not isinstance(states, np.ndarray) or states.dtype != STATE_DTYPE or states.ndim != 1:
            raise TypeError("states must be a 1-D array of patchwork_env STATE_DTYPE records")
        if not 1 <= n <= self.n_games:
            raise ValueError(f"this search holds 1..{self.n_games} games, got {n}")
        if (states["to_move"] < 0).any():
            raise ValueError("every position to search must be an unfinished game")
        rules = get_rules(rules)
        t = RuleTables.of(rules)
        rule = (t.income_before, t.leather_spaces, t.bonus_masks, t.track_end, t.bonus_points)
        size = layout(rules).size
        if self._obs is None or self._obs.shape[1] != size:
            self._obs = np.zeros((self.n_games, size), np.float32)
        stats = SearchStats()
        clock = time.perf_counter()
        tree, active, needs = self.tree, self._active[:n], self._needs_eval[:n]
        self._loop("init_roots", n)(tree, n, np.ascontiguousarray(states), active)
        stats.searched = int(active.sum())
        stats.simulations = stats.searched * self.simulations
        stats.tree_seconds += time.perf_counter() - clock
        if stats.searched:
            rows = np.flatnonzero(active)
            self._evaluate(rows, rules, evaluate, stats, rng)
            clock = time.perf_counter()
            counts = tree[T.EDGE_COUNT][:n, 0]
            total = int(counts[active].sum())
            draws = (rng.gumbel(size=total) * self.gumbel_scale if self.gumbel_scale
                     else np.zeros(total))
            start_halving(tree, n, active, draws, self.max_considered, self.every_choice)
            n_considered = np.minimum(counts, self.max_considered).astype(np.int64)
            stats.tree_seconds += time.perf_counter() - clock
            for sim in range(self.simulations):
                clock = time.perf_counter()
                considered = self.table[n_considered, sim]
                self._loop("select", n)(tree, n, considered, active, needs, self.params,
                                          rule, self.shaping)
                rows = np.flatnonzero(needs)
                stats.terminal_leaves += stats.searched - len(rows)
                stats.tree_seconds += time.perf_counter() - clock
                if len(rows):
                    self._evaluate(rows, rules, evaluate, stats, rng)
        clock = time.perf_counter()
        result = self._finish(n)
        stats.tree_seconds += time.perf_counter() - clock
        result.stats = stats
        return result

    def _evaluate(self, rows: np.ndarray, rules: Rules, evaluate: Evaluator,
                  stats: SearchStats, rng: np.random.Generator) -> None:
        """Evaluate the current leaves of the games ``rows`` in one call (mixed with their
        random playouts, if the search has any), then expand them and back their values
        up."""
        clock = time.perf_counter()
        k = len(rows)
        leaf_states, masks = self._leaf_states[:k], self._masks[:k]
        self._loop("write_leaves", k)(self.tree, rows, leaf_states, masks.view(np.uint8))
        obs = observe(leaf_states, rules, None, out=self._obs[:k])
        self.leaf_states = leaf_states
        now = time.perf_counter()
        stats.tree_seconds += now - clock
        logits, values = evaluate(obs, masks)
        clock = time.perf_counter()
        stats.network_seconds += clock - now
        logits = np.ascontiguousarray(logits, dtype=np.float32)
        values = np.ascontiguousarray(values, dtype=np.float32).reshape(-1)
        if logits.shape != (k, N_ACTIONS) or values.shape != (k,):
            raise ValueError(f"evaluate must return logits ({k}, {N_ACTIONS}) and values "
                             f"({k},), got {logits.shape} and {values.shape}")
        if self.leaf_playouts:
            now = time.perf_counter()
            stats.tree_seconds += now - clock
            estimates = playout_values(leaf_states, rules, self.leaf_playouts,
                                       int(rng.integers(2**63)), *self.shaping)
            values = mixed_targets(values, estimates, self.playout_mix)
            stats.playouts += k * self.leaf_playouts
            clock = time.perf_counter()
            stats.playout_seconds += clock - now
        self._loop("expand", k)(self.tree, rows, logits, values, self.params)
        stats.evaluations += k
        stats.network_calls += 1
        stats.tree_seconds += time.perf_counter() - clock

    def _finish(self, n: int) -> SearchResult:
        counts = self.tree[T.EDGE_COUNT][:n, 0].astype(np.int64)
        offsets = np.zeros(n + 1, np.int64)
        np.cumsum(counts, out=offsets[1:])
        t_actions = np.empty(offsets[-1], np.int16)
        t_probs = np.empty(offsets[-1], np.float32)
        actions = np.empty(n, np.int64)
        values = np.empty(n, np.float32)
        finish_roots(self.tree, n, self._active[:n], self.params, offsets, t_actions, t_probs,
                     actions, values)
        return SearchResult(actions, offsets, t_actions, t_probs, values)
