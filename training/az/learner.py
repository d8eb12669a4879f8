"""The learner of search-guided training: one gradient step on a minibatch.

The loss is the AlphaZero one with the Gumbel search's target: the cross-entropy between
the network's policy over the legal actions and the improved policy
``softmax(logits + sigma(completed Q))`` of the search (averaged over the samples whose
policy is a target: with playout cap randomization, those of full searches), plus
``value_weight`` times the squared error of the value against its target: the game's
result for the player to move, mixed in early iterations with random-playout estimates
and, if the run asks, with the search's value of the position (see :mod:`.value_targets`
and the trainer's ``playout_weight`` and ``root_value_weight``). A network with auxiliary heads
(:mod:`.aux_targets`) adds ``score_head_weight`` times the cross-entropy of its final-score
distribution and ``ownership_weight`` times the binary cross-entropy of its final quilts
(the mean over their 162 cells), over the samples whose game's end is known. The optimiser
is Adam with decoupled weight decay (AdamW).

The learner trains where its network is (a GPU, say): each minibatch is moved there, the
forward pass runs in the run's precision (:mod:`~patchwork_env.agents.device`; ``fp16``
with a loss scale against underflow) and the losses in float32.
"""

from __future__ import annotations

from typing import Any

import torch
from torch.nn import functional as F

from patchwork_env.agents.az.net import MASKED_LOGIT, AZNet
from patchwork_env.agents.device import autocast, check_precision
from patchwork_env.training.az.buffer import TrainingBatch


class Learner:
    """A network and its optimiser, training on the network's device in ``precision``
    (``fp32``, ``bf16`` or ``fp16``: :data:`~patchwork_env.agents.device.PRECISIONS`;
    :class:`~patchwork_env.agents.device.DeviceError` for one the device cannot run)."""

    def __init__(self, net: AZNet, learning_rate: float = 1e-3, weight_decay: float = 1e-4,
                 value_weight: float = 1.0, max_grad_norm: float = 5.0,
                 precision: str = "fp32", score_head_weight: float = 0.0,
                 ownership_weight: float = 0.0) -> None:
        self.net = net
        self.device = next(net.parameters()).device
        self.precision = check_precision(precision, self.device)
        self.scaler = torch.amp.GradScaler(self.device.type) if precision == "fp16" else None
        """The loss scale of ``fp16`` (restarted by a resumed run)."""
        self.value_weight = value_weight
        self.score_head_weight, self.ownership_weight = score_head_weight, ownership_weight
        self.aux = net.aux and (score_head_weight > 0 or ownership_weight > 0)
        self.max_grad_norm = max_grad_norm
        self.optimizer = torch.optim.AdamW(net.parameters(), lr=learning_rate,
                                           weight_decay=weight_decay)
        self.steps = 0

    def set_learning_rate(self, learning_rate: float) -> None:
        """Take the next steps at ``learning_rate``."""
        for group in self.optimizer.param_groups:
            group["lr"] = learning_rate

    def losses(self, batch: TrainingBatch) -> dict[str, torch.Tensor]:
        """``policy`` (cross-entropy to the targets), ``value`` (squared error), with
        auxiliary heads ``score`` and ``ownership`` (cross-entropies), ``total`` and, for
        the record, ``target_entropy`` (the policy loss's floor)."""
        obs, masks, index, probs, targets = (
            t.to(self.device, non_blocking=True) for t in (
                batch.observations, batch.masks, batch.target_index, batch.target_probs,
                batch.values))
        with autocast(self.device, self.precision):
            logits, values, heads = self.net.outputs(obs, aux=self.aux)
        # masked in float32: fp16 has no room for MASKED_LOGIT
        logits = logits.float().masked_fill(~masks, MASKED_LOGIT)
        log_p = F.log_softmax(logits, dim=1).gather(1, index)
        weight = (torch.ones(len(probs), device=self.device) if batch.policy_targets is None
                  else batch.policy_targets.to(self.device, non_blocking=True).float())
        count = weight.sum().clamp_min(1.0)  # a batch without policy targets: no policy loss
        policy = (-(probs * log_p).sum(1) * weight).sum() / count
        value = F.mse_loss(values.float(), targets)
        entropy = (-(probs * torch.log(probs.clamp_min(1e-12))).sum(1) * weight).sum() / count
        out = {"policy": policy, "value": value,
               "total": policy + self.value_weight * value, "target_entropy": entropy}
        if heads:
            out.update(self._aux_losses(batch, heads))
            out["total"] = (out["total"] + self.score_head_weight * out["score"]
                            + self.ownership_weight * out["ownership"])
        return out

    def _aux_losses(self, batch: TrainingBatch, heads: dict[str, torch.Tensor]
                    ) -> dict[str, torch.Tensor]:
        """The auxiliary heads' losses, averaged over the rows with auxiliary targets."""
        if batch.aux_known is None or batch.score_bins is None or batch.ownership is None:
            zero = torch.zeros((), device=self.device)
            return {"score": zero, "ownership": zero}
        known, bins, cells = (t.to(self.device, non_blocking=True) for t in (
            batch.aux_known, batch.score_bins, batch.ownership))
        weight = known.float()
        count = weight.sum().clamp_min(1.0)
        score = F.cross_entropy(heads["score"].float(), bins, reduction="none")
        owned = F.binary_cross_entropy_with_logits(heads["ownership"].float(), cells,
                                                   reduction="none").mean(1)
        return {"score": (score * weight).sum() / count,
                "ownership": (owned * weight).sum() / count}

    def step(self, batch: TrainingBatch) -> dict[str, float]:
        """One optimiser step; the losses before it, as floats."""
        self.net.train()
        loss = self.losses(batch)
        self.optimizer.zero_grad(set_to_none=True)
        if self.scaler is None:
            loss["total"].backward()
            torch.nn.utils.clip_grad_norm_(self.net.parameters(), self.max_grad_norm)
            self.optimizer.step()
        else:  # fp16: a scaled loss, the gradients unscaled before clipping
            self.scaler.scale(loss["total"]).backward()
            self.scaler.unscale_(self.optimizer)
            torch.nn.utils.clip_grad_norm_(self.net.parameters(), self.max_grad_norm)
            self.scaler.step(self.optimizer)
            self.scaler.update()
        self.net.eval()
        self.steps += 1
        return {k: float(v.detach()) for k, v in loss.items()}

    def state_dict(self) -> dict[str, Any]:
        """The network's and the optimiser's state and the step count (on the network's
        device: the checkpoint keeps CPU copies)."""
        return {"net": self.net.state_dict(), "optimizer": self.optimizer.state_dict(),
                "steps": self.steps}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore what :meth:`state_dict` saved, on whatever device (the weights and the
        optimiser's moments are copied to the network's device)."""
        self.net.load_state_dict(state["net"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.steps = int(state["steps"])
