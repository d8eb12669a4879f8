"""DraftBatch: setting up, copying, masks, random moves, playouts and the redeal of the
hidden deck (rule 13.1), on the batch API."""

from __future__ import annotations

import numpy as np
import pytest

from patchwork_env.data.draft_actions import N_DRAFT_ACTIONS
from patchwork_env.engine.draft_batch import DraftBatch, check_deck, sample_draft_legal
from patchwork_env.views.draft_game import DraftGame
from tests.draft_positions import draft_position
from tests.positions import buy


def test_new_batches_are_reproducible_from_the_seed() -> None:
    """The same seed sets up the same games."""
    a, b = DraftBatch.new(16, seed=3), DraftBatch.new(16, seed=3)
    assert (a.state == b.state).all()


def test_from_seeds_sets_up_each_game_as_draft_game_new() -> None:
    """``from_seeds`` matches ``DraftGame.new(seed)`` game by game."""
    batch = DraftBatch.from_seeds([5, 6, 7])
    for row, seed in enumerate((5, 6, 7)):
        assert DraftGame.from_batch(batch, row) == DraftGame.new(seed=seed)


def test_a_copy_is_independent() -> None:
    """Moves in a copy leave the original as it was."""
    batch = DraftBatch.new(4, seed=1)
    before = batch.state.copy()
    batch.copy().playout(0)
    assert (batch.state == before).all()


def test_the_legal_mask_holds_the_legal_actions() -> None:
    """The mask and the single-game list agree."""
    batch = DraftBatch.new(32, seed=2)
    mask = batch.legal_mask()
    for row in range(len(batch)):
        legal = DraftGame.from_batch(batch, row).legal_actions()
        assert np.flatnonzero(mask[row]).tolist() == legal.tolist()


def test_a_wrong_out_array_for_the_mask_is_refused() -> None:
    """``legal_mask(out=...)`` needs a writeable (N, 1947) bool array."""
    with pytest.raises(ValueError, match=r"\(2, 1947\)"):
        DraftBatch.new(2, seed=0).legal_mask(out=np.empty((2, 2026), np.bool_))


def test_random_actions_are_legal_and_minus_one_when_over() -> None:
    """``random_actions`` draws from the mask; finished games get -1."""
    batch = DraftBatch.new(300, seed=4)
    mask = batch.legal_mask()
    actions = batch.random_actions(9)
    live = ~batch.done
    assert mask[np.flatnonzero(live), actions[live]].all()
    assert (actions[~live] == -1).all()


def test_playout_ends_every_game() -> None:
    """``playout`` plays every game to its end."""
    batch = DraftBatch.new(64, seed=5)
    batch.playout(1)
    assert batch.done.all() and set(batch.winners().tolist()) <= {0, 1}


def test_playout_until_stops_when_the_seat_is_to_move() -> None:
    """``playout(until=seat)`` stops before that seat's turn, or at the end."""
    batch = DraftBatch.new(64, seed=6)
    batch.step(batch.random_actions(0))
    batch.playout(2, until=0)
    assert ((batch.to_move == 0) | batch.done).all()


def test_reset_done_restarts_only_finished_games() -> None:
    """``reset_done`` deals new games where a game is over."""
    batch = DraftBatch.new(64, seed=7)
    batch.playout(3)
    rows = batch.reset_done(np.random.default_rng(0))
    assert rows.tolist() == list(range(64))
    assert (batch.deck_size == 30).all()


def test_a_bad_deck_is_refused() -> None:
    """Rule 13.1: a fixed deck order holds each patch once."""
    with pytest.raises(ValueError, match="permutation"):
        check_deck([0] * 33)
    with pytest.raises(ValueError, match="33 patch ids"):
        DraftGame.new(deck=list(range(32)))


# --- the redeal ---------------------------------------------------------------------------


def _public(game: DraftGame) -> dict:
    d = game.state_dict()
    d["deck"] = sorted(d["deck"])
    return d


def test_a_redeal_keeps_the_public_state_and_the_unseen_set() -> None:
    """Rule 13.1: a redeal changes nothing a player can see."""
    g = draft_position()
    assert _public(g.redeal(1)) == _public(g)


def test_a_redeal_changes_only_the_order_of_the_deck() -> None:
    """Rule 13.1: different seeds give different hidden orders of the same patches."""
    g = draft_position()
    orders = {tuple(g.redeal(s).state_dict()["deck"]) for s in range(5)}
    assert len(orders) == 5


def test_a_redeal_leaves_the_original_alone() -> None:
    """``redeal`` returns a copy."""
    g = draft_position()
    before = g.state_dict()
    g.redeal(3)
    assert g.state_dict() == before


def test_a_redeal_changes_what_is_drawn_next() -> None:
    """Rule 13.3: the refill takes the top of the redealt deck."""
    g = draft_position(deck=list(range(3, 33)))
    drawn = set()
    for seed in range(8):
        h = g.redeal(seed)
        h.step(buy(0, "a1"))
        drawn.add(h.face_up[0])
    assert len(drawn) > 1


def test_the_action_count_is_1947() -> None:
    """Rule 13.9: masks are as wide as the action space."""
    assert DraftBatch.new(1, seed=0).legal_mask().shape == (1, N_DRAFT_ACTIONS)


def test_serial_and_parallel_kernels_agree() -> None:
    """The multi-threaded batch loops play exactly as the serial ones."""
    from patchwork_env.engine.draft_batch import _KERNELS

    batch = DraftBatch.new(300, seed=8)
    results = []
    for version in (0, 1):
        state = batch.state.copy()
        _KERNELS["playout"][version](state, np.uint64(4), np.full(300, -1, np.int8),
                                     *batch.move_args)
        _KERNELS["redeal"][version](state, np.uint64(5))
        results.append(state)
    assert (results[0] == results[1]).all()


def test_sampling_a_mask_draws_legal_actions() -> None:
    """``sample_draft_legal`` draws set entries of each row, -1 for an empty row."""
    batch = DraftBatch.new(64, seed=9)
    mask = batch.legal_mask()
    actions = sample_draft_legal(mask, 3)
    live = np.flatnonzero(~batch.done)
    assert mask[live, actions[live]].all()
    assert (actions[batch.done] == -1).all()
