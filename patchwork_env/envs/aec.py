"""The PettingZoo AEC environment: ``env()``, :class:`raw_env` with the standard checks.

``env(**kwargs)`` gives what PettingZoo's standard wrappers give around :class:`raw_env`
(order enforcing, an illegal move ending the game with a penalty for the mover), built
into one class, :class:`CheckedEnv`, so that reading
``agent_selection``, ``terminations`` or ``rewards`` costs a plain attribute read instead
of a call through every wrapper layer. The documentation page is :class:`raw_env`'s
docstring (:mod:`patchwork_env.envs.aec_raw`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pettingzoo.utils.env import AECIterable, AECIterator
from pettingzoo.utils.env_logger import EnvLogger

from patchwork_env.data.validation import check_number
from patchwork_env.envs.aec_raw import AGENTS, RESET_OPTIONS, raw_env

_NOT_BEFORE_RESET = frozenset({"rewards", "terminations", "truncations", "infos",
                               "agent_selection", "num_agents", "agents"})


def env(illegal_reward: float = -1.0, **kwargs: Any) -> CheckedEnv:
    """:class:`raw_env` with the checks of PettingZoo's standard wrappers; ``kwargs`` go to
    :class:`raw_env`.

    An illegal move ends the game: ``illegal_reward`` (a number) for the mover, 0 for the
    other. A value that is not a move changes nothing and raises (the error names it):
    ``TypeError`` if it is not an integer (a float, a bool, a string), ``ValueError`` if
    it lies outside ``0..2025``.
    """
    return CheckedEnv(illegal_reward, **kwargs)


class CheckedEnv(raw_env):
    """:class:`raw_env` with what ``OrderEnforcingWrapper`` and ``TerminateIllegalWrapper``
    add, with the same messages, and the action checks of :class:`raw_env`:

    * before :meth:`reset`, ``rewards``, ``terminations``, ``truncations``, ``infos``,
      ``agent_selection``, ``num_agents`` and ``agents`` raise ``AttributeError``, and
      ``step``, ``observe``, ``render``, ``state`` and ``agent_iter`` raise
      ``RuntimeError`` (as :class:`raw_env` does);
    * ``step`` refuses a value that is not a move, changing nothing, with an error that
      names it: ``TypeError`` for a value of the wrong kind (a float, a bool, a string),
      ``ValueError`` for an integer outside ``0..2025``, for ``None`` from the agent to
      move and for anything but ``None`` from a finished agent;
    * an illegal move ends the game for both agents (terminated and truncated), with
      ``illegal_reward`` for the mover and 0 for the other;
    * a loop over :meth:`agent_iter` must step once per agent it yields
      (``RuntimeError`` otherwise).
    """

    def __init__(self, illegal_reward: float = -1.0, **kwargs: Any) -> None:
        self.illegal_reward = check_number(illegal_reward, "illegal_reward")
        super().__init__(**kwargs)
        self._has_reset = False
        self._has_updated = False
        del self.agents  # like the wrapped env, it has no agents before reset

    def __getattr__(self, name: str) -> Any:
        # Called only when a normal attribute read fails: free on the hot path.
        if name in _NOT_BEFORE_RESET and not self.__dict__.get("_has_reset", False):
            raise AttributeError(f"{name} cannot be accessed before reset")
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        super().reset(seed=seed, options=options)
        self._has_reset = True
        self._has_updated = True

    def observe(self, agent: str) -> dict[str, Any]:
        if not self._has_reset:
            _before_reset(EnvLogger.error_observe_before_reset)
        return super().observe(agent)

    def render(self) -> Any:
        if not self._has_reset:
            _before_reset(EnvLogger.error_render_before_reset)
        return super().render()

    def state(self) -> Any:
        if not self._has_reset:
            _before_reset(EnvLogger.error_state_before_reset)
        return super().state()

    def agent_iter(self, max_iter: int = 2**63) -> AECIterable:
        if not self._has_reset:
            _before_reset(EnvLogger.error_agent_iter_before_reset)
        return _CheckedIterable(self, max_iter)

    def step(self, action: Any) -> None:
        if not self._has_reset:
            _before_reset(EnvLogger.error_step_before_reset)
        self._has_updated = True
        if not self.agents:
            EnvLogger.warn_step_after_terminated_truncated()
            return
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._dead_step(agent, action)
            return
        if type(action) is not int or not 0 <= action < self._n_actions:  # not the common case
            action = self._checked_move(agent, action)  # refused: nothing changes
        try:
            super().step(action)
        except ValueError:  # the engine refused the move, changing nothing
            self._end_by_illegal_move(agent)

    def _end_by_illegal_move(self, agent: str) -> None:
        EnvLogger.warn_on_illegal_move()
        self._cumulative_rewards[agent] = 0
        self.terminations = dict.fromkeys(self.agents, True)
        self.truncations = dict.fromkeys(self.agents, True)
        self.rewards = dict.fromkeys(self.agents, 0)
        self.rewards[agent] = float(self.illegal_reward)
        self._accumulate_rewards()
        self._deads_step_first()


def _before_reset(error: Callable[[], None]) -> None:
    """PettingZoo's error for a call before ``reset``, as a ``RuntimeError`` (the project's
    error for a call out of order) where PettingZoo's wrappers raise ``AssertionError``."""
    try:
        error()
    except AssertionError as e:
        raise RuntimeError(str(e)) from None


class _CheckedIterable(AECIterable):
    def __iter__(self) -> _CheckedIterator:
        return _CheckedIterator(self.env, self.max_iter)


class _CheckedIterator(AECIterator):
    def __next__(self) -> str:
        agent = super().__next__()
        if not self.env._has_updated:
            raise RuntimeError("need to call step() or reset() in a loop over `agent_iter`")
        self.env._has_updated = False
        return agent


__all__ = ["AGENTS", "RESET_OPTIONS", "CheckedEnv", "env", "raw_env"]
