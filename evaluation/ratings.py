"""Statistics of a tournament: Wilson intervals and Elo ratings fitted to a win matrix.

Elo follows the Bradley–Terry model: ``P(i beats j) = 1 / (1 + 10 ** ((r_j - r_i) / 400))``.
The ratings are the maximum-likelihood fit to every game of the tournament at once (not a
running update, so the order of the games does not matter), found by Newton's method on
the log-likelihood (concave, so a few steps suffice). Each pair that met also counts one
drawn game (half a win each way), a weak prior that keeps the ratings finite when one
agent wins every game; it is negligible after a few dozen games. Intervals come from a
parametric bootstrap over the games of each pairing (see :func:`bootstrap_elo`).
"""

from __future__ import annotations

import math

import numpy as np

ELO_SCALE = 400.0 / math.log(10.0)
"""Elo points per unit of natural log-odds."""
_PRIOR_GAMES = 1.0


def wilson_interval(wins: int, games: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """The Wilson score interval of a win rate (95% by default); ``(0, 1)`` with no games."""
    if games < 0 or not 0 <= wins <= games:
        raise ValueError(f"need 0 <= wins <= games, got wins={wins}, games={games}")
    if games == 0:
        return 0.0, 1.0
    p = wins / games
    z2 = z * z
    centre = (p + z2 / (2 * games)) / (1 + z2 / games)
    half = z * math.sqrt(p * (1 - p) / games + z2 / (4 * games * games)) / (1 + z2 / games)
    return max(0.0, centre - half), min(1.0, centre + half)


def fit_elo(wins: np.ndarray, anchor: int = 0, prior: float = _PRIOR_GAMES,
            tol: float = 1e-9, max_iter: int = 100) -> np.ndarray:
    """Maximum-likelihood Elo ratings from ``wins[i, j]`` (games ``i`` won against ``j``).

    ``anchor``'s rating is 0. Every pair that played also counts ``prior`` games split
    evenly. Agents must be connected by the games played (a round robin always is).
    """
    w = np.asarray(wins, dtype=np.float64)
    k = w.shape[0]
    if w.shape != (k, k) or (w < 0).any() or np.diag(w).any():
        raise ValueError("wins must be a square non-negative matrix with a zero diagonal")
    games = w + w.T
    if not (games.sum(axis=1) > 0).all():
        raise ValueError("an agent has played no game")
    met = games > 0
    w = w + prior / 2 * met
    games = games + prior * met
    free = np.arange(k) != anchor
    theta = np.zeros(k)  # natural log-odds scale
    for _ in range(max_iter):
        p = 1 / (1 + np.exp(theta[None, :] - theta[:, None]))  # P(i beats j)
        grad = w.sum(axis=1) - (games * p).sum(axis=1)
        curv = games * p * (1 - p)
        hess = curv - np.diag(curv.sum(axis=1))  # the log-likelihood's Hessian
        step = np.linalg.solve(hess[np.ix_(free, free)], -grad[free])
        step = np.clip(step, -2.0, 2.0)  # no wild first steps when one agent is far ahead
        theta[free] += step
        if np.abs(step).max() < tol:
            break
    return ELO_SCALE * theta


def bootstrap_elo(wins: np.ndarray, anchor: int = 0, samples: int = 1000, seed: int = 0,
                  level: float = 0.95, prior: float = _PRIOR_GAMES) -> np.ndarray:
    """``(k, 2)`` bootstrap intervals of :func:`fit_elo`.

    Each pair's games are redrawn from its win rate with the prior's drawn game included,
    so a clean sweep still varies from one sample to the next (a plain bootstrap would
    redraw the sweep every time and report no uncertainty at all).
    """
    w = np.asarray(wins, dtype=np.float64)
    games = (w + w.T).astype(np.int64)
    rate = np.where(games > 0, (w + prior / 2) / (games + prior), 0.0)
    upper = np.triu(np.ones_like(games, dtype=bool), 1)
    rng = np.random.default_rng(seed)
    fits = np.empty((samples, len(w)))
    for b in range(samples):
        drawn = np.where(upper, rng.binomial(games, rate), 0)
        fits[b] = fit_elo(drawn + np.where(upper, games - drawn, 0).T, anchor, prior)
    tail = (1 - level) / 2 * 100
    return np.percentile(fits, [tail, 100 - tail], axis=0).T
