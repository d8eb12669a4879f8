"""A warm start for self-play: the policy first imitates a teacher (greedy by default).

PPO from a uniform policy spends most of a short run discovering what any sensible player
knows (buy patches that pay, fill the quilt tightly). Instead, a teacher from the agent
registry (``greedy``, or a stronger and slower one such as ``mcts:100``) plays games
against itself, now and then making a random move so that the positions are varied, and
the policy learns its moves (cross-entropy over the legal actions) while the value head
learns each position's final reward for the player to move. Self-play then starts from a
player close to the teacher and has to find what the teacher misses.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from torch.nn import functional as F
from tqdm import tqdm

from patchwork_env import agents
from patchwork_env.agents.az.games import get_game
from patchwork_env.data.rules import Rules
from patchwork_env.envs.rewards import final_rewards


@dataclass
class Demonstrations:
    """Positions of a teacher's play: what the player to move saw, could do, did, and
    earned."""

    obs: np.ndarray
    masks: np.ndarray
    actions: np.ndarray
    returns: np.ndarray
    states: np.ndarray
    """The positions as state records (what a search-guided learner stores)."""
    final_states: np.ndarray
    """The state record at the end of each position's game."""

    def __len__(self) -> int:
        return len(self.actions)


def demonstrations(teacher: str, n_positions: int, seed: int, reward: str,
                   score_scale: float, n_games: int = 256, explore: float = 0.1,
                   progress: bool = False, rules: str | Rules = "default",
                   game: str = "patchwork") -> Demonstrations:
    """At least ``n_positions`` positions from finished games of ``teacher`` (an agent
    spec) against itself.

    With probability ``explore`` a move is played at random instead of the teacher's (the
    recorded action is still the teacher's). A position's return is the final reward of
    the player to move there, as the training environment pays it. ``game``: the game
    played (``"patchwork"`` or ``"draft"``, whose ``rules`` and agents it takes).
    """
    rng = np.random.default_rng(seed)
    n_games = min(n_games, max(1, n_positions // 50))  # about 50 positions per game
    kind = get_game(game)
    batch = kind.batch_type.new(n_games, seed=seed, rules=rules)
    player = agents.make(teacher, seed=seed, game=kind.name)
    # The bar counts the positions recorded, every turn of the batch; it stops one short of
    # the total while the last games are finished (those still unfinished are dropped).
    bar = tqdm(total=n_positions, unit="position", disable=not progress, dynamic_ncols=True,
               desc=f"{teacher} plays")
    recorded = 0
    rows = np.arange(n_games)
    obs, masks, actions, seats, games, states = [], [], [], [], [], []
    game_ids = rows.copy()
    next_id = n_games
    outcome: dict[int, tuple[np.ndarray, int, np.ndarray]] = {}
    plies = np.zeros(n_games, np.int64)
    finished_positions = 0
    while finished_positions < n_positions:
        mask = batch.legal_mask()
        chosen = player.act(batch, rows)
        obs.append(kind.observe(batch.state, batch.rules))
        states.append(batch.state.copy())
        masks.append(mask)
        actions.append(chosen)
        seats.append(batch.to_move.astype(np.int64))
        games.append(game_ids.copy())
        plies += 1
        played = np.where(rng.random(n_games) < explore, kind.sample_legal(mask, rng),
                          chosen)
        batch.step(played, check=False)
        recorded += n_games
        bar.update(max(0, min(recorded, n_positions - 1) - bar.n))
        over = np.flatnonzero(batch.done)
        if len(over):
            scores, winners = batch.scores(), batch.winners()
            for row in over.tolist():
                outcome[int(game_ids[row])] = (scores[row], int(winners[row]),
                                               batch.state[row].copy())
            finished_positions += int(plies[over].sum())
            plies[over] = 0
            game_ids[over] = np.arange(next_id, next_id + len(over))
            next_id += len(over)
            batch.reset_done(rng)
    bar.update(n_positions - bar.n)
    bar.close()
    ids = np.concatenate(games)
    keep = np.array([g in outcome for g in ids.tolist()])  # drop unfinished games
    seat = np.concatenate(seats)[keep]
    finished = [outcome[g] for g in ids[keep].tolist()]
    returns = final_rewards(np.array([f[0] for f in finished]),
                            np.array([f[1] for f in finished]), seat, reward, score_scale)
    final_states = np.array([f[2] for f in finished], dtype=batch.state.dtype)
    return Demonstrations(np.concatenate(obs)[keep], np.concatenate(masks)[keep],
                          np.concatenate(actions)[keep], returns, np.concatenate(states)[keep],
                          final_states)


def imitate(policy: MaskableActorCriticPolicy, demos: Demonstrations, epochs: int,
            batch_size: int, seed: int, learning_rate: float, vf_coef: float = 0.5,
            max_grad_norm: float = 0.5, progress: bool = False) -> dict[str, float]:
    """Fit ``policy`` to the demonstrations with its own optimiser at ``learning_rate``
    (restored afterwards); the last epoch's mean losses and how often the policy's most
    likely move is the teacher's."""
    rng = np.random.default_rng(seed)
    saved_rates = [group["lr"] for group in policy.optimizer.param_groups]
    for group in policy.optimizer.param_groups:
        group["lr"] = learning_rate
    obs = torch.as_tensor(demos.obs, device=policy.device)
    actions = torch.as_tensor(demos.actions, device=policy.device)
    returns = torch.as_tensor(demos.returns, device=policy.device)
    policy.set_training_mode(True)
    stats: dict[str, list[float]] = {}
    n_batches = max(1, len(demos) // batch_size)
    # one step of the bar per minibatch, so that it moves every few seconds
    bar = tqdm(total=epochs * n_batches, unit="batch", disable=not progress,
               dynamic_ncols=True, desc="imitation")
    for epoch in range(epochs):
        stats = {"policy_loss": [], "value_loss": [], "agreement": []}
        bar.set_postfix_str(f"epoch {epoch + 1}/{epochs}", refresh=False)
        for idx in np.array_split(rng.permutation(len(demos)), n_batches):
            dist = policy.get_distribution(obs[idx], demos.masks[idx])
            policy_loss = -dist.log_prob(actions[idx]).mean()
            value_loss = F.mse_loss(policy.predict_values(obs[idx]).flatten(), returns[idx])
            policy.optimizer.zero_grad()
            (policy_loss + vf_coef * value_loss).backward()
            torch.nn.utils.clip_grad_norm_(policy.parameters(), max_grad_norm)
            policy.optimizer.step()
            agree = (dist.distribution.logits.argmax(-1) == actions[idx]).float().mean()
            for key, value in zip(stats, (policy_loss, value_loss, agree), strict=True):
                stats[key].append(value.item())
            bar.update()
    bar.close()
    policy.set_training_mode(False)
    for group, rate in zip(policy.optimizer.param_groups, saved_rates, strict=True):
        group["lr"] = rate
    return {key: float(np.mean(values)) for key, values in stats.items()}
