"""The search-guided trainer end to end: self-play samples and the replay buffer, a tiny
run that checkpoints and resumes, and ``train.py --algo az``."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from patchwork_env.agents.az.config import SearchConfig
from patchwork_env.agents.az.net import AZNet, load_az_net
from patchwork_env.training.az import AZRunError, run_az
from patchwork_env.training.az.buffer import ReplayBuffer
from patchwork_env.training.az.selfplay import SelfPlayWorker
from patchwork_env.training.checkpoint import CheckpointError
from tests import ROOT
from tests.agents.test_az import tiny_options


def tiny_net(seed: int = 0) -> AZNet:
    torch.manual_seed(seed)
    return AZNet(hidden=32, layers=1).eval()


def test_self_play_samples_and_the_buffer() -> None:
    net = tiny_net(3)
    worker = SelfPlayWorker(net.config(), SearchConfig(simulations=4), parallel_games=3)
    batch = worker.generate(net.state_dict(), n_games=4, seed=0)
    assert batch.games == 4 and len(batch) > 4 * 20
    np.testing.assert_array_equal(np.unique(batch.game_ids), np.arange(4))
    won = batch.winners[batch.game_ids] == batch.states["to_move"]
    np.testing.assert_array_equal(batch.values, np.where(won, 1.0, -1.0))
    sums = np.add.reduceat(batch.target_probs, batch.target_offsets[:-1])
    np.testing.assert_allclose(sums, 1, atol=1e-5)
    buffer = ReplayBuffer(capacity=len(batch) - 10)
    buffer.add(batch)
    assert len(buffer) == len(batch) - 10 and buffer.added == len(batch)
    mb = buffer.sample(32, np.random.default_rng(0))
    legal = mb.masks.gather(1, mb.target_index)
    assert bool(legal[mb.target_probs > 0].all())
    torch.testing.assert_close(mb.target_probs.sum(1), torch.ones(32))
    again = ReplayBuffer(1)
    again.load_state_dict(buffer.state_dict())
    mb2 = again.sample(32, np.random.default_rng(0))
    torch.testing.assert_close(mb.observations, mb2.observations)
    torch.testing.assert_close(mb.target_probs, mb2.target_probs)


def test_training_runs_checkpoints_resumes_and_refuses_a_corrupt_checkpoint(tmp_path) -> None:
    straight = tiny_options(tmp_path / "straight", iterations=2)
    run_az(straight, log=None)
    split = tiny_options(tmp_path / "split")
    run_az(split, log=None)
    assert (tmp_path / "split" / "checkpoint.pt").is_file()
    assert (tmp_path / "split" / "net.pt").is_file()
    with pytest.raises(AZRunError, match="holds another run"):
        run_az(split, log=None)
    split.iterations, split.resume = 2, True
    row = run_az(split, log=None)
    assert row["iteration"] == 2
    a = load_az_net(tmp_path / "straight" / "net.pt").state_dict()
    b = load_az_net(tmp_path / "split" / "net.pt").state_dict()
    for name in a:
        torch.testing.assert_close(a[name], b[name])
    changed = tiny_options(tmp_path / "split", iterations=3, resume=True, learning_rate=0.5)
    with pytest.raises(CheckpointError, match="learning_rate"):
        run_az(changed, log=None)
    ckpt = tmp_path / "split" / "checkpoint.pt"
    data = bytearray(ckpt.read_bytes())
    data[-100] ^= 0xFF
    ckpt.write_bytes(bytes(data))
    split.iterations = 3
    with pytest.raises(CheckpointError, match="corrupt"):
        run_az(split, log=None)


def test_train_py_runs_the_search_guided_trainer(tmp_path) -> None:
    import subprocess
    import sys

    script = ROOT / "train.py"
    run = tmp_path / "az"
    tiny = ["--algo", "az", "--iterations", "1", "--games-per-iteration", "2",
            "--parallel-games", "2", "--simulations", "2", "--max-considered", "2",
            "--batch-size", "8", "--hidden", "16", "--eval-every", "0", "--net", "mlp",
            "--teacher", "", "--run-dir", str(run)]
    done = subprocess.run([sys.executable, str(script), *tiny], capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert (run / "net.pt").is_file() and (run / "checkpoint.pt").is_file()
    again = subprocess.run([sys.executable, str(script), *tiny], capture_output=True,
                           text=True, timeout=600)
    assert again.returncode == 2 and len(again.stderr.strip().splitlines()) == 1
    bad = subprocess.run([sys.executable, str(script), "--algo", "alphago"],
                         capture_output=True, text=True, timeout=600)
    assert bad.returncode == 2 and "--algo" in bad.stderr
