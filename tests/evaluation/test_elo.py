"""Wilson intervals and Elo ratings fitted to a win matrix."""

from __future__ import annotations

import numpy as np
import pytest

from patchwork_env.evaluation.ratings import bootstrap_elo, fit_elo, wilson_interval


@pytest.mark.parametrize(("wins", "games", "expected"), [
    # reference values of the Wilson score interval at 95%
    (5, 10, (0.2366, 0.7634)),
    (0, 10, (0.0, 0.2775)),
    (10, 10, (0.7225, 1.0)),
    (95, 100, (0.8883, 0.9785)),
    (380, 400, (0.9240, 0.9674)),
])
def test_wilson_matches_known_values(wins: int, games: int, expected: tuple) -> None:
    assert wilson_interval(wins, games) == pytest.approx(expected, abs=1e-4)


def test_wilson_edge_cases() -> None:
    assert wilson_interval(0, 0) == (0.0, 1.0)
    with pytest.raises(ValueError):
        wilson_interval(3, 2)


def expected_wins(ratings: np.ndarray, games: int) -> np.ndarray:
    diff = ratings[:, None] - ratings[None, :]
    wins = games / (1 + 10 ** (-diff / 400))
    np.fill_diagonal(wins, 0)
    return wins


TRUE = np.array([0.0, 150.0, 400.0, -120.0, 800.0])


def test_fit_recovers_ratings_from_exact_win_counts() -> None:
    ratings = fit_elo(expected_wins(TRUE, 100_000), anchor=0)
    assert ratings == pytest.approx(TRUE, abs=1.0)


def test_fit_recovers_ratings_from_sampled_games() -> None:
    rng = np.random.default_rng(0)
    p = expected_wins(TRUE, 1)
    upper = np.triu(rng.binomial(2000, p), 1)
    wins = upper + np.triu(2000 - upper, 1).T
    ratings = fit_elo(wins, anchor=0)
    assert ratings == pytest.approx(TRUE, abs=40)
    ci = bootstrap_elo(wins, anchor=0, samples=200, seed=1)
    assert (ci[:, 0] <= ratings + 1e-6).all() and (ratings <= ci[:, 1] + 1e-6).all()
    assert ((ci[1:, 0] < TRUE[1:]) & (TRUE[1:] < ci[1:, 1])).sum() >= 3


def test_fit_is_anchored_and_symmetric() -> None:
    even = np.array([[0, 50, 50], [50, 0, 50], [50, 50, 0]])
    assert fit_elo(even, anchor=1) == pytest.approx([0, 0, 0], abs=1e-6)
    ratings = fit_elo(np.array([[0, 30], [10, 0]]), anchor=1)
    assert ratings[1] == 0
    # 30.5 to 10.5 after the prior of one drawn game
    assert ratings[0] == pytest.approx(400 * np.log10(30.5 / 10.5), abs=1e-6)


def test_a_clean_sweep_stays_finite() -> None:
    ratings = fit_elo(np.array([[0, 100], [0, 0]]))
    assert np.isfinite(ratings).all() and ratings[1] < -600


def test_more_games_narrow_the_interval() -> None:
    small = bootstrap_elo(np.array([[0, 15], [5, 0]]), samples=300)
    large = bootstrap_elo(np.array([[0, 150], [50, 0]]), samples=300)
    assert np.diff(large[1]) < np.diff(small[1]) / 2


def test_a_clean_sweep_has_a_wide_interval() -> None:
    lo, hi = bootstrap_elo(np.array([[0, 100], [0, 0]]), samples=300)[1]
    assert hi - lo > 200
