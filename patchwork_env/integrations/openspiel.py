"""OpenSpiel integration: Patchwork as a pyspiel game, ``python_patchwork``.

Importing this module registers the game, so OpenSpiel's algorithms and tools can load it
by name (``pip install "patchwork-env[openspiel]"``)::

    import pyspiel
    import patchwork_env.integrations.openspiel  # registers "python_patchwork"

    game = pyspiel.load_game("python_patchwork", {"rules": "revised"})
    state = game.new_initial_state()

Every move runs the project's engine (a :class:`~patchwork_env.Game`); this module adds
no rules. The OpenSpiel view of a game:

==========================  ================================================================
item                        value
==========================  ================================================================
type                        sequential, explicit chance, perfect information, zero-sum,
                            terminal rewards, 2 players
setup (chance)              32 chance nodes deal the circle clockwise from the neutral token:
                            outcome ``k`` puts patch ``k + 1`` next, uniform over the patches
                            not yet dealt; patch 0 goes last. Then one chance node draws the
                            first player (outcome = seat, 1/2 each). The setup is uniform, as
                            ``Game.new`` draws it.
actions                     the project's ``Discrete(2026)`` contract
                            (:mod:`patchwork_env.data.actions`); chance outcomes lie in 0..31
max game length             ``2 * track_end + len(leather_positions)`` decisions (111 under
                            every preset): every move but a leather placement moves the
                            mover's token at least one space, and there is one placement per
                            leather patch; plus the 33 chance nodes of the setup
returns                     +1 for the winner, -1 for the loser at the end, 0 before
observation tensor          the ego-centric vector of :mod:`patchwork_env.views.observation`,
                            ``(1189,)`` under every preset; during the setup, the circle
                            dealt so far on an empty position
observation string, str()   the text rendering of the position (``str(Game)``)
information state string    the action history (the game has perfect information)
parameters                  ``rules``: a preset name, ``default``, ``revised`` or ``classic``
==========================  ================================================================

A state is written and read only as its action history, replayed through the engine on
reading, so ``pyspiel.serialize_game_and_state`` / ``deserialize_game_and_state``
round-trip a state in any process that imported this module and refuse any other text
with a ``ValueError``, unpickling nothing (:mod:`~.openspiel_serial` says how, and what
OpenSpiel does otherwise). :class:`AgentBot` lets any of the project's
agents (anything with ``act_game(game) -> int``) play in OpenSpiel's loops, e.g.
``evaluate_bots`` against OpenSpiel's MCTS bot; :class:`PlayoutEvaluator` is an MCTS leaf
evaluator that plays its random rollouts inside the compiled engine.
"""

from __future__ import annotations

from typing import Any

import numpy as np

try:
    import pyspiel
    from open_spiel.python.algorithms import mcts
    from open_spiel.python.observation import IIGObserverForPublicInfoGame
except ImportError as e:  # pragma: no cover - depends on the installation
    raise ImportError("patchwork_env.integrations.openspiel needs OpenSpiel: "
                      'pip install "patchwork-env[openspiel]"') from e

from patchwork_env.data.actions import N_ACTIONS, format_action
from patchwork_env.data.patches import FIRST_PATCH_ID, N_PATCHES
from patchwork_env.data.rules import PRESETS, Rules, get_rules
from patchwork_env.engine.batch import GameBatch
from patchwork_env.integrations import openspiel_serial as serial
from patchwork_env.integrations.openspiel_serial import (
    SHORT_NAME,
    deserialize_game_and_state,
    serialize_game_and_state,
)
from patchwork_env.views.game import Game
from patchwork_env.views.observation import PATCH_FEATURES, layout, observe

SETUP_PATCHES = tuple(p for p in range(N_PATCHES) if p != FIRST_PATCH_ID)
"""The patches the setup deals, in outcome order: chance outcome ``k`` is patch
``SETUP_PATCHES[k]``; :data:`~patchwork_env.data.patches.FIRST_PATCH_ID` always goes last."""
N_SETUP_NODES = len(SETUP_PATCHES) + 1
"""Chance nodes before the first move: one per dealt patch, then the first player."""


def max_game_length(rules: Rules) -> int:
    """The most decisions a game can take under ``rules`` (see the module docstring)."""
    return 2 * rules.track_end + len(rules.leather_positions)


_DEFAULT_RULES = "default"
_GAME_TYPE = pyspiel.GameType(
    short_name=SHORT_NAME,
    long_name="Python Patchwork",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
    information=pyspiel.GameType.Information.PERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.ZERO_SUM,
    reward_model=pyspiel.GameType.RewardModel.TERMINAL,
    max_num_players=2,
    min_num_players=2,
    provides_information_state_string=True,
    provides_information_state_tensor=False,
    provides_observation_string=True,
    provides_observation_tensor=True,
    parameter_specification={"rules": _DEFAULT_RULES},
)


def _game_info(rules: Rules) -> pyspiel.GameInfo:
    return pyspiel.GameInfo(
        num_distinct_actions=N_ACTIONS,
        max_chance_outcomes=len(SETUP_PATCHES),
        num_players=2,
        min_utility=-1.0,
        max_utility=1.0,
        utility_sum=0.0,
        max_game_length=max_game_length(rules),
    )


class PatchworkGame(pyspiel.Game):
    """The pyspiel game; ``params`` may name the ``rules`` preset."""

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        params = dict(params or {})
        name = params.get("rules", _DEFAULT_RULES)
        if name not in PRESETS:
            raise ValueError(f"unknown rules preset {name!r}; choose one of {sorted(PRESETS)}")
        self.rules: Rules = get_rules(name)
        super().__init__(_GAME_TYPE, _game_info(self.rules), params)
        self._setup_observation: np.ndarray | None = None

    def new_initial_state(self) -> PatchworkState:
        """The root of the game: the first chance node of the setup."""
        return PatchworkState(self)

    def deserialize_state(self, text: str) -> PatchworkState:
        """The state whose :meth:`PatchworkState.serialize` text is ``text``, by replaying
        its history; ``ValueError`` for anything else (nothing is unpickled)."""
        state = self.new_initial_state()
        serial.replay(state.apply_action, serial.read_history(text))
        return state

    def make_py_observer(self, iig_obs_type: Any = None,
                         params: dict[str, Any] | None = None) -> Any:
        """The observer for ``iig_obs_type``: the position, or the history with recall."""
        if iig_obs_type is None or (iig_obs_type.public_info
                                    and not iig_obs_type.perfect_recall):
            return PatchworkObserver(self, params)
        return IIGObserverForPublicInfoGame(iig_obs_type, params)

    def setup_observation(self) -> np.ndarray:
        """The observation before the circle is dealt: both players at the start, no
        patch in the circle, nobody to move (a copy; the setup fills the circle in)."""
        if self._setup_observation is None:
            start = Game.new(seed=0, circle=[*SETUP_PATCHES, FIRST_PATCH_ID], first_player=0,
                             rules=self.rules)
            obs = observe(start.batch.state, self.rules, 0)[0]
            fields = layout(self.rules).split(obs)
            fields["circle"][:] = 0.0
            fields["to_move"][:] = 0.0
            self._setup_observation = obs
        return self._setup_observation.copy()


class _Position:
    """The mutable part of a state. OpenSpiel clones a Python state by deep-copying its
    attributes, and MCTS clones at every step: this copies the one-game record only.
    Pickled (by OpenSpiel's own serialisation) it is only a marker: the state is rebuilt
    from its history (:meth:`PatchworkState.__setattr__`)."""

    __slots__ = ("dealt", "game", "rules")

    def __init__(self, rules: Rules, dealt: list[int], game: Game | None) -> None:
        self.rules = rules
        self.dealt = dealt
        self.game = game

    def __deepcopy__(self, memo: dict[int, Any]) -> _Position:
        return _Position(self.rules, list(self.dealt),
                         None if self.game is None else self.game.copy())

    def __reduce__(self) -> tuple[Any, tuple[()]]:
        return serial.replay_marker, ()

    def advance(self, action: int) -> None:
        """Play ``action``: a setup outcome, then a move; ``ValueError`` if illegal."""
        if self.game is not None:
            self.game.step(action)  # an illegal move raises ValueError
        elif len(self.dealt) < len(SETUP_PATCHES):
            if not 0 <= action < len(SETUP_PATCHES) or SETUP_PATCHES[action] in self.dealt:
                raise ValueError(f"chance outcome {action}: not an undealt patch")
            self.dealt.append(SETUP_PATCHES[action])
        elif action in (0, 1):
            self.game = Game.new(seed=0, circle=[*self.dealt, FIRST_PATCH_ID],
                                 first_player=action, rules=self.rules)
        else:
            raise ValueError(f"chance outcome {action}: the first player is 0 or 1")


class PatchworkState(pyspiel.State):
    """A position: the setup's chance nodes, then a :class:`~patchwork_env.Game`."""

    def __init__(self, game: PatchworkGame) -> None:
        super().__init__(game)
        self._pos = _Position(game.rules, [], None)

    def __setattr__(self, name: str, value: Any) -> None:
        # OpenSpiel's own reader sets the history, then the unpickled attributes: a
        # position arrives as the replay marker and is rebuilt from that history.
        if value is serial.REPLAY:
            value = _Position(self._pos.rules, [], None)
            serial.replay(value.advance, self.history())
        super().__setattr__(name, value)

    def serialize(self) -> str:
        """The state as text: its action history, one action per line."""
        return serial.write_history(self.history())

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        return serial.state_from_text, (serialize_game_and_state(self.get_game(), self),)

    # ----- reading the position -----------------------------------------------------
    @property
    def engine_game(self) -> Game | None:
        """The engine's game, or ``None`` while the setup is still being dealt."""
        return self._pos.game

    @property
    def dealt(self) -> list[int]:
        """The patches dealt so far, clockwise from the neutral token."""
        return list(self._pos.dealt)

    def _dealing_circle(self) -> bool:
        return len(self._pos.dealt) < len(SETUP_PATCHES)

    def current_player(self) -> int:
        """The seat to move, ``CHANCE`` during the setup, ``TERMINAL`` at the end."""
        game = self._pos.game
        if game is None:
            return int(pyspiel.PlayerId.CHANCE)
        if game.is_over:
            return int(pyspiel.PlayerId.TERMINAL)
        return int(game.to_move)

    def is_terminal(self) -> bool:
        """Whether the game is over."""
        return self._pos.game is not None and self._pos.game.is_over

    def returns(self) -> list[float]:
        """+1 / -1 for the winner / loser at the end, 0 for both before."""
        if not self.is_terminal():
            return [0.0, 0.0]
        return [1.0, -1.0] if self._pos.game.winner == 0 else [-1.0, 1.0]

    def chance_outcomes(self) -> list[tuple[int, float]]:
        """The uniform outcomes of the setup node: an undealt patch, or the first player."""
        if self._pos.game is not None:
            return []
        if self._dealing_circle():
            dealt = set(self._pos.dealt)
            left = [k for k, p in enumerate(SETUP_PATCHES) if p not in dealt]
            return [(k, 1.0 / len(left)) for k in left]
        return [(0, 0.5), (1, 0.5)]

    def _legal_actions(self, player: int) -> list[int]:
        """The engine's legal actions (sorted) for the player to move, none for others."""
        game = self._pos.game
        if game is None or player != game.to_move:
            return []
        return game.legal_actions().tolist()

    # ----- moving ---------------------------------------------------------------------
    def _apply_action(self, action: int) -> None:
        self._pos.advance(int(action))

    def _action_to_string(self, player: int, action: int) -> str:
        if player != pyspiel.PlayerId.CHANCE:
            return format_action(int(action))
        if self._dealing_circle():
            return f"deal patch {SETUP_PATCHES[int(action)]}"
        return f"player {int(action)} starts"

    def __str__(self) -> str:
        if self._pos.game is not None:
            return str(self._pos.game)
        dealt = " ".join(map(str, self._pos.dealt)) or "none yet"
        if self._dealing_circle():
            return f"Patchwork: setting up; circle dealt so far: {dealt}"
        return f"Patchwork: setting up; circle: {dealt} {FIRST_PATCH_ID}; first player next"


class PatchworkObserver:
    """The position seen by one player: the ego-centric observation vector and the text
    rendering (OpenSpiel's ``PyObserver`` interface)."""

    def __init__(self, game: PatchworkGame, params: dict[str, Any] | None) -> None:
        if params:
            raise ValueError(f"observation parameters not supported; passed {params}")
        self._game = game
        lay = layout(game.rules)
        self.tensor = np.zeros(lay.size, np.float32)
        self.dict = {"observation": self.tensor}
        self._circle = lay.split(self.tensor)["circle"]

    def set_from(self, state: PatchworkState, player: int) -> None:
        """Fill ``tensor`` with ``state`` as ``player`` sees it."""
        game = state.engine_game
        if game is not None:
            observe(game.batch.state, game.rules, int(player), out=self.tensor[None, :])
            return
        self.tensor[:] = self._game.setup_observation()
        dealt = state.dealt
        self._circle[: len(dealt)] = PATCH_FEATURES[dealt]

    def string_from(self, state: PatchworkState, player: int) -> str:
        """The text rendering of the position (the same for both players)."""
        return str(state)


class AgentBot(pyspiel.Bot):
    """A ``pyspiel.Bot`` that plays one of the project's agents (any object with
    ``act_game(game) -> int``, e.g. ``patchwork_env.agents.make("greedy", seed=0)``)."""

    def __init__(self, agent: Any, player_id: int | None = None) -> None:
        pyspiel.Bot.__init__(self)
        self.agent = agent
        self._player_id = player_id

    def player_id(self) -> int:
        """The seat this bot was given (-1 if none)."""
        return -1 if self._player_id is None else self._player_id

    def restart_at(self, state: pyspiel.State) -> None:
        """Nothing to do: the agent reads each position afresh."""

    def inform_action(self, state: pyspiel.State, player_id: int, action: int) -> None:
        """Nothing to do: the agent keeps no history."""

    def provides_policy(self) -> bool:
        """The agents return moves, not distributions."""
        return False

    def step(self, state: pyspiel.State) -> int:
        """The agent's move in ``state`` (a player node of ``python_patchwork``)."""
        game = engine_game(state)
        if game is None or game.is_over:
            raise ValueError("AgentBot.step needs a position with a player to move")
        return int(self.agent.act_game(game))


class PlayoutEvaluator(mcts.Evaluator):
    """An MCTS leaf evaluator like OpenSpiel's ``RandomRolloutEvaluator`` (uniform random
    moves to the end, mean returns), with the rollouts played inside the compiled engine:
    all ``n_rollouts`` at once, far faster than through the pyspiel state."""

    def __init__(self, n_rollouts: int = 1, seed: int | None = None) -> None:
        if n_rollouts < 1:
            raise ValueError(f"n_rollouts must be at least 1, got {n_rollouts}")
        self.n_rollouts = n_rollouts
        self._rng = np.random.default_rng(seed)
        self._random = mcts.RandomRolloutEvaluator(n_rollouts, np.random.RandomState(seed))

    def evaluate(self, state: pyspiel.State) -> np.ndarray:
        """Mean returns of random playouts from ``state``."""
        game = engine_game(state)
        if game is None:  # a setup node: deal through pyspiel, as the rollouts do there
            return self._random.evaluate(state)
        if game.is_over:
            return np.array(state.returns())
        batch = GameBatch(np.repeat(game.batch.state, self.n_rollouts), game.rules, self._rng)
        batch.playout()
        wins0 = float(np.count_nonzero(batch.winners() == 0)) / self.n_rollouts
        return np.array([2.0 * wins0 - 1.0, 1.0 - 2.0 * wins0])

    def prior(self, state: pyspiel.State) -> list[tuple[int, float]]:
        """Uniform over the legal actions (the chance outcomes at chance nodes)."""
        return self._random.prior(state)


def engine_game(state: pyspiel.State) -> Game | None:
    """The engine's game behind a ``python_patchwork`` state (``None`` during the setup)."""
    if not isinstance(state, PatchworkState):
        raise TypeError(f"not a {SHORT_NAME} state: {type(state).__name__}")
    return state.engine_game


def load_game(rules: str = _DEFAULT_RULES) -> PatchworkGame:
    """``pyspiel.load_game("python_patchwork", {"rules": rules})``."""
    return pyspiel.load_game(SHORT_NAME, {"rules": rules})


serial.install_serialisation()
pyspiel.register_game(_GAME_TYPE, PatchworkGame)

__all__ = ["N_SETUP_NODES", "SETUP_PATCHES", "SHORT_NAME", "AgentBot", "PatchworkGame",
           "PatchworkObserver", "PatchworkState", "PlayoutEvaluator",
           "deserialize_game_and_state", "engine_game", "load_game", "max_game_length",
           "serialize_game_and_state"]
