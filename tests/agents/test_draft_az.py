"""The search-guided agents of Patchwork Draft (``az:PATH[:SIMS]`` and ``az-policy:PATH``
with ``game="draft"``): a draft network, trained here by the trainer on tiny settings,
played with the Gumbel search on redealt copies of the games or without search."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

import evaluate
from patchwork_env import agents
from patchwork_env.agents.az.agent import AZAgent, AZPolicyAgent
from patchwork_env.agents.az.net import AZNet, save_az_net
from patchwork_env.engine.draft_batch import DraftBatch
from patchwork_env.training.az.options import AZOptions
from patchwork_env.training.az.trainer import NET_FILE, run_az
from patchwork_env.training.metrics import read_metrics

DECK = list(range(33))
"""A deck in patch-id order: face up 0, 1, 2, then the deck from the top."""


def tiny(folder: Path, **changes) -> AZOptions:
    """A draft run small enough for a test."""
    opts = AZOptions(game="draft", teacher="", eval_every=0, iterations=1,
                     games_per_iteration=4, parallel_games=4, simulations=4,
                     max_considered=4, top_k=8, hidden=16, layers=1, batch_size=16,
                     playouts=2, buffer_size=2000, workers=1, run_dir=str(folder / "run"))
    return dataclasses.replace(opts, **changes)


@pytest.fixture(scope="module")
def draft_net(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A draft network trained for one tiny iteration by ``train.py --game draft``'s
    trainer."""
    opts = tiny(tmp_path_factory.mktemp("draft-az"))
    run_az(opts, log=None)
    return opts.folder() / NET_FILE


def midgame(n: int, seed: int, plies: int = 6) -> DraftBatch:
    """``n`` draft games after ``plies`` random moves (the unfinished ones)."""
    batch = DraftBatch.new(n, seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(plies):
        live = ~batch.done
        actions = np.where(live, batch.random_actions(rng), -1)
        batch.step(actions, check=False)
    return batch[np.flatnonzero(~batch.done)]


@pytest.mark.parametrize("spec", ["az:{}:6", "az:{}:1", "az:{}", "az-policy:{}"])
def test_draft_az_agents_play_legal_moves(draft_net: Path, spec: str) -> None:
    batch = midgame(6, seed=2)
    rows = np.arange(len(batch))
    agent = agents.make(spec.format(draft_net), seed=0, game="draft")
    actions = agent.act(batch, rows)
    assert batch.legal_mask()[rows, actions].all()


def test_the_draft_az_agents_are_the_search_and_the_policy(draft_net: Path) -> None:
    searching = agents.make(f"az:{draft_net}:5", game="draft")
    assert isinstance(searching, AZAgent) and searching.evaluations == 5
    assert isinstance(agents.make(f"az-policy:{draft_net}", game="draft"), AZPolicyAgent)


def test_a_draft_az_agent_repeats_its_moves_from_a_seed(draft_net: Path) -> None:
    batch = midgame(5, seed=4)
    rows = np.arange(len(batch))
    first, again = (agents.make(f"az:{draft_net}:8", seed=3, game="draft").act(batch, rows)
                    for _ in range(2))
    np.testing.assert_array_equal(first, again)


def test_a_draft_az_agent_never_reads_the_hidden_order_of_the_deck(draft_net: Path) -> None:
    for seed in range(4):
        shuffled = DECK[:3] + list(np.random.default_rng(seed).permutation(DECK[3:]))
        one = DraftBatch.from_setups([DECK], [seed % 2])
        other = DraftBatch.from_setups([shuffled], [seed % 2])
        moves = [agents.make(f"az:{draft_net}:16", seed=seed, game="draft").act(
            g, np.zeros(1, np.int64)) for g in (one, other)]
        np.testing.assert_array_equal(moves[0], moves[1])


def test_a_draft_az_search_leaves_the_games_untouched(draft_net: Path) -> None:
    batch = midgame(3, seed=6)
    before = batch.state.copy()
    agents.make(f"az:{draft_net}:8", seed=0, game="draft").act(batch, np.arange(len(batch)))
    assert all(np.array_equal(before[f], batch.state[f]) for f in before.dtype.names)


@pytest.mark.parametrize(("spec", "message"), [
    ("az", "no az network is shipped for the draft game: pass az:PATH"),
    ("az:64", "no az network is shipped for the draft game: pass az:PATH"),
    ("az-policy", "no az network is shipped for the draft game: pass az-policy:PATH"),
    ("az:missing.pt:8", "no model file"),
    ("az-playouts:x.pt", "the draft's search has no leaf playouts"),
])
def test_draft_az_specs_without_a_usable_network_are_refused(spec: str, message: str) -> None:
    with pytest.raises(agents.AgentSpecError, match=message) as caught:
        agents.make(spec, game="draft")
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize("spec", ["az:{}:4", "az-policy:{}"])
def test_a_patchwork_network_is_refused_for_the_draft(tmp_path: Path, spec: str) -> None:
    path = save_az_net(AZNet(hidden=16, layers=1), tmp_path / "patchwork.pt")
    with pytest.raises(agents.AgentSpecError, match="trained on the patchwork game") as caught:
        agents.make(spec.format(path), game="draft")
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize("spec", ["az:{}:4", "az-policy:{}"])
def test_a_draft_network_is_refused_for_patchwork(draft_net: Path, spec: str) -> None:
    with pytest.raises(agents.AgentSpecError, match="trained on the draft game") as caught:
        agents.make(spec.format(draft_net))
    assert "\n" not in str(caught.value)


def test_a_draft_network_cannot_play_patchwork_games(draft_net: Path) -> None:
    from patchwork_env import GameBatch

    agent = agents.make(f"az-policy:{draft_net}", game="draft")
    with pytest.raises(ValueError, match="network of the draft game"):
        agent.act(GameBatch.new(1, seed=0), np.zeros(1, np.int64))


def test_evaluate_plays_a_draft_network_against_greedy(draft_net: Path, tmp_path: Path
                                                       ) -> None:
    spec = f"az:{draft_net}:4"
    assert evaluate.main(["--game", "draft", spec, "greedy", "--games", "4", "--seed", "1",
                          "--jobs", "1", "--out", str(tmp_path / "out")]) == 0
    doc = json.loads((tmp_path / "out" / "results.json").read_text())
    assert [(p["a"], p["b"], p["games"]) for p in doc["pairings"]] == [(spec, "greedy", 4)]


def test_a_draft_run_evaluates_its_network_against_the_drafts_greedy(tmp_path: Path) -> None:
    opts = tiny(tmp_path, eval_every=1, eval_games=2, eval_evaluations=4)
    row = run_az(opts, log=None)
    for key in ("az_vs_greedy", "policy_vs_greedy"):
        assert 0.0 <= row[key] <= 1.0
    recorded = read_metrics(opts.folder() / "metrics.csv")[-1]
    assert float(recorded["az_vs_greedy"]) == pytest.approx(row["az_vs_greedy"])
