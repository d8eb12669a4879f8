"""Agents that play Patchwork, and the registry that builds them from a spec string.

A spec is an agent's name with an optional argument (``mcts:200``, ``ppo:runs/x/best.pt``);
:data:`SPECS` lists them, each with its builder and the line that describes it (the
command lines print that table in their ``--help``). :data:`DRAFT_SPECS` lists those that
play Patchwork Draft (``make("mcts:400", game="draft")``): ``random``, ``greedy``,
``mcts``, ``az:PATH[:SIMS]`` and ``az-policy:PATH`` (a draft network; none is shipped, and
its search has no leaf playouts, so there is no ``az-playouts``). The spec of an agent that runs a
network (``az``, ``az-playouts``, ``az-policy``, ``ppo``, ``ppo-sample``) may end with
``@DEVICE``, where its network runs (``az:runs/x/net.pt:64@cuda:1``; see
:mod:`.device`). :func:`make` builds an agent, :func:`make_opponent` an opponent for the
single-agent and vector environments.

>>> from patchwork_env import agents
>>> agent = agents.make("mcts:200", seed=0)
>>> agent.spec
'mcts:200'
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from patchwork_env.agents.base import Agent
from patchwork_env.agents.policy_agent import PolicyAgent
from patchwork_env.envs.opponents import AgentOpponent, Opponent, RandomOpponent, as_opponent

Builder = Callable[[str | None, int | None, str | None], Agent]
"""``build(argument or None, seed, device or None) -> agent`` (the device of an agent that
runs a network, checked by :func:`make`; ``None``: the CPU; ignored by the others)."""


class AgentSpecError(ValueError):
    """A spec that names no agent, a bad argument, or a checkpoint that cannot be loaded."""


def _random(arg: str | None, seed: int | None, device: str | None) -> Agent:
    from patchwork_env.agents.random_agent import RandomAgent

    return RandomAgent(seed)


def _greedy(arg: str | None, seed: int | None, device: str | None) -> Agent:
    from patchwork_env.agents.greedy import GreedyAgent

    return GreedyAgent(seed)


def _mcts(arg: str | None, seed: int | None, device: str | None) -> Agent:
    from patchwork_env.agents.mcts.agent import MCTSAgent

    return MCTSAgent(arg or "400", seed)


def _ppo(sample: bool) -> Builder:
    def build(arg: str | None, seed: int | None, device: str | None) -> Agent:
        from patchwork_env.agents.ppo.agent import PPOAgent

        return PPOAgent(arg, seed, deterministic=not sample, device=device or "cpu")

    return build


def _az(arg: str | None, seed: int | None, device: str | None) -> Agent:
    from patchwork_env.agents.az.agent import make_az

    return make_az(arg, seed, device)


def _az_playouts(arg: str | None, seed: int | None, device: str | None) -> Agent:
    from patchwork_env.agents.az.agent import make_az_playouts

    return make_az_playouts(arg, seed, device)


def _az_policy(arg: str | None, seed: int | None, device: str | None) -> Agent:
    from patchwork_env.agents.az.agent import make_az_policy

    return make_az_policy(arg, seed, device)


def _draft_az(arg: str | None, seed: int | None, device: str | None) -> Agent:
    from patchwork_env.agents.az.agent import make_az

    return make_az(arg, seed, device, game="draft")


def _draft_az_policy(arg: str | None, seed: int | None, device: str | None) -> Agent:
    from patchwork_env.agents.az.agent import make_az_policy

    return make_az_policy(arg, seed, device, game="draft")


def _draft_greedy(arg: str | None, seed: int | None, device: str | None) -> Agent:
    from patchwork_env.agents.draft_greedy import DraftGreedyAgent

    return DraftGreedyAgent(seed)


def _draft_mcts(arg: str | None, seed: int | None, device: str | None) -> Agent:
    from patchwork_env.agents.mcts.draft_agent import DraftMCTSAgent

    return DraftMCTSAgent(arg or "400", seed)


def _human(arg: str | None, seed: int | None, device: str | None) -> Agent:
    from patchwork_env.agents.human import HumanAgent

    return HumanAgent(seed)


class AgentSpec(NamedTuple):
    """One entry of the registry."""

    name: str
    """What a spec starts with (``mcts``)."""
    usage: str
    """The spec with its optional argument, as the help shows it (``mcts[:N|:Ss]``)."""
    build: Builder
    takes_argument: bool
    help: str
    """What the agent does, in one line."""
    takes_device: bool = False
    """Whether it runs a network, so that its spec may end with ``@DEVICE``."""


SPECS: tuple[AgentSpec, ...] = (
    AgentSpec("random", "random", _random, False, "uniform over the legal moves"),
    AgentSpec("greedy", "greedy", _greedy, False,
              "the best move one step ahead (patch value and quilt shape)"),
    AgentSpec("mcts", "mcts[:N|:Ss]", _mcts, True,
              "UCT tree search: N simulations per move (default 400) or S seconds"),
    AgentSpec("ppo", "ppo[:PATH]", _ppo(sample=False), True,
              "a trained policy (.pt or .zip; default: the shipped one)", True),
    AgentSpec("ppo-sample", "ppo-sample[:PATH]", _ppo(sample=True), True,
              "the same, sampling its moves instead of the likeliest", True),
    AgentSpec("az", "az[:PATH][:SIMS]", _az, True,
              "a search-guided network with at most SIMS network evaluations per move "
              "(default 32; default network: the shipped one)", True),
    AgentSpec("az-playouts", "az-playouts[:PATH][:SIMS]", _az_playouts, True,
              "the same search, each leaf valued by the network and random playouts together",
              True),
    AgentSpec("az-policy", "az-policy[:PATH]", _az_policy, True,
              "the same network without search: its most likely legal move", True),
    AgentSpec("human", "human", _human, False,
              "a person at the terminal (patchwork-play only)"),
)
"""The agents :func:`make` builds, in the order the help lists them."""

DRAFT_SPECS: tuple[AgentSpec, ...] = (
    AgentSpec("random", "random", _random, False, "uniform over the legal moves"),
    AgentSpec("greedy", "greedy", _draft_greedy, False,
              "the best move one step ahead (points and buttons earned, cost, lines "
              "nearly complete)"),
    AgentSpec("mcts", "mcts[:N|:Ss]", _draft_mcts, True,
              "UCT tree search over many dealings of the unseen deck: N simulations per "
              "move (default 400) or S seconds"),
    AgentSpec("az", "az:PATH[:SIMS]", _draft_az, True,
              "a search-guided draft network with at most SIMS network evaluations per move "
              "(default 32), searching dealings of the unseen deck", True),
    AgentSpec("az-policy", "az-policy:PATH", _draft_az_policy, True,
              "the same network without search: its most likely legal move", True),
)
"""The agents :func:`make` builds for Patchwork Draft (``game="draft"``)."""

GAMES = ("patchwork", "draft")
"""The games agents play: Patchwork, and its drafting variant Patchwork Draft."""
GAME_NAMES = {"patchwork": "Patchwork", "draft": "Patchwork Draft"}
"""Each game's name in words."""

_BY_NAME = {spec.name: spec for spec in SPECS}
_DRAFT_BY_NAME = {spec.name: spec for spec in DRAFT_SPECS}
AGENT_NAMES = tuple(_BY_NAME)
SPEC_HELP = ", ".join(spec.usage for spec in SPECS)
"""The specs in one line, for error messages."""
DRAFT_SPEC_HELP = ", ".join(spec.usage for spec in DRAFT_SPECS)
"""The draft's specs in one line, for error messages."""
DEVICE_AGENTS = tuple(spec.name for spec in SPECS if spec.takes_device)
"""The agents that run a network: their specs may end with ``@DEVICE``."""


def split_device(spec: str) -> tuple[str, str | None]:
    """``"az:x.pt:64@cuda:1"`` as ``("az:x.pt:64", "cuda:1")``; ``(spec, None)`` for a spec
    without a device. The device is what follows the last ``@``, unless that holds a ``/``,
    ``\\`` or ``.`` (then the ``@`` belongs to a path); an empty one is an
    :class:`AgentSpecError`."""
    if not isinstance(spec, str):
        return spec, None
    head, sep, device = spec.strip().rpartition("@")
    if not sep or any(c in device for c in "/\\."):
        return spec, None
    if not device:
        raise AgentSpecError(f"agent spec {spec!r} has an empty device after '@'")
    return head, device


def check_game(game: str) -> str:
    """``game`` if it is one of :data:`GAMES`, else ``AgentSpecError``."""
    if game not in GAMES:
        raise AgentSpecError(f"unknown game {game!r}: choose from {', '.join(GAMES)}")
    return game


def parse_spec(spec: str, game: str = "patchwork") -> tuple[str, str | None]:
    """Split ``"name:arg"`` into ``(name, arg)``; ``AgentSpecError`` if it names no agent
    of ``game`` (:data:`GAMES`)."""
    if not isinstance(spec, str) or not spec.strip():
        raise AgentSpecError(f"an agent spec is a non-empty string, got {spec!r}")
    name, sep, arg = spec.strip().partition(":")
    if check_game(game) == "draft":
        by_name, help_line = _DRAFT_BY_NAME, DRAFT_SPEC_HELP
        if name == "az-playouts":
            raise AgentSpecError("agent 'az-playouts' does not play Patchwork Draft: the "
                                 "draft's search has no leaf playouts (use az:PATH[:SIMS])")
        if name in _BY_NAME and name not in by_name:
            raise AgentSpecError(f"agent {name!r} does not play Patchwork Draft: choose from "
                                 f"{help_line}")
    else:
        by_name, help_line = _BY_NAME, SPEC_HELP
    if name not in by_name:
        raise AgentSpecError(f"unknown agent {spec!r}: choose from {help_line}")
    if sep and not by_name[name].takes_argument:
        raise AgentSpecError(f"agent {name!r} takes no argument, got {spec!r}")
    if sep and not arg:
        raise AgentSpecError(f"agent spec {spec!r} has an empty argument after ':'")
    return name, (arg if sep else None)


def make(spec: str, seed: int | None = None, device: str | None = None,
         game: str = "patchwork") -> Agent:
    """Build the agent that ``spec`` names (see :data:`SPECS`; for ``game="draft"``,
    :data:`DRAFT_SPECS`), seeded with ``seed``.

    An agent that runs a network runs it on the spec's own ``@DEVICE`` if it has one, else
    on ``device`` (``None``: the CPU); the other agents ignore ``device``. Every problem
    with the spec (an unknown name, a bad budget, a missing or unreadable checkpoint, a
    ``@DEVICE`` on an agent without a network, a device this machine lacks) raises
    :class:`AgentSpecError` with a one-line message.
    """
    rest, own = split_device(spec)
    name, arg = parse_spec(rest, game)
    entry = (_DRAFT_BY_NAME if game == "draft" else _BY_NAME)[name]
    if own is not None and not entry.takes_device:
        raise AgentSpecError(f"agent {name!r} runs no network, so it takes no @DEVICE, got "
                             f"{spec!r} (only {', '.join(DEVICE_AGENTS)} do)")
    chosen = own if own is not None else device
    try:
        if entry.takes_device and chosen is not None:
            from patchwork_env.agents.device import resolve_device

            chosen = str(resolve_device(chosen, what="device"))
        return entry.build(arg, seed, chosen)
    except AgentSpecError:
        raise
    except (ValueError, OSError) as e:
        raise AgentSpecError(f"agent {spec!r}: {e}") from e


class RegistryOpponent(AgentOpponent):
    """An environment opponent that plays the registry's agent ``spec``; an environment's
    ``reset(seed=s)`` rebuilds it with seed ``s``, so its choices repeat with the games."""

    def __init__(self, spec: str, seed: int | None = None) -> None:
        super().__init__(make(spec, seed))
        self.spec = spec

    def reseed(self, seed: int | None) -> None:
        if seed is not None:
            self.agent = make(self.spec, seed)


def make_opponent(opponent: str | Any, seed: int | None = None) -> Opponent:
    """An opponent for the single-agent and vector environments.

    A spec (see :data:`SPECS`) gives the registry's agent, seeded with ``seed`` (``"random"``
    the environments' compiled random player); problems with it raise
    :class:`AgentSpecError`. Anything else goes to
    :func:`~patchwork_env.envs.opponents.as_opponent` (an opponent, an agent or a policy).

    >>> import gymnasium
    >>> env = gymnasium.make("patchwork_env/Patchwork-v0", opponent=make_opponent("greedy"))
    """
    if not isinstance(opponent, str):
        return as_opponent(opponent)
    if opponent.strip() == "random":
        return RandomOpponent()
    try:
        return RegistryOpponent(opponent, seed)
    except ValueError as e:
        raise AgentSpecError(f"opponent {opponent!r}: {e}") from e


__all__ = ["AGENT_NAMES", "DEVICE_AGENTS", "DRAFT_SPECS", "DRAFT_SPEC_HELP", "GAMES",
           "GAME_NAMES", "SPECS", "SPEC_HELP", "Agent", "AgentSpec", "AgentSpecError",
           "PolicyAgent", "RegistryOpponent", "check_game", "make", "make_opponent",
           "parse_spec", "split_device"]
