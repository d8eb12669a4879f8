"""A training run in memory: the learner, its self-play env and opponent pool, the run
folder they are saved in, and how a new run gets its first policy (a saved one with
``--init``, or by imitating ``--teacher``).

``opts`` is ``train.Options``: the run reads its fields by name.
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path
from typing import Any

import torch
from sb3_contrib import MaskablePPO

from patchwork_env.agents.device import resolve_device
from patchwork_env.agents.model_file import load_policy, policy_config
from patchwork_env.agents.ppo.networks import NETS, FastMaskablePolicy, PatchworkPolicy
from patchwork_env.training.checkpoint import CheckpointError, export_policy, save_checkpoint
from patchwork_env.training.imitation import demonstrations, imitate
from patchwork_env.training.ppo.pool import OpponentPool, SelfPlayVecEnv
from patchwork_env.training.run_folder import CHECKPOINT


def build_model(opts: Any, env: SelfPlayVecEnv) -> MaskablePPO:
    """A fresh MaskablePPO learner for ``opts`` (seeded), on ``opts.device``."""
    if opts.net in NETS:
        policy: Any = PatchworkPolicy
        policy_kwargs: dict[str, Any] = {"net_kwargs": {"kind": opts.net,
                                                        "channels": opts.channels,
                                                        "hidden": opts.hidden}}
    else:
        policy = FastMaskablePolicy
        policy_kwargs = {"net_arch": [opts.hidden, opts.hidden]}
    return MaskablePPO(policy, env, learning_rate=opts.learning_rate, n_steps=opts.n_steps,
                       batch_size=opts.batch_size, n_epochs=opts.n_epochs, gamma=opts.gamma,
                       gae_lambda=opts.gae_lambda, clip_range=opts.clip_range,
                       ent_coef=opts.ent_coef, vf_coef=opts.vf_coef,
                       policy_kwargs=policy_kwargs, seed=opts.seed,
                       device=resolve_device(opts.device), verbose=0)


def make_pool(opts: Any) -> OpponentPool:
    """The opponent pool of ``opts`` (seeded)."""
    weights = {"random": opts.random_weight, "greedy": opts.greedy_weight,
               "self": opts.self_weight}
    return OpponentPool(weights, opts.pool_size, seed=opts.seed + 1)


class Run:
    """The learner, its environment and pool, and the run folder they are saved in."""

    def __init__(self, opts: Any, state: dict[str, Any] | None = None) -> None:
        self.opts = opts
        self.dir = Path(opts.run_dir)
        steps = int(state["steps"]) if state else 0
        self.pool = make_pool(opts)
        # The env's games are seeded from the steps done, so a resumed run plays new games.
        self.env = SelfPlayVecEnv(opts.n_envs, self.pool, seed=opts.seed * 1_000_003 + steps,
                                  reward=opts.reward, score_scale=opts.score_scale)
        self.model = build_model(opts, self.env)
        self.updates = 0
        self.best = -1.0
        self.best_steps: int | None = None
        self.best_policy: dict[str, torch.Tensor] | None = None
        """The weights of ``best.pt``, kept in the checkpoint (see :meth:`restore_best`)."""
        self.recorded: int | None = None
        """The step of the last row written to ``metrics.csv`` (None before the first): the
        checkpoint saves it, so a resumed run keeps exactly the rows its checkpoint had."""
        if state is None:
            if opts.init:
                self._load_policy(Path(opts.init))
            elif opts.imitation_positions:
                self._imitate_teacher()
            self.pool.add_snapshot(self.model.policy, "self-0")
        else:
            self._restore(state)

    def _load_policy(self, path: Path) -> None:
        try:
            saved = load_policy(path)
        except (FileNotFoundError, ValueError) as e:
            raise CheckpointError(f"--init: {e}") from None
        found, wanted = policy_config(saved), policy_config(self.model.policy)
        if found != wanted:
            raise CheckpointError(f"--init: {path} holds another network than --net "
                                  f"{self.opts.net} --channels {self.opts.channels} "
                                  f"--hidden {self.opts.hidden} (it holds a {found['net']} "
                                  f"network {found['net_kwargs']})")
        self.model.policy.load_state_dict(saved.state_dict())
        print(f"starting from the policy in {path}", file=sys.stderr)

    def _imitate_teacher(self) -> None:
        opts = self.opts
        print(f"imitating {opts.teacher} on {opts.imitation_positions:,} positions",
              file=sys.stderr)
        demos = demonstrations(opts.teacher, opts.imitation_positions, opts.seed, opts.reward,
                               opts.score_scale, progress=opts.progress)
        stats = imitate(self.model.policy, demos, opts.imitation_epochs, opts.batch_size,
                        opts.seed, opts.imitation_learning_rate, opts.vf_coef,
                        progress=opts.progress)
        print(f"  {opts.teacher}'s move is the policy's first choice in "
              f"{stats['agreement']:.0%} of the positions", file=sys.stderr)

    def _restore(self, state: dict[str, Any]) -> None:
        policy = self.model.policy
        try:
            policy.load_state_dict(state["policy"])
            policy.optimizer.load_state_dict(state["optimizer"])
            self.pool.load_state_dict(state["pool"], policy)
            torch.set_rng_state(state["torch_rng"])
            self.model.num_timesteps = int(state["steps"])
            self.updates = int(state["updates"])
            self.best = float(state["best"])
            self.best_steps = state.get("best_steps")
            self.recorded = state.get("recorded", self.model.num_timesteps)
            self.best_policy = state.get("best_policy")
        except (KeyError, RuntimeError, TypeError, ValueError) as e:
            message = str(e).splitlines()[0] if str(e) else type(e).__name__
            raise CheckpointError(f"the checkpoint does not fit this network: {message}"
                                  ) from None

    def save(self) -> None:
        """Write the checkpoint (atomically)."""
        save_checkpoint(self.dir / CHECKPOINT, {
            "options": dataclasses.asdict(self.opts),
            "steps": self.model.num_timesteps,
            "updates": self.updates,
            "best": self.best,
            "best_steps": self.best_steps,
            "recorded": self.recorded,
            "best_policy": self.best_policy,
            "policy": self.model.policy.state_dict(),
            "optimizer": self.model.policy.optimizer.state_dict(),
            "pool": self.pool.state_dict(),
            "torch_rng": torch.get_rng_state(),
        })

    def export(self, name: str) -> Path:
        """Save the policy as ``name.pt`` (a policy file) and ``name.zip``; the ``.pt``."""
        return export_policy(self.model, self.dir, name)[0]

    def keep_best(self) -> None:
        """Export the policy as ``best.pt`` and ``best.zip``, and keep its weights for the
        checkpoint."""
        self.best_policy = {k: v.detach().clone()
                            for k, v in self.model.policy.state_dict().items()}
        self.export("best")

    def restore_best(self) -> None:
        """Write ``best.pt`` and ``best.zip`` again from the weights the checkpoint kept: a
        run killed after exporting a better policy but before its next checkpoint leaves
        files that the resumed run, which plays those steps again, does not count."""
        if self.best_policy is None:
            return
        policy = self.model.policy
        current = {k: v.detach().clone() for k, v in policy.state_dict().items()}
        policy.load_state_dict(self.best_policy)
        try:
            self.export("best")
        finally:
            policy.load_state_dict(current)
