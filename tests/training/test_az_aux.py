"""Auxiliary heads of search-guided training: every position learns how its game ended,
its final score difference and both final quilts, seen from the player to move."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

import train
from patchwork_env.agents.az.net import (
    OWNERSHIP_CELLS,
    SCORE_BINS,
    SCORE_LIMIT,
    AZNet,
    load_az_net,
    save_az_net,
    score_summary,
)
from patchwork_env.data.rules import get_rules
from patchwork_env.training.az import run_az
from patchwork_env.training.az.aux_targets import final_targets, ownership, score_bins
from patchwork_env.training.az.buffer import ReplayBuffer, TrainingBatch
from patchwork_env.training.az.learner import Learner
from patchwork_env.training.az.selfplay import SelfPlayBatch, SelfPlayWorker
from patchwork_env.training.az.selfplay.processes import merge
from patchwork_env.training.az.symmetry import (
    SYMMETRIES,
    transform_quilts,
    transform_states,
)
from patchwork_env.training.az.warm_start import start_net
from tests.agents.test_az import tiny_options
from tests.positions import FULL, cells, position
from tests.training.test_az_hostile import AZ, one_line

# Player 0 ends with the top two rows covered (63 empty cells), player 1 with a full quilt.
TOP_ROWS = "\n".join(["XXXXXXXXX"] * 2 + ["........."] * 7)
AUX = {"score_head_weight": 0.1, "ownership_weight": 1.0}


def ended(buttons: tuple[int, int] = (40, 3)) -> np.ndarray:
    """A finished game: player 0 scores 40 - 2 * 63 = -86, player 1 scores 3."""
    game = position(quilts=(TOP_ROWS, FULL), buttons=buttons, position=(53, 53), to_move=-1,
                    first_to_finish=0)
    return game._state.copy()


def mid_game(to_move: int) -> np.ndarray:
    return position(to_move=to_move)._state.copy()


def play(tmp_path: Path, n_games: int = 2, seed: int = 3, **kw) -> SelfPlayBatch:
    """Self-play of tiny options's network and search."""
    opts = tiny_options(tmp_path, **kw)
    net = opts.network()
    worker = SelfPlayWorker(net.config(), opts.search_config(), opts.parallel_games)
    return worker.generate(net.state_dict(), n_games, seed)


# ----- the targets ---------------------------------------------------------------------
def test_the_score_difference_is_the_movers_final_score_minus_the_opponents() -> None:
    final = np.concatenate([ended(), ended()])
    states = np.concatenate([mid_game(0), mid_game(1)])
    diffs, _ = final_targets(states, final, get_rules("default"))
    assert diffs.tolist() == [-86 - 3, 3 - -86]


def test_the_final_quilts_are_the_movers_first() -> None:
    final = np.concatenate([ended(), ended()])
    states = np.concatenate([mid_game(0), mid_game(1)])
    _, quilts = final_targets(states, final, get_rules("default"))
    owned = ownership(quilts).reshape(2, 2, 81).astype(bool)
    assert np.flatnonzero(owned[0, 0]).tolist() == cells(TOP_ROWS)
    assert owned[0, 1].all()
    assert owned[1, 0].all()
    assert np.flatnonzero(owned[1, 1]).tolist() == cells(TOP_ROWS)


def test_a_finished_position_has_no_aux_targets() -> None:
    with pytest.raises(ValueError, match="player to move"):
        final_targets(ended(), ended(), get_rules("default"))


def test_score_bins_are_clipped_to_the_heads_range() -> None:
    bins = score_bins(np.array([-500, -SCORE_LIMIT, 0, 7, SCORE_LIMIT + 1], np.int16))
    assert bins.tolist() == [0, 0, SCORE_LIMIT, SCORE_LIMIT + 7, SCORE_BINS - 1]


@pytest.mark.parametrize("symmetry", range(SYMMETRIES))
def test_ownership_moves_as_the_position_does(symmetry: int) -> None:
    final = ended()
    _, quilts = final_targets(mid_game(0), final, get_rules("default"))
    moved = transform_states(final, symmetry)
    expected = transform_quilts(moved["quilt"], 0)[0]  # the mover is player 0
    assert np.array_equal(ownership(quilts, symmetry).reshape(2, 81).astype(bool), expected)


# ----- self-play -----------------------------------------------------------------------
def test_self_play_samples_know_how_their_game_ended(tmp_path: Path) -> None:
    batch = play(tmp_path, n_games=4)
    assert batch.score_diffs is not None and batch.final_quilts is not None
    decided = batch.score_diffs != 0
    # the value target's sign is the result's; a score difference decides the result
    assert np.array_equal(np.sign(batch.values[decided]), np.sign(batch.score_diffs[decided]))
    # cells stay covered: a position's quilts lie inside its game's final quilts
    movers = batch.states["to_move"].astype(np.int64)
    rows = np.arange(len(batch))
    now = np.stack([batch.states["quilt"][rows, movers],
                    batch.states["quilt"][rows, 1 - movers]], axis=1)
    assert ((now & batch.final_quilts) == now).all()
    # every position of a game shares its end
    for game in np.unique(batch.game_ids):
        of_game = batch.game_ids == game
        player0 = np.where(movers[of_game] == 0, batch.score_diffs[of_game],
                           -batch.score_diffs[of_game])
        assert len(set(player0.tolist())) == 1


def test_merging_batches_keeps_their_aux_targets(tmp_path: Path) -> None:
    batch = play(tmp_path)
    merged = merge([batch, batch])
    assert np.array_equal(merged.score_diffs, np.tile(batch.score_diffs, 2))
    assert np.array_equal(merged.final_quilts, np.concatenate([batch.final_quilts] * 2))
    batch.score_diffs = None
    assert merge([batch, batch]).score_diffs is None


# ----- the network ---------------------------------------------------------------------
def test_a_network_with_aux_heads_outputs_them_when_asked() -> None:
    net = AZNet(hidden=16, layers=1, kind="shaped", aux=True).eval()
    obs = torch.zeros(3, net.obs_size)
    out = net.outputs(obs, aux=True)
    assert out.aux["score"].shape == (3, SCORE_BINS)
    assert out.aux["ownership"].shape == (3, OWNERSHIP_CELLS)
    assert net.outputs(obs).aux == {}
    logits, value = net(obs)
    assert torch.equal(logits, out.logits) and torch.equal(value, out.value)


def test_a_network_without_aux_heads_has_none_to_give() -> None:
    net = AZNet(hidden=16, layers=1).eval()
    assert net.outputs(torch.zeros(1, net.obs_size), aux=True).aux == {}


def test_aux_heads_survive_a_network_file(tmp_path: Path) -> None:
    net = AZNet(hidden=16, layers=1, kind="shaped", aux=True)
    loaded = load_az_net(save_az_net(net, tmp_path / "net.pt"))
    assert loaded.aux and loaded.config() == net.config()


def test_aux_must_be_a_bool() -> None:
    with pytest.raises(ValueError, match="aux"):
        AZNet(hidden=16, layers=1, aux="yes")  # type: ignore[arg-type]


# ----- learning ------------------------------------------------------------------------
def sampled(tmp_path: Path) -> tuple[TrainingBatch, Learner]:
    opts = tiny_options(tmp_path, **AUX)
    batch = play(tmp_path, **AUX)
    buffer = ReplayBuffer(10_000)
    buffer.add(batch)
    learner = Learner(opts.network(), **AUX)
    return buffer.sample(64, np.random.default_rng(0), augment=True), learner


def test_the_learner_adds_the_aux_losses_to_the_total(tmp_path: Path) -> None:
    full, learner = sampled(tmp_path)
    with torch.no_grad():
        loss = learner.losses(full)
    expected = (loss["policy"] + loss["value"] + 0.1 * loss["score"]
                + 1.0 * loss["ownership"])
    assert loss["score"] > 0 and loss["ownership"] > 0
    assert torch.allclose(loss["total"], expected)


def test_samples_without_aux_targets_do_not_count(tmp_path: Path) -> None:
    full, learner = sampled(tmp_path)
    known = torch.zeros(len(full.values), dtype=torch.bool)
    known[: len(known) // 2] = True
    noisy = TrainingBatch(**{**vars(full), "aux_known": known,
                             "score_bins": torch.where(known, full.score_bins, 0),
                             "ownership": torch.where(known[:, None], full.ownership, 0.5)})
    only = TrainingBatch(**{k: v[known] for k, v in vars(full).items()})
    with torch.no_grad():
        for name in ("score", "ownership"):
            assert torch.allclose(learner.losses(noisy)[name], learner.losses(only)[name])


def test_learning_lowers_the_aux_losses(tmp_path: Path) -> None:
    full, learner = sampled(tmp_path)
    first = learner.step(full)
    for _ in range(30):
        last = learner.step(full)
    assert last["score"] < first["score"] and last["ownership"] < first["ownership"]


# ----- the replay buffer ---------------------------------------------------------------
def filled(tmp_path: Path) -> tuple[ReplayBuffer, SelfPlayBatch]:
    batch = play(tmp_path)
    buffer = ReplayBuffer(10_000)
    buffer.add(batch)
    return buffer, batch


def test_a_buffer_state_round_trips_the_aux_targets(tmp_path: Path) -> None:
    buffer, batch = filled(tmp_path)
    restored = ReplayBuffer(10_000)
    restored.load_state_dict(buffer.state_dict())
    chunk = restored.chunks[0]
    assert chunk.aux_known.all()
    assert np.array_equal(chunk.score_diffs, batch.score_diffs)
    assert np.array_equal(chunk.final_quilts, batch.final_quilts)


def test_an_older_buffer_state_loads_without_aux_targets(tmp_path: Path) -> None:
    buffer, _ = filled(tmp_path)
    state = buffer.state_dict()
    for key in ("score_diffs", "final_quilts", "aux_known"):
        del state[key]
    restored = ReplayBuffer(10_000)
    restored.load_state_dict(state)
    assert not restored.chunks[0].aux_known.any()
    assert not restored.sample(8, np.random.default_rng(0)).aux_known.any()


@pytest.mark.parametrize(("damage", "match"), [
    (lambda s: s.update(score_diffs=s["score_diffs"][:-1]), "auxiliary targets"),
    (lambda s: s.update(score_diffs=s["score_diffs"] * 0 + 999), "score differences"),
    (lambda s: s.update(aux_known=s["aux_known"] * 0 + 2), "aux_known"),
    (lambda s: s.update(final_quilts=s["final_quilts"] | (1 << 20)), "beyond the 81"),
    (lambda s: s.update(final_quilts=s["final_quilts"].float()), "64-bit words"),
    (lambda s: s.pop("score_diffs"), "lacks score_diffs"),
])
def test_a_buffer_state_with_bad_aux_targets_is_refused(tmp_path: Path, damage,
                                                        match: str) -> None:
    buffer, _ = filled(tmp_path)
    state = buffer.state_dict()
    damage(state)
    with pytest.raises(ValueError, match=match):
        ReplayBuffer(10_000).load_state_dict(state)


# ----- runs ----------------------------------------------------------------------------
def test_a_run_with_aux_heads_trains_and_records_their_losses(tmp_path: Path) -> None:
    run_az(tiny_options(tmp_path, **AUX), log=lambda *args, **kw: None)
    header, row = (tmp_path / "metrics.csv").read_text().splitlines()[:2]
    values = dict(zip(header.split(","), row.split(","), strict=True))
    assert float(values["score_loss"]) > 0 and float(values["ownership_loss"]) > 0
    assert load_az_net(tmp_path / "net.pt").aux


def test_a_run_without_aux_heads_leaves_their_columns_empty(tmp_path: Path) -> None:
    run_az(tiny_options(tmp_path), log=lambda *args, **kw: None)
    header, row = (tmp_path / "metrics.csv").read_text().splitlines()[:2]
    values = dict(zip(header.split(","), row.split(","), strict=True))
    assert values["score_loss"] == "" and values["ownership_loss"] == ""
    assert not load_az_net(tmp_path / "net.pt").aux


def test_init_from_a_network_without_aux_heads_keeps_its_trunk(tmp_path: Path) -> None:
    plain = tiny_options(tmp_path).network()
    save_az_net(plain, tmp_path / "plain.pt")
    grown = start_net(tiny_options(tmp_path, init=str(tmp_path / "plain.pt"), **AUX))
    assert grown.aux
    for name, tensor in plain.state_dict().items():
        assert torch.equal(grown.state_dict()[name], tensor), name


@pytest.mark.parametrize("flag", ["--score-head-weight", "--ownership-weight"])
def test_a_negative_aux_weight_is_refused_in_one_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], flag: str) -> None:
    assert train.main([*AZ, f"{flag}=-1", "--run-dir", str(tmp_path / "run")]) == 2
    one_line(capsys.readouterr().err, "train.py: error:", flag)


# ----- a value that reads the score head -----------------------------------------------
def test_a_value_that_reads_the_score_head_moves_with_it() -> None:
    torch.manual_seed(0)
    net = AZNet(hidden=16, layers=1, aux=True, value_reads_score=True).eval()
    with torch.no_grad():
        net.value_head[0].weight.normal_()
        obs = torch.rand(4, net.obs_size)
        before = net(obs)[1]
        net.score_head[-1].bias[SCORE_LIMIT + 1:] += 5.0  # every win on points likelier
        assert not torch.allclose(net(obs)[1], before)


def test_the_score_summary_reads_a_certain_result() -> None:
    logits = torch.full((2, SCORE_BINS), -1e4)
    logits[0, SCORE_LIMIT + 9] = 0.0  # surely +9
    logits[1, SCORE_LIMIT - SCORE_LIMIT] = 0.0  # surely -SCORE_LIMIT
    assert torch.allclose(score_summary(logits),
                          torch.tensor([[1.0, 0.0, 9 / SCORE_LIMIT], [0.0, 1.0, -1.0]]))


def test_a_value_that_reads_the_score_head_needs_one() -> None:
    with pytest.raises(ValueError, match="aux"):
        AZNet(hidden=16, layers=1, value_reads_score=True)


def test_the_option_needs_a_score_head_weight(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert train.main([*AZ, "--value-reads-score", "--run-dir", str(tmp_path / "run")]) == 2
    one_line(capsys.readouterr().err, "train.py: error:", "--score-head-weight")


def assert_plays_as(old: AZNet, new: AZNet) -> None:
    """The two networks give the same logits and values."""
    obs = torch.rand(5, old.obs_size)
    with torch.no_grad():
        for a, b in zip(old(obs), new(obs), strict=True):
            assert torch.allclose(a, b, atol=1e-6)


def test_init_into_a_value_that_reads_the_score_head_plays_as_before(tmp_path: Path) -> None:
    torch.manual_seed(1)
    plain = AZNet(hidden=32, layers=1, kind="mlp").eval()
    save_az_net(plain, tmp_path / "plain.pt")
    grown = start_net(tiny_options(tmp_path, init=str(tmp_path / "plain.pt"),
                                   value_reads_score=True, **AUX))
    assert_plays_as(plain, grown)
    assert load_az_net(save_az_net(grown, tmp_path / "grown.pt")).value_reads_score


def test_init_from_aux_heads_into_a_value_that_reads_them_plays_as_before(
        tmp_path: Path) -> None:
    torch.manual_seed(2)
    with_heads = AZNet(hidden=32, layers=1, kind="mlp", aux=True).eval()
    save_az_net(with_heads, tmp_path / "heads.pt")
    grown = start_net(tiny_options(tmp_path, init=str(tmp_path / "heads.pt"),
                                   value_reads_score=True, **AUX))
    assert_plays_as(with_heads, grown)
    assert torch.equal(grown.score_head[-1].weight, with_heads.score_head[-1].weight)
