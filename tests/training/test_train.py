"""train.py: a tiny run, its checkpoint and resumption, the opponent pool, the shipped model."""

from __future__ import annotations

import shutil
from importlib import resources
from pathlib import Path

import numpy as np
import pytest
import torch
from gymnasium import spaces
from sb3_contrib import MaskablePPO

import train
from patchwork_env import Game, GameBatch
from patchwork_env.agents import make
from patchwork_env.agents.model_file import load_policy, policy_config, write_policy_file
from patchwork_env.agents.policy_agent import PolicyAgent, policy_actions
from patchwork_env.agents.ppo.agent import DEFAULT_MODEL
from patchwork_env.agents.ppo.networks import FastMaskablePolicy
from patchwork_env.agents.random_agent import RandomAgent
from patchwork_env.data.actions import N_ACTIONS
from patchwork_env.data.rules import get_rules
from patchwork_env.evaluation.arena import play_match
from patchwork_env.training.checkpoint import CheckpointError, load_checkpoint, save_checkpoint
from patchwork_env.training.imitation import demonstrations, imitate
from patchwork_env.training.metrics import MetricsCsv
from patchwork_env.training.ppo.pool import OpponentPool, PoolOpponent
from patchwork_env.training.ppo.session import start
from patchwork_env.views.observation import layout, observe

SHIPPED_MODEL_MOVES = [
    1944, 2005, 1948, 297, 193, 981, 1944, 1944, 23, 0, 1323, 1995, 1944, 91, 731, 1077, 1944,
    1960, 1002, 1649, 1944, 1944, 111, 201, 249, 777, 1326, 738, 1944, 711, 103, 1770, 1991,
    1975, 1591, 0, 1296, 1960, 657, 302]
"""The moves the shipped model played as a MaskablePPO zip (``MaskablePPO.load(...)
.predict(deterministic=True)``) in the positions of :func:`shipped_model_positions`,
before it was converted to a policy file."""

TINY = ["--n-envs", "8", "--n-steps", "32", "--batch-size", "128", "--n-epochs", "1",
        "--hidden", "32", "--channels", "8", "--snapshot-every", "1", "--pool-size", "2",
        "--eval-every", "256", "--checkpoint-every", "256", "--eval-games", "2",
        "--final-eval-games", "2", "--imitation-positions", "500", "--imitation-epochs", "1",
        "--threads", "1", "--no-progress"]
"""A run small enough for a test (the default net, narrow): 256 steps per update."""


def train_ppo(argv: list[str]) -> int:
    """``train.py --algo ppo`` with ``argv``; the exit status."""
    return train.main(["--algo", "ppo", *argv])


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    run_dir = tmp_path_factory.mktemp("run")
    assert train_ppo([*TINY, "--total-steps", "512", "--run-dir", str(run_dir)]) == 0
    return run_dir


def small_policy() -> FastMaskablePolicy:
    space = layout(get_rules("default")).space
    return FastMaskablePolicy(space, spaces.Discrete(N_ACTIONS), lambda _: 0.0, net_arch=[8])


def test_tiny_run_writes_its_outputs(tiny_run: Path) -> None:
    for name in ("checkpoint.pt", "best.zip", "final.zip", "best.pt", "final.pt",
                 "metrics.csv", "learning_curve.png"):
        assert (tiny_run / name).is_file(), name
    rows = MetricsCsv.read(tiny_run / "metrics.csv")
    assert [int(r["steps"]) for r in rows] == [0, 256, 512]  # 0: after the warm start
    state = load_checkpoint(tiny_run / "checkpoint.pt")
    assert state["steps"] == 512 and state["updates"] == 2
    # self-0 at the start, then one snapshot per update; the pool keeps the last two
    assert [name for name, _ in state["pool"]["snapshots"]] == ["self-1", "self-2"]


def test_resume_restores_steps_and_pool_then_plays_legal_moves(tiny_run: Path,
                                                                tmp_path: Path) -> None:
    saved = load_checkpoint(tiny_run / "checkpoint.pt")
    opts, given = train.parse_options(["--resume", str(tiny_run)])
    run, resumed_at = start(opts, given)
    assert resumed_at == run.model.num_timesteps == 512
    assert run.updates == saved["updates"]
    assert [s.name for s in run.pool.snapshots] == ["self-1", "self-2"]
    for snap, (_, weights) in zip(run.pool.snapshots, saved["pool"]["snapshots"], strict=True):
        for key, value in snap.policy.state_dict().items():
            assert torch.equal(value, weights[key])
    assert run.pool.rng.bit_generator.state == saved["pool"]["rng"]
    for key, value in run.model.policy.state_dict().items():
        assert torch.equal(value, saved["policy"][key])

    # play_match steps with checking on: an illegal move would raise
    records = play_match(PolicyAgent(run.model.policy), RandomAgent(0), range(4))
    assert len(records) == 8

    copy = tmp_path / "copy"
    copy.mkdir()
    (copy / "checkpoint.pt").write_bytes((tiny_run / "checkpoint.pt").read_bytes())
    assert train_ppo(["--resume", str(copy), "--total-steps", "768", "--no-progress",
                       "--no-plot"]) == 0
    state = load_checkpoint(copy / "checkpoint.pt")
    assert state["steps"] == 768 and state["updates"] == 3
    assert [name for name, _ in state["pool"]["snapshots"]] == ["self-2", "self-3"]


def test_a_resumed_run_writes_the_best_policy_its_checkpoint_counts(tiny_run: Path,
                                                                     tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(tiny_run, copy)
    saved = load_checkpoint(copy / "checkpoint.pt")["best_policy"]
    # best.pt of an evaluation after the checkpoint, whose run was killed before its next one
    write_policy_file(copy / "best.pt", policy_config(load_policy(copy / "best.pt")),
                      {k: v + 1 for k, v in saved.items()})
    (copy / "best.zip").unlink()
    run, _ = start(*train.parse_options(["--resume", str(copy)]))
    run.restore_best()
    for loaded in (load_policy(copy / "best.pt"), load_policy(copy / "best.zip")):
        for key, value in loaded.state_dict().items():
            assert torch.equal(value, saved[key]), key


def test_same_seed_same_run(tmp_path: Path) -> None:
    weights = []
    for name in ("a", "b"):
        argv = [*TINY, "--total-steps", "256", "--run-dir", str(tmp_path / name), "--no-plot"]
        assert train_ppo(argv) == 0
        weights.append(load_checkpoint(tmp_path / name / "checkpoint.pt")["policy"])
    assert all(torch.equal(weights[0][k], weights[1][k]) for k in weights[0])


@pytest.mark.parametrize("damage", ["flip", "truncate", "garbage"])
def test_corrupt_checkpoint_is_refused(tiny_run: Path, tmp_path: Path, damage: str,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    data = bytearray((tiny_run / "checkpoint.pt").read_bytes())
    if damage == "flip":
        data[len(data) // 2] ^= 0xFF
    elif damage == "truncate":
        data = data[: len(data) // 3]
    else:
        data = bytearray(b"not a checkpoint at all")
    (tmp_path / "checkpoint.pt").write_bytes(bytes(data))
    with pytest.raises(CheckpointError):
        load_checkpoint(tmp_path / "checkpoint.pt")
    assert train_ppo(["--resume", str(tmp_path), "--no-progress"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("train.py: error:") and "\n" not in err


def test_mismatched_or_missing_checkpoint_is_refused(tiny_run: Path, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    assert train_ppo(["--resume", str(tiny_run), "--hidden", "64"]) == 2
    assert "--hidden 64 (checkpoint: 32)" in capsys.readouterr().err
    assert train_ppo(["--resume", str(tmp_path)]) == 2
    assert "no checkpoint" in capsys.readouterr().err

    state = load_checkpoint(tiny_run / "checkpoint.pt")
    state["policy"] = small_policy().state_dict()  # another network's weights
    save_checkpoint(tmp_path / "checkpoint.pt", state)
    assert train_ppo(["--resume", str(tmp_path)]) == 2
    assert "does not fit this network" in capsys.readouterr().err


@pytest.mark.parametrize("saved", ["final.zip", "final.pt"])
def test_init_starts_from_a_saved_policy(tiny_run: Path, tmp_path: Path, saved: str) -> None:
    opts, given = train.parse_options([*TINY, "--init", str(tiny_run / saved),
                                       "--run-dir", str(tmp_path)])
    run, _ = start(opts, given)
    saved = MaskablePPO.load(tiny_run / "final.zip", device="cpu").policy.state_dict()
    for key, value in run.model.policy.state_dict().items():
        assert torch.equal(value, saved[key]), key


def test_init_from_another_network_or_no_file_is_refused(tiny_run: Path, tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]
                                                         ) -> None:
    wider = [*TINY, "--hidden", "64", "--run-dir", str(tmp_path / "a")]
    assert train_ppo([*wider, "--init", str(tiny_run / "final.zip")]) == 2
    assert "holds another network than --net stencil --channels 8 --hidden 64" in (
        capsys.readouterr().err)
    assert train_ppo([*TINY, "--run-dir", str(tmp_path / "b"),
                       "--init", str(tmp_path / "none.zip")]) == 2
    assert "--init: no model file at" in capsys.readouterr().err


def test_a_run_refuses_a_folder_another_program_holds(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    from patchwork_env.files.claim import claim

    with claim(tmp_path / "run"):
        assert train_ppo([*TINY, "--run-dir", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err
    assert f"the folder {tmp_path / 'run'} is in use by another program" in err
    assert err.startswith("train.py: error:") and err.count("\n") == 1
    assert list(tmp_path.iterdir()) == []


def test_bad_flags_exit_with_status_2(capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (["--no-such-flag"], ["--n-envs", "0"], ["--net", "transformer"],
                 ["--total-steps", "many"], ["--teacher", "oracle"], ["--teacher", "human"]):
        with pytest.raises(SystemExit) as exc:
            train.parse_options(argv)
        assert exc.value.code == 2
        err = capsys.readouterr().err.strip()
        assert err.startswith("train.py: error:") and "\n" not in err


def test_demonstrations_record_legal_teacher_moves_and_final_rewards() -> None:
    demos = demonstrations("mcts:20", 300, seed=3, reward="win", score_scale=0.02,
                           n_games=8)
    assert len(demos) >= 300
    assert demos.masks[np.arange(len(demos)), demos.actions].all()
    assert set(np.unique(demos.returns).tolist()) == {-1.0, 1.0}


def test_imitation_learns_the_teacher_and_restores_the_step_size() -> None:
    demos = demonstrations("greedy", 400, seed=4, reward="score", score_scale=0.02,
                           n_games=8)
    policy = small_policy()
    rate = policy.optimizer.param_groups[0]["lr"]
    first = imitate(policy, demos, 1, 64, seed=0, learning_rate=3e-3)
    later = imitate(policy, demos, 5, 64, seed=0, learning_rate=3e-3)
    assert later["policy_loss"] < first["policy_loss"]
    assert policy.optimizer.param_groups[0]["lr"] == rate


def test_pool_samples_by_weight_and_seed() -> None:
    def pool(seed: int) -> OpponentPool:
        p = OpponentPool({"random": 0.2, "greedy": 0.3, "self": 0.5}, capacity=2, seed=seed)
        for k in range(3):  # the first snapshot is dropped: capacity 2
            p.add_snapshot(small_policy(), f"self-{k}")
        return p

    p = pool(7)
    assert p.names == ["random", "greedy", "self-1", "self-2"]
    np.testing.assert_allclose(p.probabilities(), [0.2, 0.3, 0.25, 0.25])
    draws = p.sample(40_000)
    np.testing.assert_allclose(np.bincount(draws, minlength=4) / len(draws),
                               [0.2, 0.3, 0.25, 0.25], atol=0.01)
    assert np.array_equal(pool(7).sample(100), pool(7).sample(100))
    assert not np.array_equal(pool(7).sample(100), pool(8).sample(100))

    empty = OpponentPool({"random": 0.0, "greedy": 0.0, "self": 1.0}, 2, 0)
    np.testing.assert_allclose(empty.probabilities(), [0.5, 0.5])


def test_exported_policy_files_play_as_the_zips_do(tiny_run: Path) -> None:
    batch = GameBatch.new(16, seed=9)
    for name in ("best", "final"):
        zipped = PolicyAgent(load_policy(tiny_run / f"{name}.zip"))
        assert np.array_equal(zipped.act(batch, np.arange(16)),
                              make(f"ppo:{tiny_run / name}.pt").act(batch, np.arange(16)))


def test_pool_snapshots_play_through_the_policy_agent_code() -> None:
    pool = OpponentPool({"random": 0.0, "greedy": 0.0, "self": 1.0}, capacity=2, seed=0)
    pool.add_snapshot(small_policy(), "self-0")
    opponent = PoolOpponent(pool, 6)
    opponent.members = [pool.snapshots[0]] * 6
    batch, rows = GameBatch.new(6, seed=3), np.arange(6)
    played = opponent.act(batch, rows, np.random.default_rng(11))
    obs = observe(batch.state, batch.rules, batch.to_move)
    expected = policy_actions(pool.snapshots[0].policy, obs, batch.legal_mask(),
                              deterministic=False, rng=np.random.default_rng(11))
    assert np.array_equal(played, expected)


def test_shipped_model_is_package_data_and_plays_the_moves_of_the_old_zip() -> None:
    assert Path(str(resources.files("patchwork_env.models") / "ppo.pt")) == DEFAULT_MODEL
    assert DEFAULT_MODEL.is_file()
    agent = make("ppo")
    assert isinstance(agent, PolicyAgent) and agent.spec == "ppo"
    assert [agent.act_game(game) for game in shipped_model_positions()] == SHIPPED_MODEL_MOVES


def shipped_model_positions() -> list[Game]:
    """40 games, each a seeded number of random moves in."""
    rng = np.random.default_rng(2024)
    games = []
    for seed in range(40):
        game = Game.new(seed=seed)
        for _ in range(int(rng.integers(0, 40))):
            if game.is_over:
                break
            game.step(int(rng.choice(game.legal_actions())))
        games.append(game)
    return games


def test_shipped_model_beats_random() -> None:
    records = play_match(make("ppo"), RandomAgent(0), range(20))
    assert sum(r.a_won for r in records) >= 36  # of 40; its measured rate is on the model card
