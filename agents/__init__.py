"""Agents that play Patchwork, and the registry that builds them from a spec string.

A spec is an agent's name with an optional argument (``mcts:200``, ``ppo:runs/x/best.pt``);
:data:`SPECS` lists them, each with its builder and the line that describes it (the
command lines print that table in their ``--help``). :func:`make` builds an agent,
:func:`make_opponent` an opponent for the single-agent and vector environments.

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

Builder = Callable[[str | None, int | None], Agent]
"""``build(argument or None, seed) -> agent``."""


class AgentSpecError(ValueError):
    """A spec that names no agent, a bad argument, or a checkpoint that cannot be loaded."""


def _random(arg: str | None, seed: int | None) -> Agent:
    from patchwork_env.agents.random_agent import RandomAgent

    return RandomAgent(seed)


def _greedy(arg: str | None, seed: int | None) -> Agent:
    from patchwork_env.agents.greedy import GreedyAgent

    return GreedyAgent(seed)


def _mcts(arg: str | None, seed: int | None) -> Agent:
    from patchwork_env.agents.mcts.agent import MCTSAgent

    return MCTSAgent(arg or "400", seed)


def _ppo(sample: bool) -> Callable[[str | None, int | None], Agent]:
    def build(arg: str | None, seed: int | None) -> Agent:
        from patchwork_env.agents.ppo.agent import PPOAgent

        return PPOAgent(arg, seed, deterministic=not sample)

    return build


def _az(arg: str | None, seed: int | None) -> Agent:
    from patchwork_env.agents.az.agent import make_az

    return make_az(arg, seed)


def _az_playouts(arg: str | None, seed: int | None) -> Agent:
    from patchwork_env.agents.az.agent import make_az_playouts

    return make_az_playouts(arg, seed)


def _az_policy(arg: str | None, seed: int | None) -> Agent:
    from patchwork_env.agents.az.agent import make_az_policy

    return make_az_policy(arg, seed)


def _human(arg: str | None, seed: int | None) -> Agent:
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


SPECS: tuple[AgentSpec, ...] = (
    AgentSpec("random", "random", _random, False, "uniform over the legal moves"),
    AgentSpec("greedy", "greedy", _greedy, False,
              "the best move one step ahead (patch value and quilt shape)"),
    AgentSpec("mcts", "mcts[:N|:Ss]", _mcts, True,
              "UCT tree search: N simulations per move (default 400) or S seconds"),
    AgentSpec("ppo", "ppo[:PATH]", _ppo(sample=False), True,
              "a trained policy (.pt or .zip; default: the shipped one)"),
    AgentSpec("ppo-sample", "ppo-sample[:PATH]", _ppo(sample=True), True,
              "the same, sampling its moves instead of the likeliest"),
    AgentSpec("az", "az[:PATH][:SIMS]", _az, True,
              "a search-guided network with at most SIMS network evaluations per move "
              "(default 32; default network: the shipped one)"),
    AgentSpec("az-playouts", "az-playouts[:PATH][:SIMS]", _az_playouts, True,
              "the same search, each leaf valued by the network and random playouts together"),
    AgentSpec("az-policy", "az-policy[:PATH]", _az_policy, True,
              "the same network without search: its most likely legal move"),
    AgentSpec("human", "human", _human, False,
              "a person at the terminal (patchwork-play only)"),
)
"""The agents :func:`make` builds, in the order the help lists them."""

_BY_NAME = {spec.name: spec for spec in SPECS}
AGENT_NAMES = tuple(_BY_NAME)
SPEC_HELP = ", ".join(spec.usage for spec in SPECS)
"""The specs in one line, for error messages."""


def parse_spec(spec: str) -> tuple[str, str | None]:
    """Split ``"name:arg"`` into ``(name, arg)``; ``AgentSpecError`` if it names no agent."""
    if not isinstance(spec, str) or not spec.strip():
        raise AgentSpecError(f"an agent spec is a non-empty string, got {spec!r}")
    name, sep, arg = spec.strip().partition(":")
    if name not in _BY_NAME:
        raise AgentSpecError(f"unknown agent {spec!r}: choose from {SPEC_HELP}")
    if sep and not _BY_NAME[name].takes_argument:
        raise AgentSpecError(f"agent {name!r} takes no argument, got {spec!r}")
    if sep and not arg:
        raise AgentSpecError(f"agent spec {spec!r} has an empty argument after ':'")
    return name, (arg if sep else None)


def make(spec: str, seed: int | None = None) -> Agent:
    """Build the agent that ``spec`` names (see :data:`SPECS`), seeded with ``seed``.

    Every problem with the spec (an unknown name, a bad budget, a missing or unreadable
    checkpoint) raises :class:`AgentSpecError` with a one-line message.
    """
    name, arg = parse_spec(spec)
    try:
        return _BY_NAME[name].build(arg, seed)
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


__all__ = ["AGENT_NAMES", "SPECS", "SPEC_HELP", "Agent", "AgentSpec", "AgentSpecError",
           "PolicyAgent", "RegistryOpponent", "make", "make_opponent", "parse_spec"]
