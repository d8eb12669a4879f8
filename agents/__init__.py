"""Agents that play Patchwork, and the registry that builds them from a spec string.

=====================  ====================================================================
spec                   agent
=====================  ====================================================================
``random``             uniform over the legal moves
``greedy``             the best move one step ahead by a patch-value and quilt-shape heuristic
``mcts[:BUDGET]``      UCT tree search; ``mcts:400`` = 400 simulations per move (the default),
                       ``mcts:1s`` = one second per move
``ppo[:PATH]``         a policy file (``.pt``) or MaskablePPO ``.zip`` played deterministically
                       (default: the shipped model, :data:`agents.ppo.DEFAULT_MODEL`)
``ppo-sample[:PATH]``  the same, sampling its moves from the policy
``az[:PATH][:SIMS]``   an az network (:mod:`agents.az_net`) with batched Gumbel search, at
                       most ``SIMS`` network evaluations per move (default 32; default
                       network: the shipped one, :data:`agents.az.DEFAULT_MODEL`)
``az-playouts[:...]``  the same search, each leaf valued by the network and random
                       playouts together (``az-playouts[:PATH][:SIMS]``)
``az-policy[:PATH]``   the same network without search: its most likely legal move
``human``              a person at the terminal
=====================  ====================================================================

>>> from patchwork_env import agents
>>> agent = agents.make("mcts:200", seed=0)
>>> agent.spec
'mcts:200'
"""

from __future__ import annotations

from collections.abc import Callable

from patchwork_env.agents.base import Agent
from patchwork_env.agents.policy_agent import PolicyAgent
from patchwork_env.envs.opponents import AgentOpponent, Opponent, RandomOpponent

SPEC_HELP = ("random, greedy, mcts[:SIMULATIONS|:SECONDSs], ppo[:PATH], ppo-sample[:PATH], "
             "az[:PATH][:SIMS], az-playouts[:PATH][:SIMS], az-policy[:PATH], human")


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


_FACTORIES: dict[str, tuple[Callable[[str | None, int | None], Agent], bool]] = {
    # name: (factory, whether it takes an argument)
    "random": (_random, False),
    "greedy": (_greedy, False),
    "mcts": (_mcts, True),
    "ppo": (_ppo(sample=False), True),
    "ppo-sample": (_ppo(sample=True), True),
    "az": (_az, True),
    "az-playouts": (_az_playouts, True),
    "az-policy": (_az_policy, True),
    "human": (_human, False),
}
AGENT_NAMES = tuple(_FACTORIES)


def parse_spec(spec: str) -> tuple[str, str | None]:
    """Split ``"name:arg"`` into ``(name, arg)``; ``AgentSpecError`` if it names no agent."""
    if not isinstance(spec, str) or not spec.strip():
        raise AgentSpecError(f"an agent spec is a non-empty string, got {spec!r}")
    name, sep, arg = spec.strip().partition(":")
    if name not in _FACTORIES:
        raise AgentSpecError(f"unknown agent {spec!r}: choose from {SPEC_HELP}")
    if sep and not _FACTORIES[name][1]:
        raise AgentSpecError(f"agent {name!r} takes no argument, got {spec!r}")
    if sep and not arg:
        raise AgentSpecError(f"agent spec {spec!r} has an empty argument after ':'")
    return name, (arg if sep else None)


def make(spec: str, seed: int | None = None) -> Agent:
    """Build the agent that ``spec`` names (see the module docstring), seeded with ``seed``.

    Every problem with the spec (an unknown name, a bad budget, a missing or unreadable
    checkpoint) raises :class:`AgentSpecError` with a one-line message.
    """
    name, arg = parse_spec(spec)
    try:
        return _FACTORIES[name][0](arg, seed)
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


def make_opponent(spec: str, seed: int | None = None) -> Opponent:
    """An opponent for the single-agent and vector environments from an agent spec.

    ``"random"`` gives the environments' compiled random player; any other spec (see the
    module docstring) the registry's agent, seeded with ``seed``. Problems with the spec
    raise :class:`AgentSpecError`.

    >>> import gymnasium
    >>> env = gymnasium.make("patchwork_env/Patchwork-v0", opponent=make_opponent("greedy"))
    """
    if isinstance(spec, str) and spec.strip() == "random":
        return RandomOpponent()
    try:
        return RegistryOpponent(spec, seed)
    except ValueError as e:
        raise AgentSpecError(f"opponent {spec!r}: {e}") from e


__all__ = ["AGENT_NAMES", "SPEC_HELP", "Agent", "AgentSpecError", "PolicyAgent",
           "RegistryOpponent", "make",
           "make_opponent", "parse_spec"]
