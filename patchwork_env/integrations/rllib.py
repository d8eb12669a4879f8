"""Ray RLlib integration: Patchwork as an RLlib multi-agent env, and an action-masking PPO
module for RLlib's new API stack (RLModule + Learner, EnvRunner + ConnectorV2).

Needs the ``rllib`` extra (``pip install "patchwork-env[rllib]"``). Importing this module
registers the env with Ray Tune under :data:`ENV_NAME` (``"patchwork"``), so a config can
name it, and on a cluster every env runner builds it from that name::

    from patchwork_env.integrations.rllib import build_algo, selfplay_config

    algo = build_algo(selfplay_config(num_env_runners=2))
    print(algo.train()["env_runners"]["episode_len_mean"])

==========================  ================================================================
item                        value
==========================  ================================================================
env                         :class:`PatchworkMultiAgentEnv`, agents ``player_0`` (seat 0 of
                            the engine) and ``player_1``
observations                only the player to move gets one, which may be the same player
                            several times in a row; at the end both players get one
observation space           ``Dict(observations=Box((1189,), float32), action_mask=Box(0, 1,
                            (2026,), int8))``: the ego-centric vector of
                            :mod:`patchwork_env.views.observation` and the legal moves (all zero
                            at the end)
actions                     ``Discrete(2026)``, the project's action contract
rewards                     ±1 to both players at the end (``reward="score"`` for the score
                            difference), 0 before
episode end                 ``terminateds["__all__"]`` when the game ends; never truncated
illegal move                ends the game: ``illegal_reward`` (-1) to the mover, 0 to the
                            other, ``infos[agent]["illegal_move"] = True``, and the env's
                            ``illegal_moves`` counter goes up (``illegal="raise"`` raises
                            ``ValueError`` instead)
module                      :class:`MaskedPPOModule`: two MLPs over ``observations`` (policy
                            and value); illegal actions get the logit :data:`MASKED_LOGIT`
==========================  ================================================================

Every move runs the project's engine (a :class:`~patchwork_env.Game`); this module adds no
rules.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

try:
    import torch
    from ray.rllib.algorithms.ppo import PPOConfig
    try:
        from ray.rllib.callbacks.callbacks import RLlibCallback
    except ImportError:  # Ray 2.40 names it DefaultCallbacks
        from ray.rllib.algorithms.callbacks import DefaultCallbacks as RLlibCallback
    from ray.rllib.core.columns import Columns
    from ray.rllib.core.rl_module.apis import ValueFunctionAPI
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.rllib.core.rl_module.torch import TorchRLModule
    from ray.rllib.env.multi_agent_env import MultiAgentEnv
    from ray.tune.registry import register_env
    from torch import nn
except ImportError as e:  # pragma: no cover - depends on the installation
    raise ImportError("patchwork_env.integrations.rllib needs Ray RLlib 2.40 or newer and torch: "
                      'pip install "patchwork-env[rllib]"') from e

from patchwork_env.data.actions import N_ACTIONS
from patchwork_env.data.rules import get_rules
from patchwork_env.data.validation import check_action, check_number, check_options
from patchwork_env.engine.batch import GameBatch, random_setup
from patchwork_env.envs.one_game import PlaysOneGame
from patchwork_env.envs.rewards import check_reward, final_rewards
from patchwork_env.views.game import Game
from patchwork_env.views.observation import SingleGameObserver, layout, observe

ENV_NAME = "patchwork"
"""The name the env is registered under with ``ray.tune.registry.register_env``."""
AGENTS = ("player_0", "player_1")
SHARED_MODULE = "shared"
"""The id of the one module both seats play in :func:`selfplay_config`."""
MASKED_LOGIT = -1e9
"""The logit an illegal action gets: its probability is exactly 0 in float32, and unlike
``-inf`` it keeps log-probabilities, entropies and KL terms finite."""
ENV_OPTIONS = ("rules", "reward", "score_scale", "illegal", "illegal_reward")
RESET_OPTIONS = ("circle", "first_player")


class PatchworkMultiAgentEnv(PlaysOneGame, MultiAgentEnv):
    """Patchwork for RLlib: two agents, the one behind on the time track to move.

    ``config`` (RLlib's ``env_config``) may give ``rules`` (a preset name or a
    :class:`~patchwork_env.Rules`), ``reward`` (``"win"`` or ``"score"``),
    ``score_scale``, ``illegal`` (``"end"``, the default, or ``"raise"``) and
    ``illegal_reward`` (-1). ``reset(seed=s)`` sets up exactly ``Game.new(seed=s)``;
    ``options`` may give ``circle`` and ``first_player``. The module docstring lists
    observations, rewards and the end of an episode.
    """

    metadata: dict[str, Any] = {"render_modes": ["ansi"]}  # noqa: RUF012 - gym's convention

    def __init__(self, config: dict[str, Any] | None = None) -> None:
        super().__init__()
        config = dict(config or {})
        unknown = set(config) - set(ENV_OPTIONS)
        if unknown:
            raise ValueError(f"unknown env_config keys {sorted(map(str, unknown))}; "
                             f"allowed: {list(ENV_OPTIONS)}")
        self.rules = get_rules(config.get("rules", "default"))
        self.reward = config.get("reward", "win")
        score_scale = config.get("score_scale", 0.02)
        check_reward(self.reward, score_scale)
        self.score_scale = float(score_scale)
        self.illegal = config.get("illegal", "end")
        if self.illegal not in ("end", "raise"):
            raise ValueError(f"illegal must be 'end' or 'raise', got {self.illegal!r}")
        self.illegal_reward = check_number(config.get("illegal_reward", -1.0), "illegal_reward")
        self.possible_agents = list(AGENTS)
        self.agents = list(AGENTS)
        space = gym.spaces.Dict({"observations": layout(self.rules).space,
                                 "action_mask": gym.spaces.Box(0, 1, (N_ACTIONS,), np.int8)})
        self.observation_spaces = dict.fromkeys(AGENTS, space)
        self.action_spaces = {a: gym.spaces.Discrete(N_ACTIONS) for a in AGENTS}
        self.illegal_moves = 0
        """Illegal actions this env was given since it was made (each ended a game)."""
        self._rng = np.random.default_rng()
        self._game: Game | None = None
        self._observer = SingleGameObserver(self.rules)
        self._over = True

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None
              ) -> tuple[dict[str, dict[str, np.ndarray]], dict[str, Any]]:
        """A new game; the observation of the player to move."""
        options = check_options(options, RESET_OPTIONS)
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        circle, first = random_setup(self._rng, options.get("circle"),  # as Game.new(seed)
                                     options.get("first_player"))
        self._game = Game(GameBatch.from_setups([circle], [first], self.rules))
        self._over = False
        mover = AGENTS[self._game.to_move]
        return {mover: self._observe(self._game.to_move)}, {}

    def _observe(self, seat: int) -> dict[str, np.ndarray]:
        game = self._live()
        obs, mask = self._observer(game.batch.state, seat,
                                   not self._over and game.to_move == seat)
        return {"observations": obs, "action_mask": mask}

    def step(self, action_dict: dict[str, Any]) -> tuple[dict, dict, dict, dict, dict]:
        """Play the mover's action; the next mover's observation (both at the end)."""
        game = self._live()
        if self._over:
            raise RuntimeError("the game is over: call reset()")
        seat = game.to_move
        agent = AGENTS[seat]
        if set(action_dict) != {agent}:
            raise ValueError(f"{agent} is to move; got actions for {sorted(action_dict)}")
        action = check_action(action_dict[agent])
        try:
            game.step(action)  # an illegal action raises ValueError, changing nothing
        except ValueError:
            if self.illegal == "raise":
                raise
            return self._end_illegal(seat, action)
        if game.is_over:
            return self._end()
        mover = AGENTS[game.to_move]
        return ({mover: self._observe(game.to_move)}, {agent: 0.0},
                {"__all__": False}, {"__all__": False}, {})

    def _end(self) -> tuple[dict, dict, dict, dict, dict]:
        self._over = True
        batch = self._live().batch
        scores, winners = batch.scores(), batch.winners()
        paid = final_rewards(np.repeat(scores, 2, axis=0), np.repeat(winners, 2),
                             np.arange(2), self.reward, self.score_scale)
        info = {"scores": dict(zip(AGENTS, scores[0].tolist(), strict=True)),
                "winner": AGENTS[int(winners[0])], "illegal_move": False}
        return self._final(dict(zip(AGENTS, paid.tolist(), strict=True)), info)

    def _end_illegal(self, seat: int, action: int) -> tuple[dict, dict, dict, dict, dict]:
        self._over = True
        self.illegal_moves += 1
        rewards = {AGENTS[seat]: self.illegal_reward, AGENTS[1 - seat]: 0.0}
        return self._final(rewards, {"illegal_move": True, "illegal_action": action,
                                     "offender": AGENTS[seat]})

    def _final(self, rewards: dict[str, float], info: dict[str, Any]
               ) -> tuple[dict, dict, dict, dict, dict]:
        obs = {a: self._observe(k) for k, a in enumerate(AGENTS)}
        done = {**dict.fromkeys(AGENTS, True), "__all__": True}
        return (obs, rewards, done, {"__all__": False},
                {a: dict(info) for a in AGENTS})

    def render(self) -> str:
        """The position as text (``str(Game)``)."""
        return str(self._live())


def make_env(config: dict[str, Any] | None = None) -> PatchworkMultiAgentEnv:
    """The env creator registered as :data:`ENV_NAME` (``config`` is RLlib's env_config)."""
    return PatchworkMultiAgentEnv(config)


def _mlp(n_in: int, hidden: tuple[int, ...], activation: type[nn.Module]) -> nn.Sequential:
    layers: list[nn.Module] = []
    for width in hidden:
        layers += [nn.Linear(n_in, width), activation()]
        n_in = width
    return nn.Sequential(*layers)


class MaskedPPOModule(TorchRLModule, ValueFunctionAPI):
    """A torch RLModule for PPO on a ``Dict(observations, action_mask)`` observation.

    The policy and the value function are separate MLPs over ``observations``
    (``model_config``: ``hidden``, the layer widths, default ``(256, 256)``;
    ``activation``, ``"tanh"`` or ``"relu"``). Every forward pass (inference,
    exploration, train) sets the logits of the actions ``action_mask`` rules out to
    :data:`MASKED_LOGIT`, so sampling, the greedy choice and PPO's loss only ever see
    legal actions. The input batch is not modified.
    """

    def setup(self) -> None:
        """Build the policy and value networks from the spaces and ``model_config``."""
        space = self.observation_space
        if not isinstance(space, gym.spaces.Dict) or set(space.spaces) != {
                "observations", "action_mask"}:
            raise ValueError("MaskedPPOModule needs a Dict observation space with the keys "
                             f"'observations' and 'action_mask', got {space}")
        if space["action_mask"].shape != (self.action_space.n,):
            raise ValueError(f"action_mask has shape {space['action_mask'].shape}; "
                             f"the action space has {self.action_space.n} actions")
        config = dict(self.model_config or {})
        hidden = tuple(int(w) for w in config.get("hidden", (256, 256)))
        activation = {"tanh": nn.Tanh, "relu": nn.ReLU}[config.get("activation", "tanh")]
        n_in = int(np.prod(space["observations"].shape))
        self._pi_body = _mlp(n_in, hidden, activation)
        self._pi_head = nn.Linear(hidden[-1] if hidden else n_in, self.action_space.n)
        self._vf_body = _mlp(n_in, hidden, activation)
        self._vf_head = nn.Linear(hidden[-1] if hidden else n_in, 1)
        for head, gain in ((self._pi_head, 0.01), (self._vf_head, 1.0)):
            nn.init.orthogonal_(head.weight, gain)  # near-uniform over the legal moves
            nn.init.zeros_(head.bias)

    @staticmethod
    def _inputs(batch: dict[str, Any]) -> torch.Tensor:
        obs = batch[Columns.OBS]["observations"]
        return obs.reshape(obs.shape[0], -1).float()

    def _masked_logits(self, batch: dict[str, Any]) -> torch.Tensor:
        logits = self._pi_head(self._pi_body(self._inputs(batch)))
        legal = batch[Columns.OBS]["action_mask"] > 0
        return logits.masked_fill(~legal, MASKED_LOGIT)

    def _forward_inference(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        """Masked logits (the env runner's greedy choice takes their argmax)."""
        return {Columns.ACTION_DIST_INPUTS: self._masked_logits(batch)}

    def _forward_exploration(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        """Masked logits to sample from."""
        return {Columns.ACTION_DIST_INPUTS: self._masked_logits(batch)}

    def _forward_train(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        """Masked logits, and the value network's features for :meth:`compute_values`."""
        return {Columns.ACTION_DIST_INPUTS: self._masked_logits(batch),
                Columns.EMBEDDINGS: self._vf_body(self._inputs(batch))}

    def compute_values(self, batch: dict[str, Any], embeddings: Any = None) -> torch.Tensor:
        """``(B,)`` state values (from ``embeddings`` when :meth:`_forward_train` gave them)."""
        if embeddings is None:
            embeddings = self._vf_body(self._inputs(batch))
        return self._vf_head(embeddings).squeeze(-1)


def module_action(module: TorchRLModule, game: Game) -> int:
    """The most likely legal move of ``module`` (e.g. ``algo.get_module("shared")``) for the
    player to move in ``game``, read through the module's inference pass."""
    seat = game.to_move
    if seat is None:
        raise ValueError("the game is over: there is no player to move")
    obs = observe(game.batch.state, game.rules, seat)
    mask = game.legal_mask().astype(np.int8)[None, :]
    with torch.no_grad():
        out = module.forward_inference({Columns.OBS: {
            "observations": torch.from_numpy(obs), "action_mask": torch.from_numpy(mask)}})
    return int(torch.argmax(out[Columns.ACTION_DIST_INPUTS][0]))


class IllegalMoveCallback(RLlibCallback):
    """Logs ``illegal_moves`` (games ended by an illegal action) for every episode; it
    shows up in a training result under ``result["env_runners"]["illegal_moves"]``."""

    def on_episode_end(self, *, episode: Any, metrics_logger: Any = None,
                       **kwargs: Any) -> None:
        """Count the episode's illegal move (0 or 1)."""
        infos = episode.get_infos(-1)
        illegal = any(info.get("illegal_move", False) for info in infos.values())
        if metrics_logger is not None:
            metrics_logger.log_value("illegal_moves", int(illegal), reduce="sum")


def shared_policy(agent_id: Any, episode: Any = None, **kwargs: Any) -> str:
    """The policy mapping of self-play: both seats play :data:`SHARED_MODULE`."""
    return SHARED_MODULE


def selfplay_config(*, num_env_runners: int = 0, env_config: dict[str, Any] | None = None,
                    train_batch_size: int = 4000, minibatch_size: int = 500,
                    num_epochs: int = 4, lr: float = 3e-4, hidden: tuple[int, ...] = (256, 256),
                    seed: int | None = None) -> PPOConfig:
    """A PPO config for self-play: one :class:`MaskedPPOModule` plays both seats.

    New API stack, torch, the env :data:`ENV_NAME`, :class:`IllegalMoveCallback`; one
    local learner. Change anything further on the returned config (``.learners(...)``,
    ``.resources(...)``, ``.env_runners(...)``).
    """
    return (
        PPOConfig()
        .api_stack(enable_rl_module_and_learner=True,
                   enable_env_runner_and_connector_v2=True)
        .framework("torch")
        .environment(ENV_NAME, env_config=dict(env_config or {}))
        .env_runners(num_env_runners=num_env_runners, num_envs_per_env_runner=1,
                     num_cpus_per_env_runner=1)
        .multi_agent(policies={SHARED_MODULE}, policy_mapping_fn=shared_policy,
                     policies_to_train=[SHARED_MODULE])
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={
            SHARED_MODULE: RLModuleSpec(module_class=MaskedPPOModule,
                                        model_config={"hidden": list(hidden)})}))
        .training(train_batch_size_per_learner=train_batch_size,
                  minibatch_size=minibatch_size, num_epochs=num_epochs, lr=lr,
                  gamma=1.0, lambda_=0.95, entropy_coeff=0.01, vf_loss_coeff=0.5)
        .callbacks(IllegalMoveCallback)
        .debugging(seed=seed)
    )


def build_algo(config: PPOConfig) -> Any:
    """The algorithm of ``config``: ``config.build_algo()``, or ``config.build()`` on Ray
    2.40, which has no ``build_algo`` yet."""
    build = getattr(config, "build_algo", None) or config.build
    return build()


def register(name: str = ENV_NAME) -> None:
    """Register :func:`make_env` with Ray Tune as ``name`` (done on import for
    :data:`ENV_NAME`)."""
    register_env(name, make_env)


register()

__all__ = ["AGENTS", "ENV_NAME", "MASKED_LOGIT", "SHARED_MODULE", "IllegalMoveCallback",
           "MaskedPPOModule", "PatchworkMultiAgentEnv", "build_algo", "make_env", "module_action",
           "register", "selfplay_config", "shared_policy"]
