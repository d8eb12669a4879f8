"""The policy networks, the model files that store them, and the agent that plays them.

The stencil network reads each placement through the shape of the patch it places; a
policy file round-trips its network and weights, and anything else is refused in one
line; a MaskablePPO zip loads without unpickling its class path; a PolicyAgent plays the
policy's best legal move, or a seeded draw from it.
"""

from __future__ import annotations

import json
import pickle
import zipfile

import cloudpickle
import numpy as np
import pytest
import torch
from sb3_contrib import MaskablePPO

from patchwork_env import ADVANCE, LEATHER_BASE, N_ACTIONS, Game, GameBatch
from patchwork_env.agents.model_file import (
    ModelFileError,
    build_policy,
    load_policy,
    policy_config,
    save_policy,
    weights_digest,
)
from patchwork_env.agents.policy_agent import (
    PolicyAgent,
    masked_actions,
    policy_actions,
    policy_logits,
)
from patchwork_env.agents.ppo.networks import (
    FastMaskableCategorical,
    PatchworkPolicy,
    StencilNet,
)
from patchwork_env.agents.stencils import stencil_sums
from patchwork_env.data.actions import N_CELLS, SLOT_STRIDE
from patchwork_env.data.rules import BOARD_SIZE
from patchwork_env.integrations.sb3 import PatchworkVecEnv
from patchwork_env.views.observation import observe, observe_batch


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
    return observe_batch(game.batch)[0]


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


# ---------------------------------------------------------------------------------------
# model files and the agent that plays a policy

SMALL_NETS = {
    "stencil": {"channels": 4, "blocks": 2, "hidden": 16, "maps": 3},
    "conv": {"channels": 4, "blocks": 2, "hidden": 16},
    "mlp": {"net_arch": {"pi": [16], "vf": [8]}, "activation": "relu"},
}


def small_policy(net: str = "stencil", seed: int = 0):
    """A narrow policy of kind ``net`` with random weights (and logits far from uniform)."""
    torch.manual_seed(seed)
    size = len(observation(Game.new(0)))
    policy = build_policy({"net": net, "net_kwargs": SMALL_NETS[net],
                           "observation_size": size, "n_actions": N_ACTIONS})
    with torch.no_grad():
        for weights in policy.parameters():
            weights.mul_(3.0)
    return policy


def midgame(n: int = 24, seed: int = 4):
    """A batch of ``n`` games some random moves in (all unfinished), and its rows."""
    batch = GameBatch.new(n, seed=seed)
    for _ in range(9):
        batch.step(batch.random_actions(2))
    rows = np.flatnonzero(~batch.done)
    assert len(rows) == n
    return batch, rows


def batch_inputs(batch, rows) -> tuple[np.ndarray, np.ndarray]:
    return (observe(batch.state[rows], batch.rules, batch.to_move[rows]),
            batch.legal_mask()[rows])


@pytest.mark.parametrize("net", sorted(SMALL_NETS))
def test_a_policy_file_round_trips_its_network_and_moves(net: str, tmp_path) -> None:
    policy = small_policy(net)
    path = save_policy(policy, tmp_path / "small.pt")
    loaded = load_policy(path)
    assert policy_config(loaded) == policy_config(policy)
    assert policy_config(loaded)["net_kwargs"] == SMALL_NETS[net]
    for key, value in policy.state_dict().items():
        assert torch.equal(loaded.state_dict()[key], value), key
    obs, masks = batch_inputs(*midgame())
    assert np.array_equal(policy_actions(loaded, obs, masks),
                          policy_actions(policy, obs, masks))
    draws = [policy_actions(p, obs, masks, deterministic=False, rng=np.random.default_rng(3))
             for p in (policy, loaded)]
    assert np.array_equal(*draws)


def damage(path, how: str) -> None:
    """Spoil the policy file at ``path`` in one of several ways."""
    data = bytearray(path.read_bytes())
    payload = torch.load(path, weights_only=True)
    if how == "garbage":
        path.write_bytes(b"not a model at all")
    elif how == "truncated":
        path.write_bytes(bytes(data[: len(data) // 2]))
    elif how == "empty":
        path.write_bytes(b"")
    elif how == "flipped":  # one byte among the weights
        data[len(data) // 2] ^= 0xFF
        path.write_bytes(bytes(data))
    elif how == "format":
        torch.save({**payload, "format": "something-else"}, path)
    elif how == "version":
        torch.save({**payload, "version": 2}, path)
    elif how == "config":
        torch.save({**payload, "config": {**payload["config"], "net": "transformer"}}, path)
    elif how == "weights":  # the config of a wider network than the weights are
        config = {**payload["config"],
                  "net_kwargs": {**payload["config"]["net_kwargs"], "hidden": 32}}
        torch.save({**payload, "config": config}, path)
    elif how == "nan":
        state = dict(payload["state_dict"])
        key = next(iter(state))
        state[key] = torch.full_like(state[key], float("nan"))
        torch.save({**payload, "state_dict": state, "sha256": weights_digest(state)}, path)
    elif how == "pickled":  # an object that only unpickling could rebuild
        torch.save({**payload, "config": np.random.default_rng(0)}, path)


@pytest.mark.parametrize(("how", "message"), [
    ("garbage", "not a torch archive"), ("truncated", "not a torch archive"),
    ("empty", "not a torch archive"), ("flipped", "do not match their checksum"),
    ("format", "format is 'something-else'"),
    ("version", "format version 2"), ("config", "unknown network 'transformer'"),
    ("weights", "weights do not fit its stencil network"), ("nan", "NaN or infinite"),
    ("pickled", "objects other than tensors"),
])
def test_a_damaged_or_foreign_policy_file_is_refused_in_one_line(how: str, message: str,
                                                                  tmp_path) -> None:
    path = save_policy(small_policy(), tmp_path / "model.pt")
    damage(path, how)
    with pytest.raises(ModelFileError) as refused:
        load_policy(path)
    text = str(refused.value)
    assert text.startswith(f"cannot load {path} as a policy file") and "\n" not in text
    assert message in text
    with pytest.raises(FileNotFoundError, match="no model file at"):
        load_policy(tmp_path / "missing.pt")


def test_a_maskable_ppo_zip_loads_without_unpickling(tmp_path, monkeypatch) -> None:
    """A zip that ``model.save`` wrote loads from its JSON and state dict alone: the
    pickled entries (the policy's class path among them) may be unreadable."""



    kwargs = {"net_kwargs": {"kind": "stencil", "channels": 4, "blocks": 2, "hidden": 16}}
    model = MaskablePPO(PatchworkPolicy, PatchworkVecEnv(2, seed=0), policy_kwargs=kwargs,
                        n_steps=8, batch_size=8, seed=0, device="cpu")
    model.save(tmp_path / "model.zip")
    scrubbed = tmp_path / "scrubbed.zip"
    with zipfile.ZipFile(tmp_path / "model.zip") as src, zipfile.ZipFile(scrubbed, "w") as dst:
        for name in src.namelist():
            data = src.read(name)
            if name == "data":
                meta = json.loads(data)
                for value in meta.values():
                    if isinstance(value, dict) and ":serialized:" in value:
                        value[":serialized:"] = "bm90IGEgcGlja2xl"  # not a pickle
                meta["policy_class"]["__module__"] = "no.such.module"
                data = json.dumps(meta).encode()
            dst.writestr(name, data)

    def refuse(*args, **kwargs):
        raise AssertionError("the loader unpickled something")

    monkeypatch.setattr(pickle, "loads", refuse)
    monkeypatch.setattr(cloudpickle, "loads", refuse)
    loaded = load_policy(scrubbed)
    monkeypatch.undo()
    assert policy_config(loaded) == policy_config(model.policy)
    for key, value in model.policy.state_dict().items():
        assert torch.equal(loaded.state_dict()[key], value), key
    obs, masks = batch_inputs(*midgame())
    expected, _ = model.predict(obs, action_masks=masks, deterministic=True)
    assert np.array_equal(policy_actions(loaded, obs, masks), expected)


def test_policy_agent_greedy_ignores_its_seed_and_sampling_repeats_with_it() -> None:
    policy = small_policy("conv")
    batch, rows = midgame()
    greedy = [PolicyAgent(policy, seed=s).act(batch, rows) for s in (1, 2)]
    assert np.array_equal(*greedy)
    obs, masks = batch_inputs(batch, rows)
    logits = policy_logits(policy, obs).numpy()
    best = np.where(masks, logits, -np.inf).argmax(axis=1)
    assert np.array_equal(greedy[0], best)
    sampled = [PolicyAgent(policy, seed=s, deterministic=False).act(batch, rows)
               for s in (7, 7, 8)]
    assert np.array_equal(sampled[0], sampled[1])
    assert not np.array_equal(sampled[0], sampled[2])
    assert masks[np.arange(len(rows)), sampled[2]].all()


def test_sampling_follows_the_policy_over_the_legal_actions() -> None:
    policy = small_policy("mlp")
    logits = torch.full((N_ACTIONS,), -2.0)
    logits[[3, 10, ADVANCE, 700]] = torch.tensor([0.0, 1.0, 2.0, 9.0])
    with torch.no_grad():  # the logits no longer depend on the observation
        policy.action_net.weight.zero_()
        policy.action_net.bias.copy_(logits)
    masks = np.zeros((20_000, N_ACTIONS), bool)
    masks[:, [3, 10, ADVANCE, 900]] = True  # 700, the favourite, is illegal
    obs = np.zeros((len(masks), policy.observation_space.shape[0]), np.float32)
    drawn = policy_actions(policy, obs, masks, deterministic=False,
                           rng=np.random.default_rng(0))
    expected = torch.softmax(logits[[3, 10, ADVANCE, 900]].double(), 0).numpy()
    counts = np.array([(drawn == a).sum() for a in (3, 10, ADVANCE, 900)])
    assert counts.sum() == len(masks)
    np.testing.assert_allclose(counts / len(masks), expected, atol=0.012)
    with pytest.raises(ValueError, match="needs a numpy Generator"):
        policy_actions(policy, obs[:1], masks[:1], deterministic=False)


def test_masked_actions_choose_among_the_legal_actions_only() -> None:
    logits = np.array([[5.0, 1.0, 2.0, 0.0], [0.0, 0.0, 0.0, 9.0]], np.float32)
    masks = np.array([[False, True, True, False], [True, False, False, False]])
    np.testing.assert_array_equal(masked_actions(logits, masks), [2, 0])
    drawn = masked_actions(np.repeat(logits, 500, 0), np.repeat(masks, 500, 0),
                           deterministic=False, rng=np.random.default_rng(0))
    assert np.repeat(masks, 500, 0)[np.arange(1000), drawn].all()
    with pytest.raises(ValueError, match="at least one legal action"):
        masked_actions(logits, np.zeros_like(masks))


def test_from_model_makes_an_opponent_of_a_file_a_model_or_a_policy(tmp_path) -> None:


    venv = PatchworkVecEnv(3, seed=0)
    model = MaskablePPO("MlpPolicy", venv, policy_kwargs={"net_arch": [8]}, n_steps=8,
                        batch_size=8, seed=0, device="cpu")
    path = save_policy(model.policy, tmp_path / "gen1.pt")
    batch, rows = midgame()
    moves = [PolicyAgent.from_model(m, seed=5).act(batch, rows)
             for m in (model, model.policy, path, str(path))]
    assert all(np.array_equal(moves[0], m) for m in moves[1:])
    with pytest.raises(TypeError, match="from_model takes"):
        PolicyAgent.from_model(object())
    venv.set_opponent(PolicyAgent.from_model(path, seed=0))
    venv.seed(1)
    venv.reset()
    for _ in range(30):  # the opponent replies inside step(); a bad move would raise
        venv.step(np.array([np.flatnonzero(m)[0] for m in venv.action_masks()]))
