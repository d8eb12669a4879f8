"""The search-guided agents: an az network (:mod:`.az_net`) played with or without search.

* ``az[:PATH][:SIMS]``: the batched Gumbel search of :mod:`.az_search` with the network, at
  most ``SIMS`` network evaluations per move (the root's and ``SIMS - 1`` simulations;
  default :data:`DEFAULT_EVALUATIONS`). It plays without Gumbel noise, so its moves are
  deterministic for a network and a position; a batch of games is searched together, all
  their leaves evaluated in one network call per simulation.
* ``az-playouts[:PATH][:SIMS]``: the same search, each evaluated leaf valued by the mean of
  the network's value and of :data:`LEAF_PLAYOUTS` random playouts from it (weight
  :data:`PLAYOUT_MIX` on the playouts), as AlphaGo mixed its value network with rollouts:
  the network's evaluations stay within ``SIMS``, the playouts come on top.
* ``az-policy[:PATH]``: the raw network, no search: its legal action of highest logit.

Without ``PATH`` all three play the network shipped with the package, :data:`DEFAULT_MODEL`
(``models/az.pt``; ``az:64`` is that network with 64 evaluations per move).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from patchwork_env import GameBatch
from patchwork_env.agents.az.net import AZNet, load_az_net, make_evaluator
from patchwork_env.agents.az.search import GumbelSearch
from patchwork_env.agents.base import Agent, check_rows
from patchwork_env.agents.shipped import AZ_MODEL
from patchwork_env.views.observation import layout, observe

DEFAULT_EVALUATIONS = 32
"""Network evaluations per move of ``az:PATH``."""
DEFAULT_MODEL = AZ_MODEL
"""The shipped network that ``az`` and ``az-policy`` with no path play."""
PLAY_CONSIDERED = 4
"""Root actions the agents' search considers: with ``every_choice``, the best placement
of each slot's patch and advancing, as the four-choice tree of ``mcts`` branches. With 128
evaluations a move against ``mcts:100``, the network shipped first (60 iterations) won
55.5% of 400 paired games searching with 4 considered and 4 edges kept at inner nodes, and
24.8% of 400 with the 16 and 32 that its self-play used."""
PLAY_TOP_K = 4
"""Edges kept at the inner nodes of the agents' search (see :data:`PLAY_CONSIDERED`)."""
LEAF_PLAYOUTS = 4
"""Random playouts from each evaluated leaf of ``az-playouts``."""
PLAYOUT_MIX = 0.5
"""Weight of the playouts' mean result in an ``az-playouts`` leaf's value."""


def parse_az_arg(arg: str | None, name: str = "az", budget: bool = True
                 ) -> tuple[Path, int]:
    """``None``, ``"SIMS"``, ``"PATH"`` or ``"PATH:SIMS"`` as ``(path, evaluations per
    move)`` (no path: :data:`DEFAULT_MODEL`); ``ValueError`` with a one-line reason for a
    bad budget, ``FileNotFoundError`` if there is no network file."""
    path, evaluations = arg or "", DEFAULT_EVALUATIONS
    head, sep, tail = path.rpartition(":")
    if budget and sep and tail.strip().isdigit():
        path, evaluations = head, int(tail)
    elif budget and path.strip().isdigit():
        path, evaluations = "", int(path)
    if evaluations < 1:
        raise ValueError(f"{name} needs at least 1 network evaluation per move, got "
                         f"{evaluations}")
    if not path:
        if not DEFAULT_MODEL.is_file():
            raise FileNotFoundError(f"no model file at {DEFAULT_MODEL} (no az network has "
                                    f"been shipped with this install: pass {name}:PATH)")
        return DEFAULT_MODEL, evaluations
    return Path(path), evaluations


def _check_rules(net: AZNet, batch: GameBatch, spec: str) -> None:
    size = layout(batch.rules).size
    if size != net.obs_size:
        raise ValueError(f"{spec} expects observations of {net.obs_size} values, the rules "
                         f"{batch.rules} give {size}")


class AZAgent(Agent):
    """A network played through the batched Gumbel search (deterministic: no noise).

    ``evaluations``: at most this many network evaluations per move (the root's and
    ``evaluations - 1`` simulations). ``max_considered``, ``top_k``, ``every_choice``,
    ``leaf_playouts``, ``playout_mix``, ``c_visit``, ``c_scale``, ``score_weight``: as in
    :class:`~.az_search.GumbelSearch` (the playouts' seeds come from the agent's
    generator).
    """

    def __init__(self, net: AZNet | str | Path, evaluations: int = DEFAULT_EVALUATIONS,
                 seed: int | None = None, max_considered: int = PLAY_CONSIDERED,
                 top_k: int = PLAY_TOP_K,
                 spec: str | None = None, every_choice: bool = True,
                 leaf_playouts: int = 0, playout_mix: float = PLAYOUT_MIX,
                 c_visit: float = 50.0, c_scale: float = 0.1,
                 score_weight: float = 0.0) -> None:
        super().__init__(seed)
        self.net = load_az_net(net) if isinstance(net, str | Path) else net.eval()
        self.evaluations = int(evaluations)
        self.max_considered, self.top_k = max_considered, top_k
        self.every_choice = every_choice
        self.leaf_playouts, self.playout_mix = int(leaf_playouts), float(playout_mix)
        self.c_visit, self.c_scale = float(c_visit), float(c_scale)
        self.score_weight = float(score_weight)
        self.spec = spec or f"az:{self.evaluations}"
        self._evaluate = make_evaluator(self.net)
        self._search: GumbelSearch | None = None
        self.last_stats = None
        """The :class:`~.az_search.SearchStats` of the latest call (for benchmarks)."""

    def _searcher(self, n: int) -> GumbelSearch:
        if self._search is None or self._search.n_games < n:
            self._search = GumbelSearch(n, self.evaluations - 1, self.max_considered,
                                        self.top_k, gumbel_scale=0.0,
                                        c_visit=self.c_visit, c_scale=self.c_scale,
                                        score_weight=self.score_weight,
                                        every_choice=self.every_choice,
                                        leaf_playouts=self.leaf_playouts,
                                        playout_mix=self.playout_mix)
        return self._search

    def act(self, batch: GameBatch, rows: np.ndarray) -> np.ndarray:
        rows = check_rows(batch, rows)
        if len(rows) == 0:
            return np.zeros(0, np.int64)
        _check_rules(self.net, batch, self.spec)
        result = self._searcher(len(rows)).run(batch.state[rows], batch.rules,
                                               self._evaluate, self.rng)
        self.last_stats = result.stats
        return result.actions


class AZPolicyAgent(Agent):
    """A network played without search: its legal action of highest logit."""

    def __init__(self, net: AZNet | str | Path, seed: int | None = None,
                 spec: str | None = None) -> None:
        super().__init__(seed)
        self.net = load_az_net(net) if isinstance(net, str | Path) else net.eval()
        self.spec = spec or "az-policy"

    def act(self, batch: GameBatch, rows: np.ndarray) -> np.ndarray:
        rows = check_rows(batch, rows)
        if len(rows) == 0:
            return np.zeros(0, np.int64)
        _check_rules(self.net, batch, self.spec)
        sub = batch[rows]
        obs = observe(sub.state, sub.rules)
        masks = sub.legal_mask()
        with torch.inference_mode():
            logits, _ = self.net(torch.from_numpy(obs), torch.from_numpy(masks))
        return logits.argmax(dim=1).numpy().astype(np.int64)


def make_az(arg: str | None, seed: int | None) -> Agent:
    """The registry's ``az[:PATH][:SIMS]``."""
    path, evaluations = parse_az_arg(arg)
    return AZAgent(path, evaluations, seed, spec="az" if arg is None else f"az:{arg}")


def make_az_playouts(arg: str | None, seed: int | None) -> Agent:
    """The registry's ``az-playouts[:PATH][:SIMS]``."""
    path, evaluations = parse_az_arg(arg, "az-playouts")
    return AZAgent(path, evaluations, seed, leaf_playouts=LEAF_PLAYOUTS,
                   spec="az-playouts" if arg is None else f"az-playouts:{arg}")


def make_az_policy(arg: str | None, seed: int | None) -> Agent:
    """The registry's ``az-policy[:PATH]``."""
    path, _ = parse_az_arg(arg, "az-policy", budget=False)
    return AZPolicyAgent(path, seed, spec="az-policy" if arg is None else f"az-policy:{arg}")
