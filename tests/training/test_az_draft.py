"""Search-guided training on Patchwork Draft (``train.py --algo az --game draft``): the same
trainer, self-play, search, buffer and learner as Patchwork's, with the game carried
through the options, the checkpoint and the network file."""

from __future__ import annotations

import dataclasses

import numba
import numpy as np
import pytest
import torch

from patchwork_env.agents.az.config import SearchConfig
from patchwork_env.agents.az.games import DRAFT, redeal_hidden
from patchwork_env.agents.az.net import AZNet, load_az_net, make_evaluator
from patchwork_env.agents.az.search import GumbelSearch
from patchwork_env.agents.model_file import ModelFileError
from patchwork_env.data.draft_rules import DraftRules
from patchwork_env.engine.draft_batch import DraftBatch
from patchwork_env.training.az.buffer import ReplayBuffer
from patchwork_env.training.az.options import AZOptions, AZRunError
from patchwork_env.training.az.selfplay import SelfPlayWorker
from patchwork_env.training.az.symmetry import SYMMETRIES, star_symmetries
from patchwork_env.training.az.trainer import NET_FILE, run_az
from patchwork_env.training.az.warm_start import teacher_samples
from patchwork_env.training.checkpoint import CheckpointError, load_checkpoint
from patchwork_env.training.metrics import read_metrics
from patchwork_env.training.run_folder import CHECKPOINT

DECK = list(range(33))
"""A deck in patch-id order: face up 0, 1, 2, then the deck from the top."""


def tiny(tmp_path, **changes) -> AZOptions:
    """A draft run small enough for a test."""
    opts = AZOptions(game="draft", teacher="", eval_every=0, iterations=2,
                     games_per_iteration=4, parallel_games=4, simulations=4,
                     max_considered=4, top_k=8, hidden=16, layers=1, batch_size=16,
                     playouts=2, buffer_size=2000, workers=1, run_dir=str(tmp_path / "run"))
    return dataclasses.replace(opts, **changes)


def weights(path) -> dict[str, torch.Tensor]:
    return load_az_net(path).state_dict()


def test_a_draft_run_trains_and_writes_a_draft_network(tmp_path):
    opts = tiny(tmp_path)
    row = run_az(opts, log=None)
    assert row["iteration"] == 2 and np.isfinite(row["policy_loss"])
    assert len(read_metrics(opts.folder() / "metrics.csv")) == 2
    net = load_az_net(opts.folder() / NET_FILE, game="draft")
    assert net.game == "draft" and net.n_actions == DRAFT.n_actions


def test_the_draft_greedy_teacher_gives_legal_samples():
    samples = teacher_samples("greedy", 100, 0, DRAFT.get_rules("default"), 0.5, 20.0, 1.0,
                              2, game=DRAFT)
    masks = DraftBatch(samples.states.copy()).legal_mask()
    assert len(samples) >= 100
    assert masks[np.arange(len(samples)), samples.target_actions].all()
    assert np.isfinite(samples.values).all() and (np.abs(samples.values) <= 1).all()


def test_a_draft_run_imitates_its_teacher_first(tmp_path):
    opts = tiny(tmp_path, iterations=1, teacher="greedy", teacher_positions=100,
                teacher_epochs=1.0)
    run_az(opts, log=None)
    assert load_checkpoint(opts.folder() / CHECKPOINT)["counters"]["warm_started"]


def test_a_resumed_draft_run_ends_as_one_never_stopped(tmp_path):
    straight = tiny(tmp_path / "a")
    run_az(straight, log=None)
    stopped = tiny(tmp_path / "b", iterations=1)
    run_az(stopped, log=None)
    run_az(dataclasses.replace(stopped, iterations=2, resume=True), log=None)
    a, b = weights(straight.folder() / NET_FILE), weights(stopped.folder() / NET_FILE)
    assert all(torch.equal(a[k], b[k]) for k in a)


def test_a_draft_checkpoint_refuses_to_resume_as_patchwork(tmp_path):
    opts = tiny(tmp_path, iterations=1)
    run_az(opts, log=None)
    again = dataclasses.replace(opts, game="patchwork", eval_every=5, resume=True,
                                iterations=2)
    with pytest.raises(CheckpointError, match="run of the draft game"):
        run_az(again, log=None)


def test_a_draft_network_file_refuses_to_load_for_patchwork(tmp_path):
    opts = tiny(tmp_path, iterations=1)
    run_az(opts, log=None)
    with pytest.raises(ModelFileError, match="trained on the draft game"):
        load_az_net(opts.folder() / NET_FILE, game="patchwork")
    patchwork = AZOptions(init=str(opts.folder() / NET_FILE), teacher="",
                          run_dir=str(tmp_path / "p"))
    with pytest.raises(AZRunError, match=r"--init: .*trained on the draft game"):
        run_az(patchwork, log=None)


@pytest.mark.parametrize("changes, flag", [
    ({"teacher": "az"}, "--teacher"), ({"leaf_playouts": 4}, "--leaf-playouts"),
    ({"score_head_weight": 0.1}, "--score-head-weight"),
    ({"net": "stencil"}, "--net"), ({"inference": "service"}, "--inference"),
    ({"rules": "no-bonus"}, "--rules"), ({"game": "chess"}, "--game")])
def test_options_the_draft_does_not_take_are_refused_in_one_line(tmp_path, changes, flag):
    with pytest.raises(AZRunError, match=flag) as caught:
        tiny(tmp_path, **changes).check()
    assert "\n" not in str(caught.value)


def first_targets(deck: list[int], monkeypatch) -> tuple[np.ndarray, np.ndarray]:
    """The policy targets of the first move of self-play games dealt ``deck``."""
    def dealt(cls, n, seed=None, rules="default"):
        return cls.from_setups([deck] * n, [0] * n, rules, seed=seed)

    monkeypatch.setattr(DraftBatch, "new", classmethod(dealt))
    torch.manual_seed(0)
    net = AZNet(DRAFT.observation_size(DRAFT.get_rules("default")), kind="shaped",
                hidden=16, layers=1, game="draft")
    worker = SelfPlayWorker(net.config(), SearchConfig(simulations=16, max_considered=8,
                                                        top_k=8), 2, game="draft")
    batch = worker.generate(net.state_dict(), 2, seed=3)
    end = batch.target_offsets[2]
    return batch.target_actions[:end], batch.target_probs[:end]


def test_self_play_never_reads_the_hidden_order_of_the_deck(monkeypatch):
    shuffled = DECK[:3] + list(np.random.default_rng(1).permutation(DECK[3:]))
    actions, probs = first_targets(DECK, monkeypatch)
    actions2, probs2 = first_targets(shuffled, monkeypatch)
    assert np.array_equal(actions, actions2) and np.array_equal(probs, probs2)


def test_a_redeal_depends_on_what_is_seen_and_the_seed_alone():
    one = DraftBatch.from_setups([DECK], [0])
    other = DraftBatch.from_setups([DECK[:3] + DECK[3:][::-1]], [0])
    dealt, dealt2 = (redeal_hidden(g.state, "default", 7) for g in (one, other))
    assert np.array_equal(dealt["deck"], dealt2["deck"])
    assert sorted(dealt["deck"][0][3:]) == DECK[3:]


def test_the_default_stars_keep_all_eight_symmetries():
    assert list(star_symmetries(DraftRules().star_squares)) == list(range(SYMMETRIES))


def test_custom_stars_keep_only_the_symmetries_that_map_them_onto_themselves():
    # b2 alone lies on the diagonal from a1: only the identity and the transpose keep it
    assert list(star_symmetries((10,))) == [0, 7]
    # b2 and h2 are mirror images left-right: the identity and the mirror keep them
    assert list(star_symmetries((10, 16))) == [0, 4]
    assert list(star_symmetries((10, 17))) == [0]


def test_the_buffer_augments_a_custom_star_draft_only_with_its_symmetries():
    rules = DraftRules(star_squares=(10,))
    buffer = ReplayBuffer(1000, rules, "draft")
    assert list(buffer.symmetries) == [0, 7]
    assert list(ReplayBuffer(1000, "default", "draft").symmetries) == list(range(SYMMETRIES))


def test_an_augmented_draft_sample_keeps_its_legal_targets(tmp_path):
    rules = DraftRules(star_squares=(10, 16))
    torch.manual_seed(0)
    net = AZNet(DRAFT.observation_size(rules), kind="mlp", hidden=8, layers=1, game="draft")
    worker = SelfPlayWorker(net.config(), SearchConfig(simulations=4, max_considered=4,
                                                        top_k=4), 4, rules=rules, game="draft")
    buffer = ReplayBuffer(1000, rules, "draft")
    buffer.add(worker.generate(None, 4, seed=0))
    batch = buffer.sample(64, np.random.default_rng(0), augment=True)
    rows = torch.arange(64)[:, None].expand_as(batch.target_index)
    held = batch.target_probs > 0
    assert bool(batch.masks[rows[held], batch.target_index[held]].all())


@pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2, reason="needs two numba threads")
def test_the_threaded_draft_search_matches_the_serial_one():
    games = DraftBatch.new(64, seed=5)
    games.step(games.random_actions(1))
    torch.manual_seed(0)
    net = AZNet(DRAFT.observation_size(games.rules), kind="shaped", hidden=16, layers=1,
                game="draft")
    results = []
    for parallel in (False, True):
        search = GumbelSearch(64, simulations=8, max_considered=4, top_k=8, game="draft",
                              parallel=parallel)
        results.append(search.run(games.state.copy(), "default", make_evaluator(net),
                                  np.random.default_rng(1)))
    assert np.array_equal(results[0].actions, results[1].actions)
    assert np.array_equal(results[0].target_probs, results[1].target_probs)
