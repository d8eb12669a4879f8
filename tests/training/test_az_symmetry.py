"""The quilt symmetries: a group of cell maps that carry positions, legal moves, the moves'
results and the scores over to the equivalent position; the buffer's augmented samples."""

from __future__ import annotations

import numpy as np
import pytest

from patchwork_env import GameBatch
from patchwork_env.data.rules import get_rules
from patchwork_env.engine.kernels import STATE_DTYPE
from patchwork_env.training.az.buffer import ReplayBuffer
from patchwork_env.training.az.selfplay import SelfPlayBatch
from patchwork_env.training.az.symmetry import (
    CELL_MAP,
    SYMMETRIES,
    augment,
    transform_actions,
    transform_states,
)
from patchwork_env.views.observation import observe

RULES = get_rules("default")


@pytest.fixture(scope="module")
def positions() -> np.ndarray:
    """Every few plies of 24 random games, start to end (pending leather patches and
    finished games included)."""
    batch = GameBatch.new(24, seed=5)
    rng = np.random.default_rng(5)
    seen = [batch.state.copy()]
    ply = 0
    while not batch.done.all():
        batch.step(batch.random_actions(rng), check=False)
        ply += 1
        if ply % 3 == 0 or (batch.field("pending_leather") > 0).any():
            seen.append(batch.state.copy())
    seen.append(batch.state.copy())
    return np.concatenate(seen)


def legal_pairs(states: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return np.nonzero(GameBatch(states, RULES).legal_mask())


def same_records(a: np.ndarray, b: np.ndarray) -> bool:
    return all(np.array_equal(a[name], b[name]) for name in STATE_DTYPE.names)


def test_the_positions_cover_leather_and_finished_games(positions) -> None:
    assert (positions["pending_leather"] > 0).sum() > 20
    assert (positions["to_move"] < 0).any() and len(positions) > 300


def test_the_cell_maps_are_distinct_permutations_forming_a_group() -> None:
    maps = {tuple(m) for m in CELL_MAP.tolist()}
    assert len(maps) == SYMMETRIES
    for m in CELL_MAP:
        assert sorted(m.tolist()) == list(range(81))
    for f in CELL_MAP:
        assert any((f[g] == np.arange(81)).all() for g in CELL_MAP)  # an inverse
        for g in CELL_MAP:
            assert tuple(f[g].tolist()) in maps  # closed under composition
    np.testing.assert_array_equal(CELL_MAP[0], np.arange(81))


def test_the_identity_changes_nothing(positions) -> None:
    assert same_records(transform_states(positions, 0), positions)
    rows, acts = legal_pairs(positions)
    np.testing.assert_array_equal(transform_actions(positions, acts, 0, rows), acts)


@pytest.mark.parametrize("g", range(SYMMETRIES))
def test_legal_actions_map_onto_the_legal_actions_of_the_transformed_position(
        positions, g) -> None:
    rows, acts = legal_pairs(positions)
    mapped = transform_actions(positions, acts, g, rows)
    assert (mapped >= 0).all()
    moved = GameBatch(transform_states(positions, g), RULES).legal_mask()
    hit = np.zeros_like(moved)
    hit[rows, mapped] = True
    np.testing.assert_array_equal(hit, moved)
    assert len(np.unique(rows * 4096 + mapped)) == len(acts)


@pytest.mark.parametrize("g", range(1, SYMMETRIES))
def test_playing_the_mapped_action_reaches_the_transformed_result(positions, g) -> None:
    live = positions[positions["to_move"] >= 0]
    before = GameBatch(live.copy(), RULES)
    acts = before.random_actions(np.random.default_rng(g))
    moved = GameBatch(transform_states(live, g), RULES)
    moved.step(transform_actions(live, acts, g))
    before.step(acts)
    assert same_records(transform_states(before.state, g), moved.state)


def test_scores_are_invariant(positions) -> None:
    scores = GameBatch(positions.copy(), RULES).scores()
    sym = np.arange(len(positions)) % SYMMETRIES
    np.testing.assert_array_equal(GameBatch(transform_states(positions, sym), RULES).scores(),
                                  scores)


def test_augment_moves_csr_targets_row_by_row(positions) -> None:
    states = positions[positions["to_move"] >= 0][:40]
    rows, acts = legal_pairs(states)
    offsets = np.searchsorted(rows, np.arange(len(states) + 1))
    sym = np.arange(len(states)) % SYMMETRIES
    new_states, new_acts = augment(states, offsets, acts.astype(np.int16), sym)
    assert new_acts.dtype == np.int16 and same_records(new_states, transform_states(states, sym))
    np.testing.assert_array_equal(new_acts, transform_actions(states, acts, sym, rows))


# ----- the replay buffer -----------------------------------------------------------------

def legal_targets(states: np.ndarray) -> SelfPlayBatch:
    """Samples of ``states`` whose targets cover every legal action, unevenly."""
    rows, acts = legal_pairs(states)
    offsets = np.searchsorted(rows, np.arange(len(states) + 1))
    weights = 1.0 + (acts % 7)
    probs = weights / np.repeat(np.add.reduceat(weights, offsets[:-1]), np.diff(offsets))
    n = len(states)
    return SelfPlayBatch(states.copy(), offsets, acts, probs.astype(np.float32),
                         np.where(np.arange(n) % 2, 1.0, -1.0).astype(np.float32),
                         np.full(n, np.nan, np.float32), np.zeros(n, np.int64),
                         np.zeros(1, np.int64), games=1)


@pytest.fixture(scope="module")
def buffer(positions) -> tuple[ReplayBuffer, SelfPlayBatch]:
    """A buffer of two chunks, and the same samples in one batch."""
    live = positions[positions["to_move"] >= 0]
    buf = ReplayBuffer(capacity=10_000)
    buf.add(legal_targets(live[: len(live) // 2]))
    buf.add(legal_targets(live[len(live) // 2:]))
    return buf, legal_targets(live)


def test_augmented_samples_have_legal_targets_summing_to_one(buffer) -> None:
    buf, _ = buffer
    mb = buf.sample(64, np.random.default_rng(1), augment=True)
    legal = mb.masks.gather(1, mb.target_index)
    assert bool(legal[mb.target_probs > 0].all())
    np.testing.assert_allclose(mb.target_probs.sum(1).numpy(), 1, atol=1e-5)
    np.testing.assert_array_equal(mb.masks.sum(1).numpy(), (mb.target_probs > 0).sum(1).numpy())


def test_sampling_without_augment_is_unchanged(buffer) -> None:
    buf, samples = buffer
    mb = buf.sample(64, np.random.default_rng(2))
    picks = np.sort(np.random.default_rng(2).integers(0, len(samples), 64))
    states = samples.states[picks]
    np.testing.assert_array_equal(mb.observations.numpy(), observe(states, RULES))
    np.testing.assert_array_equal(mb.masks.numpy(), GameBatch(states, RULES).legal_mask())
    np.testing.assert_array_equal(mb.values.numpy(), samples.values[picks])
    off = samples.target_offsets
    for i, k in enumerate(picks):
        n = off[k + 1] - off[k]
        np.testing.assert_array_equal(mb.target_index[i, :n].numpy(),
                                      samples.target_actions[off[k]:off[k + 1]])
        np.testing.assert_array_equal(mb.target_probs[i, :n].numpy(),
                                      samples.target_probs[off[k]:off[k + 1]])
        assert not mb.target_probs[i, n:].any()


def test_augment_draws_the_same_samples_and_moves_them(buffer) -> None:
    buf, samples = buffer
    plain = buf.sample(64, np.random.default_rng(3))
    moved = buf.sample(64, np.random.default_rng(3), augment=True)
    rng = np.random.default_rng(3)
    picks = np.sort(rng.integers(0, len(samples), 64))
    sym = rng.integers(0, SYMMETRIES, 64)
    states = transform_states(samples.states[picks], sym)
    np.testing.assert_array_equal(moved.values.numpy(), plain.values.numpy())
    np.testing.assert_array_equal(moved.target_probs.numpy(), plain.target_probs.numpy())
    np.testing.assert_array_equal(moved.observations.numpy(), observe(states, RULES))
    np.testing.assert_array_equal(moved.masks.numpy(), GameBatch(states, RULES).legal_mask())
