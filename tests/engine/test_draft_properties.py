"""Properties of Patchwork Draft (section 13 of docs/rules.md) that hold over thousands of
random games played by the batch engine."""

from __future__ import annotations

import numpy as np
import pytest

from patchwork_env.data.draft_rules import get_draft_rules
from patchwork_env.data.patches import PATCHES
from patchwork_env.engine.draft_batch import DraftBatch
from patchwork_env.engine.draft_kernels import LINE_MASKS
from patchwork_env.engine.possible_states import PLACEMENTS
from patchwork_env.views.draft_game import DraftGame

N_GAMES = 2000
MAX_TURNS = 31
"""33 patches, three face up: each turn draws one of the other 30, and the turn after the
last draw ends the game (rule 13.7 (a))."""
RULES = get_draft_rules("default")


@pytest.fixture(scope="module")
def history() -> list[np.ndarray]:
    """The state of every game before each turn, then at the end."""
    batch = DraftBatch.new(N_GAMES, seed=11)
    states = [batch.state.copy()]
    rng = np.random.default_rng(12)
    while not batch.done.all() and len(states) <= MAX_TURNS + 1:
        batch.step(batch.random_actions(rng))
        states.append(batch.state.copy())
    return states


def _full_lines(quilt: np.ndarray) -> int:
    return sum(int((quilt[0] & m[0]) == m[0] and (quilt[1] & m[1]) == m[1]) for m in LINE_MASKS)


def test_every_game_ends_within_31_turns(history: list[np.ndarray]) -> None:
    """Rules 13.3 and 13.7: every turn takes a patch from the deck, so games are short."""
    assert (history[-1]["to_move"] < 0).all()
    assert len(history) - 1 <= MAX_TURNS


def _could_buy(s: np.void, p: int, patch: int) -> bool:
    quilt = int(s["quilt"][p, 0]) | int(s["quilt"][p, 1]) << 64
    return PATCHES[patch].cost <= s["buttons"][p] and any(
        cells & quilt == 0 for cells in PLACEMENTS[patch])


def test_a_game_ends_early_only_when_nobody_can_buy_a_patch_left(
        history: list[np.ndarray]) -> None:
    """Rule 13.7 (b): a game over with its row still full ended because no patch face up
    or in the deck was affordable and fitting for either player; and random games do not
    all end that way."""
    early = [s for s in history[-1] if (s["row"] >= 0).all()]
    for s in early[:300]:
        left = [*s["row"].tolist(), *s["deck"][s["drawn"]:].tolist()]
        assert not any(_could_buy(s, p, x) for p in range(2) for x in left)
    assert 0 < len(early) < N_GAMES


def test_buttons_are_never_negative(history: list[np.ndarray]) -> None:
    """Rule 13.2: a patch is bought only with the buttons to pay for it."""
    assert all((s["buttons"] >= 0).all() for s in history)


def test_quilts_never_overlap(history: list[np.ndarray]) -> None:
    """Rule 13.2: each covered cell belongs to exactly one placed patch of full size."""
    for s in history[-1][:300]:
        for p in range(2):
            ids = s["cell_patches"][p]
            placed = set(ids[ids >= 0].tolist())
            bits = bin(int(s["quilt"][p, 0])).count("1") + bin(int(s["quilt"][p, 1])).count("1")
            assert bits == (ids >= 0).sum() == sum(PATCHES[x].size for x in placed)


def test_scores_add_up(history: list[np.ndarray]) -> None:
    """Rules 13.4, 13.5 and 13.8: points are the full lines plus the starred patches on
    star squares; buttons the start plus the lines less the costs; score their sum."""
    final = DraftBatch(history[-1].copy(), RULES)
    scores = final.scores()
    for i, s in enumerate(final.state[:500]):
        for p in range(2):
            ids = s["cell_patches"][p]
            own = set(ids[ids >= 0].tolist())
            lines = _full_lines(s["quilt"][p])
            stars = sum(1 for x in own if x in RULES.starred_patches
                        and any(ids[c] == x for c in RULES.star_squares))
            assert s["points"][p] == lines + stars
            assert s["buttons"][p] == RULES.start_buttons + lines - sum(
                PATCHES[x].cost for x in own)
            assert scores[i, p] == s["points"][p] + s["buttons"][p]


def test_every_patch_is_in_one_place(history: list[np.ndarray]) -> None:
    """Rules 13.1-13.6: a patch is face up, in the deck, on one quilt or discarded."""
    for s in history[len(history) // 2][:300]:
        where = [*s["row"][s["row"] >= 0].tolist(), *s["deck"][s["drawn"]:].tolist()]
        for p in range(2):
            ids = s["cell_patches"][p]
            where += list(set(ids[ids >= 0].tolist()))
        assert len(where) == len(set(where))


def test_every_reached_state_round_trips_through_a_dict(history: list[np.ndarray]) -> None:
    """Every state the engine reaches passes the state dict's checks unchanged."""
    for states in history:
        for row in range(0, N_GAMES, 40):
            g = DraftGame(DraftBatch(states[row : row + 1].copy(), RULES))
            assert DraftGame.from_dict(g.state_dict()) == g


def test_a_redeal_never_changes_what_a_player_sees(history: list[np.ndarray]) -> None:
    """Rule 13.1: after a redeal every public field, the unseen set and the legal actions
    are as before."""
    states = history[1]
    batch = DraftBatch(states.copy(), RULES)
    redealt = batch.redeal(5)
    for name in ("quilt", "cell_patches", "buttons", "points", "row", "drawn", "to_move"):
        assert (redealt.state[name] == batch.state[name]).all()
    assert (np.sort(redealt.state["deck"], axis=1) == np.sort(batch.state["deck"], axis=1)).all()
    assert (redealt.state["deck"] != batch.state["deck"]).any(axis=1).mean() > 0.9
    assert (redealt.legal_mask() == batch.legal_mask()).all()


def test_batch_results_equal_single_game_results() -> None:
    """The batch and the one-game API play the same rules."""
    seeds = list(range(40))
    batch = DraftBatch.from_seeds(seeds)
    games = [DraftGame.new(seed=s) for s in seeds]
    rng = np.random.default_rng(3)
    while not batch.done.all():
        actions = batch.random_actions(rng)
        batch.step(actions)
        for g, a in zip(games, actions, strict=True):
            if a >= 0:
                g.step(int(a))
    for row, g in enumerate(games):
        assert DraftGame.from_batch(batch, row) == g
        assert g.winner == batch.winners()[row]
