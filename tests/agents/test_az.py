"""The search-guided stack: the batched Gumbel search, its network and the agents that play it."""

from __future__ import annotations

import numba
import numpy as np
import pytest
import torch

from patchwork_env import Game, GameBatch, agents
from patchwork_env.agents.az.agent import LEAF_PLAYOUTS, AZAgent, AZPolicyAgent, parse_az_arg
from patchwork_env.agents.az.net import AZNet, load_az_net, make_evaluator, save_az_net
from patchwork_env.agents.az.search import GumbelSearch, considered_visits
from patchwork_env.agents.model_file import ModelFileError, load_policy
from patchwork_env.training.az import AZOptions
from patchwork_env.views.observation import observe
from tests.positions import FULL, position

STRIP = "\n".join(["XXXXXXXXX"] * 4 + ["XXX...XXX"] + ["XXXXXXXXX"] * 4)
"""A quilt with one empty 1x3 strip (d5..f5)."""


def tiny_net(seed: int = 0) -> AZNet:
    torch.manual_seed(seed)
    return AZNet(hidden=32, layers=1).eval()


def midgame_batch(n: int, seed: int, plies: int = 14) -> GameBatch:
    batch = GameBatch.new(n, seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(plies):
        batch.step(batch.random_actions(rng), check=False)
    keep = np.flatnonzero(~batch.done)
    return batch[keep]


def end_game(seat: int) -> Game:
    """``seat`` to move on 50, the other finished on 53 with the bonus. Legal: buy patch 1
    into the strip (then advance: wins by one), buy patch 0 at either end of the strip
    (a tie, lost to who finished first) or advance (loses). The mover moves twice."""
    quilts = (STRIP, FULL) if seat == 0 else (FULL, STRIP)
    return position(quilts=quilts, position=(50, 53)[:: 1 if seat == 0 else -1],
                    buttons=(10, 1)[:: 1 if seat == 0 else -1],
                    circle=[1, 0, 4] + [k for k in range(2, 33) if k != 4], to_move=seat,
                    bonus_owner=1 - seat, first_to_finish=1 - seat)


def solve(game: Game, memo: dict) -> int:
    """The winner of ``game`` under perfect play (exhaustive; for tiny end games)."""
    key = game.batch.state.tobytes()
    if key not in memo:
        if game.is_over:
            memo[key] = game.winner
        else:
            p = game.to_move
            memo[key] = 1 - p
            for a in game.legal_actions():
                child = game.copy()
                child.step(int(a))
                if solve(child, memo) == p:
                    memo[key] = p
                    break
    return memo[key]


def oracle(search: GumbelSearch, rules: str = "default"):
    """An evaluator with uniform priors and the exact value of each leaf (from the
    positions the search exposes while it evaluates)."""
    memo: dict = {}

    def evaluate(obs: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        values = np.empty(len(obs), np.float32)
        for j, s in enumerate(search.leaf_states):
            game = Game(GameBatch(search.leaf_states[j : j + 1].copy(), rules))
            values[j] = 1.0 if solve(game, memo) == s["to_move"] else -1.0
        return np.zeros(masks.shape, np.float32), values

    return evaluate


# ----- the search ---------------------------------------------------------------------------

def test_halving_schedule() -> None:
    assert considered_visits(4, 10) == [0, 0, 0, 0, 1, 1, 2, 2, 3, 3]
    assert considered_visits(1, 3) == [0, 1, 2]
    sched = considered_visits(16, 32)
    assert sched[:16] == [0] * 16 and len(sched) == 32


def test_search_is_deterministic_for_a_seed() -> None:
    batch = midgame_batch(12, seed=3)
    evaluate = make_evaluator(tiny_net())
    runs = []
    for _ in range(2):
        search = GumbelSearch(len(batch), simulations=12, max_considered=8, top_k=8)
        r = search.run(batch.state.copy(), batch.rules, evaluate, np.random.default_rng(5))
        runs.append(r)
    a, b = runs
    for name in ("actions", "target_offsets", "target_actions", "target_probs", "root_values"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    assert a.stats.evaluations == b.stats.evaluations > 0
    mask = batch.legal_mask()
    assert mask[np.arange(len(batch)), a.actions].all()


def test_policy_targets_cover_the_legal_moves_and_sum_to_one() -> None:
    batch = midgame_batch(10, seed=4)
    search = GumbelSearch(len(batch), simulations=8)
    r = search.run(batch.state.copy(), batch.rules, make_evaluator(tiny_net()),
                   np.random.default_rng(0))
    mask = batch.legal_mask()
    for i in range(len(batch)):
        actions, probs = r.policy(i)
        np.testing.assert_array_equal(np.sort(actions), np.flatnonzero(mask[i]))
        assert (probs >= 0).all() and abs(probs.sum() - 1) < 1e-5
    dense = r.dense_policy()
    assert (dense[~mask] == 0).all()
    np.testing.assert_allclose(dense.sum(1), 1, atol=1e-5)


@pytest.mark.parametrize("seat", [0, 1])
def test_a_perfect_value_oracle_finds_the_only_winning_move(seat: int) -> None:
    game = end_game(seat)
    winners = {}
    for a in game.legal_actions():
        child = game.copy()
        child.step(int(a))
        winners[int(a)] = solve(child, {})
    assert len(winners) == 4 and sum(w == seat for w in winners.values()) == 1
    search = GumbelSearch(1, simulations=8, max_considered=4)
    r = search.run(game.batch.state.copy(), "default", oracle(search),
                   np.random.default_rng(seat))
    assert winners[int(r.actions[0])] == seat
    actions, probs = r.policy(0)
    assert winners[int(actions[np.argmax(probs)])] == seat
    tree = search.node_arrays(0)
    child = np.flatnonzero((tree["parent"] == 0) & (tree["action"] == r.actions[0]))
    assert tree["value_sum"][child] / tree["visits"][child] == pytest.approx(1.0)
    done = tree["to_move"] < 0
    assert r.stats.terminal_leaves > 0 and done.any()
    # a finished game is valued by its result, and the mover moved twice in a row
    winner0 = np.array([solve(Game(GameBatch(search.tree.states[k : k + 1].copy())), {})
                        for k in np.flatnonzero(done)])
    np.testing.assert_array_equal(tree["value0"][done], np.where(winner0 == 0, 1.0, -1.0))
    assert (tree["mover"][1:] == seat).all()


def know_nothing(obs: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A network with a uniform prior and no opinion of any position (value 0)."""
    return np.zeros(masks.shape, np.float32), np.zeros(len(obs), np.float32)


@pytest.mark.parametrize("seat", [0, 1])
def test_leaf_playouts_alone_find_the_winning_move(seat: int) -> None:
    # After the winning move the mover can only advance, and wins: its random playouts
    # all win, while those of every other first move win at most sometimes. With
    # playout_mix 1 the network, which knows nothing, counts for nothing.
    game = end_game(seat)
    search = GumbelSearch(1, simulations=8, max_considered=4, leaf_playouts=3, playout_mix=1.0)
    r = search.run(game.batch.state.copy(), "default", know_nothing,
                   np.random.default_rng(seat))
    child = game.copy()
    child.step(int(r.actions[0]))
    assert solve(child, {}) == seat
    tree = search.node_arrays(0)
    chosen = np.flatnonzero((tree["parent"] == 0) & (tree["action"] == r.actions[0]))
    assert tree["value0"][chosen].tolist() == [1.0 if seat == 0 else -1.0]
    assert r.stats.playouts == 3 * r.stats.evaluations > 0


def test_leaf_playouts_are_seeded_by_the_search_generator() -> None:
    batch = midgame_batch(6, seed=11)
    evaluate = make_evaluator(tiny_net())
    runs = [GumbelSearch(len(batch), simulations=6, max_considered=4, leaf_playouts=2)
            .run(batch.state.copy(), batch.rules, evaluate, np.random.default_rng(seed))
            for seed in (3, 3, 4)]
    np.testing.assert_array_equal(runs[0].root_values, runs[1].root_values)
    assert not np.array_equal(runs[0].root_values, runs[2].root_values)
    for bad in ({"leaf_playouts": -1}, {"playout_mix": 1.5}):
        with pytest.raises(ValueError, match=next(iter(bad))):
            GumbelSearch(1, **bad)


def test_backups_are_signed_by_who_moved_not_by_depth() -> None:
    # player 0 far behind moves many times in a row, then player 1 takes over
    game = position(position=(0, 6), buttons=(20, 20), to_move=0)
    search = GumbelSearch(1, simulations=40, max_considered=4, top_k=4)

    def constant(obs: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        seat = search.leaf_states["to_move"]
        return np.zeros(masks.shape, np.float32), np.where(seat == 0, 0.5, -0.5)

    search.run(game.batch.state.copy(), "default", constant, np.random.default_rng(0))
    t = search.node_arrays(0)
    assert (t["to_move"] >= 0).all()
    q = t["value_sum"] / t["visits"]
    np.testing.assert_allclose(q, np.where(t["mover"] == 0, 0.5, -0.5))
    same = t["mover"][1:] == t["to_move"][t["parent"][1:]]
    assert same.all()  # every node's mover is the player to move at its parent
    consecutive = (t["to_move"][t["parent"][1:]] == t["to_move"][1:])
    assert consecutive.any() and (~consecutive).any()
    children = np.bincount(t["parent"][1:], weights=t["visits"][1:], minlength=len(q))
    np.testing.assert_array_equal(t["visits"], 1 + children)


@pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2, reason="needs two numba threads")
def test_the_threaded_search_matches_the_serial_one() -> None:
    batch = midgame_batch(300, seed=6, plies=8)[np.arange(256)]
    evaluate = make_evaluator(tiny_net())
    results = []
    old = numba.get_num_threads()
    try:
        for threads in (1, 2):
            numba.set_num_threads(threads)
            search = GumbelSearch(256, simulations=4, max_considered=4, top_k=8,
                                  parallel=threads > 1)
            results.append(search.run(batch.state.copy(), batch.rules, evaluate,
                                      np.random.default_rng(1)))
    finally:
        numba.set_num_threads(old)
    np.testing.assert_array_equal(results[0].actions, results[1].actions)
    np.testing.assert_array_equal(results[0].target_probs, results[1].target_probs)


def test_the_compiled_loops_take_the_named_tree_without_recompiling() -> None:
    from patchwork_env.agents.az.search import _LOOPS

    for n, sims in ((3, 2), (5, 4)):
        batch = midgame_batch(n, seed=n)
        GumbelSearch(len(batch), simulations=sims).run(batch.state.copy(), batch.rules,
                                                       know_nothing, np.random.default_rng(0))
    assert all(len(serial.signatures) == 1 for serial, _ in _LOOPS.values())


def test_search_refuses_finished_games_and_bad_evaluators() -> None:
    game = end_game(0)
    search = GumbelSearch(1, simulations=2)
    with pytest.raises(ValueError, match="evaluate must return"):
        search.run(game.batch.state.copy(), "default",
                   lambda o, m: (np.zeros((1, 5), np.float32), np.zeros(1)),
                   np.random.default_rng(0))
    over = game.copy()
    over.step(int(over.legal_actions()[-1]))  # advance: the game ends
    with pytest.raises(ValueError, match="unfinished"):
        search.run(over.batch.state.copy(), "default", make_evaluator(tiny_net()),
                   np.random.default_rng(0))


# ----- the network, its file and the agents -------------------------------------------------

def test_network_file_round_trip_and_refusals(tmp_path) -> None:
    net = tiny_net(1)
    path = save_az_net(net, tmp_path / "net.pt")
    loaded = load_az_net(path)
    obs = torch.rand(3, 1189)
    for x, y in zip(net(obs), loaded(obs), strict=True):
        torch.testing.assert_close(x, y)
    with pytest.raises(ModelFileError, match="not one this package builds"):
        load_policy(path)  # the ppo loader does not take an az network
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    (tmp_path / "bad.pt").write_bytes(bytes(data))
    with pytest.raises(ModelFileError, match="cannot load"):
        load_az_net(tmp_path / "bad.pt")
    with pytest.raises(FileNotFoundError):
        load_az_net(tmp_path / "missing.pt")
    torch.manual_seed(0)
    stencil = AZNet(kind="stencil", hidden=32, channels=8, blocks=2, maps=4).eval()
    mask = torch.zeros(3, 2026, dtype=torch.bool)
    mask[:, 1944] = True
    logits, values = stencil(obs, mask)
    assert logits.shape == (3, 2026) and values.shape == (3,) and bool((values.abs() <= 1).all())
    assert bool((logits[:, 1944] > logits[:, 0]).all())  # masked logits
    again = load_az_net(save_az_net(stencil, tmp_path / "stencil.pt"))
    torch.testing.assert_close(again(obs)[0], stencil(obs)[0])


def test_az_agents_play_legal_moves_in_a_batch(tmp_path) -> None:
    path = save_az_net(tiny_net(2), tmp_path / "net.pt")
    batch = midgame_batch(6, seed=8)
    rows = np.arange(len(batch))
    for spec in (f"az:{path}:6", f"az:{path}", f"az:{path}:1", f"az-policy:{path}",
                 f"az-playouts:{path}:6"):
        agent = agents.make(spec, seed=0)
        actions = agent.act(batch, rows)
        assert batch.legal_mask()[rows, actions].all(), spec
    assert isinstance(agents.make(f"az-policy:{path}"), AZPolicyAgent)
    search_agent = agents.make(f"az:{path}:5")
    assert isinstance(search_agent, AZAgent) and search_agent.evaluations == 5
    first = search_agent.act(batch, rows)
    np.testing.assert_array_equal(first, agents.make(f"az:{path}:5").act(batch, rows))
    assert search_agent.last_stats.evaluations <= 5 * len(rows)
    assert search_agent.last_stats.playouts == 0
    mixed = agents.make(f"az-playouts:{path}:5", seed=0)
    assert isinstance(mixed, AZAgent) and mixed.config.leaf_playouts == LEAF_PLAYOUTS
    mixed.act(batch, rows)
    assert mixed.last_stats.playouts == LEAF_PLAYOUTS * mixed.last_stats.evaluations


def test_the_raw_az_policy_plays_its_networks_best_legal_logit() -> None:
    net = tiny_net(4)
    batch = midgame_batch(5, seed=9)
    masks = batch.legal_mask()
    obs = torch.from_numpy(observe(batch.state, batch.rules))
    with torch.no_grad():
        logits = net(obs, torch.from_numpy(masks))[0].numpy().copy()
    logits[~masks] = -np.inf
    played = AZPolicyAgent(net).act(batch, np.arange(len(batch)))
    np.testing.assert_array_equal(played, logits.argmax(1))


def test_an_az_agent_searches_with_the_settings_it_is_given(tmp_path) -> None:
    path = save_az_net(tiny_net(2), tmp_path / "net.pt")
    batch = midgame_batch(3, seed=8)
    agent = AZAgent(path, 5, seed=0, max_considered=2, top_k=3, c_visit=10.0, c_scale=1.0,
                    score_weight=0.5)
    agent.act(batch, np.arange(len(batch)))
    search = agent._search
    assert (search.config.max_considered, search.config.top_k) == (2, 3)
    assert (search.params.c_visit, search.params.c_scale) == (10.0, 1.0)
    assert search.params.score_weight == 0.5
    assert search.config.gumbel_scale == 0.0  # the agents play without noise


@pytest.mark.parametrize(("spec", "message"), [
    ("az:0", "at least 1"), ("az:missing.pt:64", "no model file"),
    ("az-policy:missing.pt", "no model file"), ("az:missing.pt", "no model file"),
])
def test_az_specs_without_a_usable_network_are_refused(spec: str, message: str) -> None:
    with pytest.raises(agents.AgentSpecError, match=message):
        agents.make(spec)


def test_parse_az_arg() -> None:
    assert parse_az_arg("a/b.pt:12") == (parse_az_arg("a/b.pt")[0], 12)
    with pytest.raises(ValueError, match="at least 1"):
        parse_az_arg("net.pt:0")


# ----- options of a tiny training run (shared with the training tests) -------------------

def tiny_options(folder, **kw) -> AZOptions:
    base = dict(iterations=1, games_per_iteration=2, parallel_games=2, simulations=3,
                max_considered=4, top_k=8, hidden=32, layers=1, batch_size=32,
                sample_reuse=0.5, run_dir=str(folder), eval_every=0, net="mlp", teacher="",
                playout_weight=0.0, augment=False, workers=1, root_value_weight=0.0)
    return AZOptions(**{**base, **kw})
