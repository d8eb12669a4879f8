"""The agent registry, and every agent playing only legal moves through whole games."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from patchwork_env import LEATHER_BASE, Game, GameBatch, agents
from patchwork_env.agents import AgentSpecError, make, parse_spec
from patchwork_env.agents.mcts.agent import MCTSAgent
from patchwork_env.agents.ppo.agent import PPOAgent
from patchwork_env.evaluation.arena import play_match


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A MaskablePPO checkpoint after a few hundred steps against random."""
    from sb3_contrib import MaskablePPO

    from patchwork_env.integrations.sb3 import PatchworkVecEnv

    env = PatchworkVecEnv(4, opponent="random", seed=0)
    model = MaskablePPO("MlpPolicy", env, n_steps=64, batch_size=64, n_epochs=1, seed=0,
                        policy_kwargs={"net_arch": [16]}, device="cpu")
    model.learn(256)
    path = tmp_path_factory.mktemp("model") / "tiny.zip"
    model.save(path)
    return path


@pytest.mark.parametrize(("spec", "name", "arg"), [
    ("random", "random", None), ("greedy", "greedy", None), ("mcts", "mcts", None),
    ("mcts:400", "mcts", "400"), ("mcts:1s", "mcts", "1s"), ("ppo", "ppo", None),
    ("ppo:models/x.zip", "ppo", "models/x.zip"), ("ppo-sample:a.zip", "ppo-sample", "a.zip"),
    ("human", "human", None), (" greedy ", "greedy", None),
])
def test_parse_spec(spec: str, name: str, arg: str | None) -> None:
    assert parse_spec(spec) == (name, arg)


@pytest.mark.parametrize(("spec", "built"), [
    ("random", "random"), ("greedy", "greedy"), ("mcts", "mcts:400"), ("mcts:50", "mcts:50"),
    ("mcts:0.5s", "mcts:0.5s"), ("human", "human"),
])
def test_make_builds_each_agent(spec: str, built: str) -> None:
    agent = make(spec, seed=3)
    assert isinstance(agent, agents.Agent)
    assert agent.spec == built and agent.seed == 3


@pytest.mark.parametrize(("spec", "message"), [
    ("", "non-empty"), ("alphazero", "unknown agent 'alphazero'"), ("Random", "unknown agent"),
    ("random:3", "takes no argument"), ("greedy:", "takes no argument"),
    ("mcts:", "empty argument"), ("mcts:fast", "bad MCTS budget"), ("mcts:0", "bad MCTS budget"),
    ("mcts:-3s", "bad MCTS budget"), ("ppo:/no/such/model.zip", "no model file"),
])
def test_make_rejects_bad_specs(spec: str, message: str) -> None:
    with pytest.raises(AgentSpecError, match=message):
        make(spec)


def test_make_rejects_a_corrupt_checkpoint(tmp_path: Path) -> None:
    bad = tmp_path / "model.zip"
    bad.write_bytes(b"not a zip file at all")
    with pytest.raises(AgentSpecError, match=r"cannot load .* as a MaskablePPO checkpoint"):
        make(f"ppo:{bad}")
    bad = tmp_path / "model.pt"
    bad.write_bytes(b"not a policy file either")
    with pytest.raises(AgentSpecError, match=r"cannot load .*model\.pt as a policy file"):
        make(f"ppo-sample:{bad}")


def test_default_ppo_model_missing_is_explained(monkeypatch: pytest.MonkeyPatch,
                                                tmp_path: Path) -> None:
    monkeypatch.setattr("patchwork_env.agents.ppo.agent.DEFAULT_MODEL", tmp_path / "ppo.pt")
    with pytest.raises(AgentSpecError, match="no model has been shipped yet"):
        make("ppo")


def check_replays(records: list) -> None:
    """Each recorded game replays move by move (checked) to its recorded end; some
    leather patches were placed along the way."""
    for r in records:
        game = Game.new(r.seed)
        for move in r.moves:
            game.step(move)
        assert game.is_over and game.scores() == r.scores and game.winner == r.winner
    assert any(a >= LEATHER_BASE for r in records for a in r.moves)


@pytest.mark.parametrize(("a", "b", "n"), [
    ("random", "greedy", 12), ("mcts:30", "random", 3), ("greedy", "mcts:30", 3),
])
def test_agents_play_only_legal_moves(a: str, b: str, n: int) -> None:
    """Every move goes through the engine's checked step: one illegal move raises."""
    records = play_match(make(a, 1), make(b, 2), range(n))
    assert len(records) == 2 * n
    check_replays(records)


def test_ppo_agent_plays_legal_moves(tiny_model: Path) -> None:
    records = play_match(make(f"ppo:{tiny_model}", 0), make(f"ppo-sample:{tiny_model}", 1),
                         range(3))
    check_replays(records)


def test_ppo_agent_sees_what_the_learner_sees(tiny_model: Path) -> None:
    """Deterministic play equals the model's own prediction on the env's observation."""
    from sb3_contrib import MaskablePPO

    from patchwork_env.views.observation import observe

    agent = PPOAgent(tiny_model, seed=0)
    model = MaskablePPO.load(tiny_model, device="cpu")
    batch = GameBatch.new(16, seed=4)
    for _ in range(9):
        batch.step(batch.random_actions(2))
    rows = np.flatnonzero(~batch.done)
    obs = observe(batch.state[rows], batch.rules, batch.to_move[rows])
    expected, _ = model.predict(obs, action_masks=batch.legal_mask()[rows],
                                deterministic=True)
    assert (agent.act(batch, rows) == expected).all()


@pytest.mark.parametrize("spec", ["random", "mcts:40", "ppo-sample"])
def test_agents_are_reproducible_from_a_seed(spec: str, tiny_model: Path) -> None:
    if spec.startswith("ppo"):
        spec = f"{spec}:{tiny_model}"
    runs = [[r.moves for r in play_match(make(spec, 7), make("random", 8), range(2))]
            for _ in range(2)]
    assert runs[0] == runs[1]


def test_act_refuses_finished_games() -> None:
    batch = GameBatch.new(2, seed=0)
    batch.playout(0)
    with pytest.raises(ValueError, match="finished games"):
        make("greedy").act(batch, np.array([0]))
    with pytest.raises(ValueError, match="the game is over"):
        MCTSAgent("10").act_game(Game.from_batch(batch, 1))
