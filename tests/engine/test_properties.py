"""Properties that hold over thousands of random games played by the batch engine."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from patchwork_env import ADVANCE, LEATHER_BASE, Game, GameBatch
from patchwork_env.data.actions import SLOT_STRIDE
from patchwork_env.data.patches import PATCHES
from patchwork_env.data.rules import PRESETS
from patchwork_env.data.tables import words_to_cells
from patchwork_env.engine.batch import random_setups, sample_legal
from patchwork_env.engine.compiling import PARALLEL_MIN_BATCH

N_GAMES = 2000
END = 53
MAX_PLIES = 2 * END + len(PRESETS["default"].leather_positions)
"""Every move but a leather placement moves a token at least one space."""


def income_crossed(old: int, new: int) -> int:
    return sum(old < x <= new for x in PRESETS["default"].income_positions)


def covered(words: np.ndarray) -> set[int]:
    return set(words_to_cells(int(words[0]), int(words[1])))


def check_move(before: np.void, action: int, after: np.void) -> None:
    """Everything a single move may and may not change."""
    p = int(before["to_move"])
    o = 1 - p
    old_cells = [covered(before["quilt"][q]) for q in range(2)]
    new_cells = [covered(after["quilt"][q]) for q in range(2)]
    assert new_cells[o] == old_cells[o], "the opponent's quilt changed"
    assert old_cells[p] <= new_cells[p], "a quilt lost cells"
    gained = new_cells[p] - old_cells[p]
    patch_ids = after["cell_patches"][p]
    assert set(np.flatnonzero(patch_ids >= 0).tolist()) == new_cells[p]
    assert after["buttons"][o] == before["buttons"][o]
    assert after["position"][o] == before["position"][o]
    assert after["buttons"][p] >= 0
    assert 0 <= after["position"][p] <= END

    old_pos, new_pos = int(before["position"][p]), int(after["position"][p])
    circle = before["circle"][: before["circle_len"]].tolist()
    new_circle = after["circle"][: after["circle_len"]].tolist()
    if action >= LEATHER_BASE:
        assert gained == {action - LEATHER_BASE}
        assert new_pos == old_pos and new_circle == circle
        assert after["buttons"][p] == before["buttons"][p]
        return
    if action == ADVANCE:
        assert not gained and new_circle == circle
        assert new_pos == min(int(before["position"][o]) + 1, END)
        earned = new_pos - old_pos + income_crossed(old_pos, new_pos) * int(before["income"][p])
        assert after["buttons"][p] == before["buttons"][p] + earned
        return
    slot = action // SLOT_STRIDE
    patch = PATCHES[circle[slot]]
    assert len(gained) == patch.size, "a placement overlapped the quilt"
    assert set(patch_ids[list(gained)].tolist()) == {patch.id}
    assert new_circle == circle[slot + 1 :] + circle[:slot], "the circle lost the wrong patch"
    assert new_pos == min(old_pos + patch.time, END)
    income = int(before["income"][p]) + patch.income
    assert after["income"][p] == income
    earned = income_crossed(old_pos, new_pos) * income - patch.cost
    assert after["buttons"][p] == before["buttons"][p] + earned


def test_random_games_keep_every_invariant() -> None:
    batch = GameBatch.new(N_GAMES, seed=2024)
    rng = np.random.default_rng(7)
    plies = 0
    while not batch.done.all():
        before = batch.state.copy()
        actions = batch.random_actions(rng)
        assert ((actions == -1) == batch.done).all()
        batch.step(actions)
        plies += 1
        assert plies <= MAX_PLIES, "a game outlasted the theoretical bound"
        for row in np.flatnonzero(actions >= 0):
            check_move(before[row], int(actions[row]), batch.state[row])
    assert (batch.position == END).all()
    winners = batch.winners()
    assert set(winners.tolist()) <= {0, 1}
    scores = batch.scores()
    ties = scores[:, 0] == scores[:, 1]
    expected = np.where(ties, batch.state["first_to_finish"], scores[:, 1] > scores[:, 0])
    assert (winners == expected).all()


def test_random_actions_are_always_legal_and_cover_the_legal_set() -> None:
    batch = GameBatch.new(64, seed=5)
    rng = np.random.default_rng(1)
    seen_kinds = set()
    while not batch.done.all():
        mask = batch.legal_mask()
        actions = batch.random_actions(rng)
        live = actions >= 0
        assert mask[np.flatnonzero(live), actions[live]].all()
        assert (mask.sum(axis=1)[~live] == 0).all()
        seen_kinds |= {int(a >= LEATHER_BASE) + 2 * int(a == ADVANCE) for a in actions[live]}
        batch.step(actions)
    assert seen_kinds == {0, 1, 2}  # buys, leather placements and advances all happen


def test_random_actions_are_uniform_over_the_legal_set() -> None:
    game = Game.new(seed=11)
    batch = GameBatch(np.repeat(game.batch.state, 20000), game.rules)
    actions = batch.random_actions(np.random.default_rng(3))
    legal = game.legal_actions()
    counts = np.array([(actions == a).sum() for a in legal])
    assert counts.sum() == len(actions)
    expected = len(actions) / len(legal)
    chi2 = ((counts - expected) ** 2 / expected).sum()
    assert chi2 < len(legal) + 5 * np.sqrt(2 * len(legal)), f"chi2={chi2:.0f} for {len(legal)}"


def test_a_batch_plays_the_same_games_as_single_games() -> None:
    seeds = list(range(100, 160))
    batch = GameBatch.from_seeds(seeds)
    games = [Game.new(seed=s) for s in seeds]
    rng = np.random.default_rng(9)
    while not batch.done.all():
        actions = batch.random_actions(rng)
        batch.step(actions)
        for game, action in zip(games, actions, strict=True):
            if action >= 0:
                game.step(int(action))
    for row, game in enumerate(games):
        assert Game.from_batch(batch, row) == game
        assert game.scores() == tuple(batch.scores()[row])
        assert game.winner == batch.winners()[row]


def test_playout_finishes_every_game_and_matches_its_own_seed() -> None:
    a = GameBatch.new(300, seed=1)
    b = a.copy()
    a.playout(42)
    b.playout(42)
    assert a.done.all() and (a.state == b.state).all()


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), plies=st.integers(0, 120))
def test_state_dict_round_trips(seed: int, plies: int) -> None:
    game = Game.new(seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(plies):
        if game.is_over:
            break
        game.step(int(rng.choice(game.legal_actions())))
    loaded = Game.from_dict(game.state_dict())
    assert loaded == game
    assert loaded.legal_actions().tolist() == game.legal_actions().tolist()
    assert loaded.scores() == game.scores()


def test_the_legal_mask_holds_exactly_the_legal_actions() -> None:
    batch = GameBatch.new(40, seed=8)
    rng = np.random.default_rng(2)
    while not batch.done.all():
        mask = batch.legal_mask()
        for row in range(len(batch)):
            listed = Game.from_batch(batch, row).legal_actions()
            assert np.flatnonzero(mask[row]).tolist() == listed.tolist()
        batch.step(batch.random_actions(rng))


def test_the_multithreaded_legal_mask_holds_exactly_the_legal_actions() -> None:
    batch = GameBatch.new(2 * PARALLEL_MIN_BATCH, seed=9)
    rng = np.random.default_rng(3)
    for _ in range(30):
        mask = batch.legal_mask()
        for row in range(0, len(batch), 7):
            listed = Game.from_batch(batch, row).legal_actions()
            assert np.flatnonzero(mask[row]).tolist() == listed.tolist()
        batch.step(batch.random_actions(rng))
        batch.reset_done(rng)


def test_reset_games_start_as_the_drawn_setups() -> None:
    batch = GameBatch.new(300, seed=10)
    circles, first = random_setups(np.random.default_rng(1), 300)
    expected = GameBatch.from_setups(circles, first)
    np.testing.assert_array_equal(batch.state, GameBatch.new(300, seed=10).state)
    batch.reset(rng=np.random.default_rng(1))
    np.testing.assert_array_equal(batch.state, expected.state)


def test_reset_done_restarts_exactly_the_finished_games_as_reset_would() -> None:
    batch = GameBatch.new(40, seed=11)
    rng = np.random.default_rng(6)
    for _ in range(43):
        batch.step(batch.random_actions(rng))
    finished = np.flatnonzero(batch.done)
    assert 0 < len(finished) < len(batch)
    expected = batch.copy()
    expected.reset(finished, np.random.default_rng(7))
    assert batch.reset_done(np.random.default_rng(7)).tolist() == finished.tolist()
    np.testing.assert_array_equal(batch.state, expected.state)


@pytest.mark.parametrize("density", [0.0005, 0.01, 0.3, 1.0])
@pytest.mark.parametrize("rows", [5, 2 * PARALLEL_MIN_BATCH])
def test_draws_from_random_masks_land_on_set_entries(density: float, rows: int) -> None:
    mask = np.random.default_rng(4).random((rows, 2026)) < density
    actions = sample_legal(mask, 7)
    empty = ~mask.any(axis=1)
    assert (actions[empty] == -1).all()
    assert mask[~empty, actions[~empty]].all()


def test_random_setups_are_valid_and_vary() -> None:
    circles, first = random_setups(np.random.default_rng(5), 3300)
    assert (np.sort(circles, axis=1) == np.arange(33)).all()
    assert (circles[:, -1] == 0).all()
    # each of the 32 other patches leads the circle about equally often (chi2, 31 dof)
    counts = np.bincount(circles[:, 0], minlength=33)[1:]
    assert ((counts - 3300 / 32) ** 2 / (3300 / 32)).sum() < 70
    assert 1500 < first.sum() < 1800


def test_sampling_from_a_mask_is_uniform_over_its_set_entries() -> None:
    mask = np.zeros((30000, 2026), np.bool_)
    chosen = [0, 31, 32, 700, 1944, 2025]
    mask[:, chosen] = True
    mask[-1] = False
    actions = sample_legal(mask, np.random.default_rng(0))
    assert actions[-1] == -1
    counts = np.array([(actions[:-1] == a).sum() for a in chosen])
    assert counts.sum() == len(actions) - 1
    expected = (len(actions) - 1) / len(chosen)
    assert ((counts - expected) ** 2 / expected).sum() < 25  # chi2, 5 dof


def test_sampling_refuses_a_mask_of_the_wrong_shape() -> None:
    with pytest.raises(ValueError, match=r"shape \(N, 2026\)"):
        sample_legal(np.ones((4, 100), bool))
