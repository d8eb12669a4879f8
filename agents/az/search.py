"""Batched Gumbel search: many games searched together, their leaves evaluated in one batch.

This is the search of Gumbel AlphaZero (Danihelka et al., "Policy improvement by planning
with Gumbel", ICLR 2022) run over a whole batch of games at once, as a vectorised tree
search runs on an accelerator: every simulation step selects one leaf in every game's
tree (compiled, :mod:`.kernels`), the observations of all those leaves go to the network
in a single call, and the results are expanded and backed up for all games (compiled
again). Python only drives the loop, so the network is the cost that remains. The tree is
a :class:`~.tree.Tree` of arrays, the selection rules are in :mod:`.selection` and the
settings in :class:`~.config.SearchConfig`.

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
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numba
import numpy as np
from numba import njit

from patchwork_env.agents.az.config import SearchConfig
from patchwork_env.agents.az.games import PATCHWORK, AZGame, get_game
from patchwork_env.agents.az.kernels import (
    BATCH_LOOPS,
    TREE_FUNCTIONS,
    finish_roots,
    start_halving,
)
from patchwork_env.agents.az.playouts import mixed_targets, playout_values
from patchwork_env.agents.az.tree import new_tree
from patchwork_env.data.actions import N_ACTIONS
from patchwork_env.engine.compiling import pick, renamed_copy

Evaluator = Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]
"""``evaluate(observations (k, 1189) float32, masks (k, 2026) bool) -> (logits (k, 2026),
values (k,))``: the network's prior logits and its value for the player to move."""

_TREE_CALLS = {name: njit(cache=True)(renamed_copy(fn.py_func, "_call"))
               for name, fn in TREE_FUNCTIONS.items()}


def _with_globals(loop: Callable[..., None], suffix: str, functions: dict[str, Any]
                  ) -> Callable[..., None]:
    """A copy of ``loop`` named with ``suffix`` (its own on-disk cache entry) that calls
    ``functions`` under their names instead of the ones its module imports."""
    if not suffix:
        return loop
    copy = renamed_copy(loop, suffix)
    moved = types.FunctionType(copy.__code__, {**loop.__globals__, **functions},
                               copy.__name__, copy.__defaults__, copy.__closure__)
    moved.__qualname__, moved.__module__ = copy.__qualname__, copy.__module__
    return moved


def _serial_and_parallel(loop: Callable[..., None], game: AZGame) -> tuple[Any, Any]:
    """A batch loop compiled serial, and multi-threaded with the functions of
    ``TREE_FUNCTIONS`` called instead of inlined (numba's threaded loops would lose what
    the inlined ones write through the tree's fields), each calling ``game``'s rules."""
    suffix = "" if game is PATCHWORK else f"_{game.name}"
    serial = _with_globals(loop, suffix, game.kernel_functions)
    threaded = _with_globals(loop, suffix + "_parallel", {**game.kernel_functions,
                                                          **_TREE_CALLS})
    return njit(cache=True)(serial), njit(cache=True, parallel=True)(threaded)


_LOOPS = {name: _serial_and_parallel(fn, PATCHWORK) for name, fn in BATCH_LOOPS.items()}
"""Patchwork's compiled batch loops, by name."""
_OTHER_LOOPS: dict[str, dict[str, tuple[Any, Any]]] = {}
"""The other games' compiled batch loops, by the game's name, then the loop's (made on
first use)."""


def _game_loops(game: AZGame) -> dict[str, tuple[Any, Any]]:
    """The batch loops of ``game``."""
    if game is PATCHWORK:
        return _LOOPS
    if game.name not in _OTHER_LOOPS:
        _OTHER_LOOPS[game.name] = {name: _serial_and_parallel(fn, game)
                                   for name, fn in BATCH_LOOPS.items()}
    return _OTHER_LOOPS[game.name]


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
    """Gumbel search over up to ``n_games`` positions at once (see the module docstring),
    with the settings of ``config`` (a :class:`~.config.SearchConfig`; ``None``: its
    defaults), keyword ``changes`` replacing some of them (``GumbelSearch(64,
    simulations=8)``). The leaf playouts' seeds come from the search's generator.
    ``game``: the game searched (:mod:`.games`, Patchwork by default; a search of the
    draft has no leaf playouts)."""

    def __init__(self, n_games: int, config: SearchConfig | None = None,
                 game: str | AZGame = PATCHWORK, **changes: Any) -> None:
        self.game = game = get_game(game)
        if n_games < 1:
            raise ValueError(f"GumbelSearch needs n_games >= 1, got {n_games}")
        config = config or SearchConfig()
        self.config = config = config.replace(**changes) if changes else config
        if game is not PATCHWORK and config.leaf_playouts:
            raise ValueError(f"the search of {game.name} has no leaf playouts")
        self.n_games = int(n_games)
        self.params = config.kernel_params()
        """The settings the compiled loops read."""
        self.table = np.array([considered_visits(k, config.simulations)
                               for k in range(config.max_considered + 1)],
                              np.int64).reshape(config.max_considered + 1, config.simulations)
        self.tree = new_tree(self.n_games, config.simulations, config.top_k,
                             config.max_considered, game.state_dtype)
        """The arrays of every game's tree."""
        g = self.n_games
        self._active = np.zeros(g, np.bool_)
        self._needs_eval = np.zeros(g, np.bool_)
        self._leaf_states = np.zeros(g, game.state_dtype)
        self._masks = np.zeros((g, game.n_actions), np.bool_)
        self._obs: np.ndarray | None = None
        self._entries: dict[tuple[str, bool], Callable[..., None]] = {}
        self.leaf_states: np.ndarray = self._leaf_states[:0]
        """The positions of the batch being evaluated (valid during ``evaluate``)."""

    # ----- the tree, read back (tests, analysis) -------------------------------------
    def node_arrays(self, game: int) -> dict[str, np.ndarray]:
        """Copies of game ``game``'s node statistics: ``visits``, ``value_sum`` (for each
        node's mover), ``value0``, ``mover``, ``to_move``, ``parent``, ``action``."""
        t = self.tree
        states, visits, wsum, value0, mover = t.states, t.visits, t.value_sum, t.value0, t.mover
        edge_start, edge_count, e_action, e_child = (t.edge_start, t.edge_count, t.e_action,
                                                     t.e_child)
        m = self.config.simulations + 1
        k = int(t.n_nodes[game])
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
    def _loop(self, name: str, n: int, *args: Any) -> None:
        """Run the batch loop ``name`` on ``args``: serial or multi-threaded, for ``n``
        games. Its compiled version for these argument types is looked up once per search
        and then called directly: numba's type dispatch on every call reads a named
        tuple's type in Python, which costs more than a simulation step of a small batch
        (the arguments' types never change within a search)."""
        kernels = _game_loops(self.game)[name]
        parallel = self.config.parallel
        loop = pick(kernels, n) if parallel is None else kernels[1 if parallel else 0]
        key = (name, loop is kernels[1])
        entry = self._entries.get(key)
        if entry is None:
            entry = self._entries[key] = loop.compile(tuple(numba.typeof(a) for a in args))
        entry(*args)

    def run(self, states: np.ndarray, rules: Any, evaluate: Evaluator,
            rng: np.random.Generator) -> SearchResult:
        """Search every position of ``states`` (a 1-D array of the game's state records, at
        most ``n_games`` unfinished games, under ``rules``: a preset name or the game's
        rules) with ``evaluate`` called once per simulation step on
        the new leaves of all games together; the Gumbel noise comes from ``rng``."""
        n = len(states)
        game = self.game
        if (not isinstance(states, np.ndarray) or states.dtype != game.state_dtype
                or states.ndim != 1):
            raise TypeError(f"states must be a 1-D array of {game.name} state records")
        if not 1 <= n <= self.n_games:
            raise ValueError(f"this search holds 1..{self.n_games} games, got {n}")
        if (states["to_move"] < 0).any():
            raise ValueError("every position to search must be an unfinished game")
        rules = game.get_rules(rules)
        move_args, bonus_points = game.move_args(rules), game.bonus_points(rules)
        size = game.observation_size(rules)
        if self._obs is None or self._obs.shape[1] != size:
            self._obs = np.zeros((self.n_games, size), np.float32)
        stats = SearchStats()
        clock = time.perf_counter()
        config, tree, active, needs = self.config, self.tree, self._active[:n], self._needs_eval[:n]
        self._loop("init_roots", n, tree, n, np.ascontiguousarray(states), active)
        stats.searched = int(active.sum())
        stats.simulations = stats.searched * config.simulations
        stats.tree_seconds += time.perf_counter() - clock
        if stats.searched:
            rows = np.flatnonzero(active)
            self._evaluate(rows, rules, evaluate, stats, rng)
            clock = time.perf_counter()
            counts = tree.edge_count[:n, 0]
            total = int(counts[active].sum())
            draws = (rng.gumbel(size=total) * config.gumbel_scale if config.gumbel_scale
                     else np.zeros(total))
            start_halving(tree, n, active, draws, config.max_considered, config.every_choice)
            n_considered = np.minimum(counts, config.max_considered).astype(np.int64)
            stats.tree_seconds += time.perf_counter() - clock
            for sim in range(config.simulations):
                clock = time.perf_counter()
                considered = self.table[n_considered, sim]
                self._loop("select", n, tree, n, considered, active, needs, self.params,
                           move_args, bonus_points)
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

    def _evaluate(self, rows: np.ndarray, rules: Any, evaluate: Evaluator,
                  stats: SearchStats, rng: np.random.Generator) -> None:
        """Evaluate the current leaves of the games ``rows`` in one call (mixed with their
        random playouts, if the search has any), then expand them and back their values
        up."""
        clock = time.perf_counter()
        k = len(rows)
        leaf_states, masks = self._leaf_states[:k], self._masks[:k]
        self._loop("write_leaves", k, self.tree, rows, leaf_states, masks.view(np.uint8))
        obs = self.game.observe(leaf_states, rules, out=self._obs[:k])
        self.leaf_states = leaf_states
        now = time.perf_counter()
        stats.tree_seconds += now - clock
        logits, values = evaluate(obs, masks)
        clock = time.perf_counter()
        stats.network_seconds += clock - now
        logits = np.ascontiguousarray(logits, dtype=np.float32)
        values = np.ascontiguousarray(values, dtype=np.float32).reshape(-1)
        n_actions = self.game.n_actions
        if logits.shape != (k, n_actions) or values.shape != (k,):
            raise ValueError(f"evaluate must return logits ({k}, {n_actions}) and values "
                             f"({k},), got {logits.shape} and {values.shape}")
        config = self.config
        if config.leaf_playouts:
            now = time.perf_counter()
            stats.tree_seconds += now - clock
            estimates = playout_values(leaf_states, rules, config.leaf_playouts,
                                       int(rng.integers(2**63)), config.score_weight,
                                       config.score_scale)
            values = mixed_targets(values, estimates, config.playout_mix)
            stats.playouts += k * config.leaf_playouts
            clock = time.perf_counter()
            stats.playout_seconds += clock - now
        self._loop("expand", k, self.tree, rows, logits, values, self.params)
        stats.evaluations += k
        stats.network_calls += 1
        stats.tree_seconds += time.perf_counter() - clock

    def _finish(self, n: int) -> SearchResult:
        counts = self.tree.edge_count[:n, 0].astype(np.int64)
        offsets = np.zeros(n + 1, np.int64)
        np.cumsum(counts, out=offsets[1:])
        t_actions = np.empty(offsets[-1], np.int16)
        t_probs = np.empty(offsets[-1], np.float32)
        actions = np.empty(n, np.int64)
        values = np.empty(n, np.float32)
        finish_roots(self.tree, n, self._active[:n], self.params, offsets, t_actions, t_probs,
                     actions, values)
        return SearchResult(actions, offsets, t_actions, t_probs, values)
