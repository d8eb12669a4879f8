"""The stencil network reads each placement through the shape of the patch it places."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from patchwork_env.training.policy import FastMaskableCategorical, StencilNet, stencil_sums

from patchwork_env import ADVANCE, LEATHER_BASE, N_ACTIONS, Game
from patchwork_env.actions import N_CELLS, SLOT_STRIDE
from patchwork_env.rules import BOARD_SIZE


def positions(n: int = 6) -> list[Game]:
    """Games some random moves in, with patches to buy (no leather pending)."""
    games = []
    rng = np.random.default_rng(0)
    for seed in range(n):
        game = Game.new(seed)
        for _ in range(int(rng.integers(0, 30))):
            if game.is_over:
                break
            game.step(int(rng.choice(game.legal_actions())))
        if not game.is_over and game.legal_actions()[0] < ADVANCE:
            games.append(game)
    assert len(games) >= 3
    return games


def observation(game: Game) -> np.ndarray:
    """What the player to move sees."""
    return game.batch.observe()[0]


def neighbours(cell: int) -> list[int]:
    r, c = divmod(cell, BOARD_SIZE)
    return [rr * BOARD_SIZE + cc for rr, cc in ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1))
            if 0 <= rr < BOARD_SIZE and 0 <= cc < BOARD_SIZE]


@pytest.mark.parametrize("game", positions())
def test_stencil_sums_read_the_cells_each_buy_covers_and_touches(game: Game) -> None:
    net = StencilNet(len(observation(game)))
    obs = torch.as_tensor(observation(game))[None]
    cells, touching = net._stencils(obs)
    maps = torch.rand(1, 3, BOARD_SIZE, BOARD_SIZE, dtype=torch.float64)
    covered = stencil_sums(maps, cells.double(), margin=0)[0]
    around = stencil_sums(maps, touching.double(), margin=1)[0]
    for action in game.legal_actions().tolist():
        if action >= ADVANCE:
            continue
        slot, code = divmod(action, SLOT_STRIDE)
        orientation, anchor = divmod(code, N_CELLS)
        placed = set(game.action_cells(action))
        ring = {n for cell in placed for n in neighbours(cell)} - placed
        board = maps[0, slot].flatten()
        assert covered[slot, orientation, anchor] == pytest.approx(
            float(board[sorted(placed)].sum()))
        assert around[slot, orientation, anchor] == pytest.approx(
            float(board[sorted(ring)].sum()))


def test_an_empty_slot_has_no_stencil() -> None:
    game = Game.new(0)
    obs = torch.as_tensor(observation(game))[None]
    net = StencilNet(len(observation(game)))
    cells, _ = net._stencils(obs)
    assert (cells.sum(-1) > 0).all()  # three patches in front of the neutral token
    obs[:, :] = 0.0  # nothing in the circle at all
    cells, touching = net._stencils(obs)
    assert cells.abs().sum() == 0 and touching.abs().sum() == 0


def test_the_net_gives_one_logit_per_action_and_a_value() -> None:
    game = Game.new(1)
    net = StencilNet(len(observation(game)))
    logits, latent = net(torch.as_tensor(np.stack([observation(game)] * 4)))
    assert logits.shape == (4, N_ACTIONS)
    assert latent.shape == (4, net.latent_dim_vf)
    assert torch.isfinite(logits[:, LEATHER_BASE:]).all()


@pytest.mark.parametrize(("uniform", "expected"), [(0.0, 3), (0.5, 3), (1.0, 700)])
def test_sampling_lands_on_a_legal_action_even_at_the_ends_of_the_draw(
        monkeypatch: pytest.MonkeyPatch, uniform: float, expected: int) -> None:
    # float32 rounding can make the scaled uniform draw equal the total probability
    logits = torch.zeros(1, N_ACTIONS)
    logits[0, 700] = -1.0
    dist = FastMaskableCategorical(logits=logits)
    legal = np.zeros((1, N_ACTIONS), bool)
    legal[0, [3, 700]] = True
    dist.apply_masking(legal)
    monkeypatch.setattr(torch, "rand", lambda shape, **_: torch.full(shape, uniform))
    assert dist.sample().tolist() == [expected]


def test_masked_logits_far_above_the_legal_ones_keep_gradients_finite() -> None:
    logits = torch.zeros(2, N_ACTIONS, requires_grad=True)
    with torch.no_grad():
        logits[:, LEATHER_BASE:] = 500.0  # illegal here, and exp(500) overflows float32
    legal = np.zeros((2, N_ACTIONS), bool)
    legal[:, [0, 5, ADVANCE]] = True
    dist = FastMaskableCategorical(logits=logits)
    dist.apply_masking(legal)
    loss = -dist.log_prob(torch.tensor([5, ADVANCE])).sum() - dist.entropy().sum()
    loss.backward()
    assert torch.isfinite(loss)
    assert torch.isfinite(logits.grad).all()
    torch.testing.assert_close(dist.probs[0, [0, 5, ADVANCE]], torch.full((3,), 1 / 3))
