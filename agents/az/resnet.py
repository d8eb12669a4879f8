"""The residual convolutional trunk of the az network's ``resnet`` body.

The board part of the observation, the two quilts, is a stack of 9x9 planes: the player's
own quilt, the opponent's, and a plane of ones (so that a convolution tells the edge of the
board, where it reads zero padding, from an empty cell). A 3x3 convolution turns them into
``channels`` planes, then ``blocks`` residual blocks (conv3x3-BN-ReLU-conv3x3-BN, the skip
added before the last ReLU) work on them.

Everything else in the observation (the time track, buttons, income, the circle of patches
with those on offer, the leather patches) is not a picture of the board: a two-layer MLP
turns it into a ``hidden``-wide context vector, and the context conditions each block by
FiLM: a per-channel scale and shift of the block's second normalised convolution, learned
from the context (as in the PPO :class:`~patchwork_env.agents.ppo.networks.PatchworkNet`).
FiLM rather than the context broadcast as extra input planes: about a thousand context
values (mostly the circle) would need either that many constant planes at the input, or a
projection to a few planes that only the first convolution sees, while which cells matter
depends on the patches on offer at every depth of the trunk. FiLM gives every block that
information for one small linear layer and two elementwise operations per block; in a
short comparison (the same trunk imitating the greedy player for the same steps) it
reached lower policy and value losses on held-out positions than the context projected to
16 broadcast input planes, while running only a little slower. Its modulation starts at
zero, so a fresh trunk is an unconditioned residual network.

:class:`ResNetTrunk` returns the trunk's planes (for the per-cell maps of the shaped
placement head, a 1x1 convolution of them) and a pooled vector (the planes averaged over
the board, joined with the context) for the head's slot weights, the advance and leather
logits and the value. BatchNorm runs on batch statistics while learning and on its running
ones in evaluation mode, which is how the search runs the network.
"""

from __future__ import annotations

import torch
from torch import nn

from patchwork_env.data.actions import N_CELLS
from patchwork_env.data.rules import BOARD_SIZE
from patchwork_env.views.observation import QUILTS_AT

BOARD_PLANES = 3
"""The input planes: the player's own quilt, the opponent's, and ones."""


class ResidualBlock(nn.Module):
    """conv3x3-BN-ReLU-conv3x3-BN, scaled and shifted per channel, plus the skip, ReLU."""

    def __init__(self, channels: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)

    def forward(self, x: torch.Tensor, scale: torch.Tensor, shift: torch.Tensor
                ) -> torch.Tensor:
        """``x`` (N, C, 9, 9) through the block; ``scale`` and ``shift`` (N, C, 1, 1) the
        FiLM modulation (the second convolution is multiplied by ``1 + scale``)."""
        y = torch.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y)) * (1 + scale) + shift
        return torch.relu(x + y)


class ResNetTrunk(nn.Module):
    """The quilts through ``blocks`` FiLM-conditioned residual blocks of ``channels``
    planes (see the module docstring)."""

    def __init__(self, obs_size: int, hidden: int, channels: int, blocks: int) -> None:
        super().__init__()
        if channels < 1 or blocks < 1:
            raise ValueError("a resnet trunk needs channels >= 1 and blocks >= 1")
        self.channels, self.n_blocks = channels, blocks
        self.context = nn.Sequential(nn.Linear(obs_size - 2 * N_CELLS, hidden), nn.ReLU(),
                                     nn.Linear(hidden, hidden), nn.ReLU())
        self.stem = nn.Sequential(
            nn.Conv2d(BOARD_PLANES, channels, 3, padding=1, bias=False),
            nn.BatchNorm2d(channels), nn.ReLU())
        self.blocks = nn.ModuleList(ResidualBlock(channels) for _ in range(blocks))
        self.film = nn.Linear(hidden, 2 * blocks * channels)
        self.pooled_size = hidden + channels
        """The width of the pooled vector."""

    def small_init_layers(self) -> list[nn.Module]:
        """The layers that start near zero: the modulation (blocks start unconditioned)."""
        return [self.film]

    def forward(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(planes (N, C, 9, 9), pooled (N, hidden + C))`` of observations ``(N, size)``."""
        n = obs.shape[0]
        end = QUILTS_AT + 2 * N_CELLS
        quilts = obs[:, QUILTS_AT:end].reshape(n, 2, BOARD_SIZE, BOARD_SIZE)
        board = torch.cat([quilts, torch.ones_like(quilts[:, :1])], dim=1)
        # channels-last planes: the CPU's convolutions run faster on them, as do a GPU's
        # at reduced precision
        board = board.contiguous(memory_format=torch.channels_last)
        context = self.context(torch.cat([obs[:, :QUILTS_AT], obs[:, end:]], dim=1))
        film = self.film(context).view(n, self.n_blocks, 2, self.channels, 1, 1)
        x = self.stem(board)
        for k, block in enumerate(self.blocks):
            x = block(x, film[:, k, 0], film[:, k, 1])
        return x, torch.cat([x.mean(dim=(2, 3)), context], dim=1)
