"""The network of the search-guided (AlphaZero-style) agents: an observation in, the prior
logits (Patchwork's 2026, or the draft's 1947: :mod:`.games`) and a value in [-1, 1] for
the player to move out.

Four bodies (``kind``):

* ``"mlp"`` (:class:`AZNet`'s default): ``layers`` fully connected ReLU layers of
  ``hidden`` units over the 1189-value observation, a linear policy head and a ``tanh``
  value head. Cheap on a CPU, which is what self-play with many evaluations per move
  needs.
* ``"shaped"`` (the trainer's default): the same MLP trunk with a shape-aware placement
  head: from the trunk's features, ``maps`` per-cell maps (and the player's own quilt and
  the board), mixed per slot into a map of what covering a cell is worth and one of what
  touching it is worth; a placement's logit sums them over the cells the patch would
  cover and touch (:mod:`.stencils`), so what it learns of a cell serves every placement
  over it. About as cheap as ``"mlp"``.
* ``"stencil"``: the convolutional trunk and shape-aware placement head of
  :class:`.networks.StencilNet` (whose placement logits sum learned per-cell maps over the
  cells a patch would cover), with a ``tanh`` value head on its value features.
* ``"resnet"``: ``blocks`` residual blocks of ``channels`` 3x3 convolutions over the two
  quilts, conditioned on the rest of the observation by FiLM (:mod:`.resnet`), with the
  ``shaped`` body's placement head: its per-cell maps a 1x1 convolution of the trunk's
  planes, its slot weights, advance and leather logits (and the value) from the planes
  averaged over the board joined with the context. Built for an accelerator: a CPU
  evaluates it an order of magnitude or more slower than ``"shaped"``.

:meth:`AZNet.outputs` returns a :class:`NetOutput`: the logits, the value and a dict of
auxiliary outputs; ``forward`` returns its first two. A network built with ``aux=True`` has
two auxiliary heads on the value's features, trained on targets every position of a game
shares but each of which says more than the result's sign (see
:mod:`patchwork_env.training.az.aux_targets`): ``"score"``, the logits of the final score
difference for the player to move (:data:`SCORE_BINS` bins, from ``-SCORE_LIMIT`` to
``+SCORE_LIMIT``, clipped), and ``"ownership"``, one logit per cell of both quilts at the
end of the game (covered or not: the player to move's first, then the opponent's). The
search never reads them, so ``outputs`` computes them only when asked (``aux=True``),
except with ``value_reads_score=True``: then the value head reads, beside the value's
features, what the score distribution says (:func:`score_summary`: the chances of winning
and losing on points and the expected difference), so the value can lean on a head that
learns from every position's final score.

A network file is the project's pickle-free policy file (see :mod:`.model_file`): the same
envelope (``format``, ``version``, ``config``, ``state_dict``, ``sha256``), with the
config's ``net`` naming ``"az-mlp"``, ``"az-shaped"``, ``"az-stencil"`` or
``"az-resnet"``.
:func:`save_az_net` writes one atomically, :func:`load_az_net` reads it back and checks it;
the ``ppo`` loader refuses such a file with a one-line error, as it is not a MaskablePPO
policy.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import torch
from torch import nn

from patchwork_env.agents.az.games import get_game
from patchwork_env.agents.az.placement_head import ShapedPolicyHead
from patchwork_env.agents.az.resnet import ResNetTrunk
from patchwork_env.agents.device import Uploader, autocast, check_precision, resolve_device
from patchwork_env.agents.model_file import ModelFileError, read_policy_file, write_policy_file
from patchwork_env.data.actions import N_CELLS

OBSERVATION_SIZE = 1189
"""The observation size under the default rules (the networks take any size)."""
MASKED_LOGIT = -1e9
"""The logit of an illegal action when a mask is given (finite, so that a cross-entropy
against a target of 0 there stays 0)."""
NET_PREFIX = "az-"
AZ_KINDS = ("mlp", "shaped", "stencil", "resnet")
SCORE_LIMIT = 90
"""The largest final score difference the score head tells apart (larger ones are
clipped to it)."""
SCORE_BINS = 2 * SCORE_LIMIT + 1
"""The score head's bins: differences ``-SCORE_LIMIT .. +SCORE_LIMIT``."""
OWNERSHIP_CELLS = 2 * N_CELLS
"""The ownership head's outputs: each cell of the mover's quilt, then the opponent's."""


class NetOutput(NamedTuple):
    """What an :class:`AZNet` computes of a batch of observations."""

    logits: torch.Tensor
    """(N, 2026) prior logits (:data:`MASKED_LOGIT` at illegal actions when masked)."""
    value: torch.Tensor
    """(N,) value in [-1, 1] for the player to move."""
    aux: dict[str, torch.Tensor]
    """Auxiliary outputs by name: ``"score"`` (N, :data:`SCORE_BINS`) and ``"ownership"``
    (N, :data:`OWNERSHIP_CELLS`) logits where the network has them and they were asked
    for; else empty."""


class AZNet(nn.Module):
    """Policy logits and value of an observation (see the module docstring).

    ``forward(obs, mask=None) -> (logits (N, 2026), value (N,))``; with a mask, illegal
    actions get :data:`MASKED_LOGIT`. ``hidden`` and ``layers`` size the MLP trunk
    (``resnet``: ``hidden`` the width of its context), ``channels`` and ``blocks`` the
    convolutional trunks, ``maps`` the learned per-cell maps of the placement heads;
    ``aux``: add the score and ownership heads; ``value_reads_score``: the value head
    reads the score head's :func:`score_summary` (needs ``aux``; see the module
    docstring). ``game``: the game it plays (:mod:`.games`): Patchwork's 2026 actions, or
    the draft's 1947 (its bodies: mlp, shaped or resnet).
    """

    def __init__(self, obs_size: int = OBSERVATION_SIZE, kind: str = "mlp", hidden: int = 256,
                 layers: int = 2, channels: int = 32, blocks: int = 4, maps: int = 16,
                 aux: bool = False, value_reads_score: bool = False,
                 game: str = "patchwork") -> None:
        super().__init__()
        if kind not in AZ_KINDS:
            raise ValueError(f"unknown az network kind {kind!r}: choose from {AZ_KINDS}")
        self.game = get_game(game).name
        self.n_actions = get_game(game).n_actions
        if self.game != "patchwork" and kind == "stencil":
            raise ValueError(f"the {self.game} game's az network is mlp, shaped or resnet, "
                             f"not {kind}")
        if hidden < 1 or layers < 1:
            raise ValueError("an az network needs hidden >= 1 and layers >= 1")
        self.obs_size, self.kind, self.hidden, self.layers = obs_size, kind, hidden, layers
        self.channels, self.blocks, self.maps = channels, blocks, maps
        if kind in ("mlp", "shaped"):
            widths = [obs_size] + [hidden] * layers
            body: list[nn.Module] = []
            for a, b in itertools.pairwise(widths):
                body += [nn.Linear(a, b), nn.ReLU()]
            self.trunk = nn.Sequential(*body)
            self.policy_head = (nn.Linear(hidden, self.n_actions) if kind == "mlp"
                                else ShapedPolicyHead(hidden, maps, game=self.game))
            value_in = hidden
        elif kind == "resnet":
            self.trunk = ResNetTrunk(obs_size, hidden, channels, blocks)
            value_in = self.trunk.pooled_size
            self.policy_head = ShapedPolicyHead(value_in, maps,
                                                map_layer=nn.Conv2d(channels, maps, 1),
                                                game=self.game)
        else:
            from patchwork_env.agents.ppo.networks import (
                StencilNet,  # needs sb3-contrib, so only when asked for
            )

            self.trunk = StencilNet(obs_size, channels, blocks, hidden, maps)
            value_in = self.trunk.latent_dim_vf
        for name, flag in (("aux", aux), ("value_reads_score", value_reads_score)):
            if not isinstance(flag, bool):
                raise ValueError(f"{name} must be true or false, got {flag!r}")
        if value_reads_score and not aux:
            raise ValueError("value_reads_score needs the auxiliary heads (aux=True)")
        self.aux, self.value_reads_score = aux, value_reads_score
        extra = SUMMARY_SIZE if value_reads_score else 0
        self.value_head = nn.Sequential(nn.Linear(value_in + extra, 64), nn.ReLU(),
                                        nn.Linear(64, 1))
        if aux:
            self.score_head = nn.Sequential(nn.Linear(value_in, 64), nn.ReLU(),
                                            nn.Linear(64, SCORE_BINS))
            self.ownership_head = nn.Linear(value_in, OWNERSHIP_CELLS)
        self._small_init()

    def _small_init(self) -> None:
        """Start near a uniform policy and a value of 0."""
        heads = [self.value_head[-1]]
        if self.kind == "mlp":
            heads.append(self.policy_head)
        elif self.kind == "shaped":
            heads += self.policy_head.small_init_layers()
        elif self.kind == "resnet":
            heads += self.policy_head.small_init_layers() + self.trunk.small_init_layers()
        else:
            heads += self.trunk.small_init_layers()
        for layer in heads:
            for p in layer.parameters():
                nn.init.normal_(p, std=0.01) if p.dim() > 1 else nn.init.zeros_(p)

    def config(self) -> dict[str, Any]:
        """The model-file config that rebuilds this network (see :func:`build_az_net`)."""
        kwargs: dict[str, Any] = {"hidden": self.hidden}
        if self.kind == "mlp":
            kwargs["layers"] = self.layers
        elif self.kind == "shaped":
            kwargs.update(layers=self.layers, maps=self.maps)
        else:  # stencil, resnet
            kwargs.update(channels=self.channels, blocks=self.blocks, maps=self.maps)
        if self.aux:
            kwargs["aux"] = True
        if self.value_reads_score:
            kwargs["value_reads_score"] = True
        if self.game != "patchwork":
            kwargs["game"] = self.game
        return {"net": NET_PREFIX + self.kind, "net_kwargs": kwargs,
                "observation_size": self.obs_size, "n_actions": self.n_actions}

    def outputs(self, obs: torch.Tensor, mask: torch.Tensor | None = None, aux: bool = False
                ) -> NetOutput:
        """The logits, the value and (with ``aux``, where the network has them) the
        auxiliary outputs of observations ``(N, size)``."""
        if self.kind == "mlp":
            h = self.trunk(obs)
            logits, value_features = self.policy_head(h), h
        elif self.kind == "shaped":
            h = self.trunk(obs)
            logits, value_features = self.policy_head(h, obs), h
        elif self.kind == "resnet":
            planes, pooled = self.trunk(obs)
            logits, value_features = self.policy_head(pooled, obs, planes), pooled
        else:
            logits, value_features = self.trunk(obs)
        score = (self.score_head(value_features)
                 if self.aux and (aux or self.value_reads_score) else None)
        value_in = (torch.cat([value_features, score_summary(score)], dim=1)
                    if score is not None and self.value_reads_score else value_features)
        value = torch.tanh(self.value_head(value_in)).squeeze(-1)
        if mask is not None:
            logits = logits.masked_fill(~mask, MASKED_LOGIT)
        heads = {}
        if aux and score is not None:
            heads = {"score": score, "ownership": self.ownership_head(value_features)}
        return NetOutput(logits, value, heads)

    def forward(self, obs: torch.Tensor, mask: torch.Tensor | None = None
                ) -> tuple[torch.Tensor, torch.Tensor]:
        logits, value, _ = self.outputs(obs, mask)
        return logits, value


SUMMARY_SIZE = 3
"""The values :func:`score_summary` gives of each distribution."""


def score_summary(score_logits: torch.Tensor) -> torch.Tensor:
    """``(N, 3)``: the chance of a positive and of a negative final score difference under
    the score head's ``(N, SCORE_BINS)`` logits, and the expected difference over
    ``SCORE_LIMIT``."""
    probs = torch.softmax(score_logits.float(), dim=1)
    diffs = torch.arange(-SCORE_LIMIT, SCORE_LIMIT + 1, device=probs.device,
                         dtype=probs.dtype)
    summary = torch.stack([probs[:, SCORE_LIMIT + 1:].sum(1), probs[:, :SCORE_LIMIT].sum(1),
                           (probs * diffs).sum(1) / SCORE_LIMIT], dim=1)
    return summary.to(score_logits.dtype)


def build_az_net(config: dict[str, Any]) -> AZNet:
    """A fresh :class:`AZNet` of a model-file config; ``ValueError`` if it describes none."""
    if not isinstance(config, dict) or set(config) != {"net", "net_kwargs",
                                                        "observation_size", "n_actions"}:
        raise ValueError("the network config must have exactly the keys net, net_kwargs, "
                         f"observation_size and n_actions, got {config!r}")
    net, kwargs = config["net"], config["net_kwargs"]
    if not isinstance(net, str) or not net.startswith(NET_PREFIX):
        raise ValueError(f"network {net!r} is not an az network (one of "
                         f"{', '.join(NET_PREFIX + k for k in AZ_KINDS)})")
    if not isinstance(kwargs, dict):
        raise ValueError("an az network's config needs a dict of net_kwargs")
    game = get_game(kwargs.get("game", "patchwork"))
    if config["n_actions"] != game.n_actions:
        raise ValueError(f"an az network of {game.name} plays {game.n_actions} actions, "
                         f"not {config['n_actions']}")
    try:
        return AZNet(int(config["observation_size"]), net[len(NET_PREFIX):], **kwargs)
    except TypeError as e:
        raise ValueError(f"cannot build {net} from {kwargs}: {e}") from None


def check_weights(net: nn.Module, state: Any) -> None:
    """``ValueError`` unless ``state`` holds a tensor of the right shape for each weight of
    ``net`` and nothing else; the message names one tensor that does not fit (and both its
    shapes)."""
    if not isinstance(state, dict) or not all(isinstance(v, torch.Tensor)
                                               for v in state.values()):
        raise ValueError("its weights are not a dict of tensors")
    expected = net.state_dict()
    for name, tensor in expected.items():
        if name not in state:
            raise ValueError(f"its weights do not match the config: it lacks {name}")
        if state[name].shape != tensor.shape:
            raise ValueError(f"its shapes do not match the config: {name} is "
                             f"{tuple(state[name].shape)} in the file, "
                             f"{tuple(tensor.shape)} for the config")
    extra = sorted(set(state) - set(expected))
    if extra:
        raise ValueError(f"its weights do not match the config: it has {extra[0]}, which "
                         "the config's network does not")


def save_az_net(net: AZNet, path: str | os.PathLike[str]) -> Path:
    """Write ``net`` (config and weights) to ``path`` as a policy file, atomically."""
    return write_policy_file(path, net.config(), net.state_dict())


def load_az_net(path: str | os.PathLike[str], device: str | torch.device | None = None,
                game: str | None = None) -> AZNet:
    """The network saved at ``path``, in evaluation mode: read on the CPU (whatever device
    it was trained on), then moved to ``device`` (``None``: left on the CPU; a name as
    :func:`~patchwork_env.agents.device.resolve_device` takes it). ``game``: the game it
    must play (``None``: either); a network of the other game is refused.

    ``FileNotFoundError`` if there is no such file; :class:`~.model_file.ModelFileError`
    (one line, naming the file) if it is damaged or holds no az network;
    :class:`~patchwork_env.agents.device.DeviceError` for a device this machine lacks.
    """
    target = None if device is None else resolve_device(device)
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no model file at {path}")
    try:
        config, state = read_policy_file(path.read_bytes())
        net = build_az_net(config)
        check_weights(net, state)
        net.load_state_dict(state)
    except Exception as e:  # a refused file, a damaged archive, weights that do not fit
        reason = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise ModelFileError(f"cannot load {path} as an az network: {reason}") from None
    if not all(torch.isfinite(v).all() for v in state.values() if v.is_floating_point()):
        raise ModelFileError(f"cannot load {path} as an az network: some weights are NaN "
                             "or infinite")
    if game is not None and net.game != get_game(game).name:
        raise ModelFileError(f"cannot load {path} as an az network of {get_game(game).name}: "
                             f"it was trained on the {net.game} game")
    return (net if target is None else net.to(target)).eval()


def make_evaluator(net: AZNet, device: str | torch.device | None = None,
                   precision: str = "fp32") -> Callable[[np.ndarray, np.ndarray],
                                                        tuple[np.ndarray, np.ndarray]]:
    """The search's ``evaluate(observations, masks) -> (logits, values)`` for ``net``.

    ``device``: where the network runs; it is moved there (in place) first (``None``:
    where it is). The observations go to that device (through pinned memory on CUDA), the
    forward pass runs in ``precision`` (:data:`~patchwork_env.agents.device.PRECISIONS`)
    and the results come back as float32 numpy arrays. The logits come back unmasked: the
    search reads them at legal actions only. A device or precision this machine cannot run
    is a :class:`~patchwork_env.agents.device.DeviceError`.
    """
    where = next(net.parameters()).device if device is None else resolve_device(device)
    check_precision(precision, where)
    net.to(where)
    upload = Uploader(where)
    as_is = where.type == "cpu" and precision == "fp32"  # numpy views of the results

    def evaluate(obs: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        with torch.inference_mode(), autocast(where, precision):
            logits, values = net(upload(obs))
        if as_is:
            return logits.numpy(), values.numpy()
        return logits.float().cpu().numpy(), values.float().cpu().numpy()

    return evaluate
