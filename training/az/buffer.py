"""The replay buffer of search-guided training: compact samples in, minibatches out.

A sample is stored compactly: the 240-byte state record, its sparse policy target (the
legal actions and their probabilities) and the value target. The buffer holds the latest
``capacity`` samples as a list of self-play batches (the oldest batch is dropped whole, or
cut, when more arrive), so sparse targets of any length need no fixed-width padding.
:meth:`ReplayBuffer.sample` draws a minibatch uniformly and recomputes what the network
sees with the engine's compiled code: the observations (``observe``) and the legal masks.
With ``augment=True`` each sample is first moved by one of the 8 quilt symmetries, drawn
uniformly (:mod:`.symmetry`; in the draft, one of those that keep its star squares where
they are): its state and the actions of its policy target together, so
the network sees one of 8 equivalent forms of the position with the same probabilities.
A sample also keeps how its game ended (:mod:`.aux_targets`), moved by the same symmetry,
for networks with auxiliary heads.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from patchwork_env.agents.az.games import PATCHWORK, AZGame, get_game
from patchwork_env.data.rules import Rules
from patchwork_env.training.az.aux_targets import ownership, score_bins
from patchwork_env.training.az.restore_checks import check_buffer_state
from patchwork_env.training.az.selfplay import SelfPlayBatch
from patchwork_env.training.az.symmetry import (
    SYMMETRIES,
    star_symmetries,
    transform_actions,
    transform_states,
)


@dataclass
class Chunk:
    """Consecutive samples: states, CSR policy targets, value targets, whether each
    policy target is one to learn (playout cap randomization) and the auxiliary targets
    (final score differences and quilts; ``aux_known`` false where the game's end is
    unknown)."""

    states: np.ndarray
    offsets: np.ndarray
    actions: np.ndarray
    probs: np.ndarray
    values: np.ndarray
    policy_targets: np.ndarray
    score_diffs: np.ndarray
    final_quilts: np.ndarray
    aux_known: np.ndarray

    @staticmethod
    def empty(state_dtype: np.dtype) -> Chunk:
        """No samples (of states of ``state_dtype``)."""
        return Chunk(np.zeros(0, state_dtype), np.zeros(1, np.int64), np.zeros(0, np.int16),
                     np.zeros(0, np.float32), np.zeros(0, np.float32), np.zeros(0, bool),
                     np.zeros(0, np.int16), np.zeros((0, 2, 2), np.uint64), np.zeros(0, bool))

    def __len__(self) -> int:
        return len(self.states)

    def tail(self, n: int) -> Chunk:
        """The last ``n`` samples."""
        first = len(self) - n
        lo = self.offsets[first]
        return Chunk(self.states[first:].copy(), self.offsets[first:] - lo,
                     self.actions[lo:].copy(), self.probs[lo:].copy(), self.values[first:].copy(),
                     self.policy_targets[first:].copy(), self.score_diffs[first:].copy(),
                     self.final_quilts[first:].copy(), self.aux_known[first:].copy())


@dataclass
class TrainingBatch:
    """A minibatch as the learner takes it (torch tensors, CPU)."""

    observations: torch.Tensor
    """``(B, obs_size) float32``."""
    masks: torch.Tensor
    """``(B, actions) bool``: the legal actions."""
    target_index: torch.Tensor
    """``(B, L) int64``: each row's legal actions, padded with 0."""
    target_probs: torch.Tensor
    """``(B, L) float32``: their improved-policy probabilities, padded with 0."""
    values: torch.Tensor
    """``(B,) float32``: the results for the player to move."""
    policy_targets: torch.Tensor | None = None
    """``(B,) bool``: the rows whose policy is learnt (``None``: all)."""
    score_bins: torch.Tensor | None = None
    """``(B,) int64``: the score head's bin of each row's final score difference."""
    ownership: torch.Tensor | None = None
    """``(B, 162) float32``: each cell of both final quilts, covered or not."""
    aux_known: torch.Tensor | None = None
    """``(B,) bool``: the rows with auxiliary targets (``None``: none has them)."""


class ReplayBuffer:
    """The latest ``capacity`` samples of self-play of ``game`` (Patchwork by default)
    under ``rules``."""

    def __init__(self, capacity: int, rules: str | Rules = "default",
                 game: str | AZGame = PATCHWORK) -> None:
        if capacity < 1:
            raise ValueError(f"a replay buffer needs a capacity of at least 1, got {capacity}")
        self.capacity = int(capacity)
        self.game = get_game(game)
        self.rules = self.game.get_rules(rules)
        self.symmetries = (np.arange(SYMMETRIES) if self.game is PATCHWORK
                           else star_symmetries(self.rules.star_squares))
        """The symmetries ``augment`` draws from: all 8, or the draft's that keep its star
        squares."""
        self.chunks: list[Chunk] = []
        self.added = 0
        """Samples ever added (those dropped since included)."""

    def __len__(self) -> int:
        return sum(len(c) for c in self.chunks)

    def add(self, batch: SelfPlayBatch) -> None:
        """Append a self-play batch, dropping the oldest samples beyond the capacity."""
        n = len(batch)
        known = batch.score_diffs is not None and batch.final_quilts is not None
        chunk = Chunk(batch.states.copy(), batch.target_offsets.astype(np.int64),
                      batch.target_actions.astype(np.int16), batch.target_probs.astype(np.float32),
                      batch.values.astype(np.float32),
                      np.ones(n, bool) if batch.policy_targets is None
                      else batch.policy_targets.astype(bool),
                      batch.score_diffs.astype(np.int16) if known else np.zeros(n, np.int16),
                      batch.final_quilts.astype(np.uint64) if known
                      else np.zeros((n, 2, 2), np.uint64),
                      np.full(n, known))
        self._append(chunk)
        self.added += len(chunk)

    def _append(self, chunk: Chunk) -> None:
        if len(chunk) > self.capacity:
            chunk = chunk.tail(self.capacity)
        self.chunks.append(chunk)
        excess = len(self) - self.capacity
        while excess > 0:
            oldest = self.chunks[0]
            if len(oldest) <= excess:
                self.chunks.pop(0)
                excess -= len(oldest)
            else:
                self.chunks[0] = oldest.tail(len(oldest) - excess)
                excess = 0

    def sample(self, batch_size: int, rng: np.random.Generator,
               augment: bool = False) -> TrainingBatch:
        """``batch_size`` samples drawn uniformly (with replacement) by ``rng``; with
        ``augment``, each moved by a symmetry that ``rng`` draws next (the samples drawn
        are the same either way)."""
        total = len(self)
        if total == 0:
            raise ValueError("cannot sample from an empty replay buffer")
        picks = np.sort(rng.integers(0, total, batch_size))
        ends = np.cumsum([len(c) for c in self.chunks])
        which = np.searchsorted(ends, picks, side="right")
        states = np.empty(batch_size, self.game.state_dtype)
        lengths = np.empty(batch_size, np.int64)
        values = np.empty(batch_size, np.float32)
        policy_targets = np.empty(batch_size, bool)
        score_diffs = np.empty(batch_size, np.int16)
        final_quilts = np.empty((batch_size, 2, 2), np.uint64)
        aux_known = np.empty(batch_size, bool)
        rows: list[tuple[Chunk, np.ndarray, np.ndarray]] = []
        at = 0
        for k in np.unique(which):
            chunk = self.chunks[k]
            local = picks[which == k] - (ends[k] - len(chunk))
            sl = slice(at, at + len(local))
            states[sl] = chunk.states[local]
            lengths[sl] = chunk.offsets[local + 1] - chunk.offsets[local]
            values[sl] = chunk.values[local]
            policy_targets[sl] = chunk.policy_targets[local]
            score_diffs[sl] = chunk.score_diffs[local]
            final_quilts[sl] = chunk.final_quilts[local]
            aux_known[sl] = chunk.aux_known[local]
            rows.append((chunk, local, np.arange(sl.start, sl.stop)))
            at += len(local)
        width = int(lengths.max())
        index = np.zeros((batch_size, width), np.int64)
        probs = np.zeros((batch_size, width), np.float32)
        for chunk, local, out_rows in rows:
            starts = chunk.offsets[local]
            n = chunk.offsets[local + 1] - starts
            r = np.repeat(out_rows, n)
            c = np.arange(n.sum()) - np.repeat(np.cumsum(n) - n, n)
            src = np.repeat(starts, n) + c
            index[r, c] = chunk.actions[src]
            probs[r, c] = chunk.probs[src]
        symmetry = np.zeros(batch_size, np.int64)
        if augment:
            symmetry = self.symmetries[rng.integers(0, len(self.symmetries), batch_size)]
            r, c = np.nonzero(np.arange(width) < lengths[:, None])
            index[r, c] = transform_actions(states, index[r, c], symmetry, r)
            states = transform_states(states, symmetry)
        obs = self.game.observe(states, self.rules)
        masks = self.game.batch_type(states, self.rules).legal_mask()
        return TrainingBatch(torch.from_numpy(obs), torch.from_numpy(masks),
                             torch.from_numpy(index), torch.from_numpy(probs),
                             torch.from_numpy(values), torch.from_numpy(policy_targets),
                             torch.from_numpy(score_bins(score_diffs)),
                             torch.from_numpy(ownership(final_quilts, symmetry)),
                             torch.from_numpy(aux_known))

    # ----- checkpoints: tensors and plain data only -----------------------------------
    def state_dict(self) -> dict[str, Any]:
        """The buffer as tensors and numbers (for a checkpoint)."""
        merged = self._merged()
        return {"capacity": self.capacity, "added": self.added,
                "states": torch.from_numpy(merged.states.view(np.uint8).copy()),
                "offsets": torch.from_numpy(merged.offsets),
                "actions": torch.from_numpy(merged.actions),
                "probs": torch.from_numpy(merged.probs),
                "values": torch.from_numpy(merged.values),
                "policy_targets": torch.from_numpy(merged.policy_targets.astype(np.uint8)),
                "score_diffs": torch.from_numpy(merged.score_diffs),
                "final_quilts": torch.from_numpy(merged.final_quilts.view(np.int64)),
                "aux_known": torch.from_numpy(merged.aux_known.astype(np.uint8))}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore what :meth:`state_dict` saved; ``ValueError`` saying what is wrong if it
        is not a buffer a run can learn from (:func:`.restore_checks.check_buffer_state`)."""
        check_buffer_state(state, self.rules, game=self.game)
        states = state["states"].numpy().view(self.game.state_dtype).copy()
        offsets = state["offsets"].numpy().astype(np.int64)
        actions = state["actions"].numpy().astype(np.int16)
        probs = state["probs"].numpy().astype(np.float32)
        values = state["values"].numpy().astype(np.float32)
        policy_targets = (state["policy_targets"].numpy().astype(bool)
                          if "policy_targets" in state else np.ones(len(states), bool))
        n = len(states)
        if "aux_known" in state:
            score_diffs = state["score_diffs"].numpy().astype(np.int16)
            final_quilts = state["final_quilts"].numpy().view(np.uint64).copy()
            aux_known = state["aux_known"].numpy().astype(bool)
        else:  # the buffers of older runs: their games' ends are unknown
            score_diffs, final_quilts = np.zeros(n, np.int16), np.zeros((n, 2, 2), np.uint64)
            aux_known = np.zeros(n, bool)
        self.capacity = int(state["capacity"])
        self.added = int(state["added"])
        self.chunks = ([Chunk(states, offsets, actions, probs, values, policy_targets,
                              score_diffs, final_quilts, aux_known)] if n else [])

    def _merged(self) -> Chunk:
        if not self.chunks:
            return Chunk.empty(self.game.state_dtype)
        offsets = [np.zeros(1, np.int64)]
        base = 0
        for c in self.chunks:
            offsets.append(c.offsets[1:] + base)
            base += int(c.offsets[-1])
        return Chunk(np.concatenate([c.states for c in self.chunks]), np.concatenate(offsets),
                     np.concatenate([c.actions for c in self.chunks]),
                     np.concatenate([c.probs for c in self.chunks]),
                     np.concatenate([c.values for c in self.chunks]),
                     np.concatenate([c.policy_targets for c in self.chunks]),
                     np.concatenate([c.score_diffs for c in self.chunks]),
                     np.concatenate([c.final_quilts for c in self.chunks]),
                     np.concatenate([c.aux_known for c in self.chunks]))
