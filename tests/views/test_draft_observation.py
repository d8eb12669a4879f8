"""What a Patchwork Draft agent sees (each field of the observation, from either seat, the
deck's order never) and the pictures of a draft position."""

from __future__ import annotations

import numpy as np
import pytest

from patchwork_env.data.patches import PATCHES
from patchwork_env.engine.draft_batch import DraftBatch
from patchwork_env.views.draft_game import DraftGame
from patchwork_env.views.draft_observation import (
    DraftSingleGameObserver,
    draft_layout,
    observe_draft,
)
from patchwork_env.views.draft_render import render_draft_rgb, render_draft_text
from tests.draft_positions import draft_position, full_rows
from tests.positions import EMPTY


def seen(game: DraftGame, seat: int | None = None) -> dict[str, np.ndarray]:
    """The named fields of what ``seat`` (the mover by default) sees of ``game``."""
    obs = observe_draft(game.batch.state, game.rules, seat)[0]
    return draft_layout(game.rules).split(obs)


def test_the_fields_lie_end_to_end() -> None:
    lay = draft_layout("default")
    assert [f.start for f in lay.fields[1:]] == [f.stop for f in lay.fields[:-1]]
    assert lay.size == lay.fields[-1].stop == lay.space.shape[0]


def test_a_new_game_shows_empty_quilts_start_buttons_and_the_face_up_row() -> None:
    g = DraftGame.new(seed=4, first_player=1)
    f = seen(g)
    assert not f["quilts"].any() and not f["points"].any() and not f["lines"].any()
    np.testing.assert_allclose(f["buttons"], [5 / 20, 5 / 20])
    for slot, pid in enumerate(g.face_up):
        assert f["face_up"][slot, 0] == 1.0
        assert f["face_up"][slot, 1] == pytest.approx(PATCHES[pid].cost / 10)
        assert f["face_up"][slot, 3:].sum() == PATCHES[pid].size


def test_the_deck_shows_which_patches_it_holds_and_how_many() -> None:
    g = DraftGame.new(seed=5)
    f = seen(g)
    assert np.flatnonzero(f["deck"]).tolist() == g.unseen
    assert f["deck_size"][0] == pytest.approx(g.deck_size / 30)


def test_the_observer_comes_first_in_every_pair() -> None:
    g = draft_position(quilts=(full_rows(1), EMPTY), buttons=(2, 7), points=(3, 0),
                       to_move=1, first_player=0)
    mine, theirs = seen(g, 1), seen(g, 0)
    assert mine["buttons"].tolist() == pytest.approx([7 / 20, 2 / 20])
    assert mine["points"].tolist() == pytest.approx([0, 3 / 20])
    assert mine["to_move"].tolist() == [1, 0] and theirs["to_move"].tolist() == [0, 1]
    assert mine["first_player"].tolist() == [0, 1]
    assert mine["quilts"][1].sum() == 9 and theirs["quilts"][0].sum() == 9


def test_full_rows_and_columns_are_flagged() -> None:
    g = draft_position(quilts=(full_rows(2), EMPTY))
    lines = seen(g, 0)["lines"]
    assert np.flatnonzero(lines[0]).tolist() == [0, 1] and not lines[1].any()


def test_the_stars_are_the_rule_sets() -> None:
    default = seen(DraftGame.new(seed=1))
    none = seen(DraftGame.new(seed=1, rules="no-stars"))
    assert np.flatnonzero(default["star_squares"].ravel()).tolist() == [10, 16, 40, 64, 70]
    assert default["starred_patches"].sum() == 22
    assert not none["star_squares"].any() and not none["starred_patches"].any()
    assert not none["face_up"][:, 2].any()


def test_two_deck_orders_with_the_same_face_up_row_look_the_same() -> None:
    """Rule 13.1: the deck's order is hidden; only its contents are seen."""
    order = list(range(33))
    a = DraftGame.new(deck=order, first_player=0)
    b = DraftGame.new(deck=order[:3] + order[3:][::-1], first_player=0)
    for seat in (0, 1):
        np.testing.assert_array_equal(observe_draft(a.batch.state, a.rules, seat),
                                      observe_draft(b.batch.state, b.rules, seat))
    np.testing.assert_array_equal(a.legal_mask(), b.legal_mask())


def test_a_redeal_changes_no_observation_or_mask() -> None:
    batch = DraftBatch.new(64, seed=2)
    for _ in range(6):
        batch.step(batch.random_actions(3))
    redealt = batch.redeal(9)
    assert (redealt.state["deck"] != batch.state["deck"]).any()
    np.testing.assert_array_equal(observe_draft(batch.state), observe_draft(redealt.state))
    np.testing.assert_array_equal(batch.legal_mask(), redealt.legal_mask())


def test_observations_lie_in_the_box_over_random_games() -> None:
    batch = DraftBatch.new(200, seed=6)
    space = draft_layout("default").space
    while not batch.done.all():
        obs = observe_draft(batch.state)
        assert (obs >= 0).all() and (obs <= space.high).all()
        batch.step(batch.random_actions(1))


def test_the_one_game_observer_agrees_with_the_batch() -> None:
    g = DraftGame.new(seed=7)
    for _ in range(5):
        g.step(g.legal_actions()[-1])
    obs, mask = DraftSingleGameObserver(g.rules)(g.batch.state, g.to_move, True)
    np.testing.assert_array_equal(obs, observe_draft(g.batch.state, g.rules)[0])
    assert np.flatnonzero(mask).tolist() == g.legal_actions().tolist()


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(TypeError, match="DRAFT_STATE_DTYPE"):
        observe_draft(np.zeros(3))
    with pytest.raises(ValueError, match="players"):
        observe_draft(DraftBatch.new(2, seed=0).state, players=2)
    with pytest.raises(ValueError, match="out"):
        observe_draft(DraftBatch.new(2, seed=0).state, out=np.zeros((2, 5), np.float32))


def test_the_text_picture_is_the_text_view() -> None:
    g = DraftGame.new(seed=3)
    assert render_draft_text(g) == str(g)


def test_the_rgb_picture_is_an_image_that_follows_the_game() -> None:
    g = DraftGame.new(seed=3)
    before = render_draft_rgb(g)
    assert before.dtype == np.uint8 and before.shape == (600, 900, 3)
    np.testing.assert_array_equal(before, render_draft_rgb(g.copy()))
    g.step(g.legal_actions()[0])
    assert not np.array_equal(before, render_draft_rgb(g))
