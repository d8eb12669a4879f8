"""Self-play with the batched Gumbel search: the worker that turns a network into samples.

:class:`SelfPlayWorker` is a plain object with one method that does the work,
``generate(weights, n_games, seed) -> SelfPlayBatch``, so it can run in the learner's
process, in a separate process or as a remote actor alike: it is built from plain data
(a :class:`~patchwork_env.agents.az.config.SearchConfig`, the number of games in flight,
the rules and a network config) and takes plain data (a state dict).

It keeps ``parallel_games`` games in flight in one batch of the game's
(:class:`~patchwork_env.GameBatch`, or the draft's
:class:`~patchwork_env.engine.draft_batch.DraftBatch`);
every move searches all unfinished games together (one network call per simulation for
all of them), plays the search's actions (Gumbel noise at the root explores), and starts
a new game in the place of each finished one until ``n_games`` have been played. Each
position searched becomes a sample: its state record, the improved policy (sparse), the
player to move and, once the game is over, the result for that player.

A game with hidden information (the draft's face-down deck) is searched on a copy of each
position with the hidden part drawn again at every move (``AZGame.redeal``), so the
search never reads what the player to move cannot see; the samples keep the true
positions, whose observations do not show it either.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from patchwork_env.agents.az.config import SearchConfig
from patchwork_env.agents.az.games import PATCHWORK, get_game
from patchwork_env.agents.az.net import AZNet, build_az_net, make_evaluator
from patchwork_env.agents.az.search import Evaluator, GumbelSearch
from patchwork_env.training.az.aux_targets import final_targets


@dataclass
class SelfPlayBatch:
    """The samples of some finished games (one per position searched, forced moves too).

    The policy targets are CSR rows as in :class:`~patchwork_env.agents.az.search.SearchResult`.
    """

    states: np.ndarray
    """``(N,)`` state records of the game: the position before the move."""
    target_offsets: np.ndarray
    target_actions: np.ndarray
    target_probs: np.ndarray
    values: np.ndarray
    """``(N,) float32``: the game's result for the player to move (in [-1, 1])."""
    root_values: np.ndarray
    """``(N,) float32``: the search's value of the position (NaN for forced moves)."""
    game_ids: np.ndarray
    """``(N,) int64``: which of the batch's games each sample comes from."""
    winners: np.ndarray
    """``(games,) int64``: the winner of each game."""
    policy_targets: np.ndarray | None = None
    """``(N,) bool``: whether each sample's policy is a training target (a full search's;
    playout cap randomization); ``None``: all are."""
    score_diffs: np.ndarray | None = None
    """``(N,) int16``: the final score difference for the player to move
    (:mod:`~patchwork_env.training.az.aux_targets`); ``None``: unknown."""
    final_quilts: np.ndarray | None = None
    """``(N, 2, 2) uint64``: the final quilts, the player to move's first; ``None``:
    unknown."""
    games: int = 0
    stats: dict[str, float] = field(default_factory=dict)
    """``seconds``, ``tree_seconds``, ``network_seconds``, ``evaluations``,
    ``simulations``, ``moves`` (positions played), ``mean_abs_score_diff``,
    ``player0_wins`` (a fraction)."""

    def __len__(self) -> int:
        return len(self.states)


class SelfPlayWorker:
    """Plays games against itself with the search and returns them as samples.

    ``net_config``: the model-file config of the network (``AZNet.config()``); ``config``:
    how it searches; ``parallel_games``: games in flight at once (the batch every network
    call evaluates); ``rules``: the rule preset of the games; ``threads``: torch threads
    for the network (``None``: leave torch's setting); ``device`` and ``precision``: where
    and how its network runs (:func:`~patchwork_env.agents.az.net.make_evaluator`; the
    weights it is given are copied there). Instead of a network config, an
    ``evaluate`` function (:data:`~patchwork_env.agents.az.search.Evaluator`) that
    evaluates the leaves elsewhere: a worker of an inference service
    (:mod:`.inference`) holds no network, and its ``generate`` takes no weights.
    ``full_search_fraction``: the chance that a move is searched with ``config``'s
    simulations (its sample a policy target); the other moves are searched with
    ``cheap_simulations`` and their samples teach the value only (playout cap
    randomization; 1: every move searched in full). ``game``: the game played
    (:mod:`patchwork_env.agents.az.games`, Patchwork by default).
    """

    def __init__(self, net_config: dict[str, Any] | None, config: SearchConfig,
                 parallel_games: int, rules: str = "default", threads: int | None = None,
                 evaluate: Evaluator | None = None, device: str | torch.device = "cpu",
                 precision: str = "fp32", *, full_search_fraction: float = 1.0,
                 cheap_simulations: int = 4, game: str = "patchwork") -> None:
        if parallel_games < 1:
            raise ValueError(f"parallel_games must be at least 1, got {parallel_games}")
        if (net_config is None) == (evaluate is None):
            raise ValueError("a self-play worker needs a network config or an evaluator, "
                             "not both")
        self.config = config
        self.parallel_games = int(parallel_games)
        self.game = get_game(game)
        self.rules = self.game.get_rules(rules)
        self.net: AZNet | None = None
        """The worker's own network; ``None`` where ``evaluate`` evaluates elsewhere (an
        inference service, :mod:`.inference`)."""
        if net_config is not None:
            self.net = build_az_net(net_config).eval()
            evaluate = make_evaluator(self.net, device, precision)
        self.threads = threads
        self._search = GumbelSearch(self.parallel_games, config, game=self.game)
        self.full_search_fraction = float(full_search_fraction)
        self._cheap_search = (GumbelSearch(self.parallel_games,
                                           config.replace(simulations=cheap_simulations),
                                           game=self.game)
                              if self.full_search_fraction < 1 else None)
        self._evaluate: Evaluator = evaluate  # type: ignore[assignment]

    def load_weights(self, weights: dict[str, torch.Tensor]) -> None:
        """Play with these weights from now on (a state dict of the network)."""
        if self.net is None:
            raise ValueError("this worker's leaves are evaluated by its evaluator, which "
                             "holds the weights")
        self.net.load_state_dict(weights)
        self.net.eval()

    def generate(self, weights: dict[str, torch.Tensor] | None, n_games: int, seed: int
                 ) -> SelfPlayBatch:
        """Play ``n_games`` games (set up and searched from ``seed``) with ``weights``
        (``None``: the weights already loaded)."""
        if n_games < 1:
            raise ValueError(f"generate needs at least one game, got {n_games}")
        if weights is not None:
            self.load_weights(weights)
        if self.threads:
            torch.set_num_threads(self.threads)
        start = time.perf_counter()
        rng = np.random.default_rng(seed)
        width = min(n_games, self.parallel_games)
        game = self.game
        games = game.batch_type.new(width, seed=int(rng.integers(2**63)), rules=self.rules)
        game_of_row = np.arange(width)
        started = width
        outcome0 = np.zeros(n_games, np.float32)  # each game's result for player 0
        final = np.zeros(n_games, game.state_dtype)
        parts: list[tuple] = []
        tree_s = net_s = 0.0
        evaluations = moves = simulations = 0
        live = np.ones(width, bool)
        while live.any():
            rows = np.flatnonzero(live)
            actions = np.full(width, -1, np.int64)
            full = (np.ones(len(rows), bool) if self._cheap_search is None
                    else rng.random(len(rows)) < self.full_search_fraction)
            for search, is_full in ((self._search, True), (self._cheap_search, False)):
                picked = rows[full == is_full]
                if search is None or not len(picked):
                    continue
                states = games.state[picked]
                seen = (states if game.redeal is None
                        else game.redeal(states, self.rules, int(rng.integers(2**63))))
                result = search.run(seen, self.rules, self._evaluate, rng)
                tree_s += result.stats.tree_seconds
                net_s += result.stats.network_seconds
                evaluations += result.stats.evaluations
                simulations += result.stats.simulations
                moves += len(picked)
                parts.append((states, result.target_offsets, result.target_actions,
                              result.target_probs, result.root_values, game_of_row[picked],
                              np.full(len(picked), is_full)))
                actions[picked] = result.actions
            games.step(actions, check=False)
            done = np.flatnonzero(live & games.done)
            if len(done):
                ids = game_of_row[done]
                final[ids] = games.state[done]
                new = min(len(done), n_games - started)
                if new:
                    games.reset(done[:new])
                    game_of_row[done[:new]] = np.arange(started, started + new)
                    started += new
                live[done[new:]] = False
        players = np.zeros(n_games, np.int64)
        game.outcome_values(final, players, game.bonus_points(self.rules),
                            self.config.score_weight, self.config.score_scale, outcome0)
        finished = game.batch_type(final, self.rules)
        batch = _concatenate(parts, outcome0, finished.winners())
        if game is PATCHWORK:  # the draft's networks have no auxiliary heads
            batch.score_diffs, batch.final_quilts = final_targets(
                batch.states, final[batch.game_ids], self.rules)
        scores = finished.scores()
        batch.games = n_games
        batch.stats = {"seconds": time.perf_counter() - start, "tree_seconds": tree_s,
                       "network_seconds": net_s, "evaluations": float(evaluations),
                       "simulations": float(simulations), "moves": float(moves),
                       "mean_abs_score_diff": float(np.abs(scores[:, 0] - scores[:, 1]).mean()),
                       "player0_wins": float((outcome0 > 0).mean())}
        return batch


def _concatenate(parts: list[tuple], outcome0: np.ndarray, winners: np.ndarray
                 ) -> SelfPlayBatch:
    """One batch from the per-move results; values from the games' results."""
    states = np.concatenate([p[0] for p in parts])
    lengths = np.concatenate([np.diff(p[1]) for p in parts])
    offsets = np.zeros(len(lengths) + 1, np.int64)
    np.cumsum(lengths, out=offsets[1:])
    game_ids = np.concatenate([p[5] for p in parts])
    sign = np.where(states["to_move"] == 0, 1.0, -1.0).astype(np.float32)
    return SelfPlayBatch(states=states, target_offsets=offsets,
                         target_actions=np.concatenate([p[2] for p in parts]),
                         target_probs=np.concatenate([p[3] for p in parts]),
                         values=outcome0[game_ids] * sign,
                         root_values=np.concatenate([p[4] for p in parts]),
                         game_ids=game_ids.astype(np.int64), winners=winners,
                         policy_targets=np.concatenate([p[6] for p in parts]))
