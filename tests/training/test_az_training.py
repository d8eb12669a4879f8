"""The search-guided trainer's parts: the shaped network's placement head, playout value
targets, the teacher's warm start, the evaluations during training and the worker pool."""

from __future__ import annotations

import csv

import numpy as np
import pytest
import torch

from patchwork_env import Game, GameBatch
from patchwork_env.agents.az.config import SearchConfig
from patchwork_env.agents.az.net import AZNet, load_az_net
from patchwork_env.agents.stencils import (
    patch_keys,
    placement_sums,
    placement_tables,
    slot_patches,
)
from patchwork_env.data.actions import ADVANCE, N_BUY_ACTIONS, SLOT_STRIDE
from patchwork_env.data.rules import get_rules
from patchwork_env.training.az import AZRunError, run_az
from patchwork_env.training.az.selfplay import SelfPlayWorker
from patchwork_env.training.az.selfplay.processes import WorkerPool, merge, shares
from patchwork_env.training.az.value_targets import (
    bootstrapped_targets,
    mixed_targets,
    playout_values,
)
from patchwork_env.training.az.warm_start import teacher_samples
from patchwork_env.training.checkpoint import CheckpointError, load_checkpoint, save_checkpoint
from patchwork_env.views.observation import observe
from tests.agents.test_az import tiny_options as tiny
from tests.positions import EMPTY, position

RULES = get_rules("default")
L_CORNER = "\n".join(["XX.......", "X........"] + ["........."] * 7)
"""Three cells in the top-left corner."""


def midgame(seed: int, plies: int = 10) -> Game:
    game = Game.new(seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(plies):
        game.step(int(rng.choice(game.legal_actions())))
    return game


def test_slot_patches_reads_the_patch_in_each_slot() -> None:
    for seed in range(5):
        game = midgame(seed)
        s = game.batch.state[0]
        obs = torch.from_numpy(observe(game.batch.state, RULES))
        found = slot_patches(obs, patch_keys())[0].tolist()
        expected = [int(s["circle"][k]) if k < s["circle_len"] else -1 for k in range(3)]
        assert found == expected


def test_placement_sums_add_the_maps_over_covered_and_touching_cells() -> None:
    game = position(quilts=(L_CORNER, EMPTY), buttons=(20, 20))
    obs = torch.from_numpy(observe(game.batch.state, RULES))
    rng = np.random.default_rng(0)
    cover = torch.from_numpy(rng.normal(size=(1, 3, 81)))
    touch = torch.from_numpy(rng.normal(size=(1, 3, 81)))
    table = torch.from_numpy(placement_tables()).double()
    sums = placement_sums(cover, touch, slot_patches(obs, patch_keys()), table)[0]
    buys = [a for a in game.legal_actions().tolist() if a < N_BUY_ACTIONS]
    assert buys
    for action in buys:
        slot, code = divmod(action, SLOT_STRIDE)
        covered = set(game.action_cells(action))
        beside = {n for c in covered for n in _neighbours(c)} - covered
        expected = (sum(float(cover[0, slot, c]) for c in covered)
                    + sum(float(touch[0, slot, c]) for c in beside))
        assert float(sums[slot, code]) == pytest.approx(expected)


def _neighbours(cell: int) -> list[int]:
    r, c = divmod(cell, 9)
    return [nr * 9 + nc for nr, nc in ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1))
            if 0 <= nr < 9 and 0 <= nc < 9]


def test_the_shaped_network_prefers_what_its_maps_reward() -> None:
    """With a cover map that pays for the corner's empty cells, the best buy fills them."""
    torch.manual_seed(0)
    net = AZNet(kind="shaped", hidden=16, layers=1).eval()
    head = net.policy_head
    with torch.no_grad():
        for layer in (head.maps, head.slot_weights, head.slot_bias, head.advance, head.leather):
            layer.weight.zero_()
            layer.bias.zero_()
        # cover weight -1 on the own-quilt map, +1 on the board map: pays for empty cells
        n_maps = head.n_maps
        bias = head.slot_weights.bias.view(2, 3, n_maps)
        bias[0, :, n_maps - 2] = -1.0
        bias[0, :, n_maps - 1] = 1.0
    game = position(quilts=(L_CORNER, EMPTY), buttons=(20, 20))
    obs = torch.from_numpy(observe(game.batch.state, RULES))
    mask = torch.from_numpy(game.batch.legal_mask())
    logits, _ = net(obs, mask)
    best = int(logits.argmax())
    assert best != ADVANCE
    assert not set(game.action_cells(best)) & {0, 1, 9}


def test_playout_values_of_a_finished_game_are_its_result() -> None:
    batch = GameBatch.new(4, seed=5)
    batch.playout(np.random.default_rng(0))
    values = playout_values(batch.state, RULES, playouts=3, seed=0)
    winners = batch.winners()
    to_move = batch.state["to_move"]
    np.testing.assert_array_equal(values, np.where(winners == to_move, 1.0, -1.0))


def test_playout_values_are_reproducible_and_in_range() -> None:
    states = GameBatch.new(16, seed=2).state
    a = playout_values(states, RULES, playouts=8, seed=1, score_weight=0.5)
    b = playout_values(states, RULES, playouts=8, seed=1, score_weight=0.5)
    np.testing.assert_array_equal(a, b)
    assert a.dtype == np.float32 and np.all(np.abs(a) <= 1.0)
    assert len(np.unique(a)) > 1


def test_mixed_targets_weigh_the_estimate() -> None:
    out = mixed_targets(np.array([1.0, -1.0]), np.array([0.0, 0.5]), 0.25)
    np.testing.assert_allclose(out, [0.75, -0.625])
    with pytest.raises(ValueError, match="playout weight"):
        mixed_targets(np.zeros(1), np.zeros(1), 1.5)


def test_bootstrapped_targets_mix_in_the_search_value_of_searched_positions_only() -> None:
    outcomes = np.array([1.0, -1.0, 1.0], np.float32)
    searched = np.array([0.2, np.nan, -0.6], np.float32)  # the second move was forced
    np.testing.assert_allclose(bootstrapped_targets(outcomes, searched, 0.5), [0.6, -1.0, 0.2])
    np.testing.assert_array_equal(outcomes, [1.0, -1.0, 1.0])  # not changed in place


def test_a_run_bootstraps_its_value_targets_from_the_search(tmp_path) -> None:
    for weight, folder in ((0.0, "outcomes"), (1.0, "bootstrapped")):
        run_az(tiny(tmp_path / folder, score_weight=0.0, root_value_weight=weight), log=None)
    outcomes, bootstrapped = (load_checkpoint(tmp_path / f / "checkpoint.pt")["buffer"]["values"]
                              for f in ("outcomes", "bootstrapped"))
    assert set(np.unique(outcomes.numpy())) <= {-1.0, 1.0}
    assert not set(np.unique(bootstrapped.numpy())) <= {-1.0, 1.0}


def test_teacher_samples_hold_the_teachers_legal_moves() -> None:
    samples = teacher_samples("greedy", 200, seed=0, rules=RULES, score_weight=0.0,
                              score_scale=20.0, playout_weight=0.0, playouts=1)
    assert len(samples) >= 200
    masks = GameBatch(samples.states.copy(), RULES).legal_mask()
    assert masks[np.arange(len(samples)), samples.target_actions].all()
    np.testing.assert_array_equal(np.diff(samples.target_offsets), 1)
    assert set(np.unique(samples.values)) <= {-1.0, 1.0}


def test_a_run_with_a_teacher_playouts_and_evaluations_records_them(tmp_path) -> None:
    opts = tiny(tmp_path / "run", iterations=2, net="shaped", teacher="greedy",
                teacher_positions=100, teacher_epochs=1.0, playout_weight=1.0, playouts=2,
                augment=True, eval_every=1, eval_games=2, eval_opponents="random",
                eval_evaluations=2)
    row = run_az(opts, log=None)
    assert 0.0 <= row["az_vs_random"] <= 1.0 and 0.0 <= row["policy_vs_random"] <= 1.0
    with open(tmp_path / "run" / "metrics.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert [r["iteration"] for r in rows] == ["1", "2"]
    assert all(r["az_vs_random"] != "" for r in rows)
    assert float(rows[1]["train_s"]) > float(rows[0]["train_s"]) > 0
    assert (tmp_path / "run" / "learning_curve.png").stat().st_size > 0
    assert any((tmp_path / "run" / "tb").iterdir())
    assert load_az_net(tmp_path / "run" / "net.pt").kind == "shaped"


def test_a_resumed_run_does_not_imitate_again(tmp_path) -> None:
    opts = tiny(tmp_path / "run", teacher="greedy", teacher_positions=100, teacher_epochs=1.0)
    run_az(opts, log=None)
    steps = load_checkpoint(tmp_path / "run" / "checkpoint.pt")
    opts.iterations, opts.resume = 2, True
    run_az(opts, log=None)
    after = load_checkpoint(tmp_path / "run" / "checkpoint.pt")
    per_iteration = after["learner"]["steps"] - steps["learner"]["steps"]
    assert 0 < per_iteration < steps["learner"]["steps"]


def test_an_option_newer_than_the_checkpoint_resumes_only_at_its_default(tmp_path) -> None:
    run_az(tiny(tmp_path / "run"), log=None)
    path = tmp_path / "run" / "checkpoint.pt"
    older = load_checkpoint(path)
    del older["options"]["root_value_weight"]  # as written before the option existed
    save_checkpoint(path, older)
    with pytest.raises(CheckpointError, match="root_value_weight"):
        run_az(tiny(tmp_path / "run", iterations=2, resume=True, root_value_weight=0.5),
               log=None)
    assert run_az(tiny(tmp_path / "run", iterations=2, resume=True), log=None)["iteration"] == 2


def test_a_resume_with_other_search_settings_names_the_runs_own(tmp_path) -> None:
    run_az(tiny(tmp_path / "run"), log=None)
    with pytest.raises(CheckpointError, match="the run's max_considered 4, not 16, top_k 8, "
                                              "not 32"):
        run_az(tiny(tmp_path / "run", iterations=2, resume=True, max_considered=16, top_k=32),
               log=None)


def test_a_run_started_from_a_network_resumes_without_its_file(tmp_path) -> None:
    run_az(tiny(tmp_path / "first"), log=None)
    start = tmp_path / "start.pt"
    (tmp_path / "first" / "net.pt").rename(start)
    run_az(tiny(tmp_path / "run", init=str(start)), log=None)
    start.unlink()
    row = run_az(tiny(tmp_path / "run", iterations=2, resume=True, init="elsewhere.pt"),
                 log=None)
    assert row["iteration"] == 2
    assert load_checkpoint(tmp_path / "run" / "checkpoint.pt")["options"]["init"] == str(start)


def test_the_learning_rate_drops_after_each_of_its_iterations() -> None:
    opts = tiny("unused", learning_rate=1e-3, lr_drops="2,4", lr_drop_factor=0.5)
    rates = [opts.learning_rate_at(i) for i in range(6)]
    assert rates == pytest.approx([1e-3, 1e-3, 5e-4, 5e-4, 2.5e-4, 2.5e-4])


def test_a_run_records_and_steps_at_the_scheduled_learning_rate(tmp_path) -> None:
    run_az(tiny(tmp_path / "run", iterations=2, lr_drops="1"), log=None)
    with open(tmp_path / "run" / "metrics.csv") as f:
        rates = [float(r["learning_rate"]) for r in csv.DictReader(f)]
    assert rates == pytest.approx([1e-3, 1e-4])
    saved = load_checkpoint(tmp_path / "run" / "checkpoint.pt")
    assert saved["learner"]["optimizer"]["param_groups"][0]["lr"] == pytest.approx(1e-4)


def test_a_resumed_run_may_drop_its_learning_rate_only_after_what_it_trained(tmp_path) -> None:
    run_az(tiny(tmp_path / "run", iterations=2), log=None)
    with pytest.raises(CheckpointError, match="lr_drops"):
        run_az(tiny(tmp_path / "run", iterations=3, resume=True, lr_drops="1"), log=None)
    row = run_az(tiny(tmp_path / "run", iterations=3, resume=True, lr_drops="2"), log=None)
    assert row["learning_rate"] == pytest.approx(1e-4)


@pytest.mark.parametrize(("changes", "message"), [
    ({"teacher": "greedy", "init": "x.pt"}, "not both"),
    ({"teacher": "nobody"}, "nobody"),
    ({"eval_opponents": "greedy,nobody", "eval_every": 1}, "nobody"),
    ({"eval_games": 3, "eval_every": 1}, "--eval-games"),
    ({"playout_weight": 1.5}, "--playout-weight"),
    ({"root_value_weight": -0.5}, "--root-value-weight"),
    ({"workers": 0}, "--workers"),
    ({"lr_drops": "10,x"}, "--lr-drops"),
    ({"lr_drops": "20,10"}, "--lr-drops"),
    ({"lr_drop_factor": 0.0}, "--lr-drop-factor"),
])
def test_bad_options_are_refused_by_name(tmp_path, changes, message) -> None:
    with pytest.raises(AZRunError, match=message):
        run_az(tiny(tmp_path / "run", **changes), log=None)
    assert not (tmp_path / "run").exists()


def test_shares_split_the_games_evenly() -> None:
    assert shares(10, 3) == [4, 3, 3]
    assert shares(1, 4) == [1]


def test_the_worker_pool_merges_reproducible_batches() -> None:
    net = AZNet(hidden=16, layers=1)
    config = SearchConfig(simulations=2, max_considered=2, top_k=4)
    pool = WorkerPool(net.config(), config, n_workers=2, parallel_games=2)
    try:
        a = pool.generate(net.state_dict(), 3, seed=7)
        b = pool.generate(net.state_dict(), 3, seed=7)
    finally:
        pool.close()
    assert a.games == 3 and len(a) == len(a.game_ids) == len(a.values)
    assert a.target_offsets[-1] == len(a.target_actions)
    assert set(a.game_ids.tolist()) == {0, 1, 2}
    np.testing.assert_array_equal(a.target_actions, b.target_actions)
    np.testing.assert_array_equal(a.states, b.states)
    worker = SelfPlayWorker(net.config(), config, parallel_games=2)
    alone = merge([worker.generate(net.state_dict(), 2, seed=1),
                   worker.generate(net.state_dict(), 1, seed=2)])
    assert alone.games == 3 and set(alone.game_ids.tolist()) == {0, 1, 2}


def test_every_choice_keeps_the_best_action_of_each_choice_in_a_top_k() -> None:
    from patchwork_env.agents.az.topk import CHOICE_LIFT, lift_choice_bests, top_indices

    # ten placements from slot 0 score highest; then slot 1, slot 2, advance, leather
    actions = np.array([k for k in range(10)] + [SLOT_STRIDE + 3, SLOT_STRIDE + 5,
                        2 * SLOT_STRIDE + 7, ADVANCE, ADVANCE + 1 + 40], np.int64)
    values = np.array([9.0 - 0.1 * k for k in range(10)] + [1.0, 2.0, 0.5, -1.0, -2.0])
    original = values.copy()
    keep = np.zeros(5, np.int64)
    scratch, hist = np.zeros(64), np.zeros(64, np.int64)
    top_indices(values.copy(), len(values), 5, keep, scratch, hist)
    assert set(actions[keep].tolist()) == set(range(5))  # slot 0 crowds out the rest
    lift_choice_bests(values, actions, len(values), CHOICE_LIFT, hist)
    top_indices(values, len(values), 5, keep, scratch, hist)
    assert set(actions[keep].tolist()) == {0, SLOT_STRIDE + 5, 2 * SLOT_STRIDE + 7, ADVANCE,
                                           ADVANCE + 41}
    lift_choice_bests(values, actions, len(values), -CHOICE_LIFT, hist)
    np.testing.assert_allclose(values, original)


def test_the_shipped_network_loads_and_beats_random() -> None:
    from patchwork_env import agents
    from patchwork_env.agents.az.agent import DEFAULT_MODEL, AZAgent, AZPolicyAgent
    from patchwork_env.evaluation.arena import play_match
    from patchwork_env.evaluation.tournament import setup_seeds

    assert DEFAULT_MODEL.is_file(), "models/az.pt ships with the package"
    searched, raw = agents.make("az:8", seed=0), agents.make("az-policy", seed=0)
    assert isinstance(searched, AZAgent) and searched.evaluations == 8
    assert isinstance(raw, AZPolicyAgent)
    records = play_match(searched, agents.make("random", seed=0), setup_seeds(3, 8))
    assert sum(r.a_won for r in records) >= 7
