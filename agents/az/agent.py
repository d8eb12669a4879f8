"""The search-guided agents: an az network (:mod:`.net`) played with or without search.

* ``az[:PATH][:SIMS]``: the batched Gumbel search of :mod:`.search` with the network, at
  most ``SIMS`` network evaluations per move (the root's and ``SIMS - 1`` simulations;
  default :data:`DEFAULT_EVALUATIONS`). It plays without Gumbel noise, so its moves are
  deterministic for a network and a position; a batch of games is searched together, all
  their leaves evaluated in one network call per simulation.
* ``az-playouts[:PATH][:SIMS]``: the same search, each evaluated leaf valued by the mean of
  the network's value and of :data:`LEAF_PLAYOUTS` random playouts from it (weight
  ``SearchConfig.playout_mix`` on the playouts), as AlphaGo mixed its value network with
  rollouts: the network's evaluations stay within ``SIMS``, the playouts come on top.
* ``az-policy[:PATH]``: the raw network, no search: its legal action of highest logit.

Without ``PATH`` all three play the network shipped with the package, :data:`DEFAULT_MODEL`
(``models/az.pt``; ``az:64`` is that network with 64 evaluations per move). Each runs its
network on a device (:mod:`~patchwork_env.agents.device`; the CPU unless told otherwise)
in a precision (``fp32`` unless told otherwise); its moves come from float32 results
either way.

Patchwork Draft (``game="draft"``) has ``az:PATH[:SIMS]`` and ``az-policy:PATH``, playing a
draft network (no network is shipped for it, so ``PATH`` is needed; its search has no leaf
playouts, so no ``az-playouts``). The draft's search runs on a copy of each game whose
face-down deck is dealt again from the agent's generator (:func:`~.games.redeal_hidden`,
as self-play does), so the agent never reads the hidden order: two positions differing
only there get the same move.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch

from patchwork_env import GameBatch
from patchwork_env.agents.az.config import PLAY, SearchConfig
from patchwork_env.agents.az.games import AZGame, get_game
from patchwork_env.agents.az.net import AZNet, load_az_net, make_evaluator
from patchwork_env.agents.az.search import GumbelSearch
from patchwork_env.agents.base import Agent, check_rows
from patchwork_env.agents.policy_agent import masked_actions
from patchwork_env.agents.shipped import AZ_MODEL

DEFAULT_EVALUATIONS = 32
"""Network evaluations per move of ``az:PATH``."""
DEFAULT_MODEL = AZ_MODEL
"""The shipped network that ``az`` and ``az-policy`` with no path play."""
LEAF_PLAYOUTS = 4
"""Random playouts from each evaluated leaf of ``az-playouts``."""
MAX_EVALUATIONS = 100_000
"""The largest budget of ``az:SIMS`` and ``az-playouts:SIMS``: each game's search tree is
allocated up front for the whole budget (about 300 bytes a simulation)."""


def parse_az_arg(arg: str | None, name: str = "az", budget: bool = True,
                 game: str = "patchwork") -> tuple[Path, int]:
    """``None``, ``"SIMS"``, ``"PATH"`` or ``"PATH:SIMS"`` as ``(path, evaluations per
    move)`` (no path: :data:`DEFAULT_MODEL`, Patchwork's only); ``ValueError`` with a
    one-line reason for a bad budget or a draft spec without a path, ``FileNotFoundError``
    if there is no network file."""
    path, evaluations = arg or "", DEFAULT_EVALUATIONS
    head, sep, tail = path.rpartition(":")
    if budget and sep and tail.strip().isdigit():
        path, evaluations = head, int(tail)
    elif budget and path.strip().isdigit():
        path, evaluations = "", int(path)
    if not 1 <= evaluations <= MAX_EVALUATIONS:
        raise ValueError(f"{name} needs at least 1 and at most {MAX_EVALUATIONS:,} network "
                         f"evaluations per move, got {evaluations}")
    if not path and game != "patchwork":
        raise ValueError(f"no az network is shipped for the {game} game: pass {name}:PATH "
                         f"(a network trained with train.py --algo az --game {game})")
    if not path:
        if not DEFAULT_MODEL.is_file():
            raise FileNotFoundError(f"no model file at {DEFAULT_MODEL} (no az network has "
                                    f"been shipped with this install: pass {name}:PATH)")
        return DEFAULT_MODEL, evaluations
    return Path(path), evaluations


def _check_batch(net: AZNet, game: AZGame, batch: GameBatch, spec: str) -> None:
    if batch.state.dtype != game.state_dtype:
        raise ValueError(f"{spec} plays a network of the {game.name} game, not these games "
                         f"of {type(batch).__name__}")
    size = game.observation_size(batch.rules)
    if size != net.obs_size:
        raise ValueError(f"{spec} expects observations of {net.obs_size} values, the rules "
                         f"{batch.rules} give {size}")


def _load(net: AZNet | str | Path, game: str | None) -> tuple[AZNet, AZGame]:
    """The network (a file's loaded for ``game``, default Patchwork) in eval mode and its
    game; ``ValueError`` for a network object of another game than ``game``."""
    if isinstance(net, str | Path):
        net = load_az_net(net, game=game or "patchwork")
    elif game is not None and net.game != get_game(game).name:
        raise ValueError(f"an az network of the {net.game} game cannot play {game}")
    return net.eval(), get_game(net.game)


class AZAgent(Agent):
    """A network played through the batched Gumbel search.

    ``evaluations``: at most this many network evaluations per move (the root's and
    ``evaluations - 1`` simulations). ``config``: how it searches (default
    :data:`~.config.PLAY`: no noise, so deterministic), with keyword ``changes`` to some
    of its settings (``leaf_playouts=4``); its ``simulations`` is set from
    ``evaluations``. The playouts' seeds come from the agent's generator. ``device`` and
    ``precision``: where and how the network runs (:func:`~.net.make_evaluator`; a
    network given as an object is moved there; ``device=None``: a file's network on the
    CPU, an object's where it is). ``game``: the game it plays (a file's network of the
    other game is refused; ``None``: a network object's own game, a file's Patchwork). In
    a game with hidden information (the draft) each search runs on copies with the hidden
    part dealt again from the agent's generator (``AZGame.redeal``).
    """

    def __init__(self, net: AZNet | str | Path, evaluations: int = DEFAULT_EVALUATIONS,
                 seed: int | None = None, spec: str | None = None,
                 config: SearchConfig = PLAY, device: str | torch.device | None = None,
                 precision: str = "fp32", game: str | None = None, **changes: Any) -> None:
        super().__init__(seed)
        self.net, self.game = _load(net, game)
        self._evaluate = make_evaluator(self.net, device, precision)
        self.evaluations = int(evaluations)
        if self.evaluations < 1:
            raise ValueError(f"an az agent needs at least 1 network evaluation per move, got "
                             f"{evaluations}")
        self.config = config.replace(simulations=self.evaluations - 1, **changes)
        self.spec = spec or f"az:{self.evaluations}"
        self._search: GumbelSearch | None = None
        self.last_stats = None
        """The :class:`~.search.SearchStats` of the latest call (for benchmarks)."""

    def _searcher(self, n: int) -> GumbelSearch:
        if self._search is None or self._search.n_games < n:
            self._search = GumbelSearch(n, self.config, game=self.game)
        return self._search

    def act(self, batch: GameBatch, rows: np.ndarray) -> np.ndarray:
        rows = check_rows(batch, rows)
        if len(rows) == 0:
            return np.zeros(0, np.int64)
        _check_batch(self.net, self.game, batch, self.spec)
        states = batch.state[rows]
        if self.game.redeal is not None:
            states = self.game.redeal(states, batch.rules, int(self.rng.integers(2**63)))
        result = self._searcher(len(rows)).run(states, batch.rules, self._evaluate, self.rng)
        self.last_stats = result.stats
        return result.actions


class AZPolicyAgent(Agent):
    """A network played without search: its legal action of highest logit (chosen by
    :func:`~patchwork_env.agents.policy_agent.masked_actions`, as every learned player's
    move is); ``device``, ``precision`` and ``game`` as :class:`AZAgent` has them (an
    observation holds nothing hidden, so nothing is redealt)."""

    def __init__(self, net: AZNet | str | Path, seed: int | None = None,
                 spec: str | None = None, device: str | torch.device | None = None,
                 precision: str = "fp32", game: str | None = None) -> None:
        super().__init__(seed)
        self.net, self.game = _load(net, game)
        self._evaluate = make_evaluator(self.net, device, precision)
        self.spec = spec or "az-policy"

    def act(self, batch: GameBatch, rows: np.ndarray) -> np.ndarray:
        rows = check_rows(batch, rows)
        if len(rows) == 0:
            return np.zeros(0, np.int64)
        _check_batch(self.net, self.game, batch, self.spec)
        sub = batch[rows]
        obs = self.game.observe(sub.state, sub.rules)
        masks = sub.legal_mask()
        logits, _ = self._evaluate(obs, masks)  # unmasked: masked_actions masks them
        return masked_actions(logits, masks)


def make_az(arg: str | None, seed: int | None, device: str | None = None,
            game: str = "patchwork") -> Agent:
    """The registry's ``az[:PATH][:SIMS]`` of ``game``, its network on ``device``
    (``None``: the CPU)."""
    path, evaluations = parse_az_arg(arg, game=game)
    return AZAgent(load_az_net(path, device, game=game), evaluations, seed,
                   spec="az" if arg is None else f"az:{arg}", game=game)


def make_az_playouts(arg: str | None, seed: int | None, device: str | None = None) -> Agent:
    """The registry's ``az-playouts[:PATH][:SIMS]``, its network on ``device``."""
    path, evaluations = parse_az_arg(arg, "az-playouts")
    return AZAgent(load_az_net(path, device, game="patchwork"), evaluations, seed,
                   leaf_playouts=LEAF_PLAYOUTS,
                   spec="az-playouts" if arg is None else f"az-playouts:{arg}")


def make_az_policy(arg: str | None, seed: int | None, device: str | None = None,
                   game: str = "patchwork") -> Agent:
    """The registry's ``az-policy[:PATH]`` of ``game``, its network on ``device``."""
    path, _ = parse_az_arg(arg, "az-policy", budget=False, game=game)
    return AZPolicyAgent(load_az_net(path, device, game=game), seed,
                         spec="az-policy" if arg is None else f"az-policy:{arg}", game=game)
