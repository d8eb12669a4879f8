"""What a search-guided run's checkpoint must hold before a run continues from it.

A checkpoint whose digest matches was written whole, but not necessarily by this trainer
or from a healthy run: a file signed again after its contents were changed would crash the
resumed run minutes later or train it silently to NaN. So everything restored is checked
first: :func:`check_resumable` (a search-guided run's checkpoint, its options those of the
run resuming it but for :data:`RESUMABLE_CHANGES`) and :func:`checkpoint_net` (its network
the one its options describe) refuse with a one-line
:class:`~patchwork_env.training.checkpoint.CheckpointError` naming the checkpoint; the
checks of its contents are each a ``ValueError`` of one line saying what is wrong (the
trainer names the checkpoint): the counters (whole numbers, finite times), the replay
buffer (arrays of the right types and lengths that fit together, every state one that a
game can reach, as :meth:`~patchwork_env.Game.from_dict` checks it, every target action
legal in its state, every target a probability distribution, every value in [-1, 1]) and
the learner (finite weights, an optimiser state of the network's shapes with finite
numbers) and the average of its weights (finite, of the network's shapes).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import torch

from patchwork_env.agents.az.games import PATCHWORK, AZGame
from patchwork_env.agents.az.net import AZNet, check_weights
from patchwork_env.data.actions import N_CELLS
from patchwork_env.data.rules import Rules
from patchwork_env.training.az.options import RANGES, AZOptions, AZRunError, parse_lr_drops
from patchwork_env.training.checkpoint import CheckpointError
from patchwork_env.training.checks import COMMON_RANGES, check_ranges

PROBABILITY_TOLERANCE = 1e-3
"""How far from 1 a target's probabilities may sum (they are stored as float32)."""
LEGALITY_CHUNK = 4096
"""States whose legal actions are computed at once (a mask is 2026 bytes per state)."""
MAX_SCORE_DIFF = 400
"""Beyond any score difference a game can reach (a score lies between -162 and a few
dozen points)."""
BUFFER_KEYS = ("capacity", "added", "states", "offsets", "actions", "probs", "values")
COUNTERS = ("iteration", "games", "train_s", "wall_s", "warm_started")
NETWORK_SIZES = ("hidden", "layers", "blocks", "channels")
"""The options that size the network: a checkpoint's are checked before one is built."""


KIND = "az"
RESUMABLE_CHANGES = ("iterations", "run_dir", "resume", "overwrite", "threads", "eval_every",
                     "eval_games", "eval_opponents", "eval_evaluations", "ray_address", "init",
                     "lr_drops", "device", "precision", "average_decay")
"""Options a resumed run may change; any other difference from the checkpoint is refused.
(``init`` is read only when a run starts: a resumed run's network is its checkpoint's;
``lr_drops`` only at iterations still to train; ``device`` and ``precision`` say where and
how the run computes, and its checkpoint holds CPU copies; ``average_decay`` shapes only the
network the run publishes, not its training.)"""


BEFORE_DEFAULTS = {"root_value_weight": 0.0, "workers": 1, "average_decay": 0.0}
"""Options whose default is not what a run did before they existed: a checkpoint that does
not name one ran with this value (no root values in the value targets, self-play in the
learner's process, the learner's own network published)."""


def saved_options(saved: dict[str, Any]) -> dict[str, Any]:
    """The options a checkpoint was written with, as a dict of every option (one added
    after the checkpoint was written ran there as its :data:`BEFORE_DEFAULTS` value or, for
    the others, its default)."""
    return {**dataclasses.asdict(AZOptions()), **BEFORE_DEFAULTS, **saved["options"]}


def checkpoint_net(saved: dict[str, Any], path: Path) -> AZNet:
    """A fresh network of the shape the checkpoint at ``path`` holds (weights not loaded),
    which must be the network its options describe."""
    try:
        opts = AZOptions(**saved_options(saved))
        check_ranges(opts, {**{k: RANGES[k] for k in NETWORK_SIZES},
                            "seed": COMMON_RANGES["seed"]})
        net = opts.network()
    except (KeyError, TypeError, ValueError, RuntimeError) as e:
        raise CheckpointError(f"checkpoint {path} cannot be restored: its options describe "
                              f"no network: {str(e).splitlines()[0]}") from None
    if saved.get("net_config") != net.config():
        raise CheckpointError(f"checkpoint {path} cannot be restored: its network "
                              f"{_short(saved.get('net_config'))} is not the one of its "
                              f"options {_short(net.config())}")
    return net


def _short(value: Any, width: int = 120) -> str:
    text = repr(value)
    return text if len(text) <= width else text[:width] + "..."


def check_resumable(saved: dict[str, Any], opts: AZOptions, path: Path) -> None:
    """:class:`CheckpointError` unless the checkpoint ``saved`` (read from ``path``) is a
    search-guided run's that ``opts`` may continue: the same options but for
    :data:`RESUMABLE_CHANGES`, and the learning-rate drops of the iterations it trained."""
    if saved.get("kind") != KIND:
        raise CheckpointError(f"{path} is not the checkpoint of a search-guided (az) run")
    if not isinstance(saved.get("options"), dict) or not isinstance(saved.get("counters"),
                                                                     dict):
        raise CheckpointError(f"checkpoint {path} cannot be restored: its options or counters "
                              "are not a dict")
    try:
        check_counters(saved["counters"])
        trained = parse_lr_drops(str(saved["options"].get("lr_drops", "")))
    except (ValueError, AZRunError) as e:
        raise CheckpointError(f"checkpoint {path} cannot be restored: {e}") from None
    given = dataclasses.asdict(opts)
    written = saved_options(saved)
    if written["game"] != opts.game:
        raise CheckpointError(f"{path} is a run of the {written['game']} game, not of "
                              f"{opts.game}: resume it with --game {written['game']}")
    changed = sorted(k for k, v in written.items()
                     if k not in RESUMABLE_CHANGES and given.get(k) != v)
    if changed:
        differences = ", ".join(f"{k} {written[k]!r}, not {given.get(k)!r}" for k in changed)
        raise CheckpointError(f"{path} was written with other options (the run's {differences}"
                              "); resume with the run's own options")
    done = int(saved["counters"]["iteration"])
    if [d for d in opts.lr_drop_iterations() if d < done] != [d for d in trained if d < done]:
        raise CheckpointError(f"{path} has trained {done} iterations: lr_drops may change only "
                              f"after them (the run's are {written['lr_drops'] or 'none'})")


def _whole(value: Any, what: str, low: int = 0) -> int:
    if isinstance(value, torch.Tensor) and value.numel() == 1 and not value.is_floating_point():
        value = value.item()
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < low:
        raise ValueError(f"{what} must be a whole number of at least {low}, got {value!r}")
    return int(value)


def _mapping(value: Any, what: str, keys: tuple[str, ...]) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise ValueError(f"{what} is not a dict but {type(value).__name__}")
    missing = [k for k in keys if k not in value]
    if missing:
        raise ValueError(f"{what} lacks {', '.join(missing)}")
    return value


def check_counters(counters: Any) -> None:
    """``ValueError`` unless the run's counters are whole numbers and finite times."""
    counters = _mapping(counters, "the counters", COUNTERS[:2])
    for name in ("iteration", "games"):
        _whole(counters[name], f"the counter {name}")
    for name in ("train_s", "wall_s"):
        value = counters.get(name, 0.0)
        if (isinstance(value, bool) or not isinstance(value, int | float)
                or not math.isfinite(value) or value < 0):
            raise ValueError(f"the counter {name} must be a finite number of seconds, got "
                             f"{value!r}")
    if not isinstance(counters.get("warm_started", False), bool):
        raise ValueError("the counter warm_started must be true or false, got "
                         f"{counters['warm_started']!r}")


def _array(state: Mapping[str, Any], key: str, kind: str) -> np.ndarray:
    """``state[key]`` as a 1-D numpy array of ``kind`` (``"u"``: bytes, ``"i"``: integers,
    ``"f"``: floats)."""
    value = state[key]
    if not isinstance(value, torch.Tensor):
        raise ValueError(f"the buffer's {key} are not a tensor but {type(value).__name__}")
    array = value.numpy()
    ok = {"u": array.dtype == np.uint8, "i": array.dtype.kind in "iu",
          "f": array.dtype.kind == "f"}[kind]
    if not ok or array.ndim != 1:
        want = {"u": "bytes", "i": "integers", "f": "floats"}[kind]
        raise ValueError(f"the buffer's {key} must be a row of {want}, got {array.dtype} of "
                         f"shape {tuple(array.shape)}")
    return array


def check_buffer_state(state: Any, rules: Rules, capacity: int | None = None,
                       game: AZGame = PATCHWORK) -> None:
    """``ValueError`` unless ``state`` is a replay buffer's ``state_dict`` of ``game``
    (Patchwork by default) under ``rules`` that a run can learn from (see the module
    docstring), of ``capacity`` samples where given."""
    dtype, n_actions = game.state_dtype, game.n_actions
    state = _mapping(state, "the replay buffer", BUFFER_KEYS)
    saved_capacity = _whole(state["capacity"], "the buffer's capacity", 1)
    if capacity is not None and saved_capacity != capacity:
        raise ValueError(f"the buffer's capacity is {saved_capacity}, the run's buffer_size "
                         f"{capacity}")
    capacity = saved_capacity
    raw = _array(state, "states", "u")
    offsets, actions = _array(state, "offsets", "i"), _array(state, "actions", "i")
    probs, values = _array(state, "probs", "f"), _array(state, "values", "f")
    if raw.size % dtype.itemsize:
        raise ValueError(f"the buffer's states are {raw.size} bytes, not whole state records "
                         f"of {dtype.itemsize}")
    n = raw.size // dtype.itemsize
    if n > capacity:
        raise ValueError(f"the buffer holds {n} samples, more than its capacity {capacity}")
    if _whole(state["added"], "the buffer's count of samples added") < n:
        raise ValueError(f"the buffer holds {n} samples but counts {state['added']} added")
    if len(offsets) != n + 1 or len(values) != n or len(probs) != len(actions):
        raise ValueError(f"the buffer's arrays do not fit together ({n} states, "
                         f"{len(offsets)} offsets, {len(values)} values, {len(actions)} "
                         f"actions, {len(probs)} probabilities)")
    if offsets[0] != 0 or offsets[-1] != len(actions) or (np.diff(offsets) < 1).any():
        raise ValueError("the buffer's offsets do not split its targets into one non-empty "
                         "target per sample")
    if len(actions) and not (actions.min() >= 0 and actions.max() < n_actions):
        raise ValueError(f"the buffer's target actions must lie in 0..{n_actions - 1}, got "
                         f"{actions.min()}..{actions.max()}")
    if not np.isfinite(probs).all() or (probs < 0).any():
        raise ValueError("the buffer's target probabilities are not all finite and "
                         "non-negative")
    sums = np.add.reduceat(probs.astype(np.float64), offsets[:-1]) if n else np.zeros(0)
    if (np.abs(sums - 1) > PROBABILITY_TOLERANCE).any():
        bad = int(np.flatnonzero(np.abs(sums - 1) > PROBABILITY_TOLERANCE)[0])
        raise ValueError(f"the target probabilities of sample {bad} sum to {sums[bad]:.6g}, "
                         "not 1")
    if not np.isfinite(values).all() or (np.abs(values) > 1).any():
        raise ValueError("the buffer's value targets are not all in [-1, 1]")
    if "policy_targets" in state:  # absent (all targets) in the buffers of older runs
        flags = _array(state, "policy_targets", "u")
        if len(flags) != n or (flags > 1).any():
            raise ValueError(f"the buffer's policy_targets must be {n} flags of 0 or 1, got "
                             f"{len(flags)} of {flags.min() if len(flags) else 0}.."
                             f"{flags.max() if len(flags) else 0}")
    if "aux_known" in state:  # absent in the buffers of older runs (no auxiliary targets)
        _check_aux_targets(state, n)
    states = raw.view(dtype)
    check_states(states, rules, game)
    check_legal(states, offsets.astype(np.int64), actions.astype(np.int64), rules, game)


def _check_aux_targets(state: Mapping[str, Any], n: int) -> None:
    """``ValueError`` unless the buffer's auxiliary targets are ``n`` of each kind: flags,
    score differences within the scores a game can reach, and quilts of 81 cells."""
    _mapping(state, "the replay buffer", ("score_diffs", "final_quilts"))
    flags, diffs = _array(state, "aux_known", "u"), _array(state, "score_diffs", "i")
    quilts = state["final_quilts"]
    if not isinstance(quilts, torch.Tensor) or quilts.dtype != torch.int64:
        raise ValueError("the buffer's final_quilts must be a tensor of 64-bit words")
    if len(flags) != n or len(diffs) != n or tuple(quilts.shape) != (n, 2, 2):
        raise ValueError(f"the buffer's auxiliary targets must be {n} flags, {n} score "
                         f"differences and ({n}, 2, 2) quilt words, got {len(flags)}, "
                         f"{len(diffs)} and {tuple(quilts.shape)}")
    if n and (flags.max() > 1 or np.abs(diffs.astype(np.int64)).max() > MAX_SCORE_DIFF):
        raise ValueError("the buffer's aux_known must be flags of 0 or 1 and its score "
                         f"differences within +-{MAX_SCORE_DIFF}")
    if n and (quilts.numpy()[..., 1].view(np.uint64) >> np.uint64(N_CELLS - 64)).any():
        raise ValueError("the buffer's final_quilts cover cells beyond the 81 of a quilt")


def check_states(states: np.ndarray, rules: Rules, game: AZGame = PATCHWORK) -> None:
    """``ValueError`` naming the first of ``states`` that no game of ``game`` under
    ``rules`` can reach (the checks of its state dicts:
    :func:`~patchwork_env.engine.serialize.state_from_dict` for Patchwork)."""
    for i, record in enumerate(states):
        try:
            game.round_trip(record, rules)
        except (TypeError, ValueError, IndexError, KeyError) as e:
            raise ValueError(f"the buffer's state {i} is not one a game can reach: "
                             f"{str(e).splitlines()[0] if str(e) else type(e).__name__}"
                             ) from None
        if record["to_move"] not in (0, 1):
            raise ValueError(f"the buffer's state {i} is a finished game, not a move to learn")


def check_legal(states: np.ndarray, offsets: np.ndarray, actions: np.ndarray,
                rules: Rules, game: AZGame = PATCHWORK) -> None:
    """``ValueError`` naming the first sample whose target holds an action illegal in its
    state (``offsets`` split ``actions`` into one target per state)."""
    lengths = np.diff(offsets)
    for start in range(0, len(states), LEGALITY_CHUNK):
        stop = min(start + LEGALITY_CHUNK, len(states))
        masks = game.batch_type(states[start:stop].copy(), rules).legal_mask()
        rows = np.repeat(np.arange(stop - start), lengths[start:stop])
        legal = masks[rows, actions[offsets[start]:offsets[stop]]]
        if not legal.all():
            bad = start + int(rows[np.flatnonzero(~legal)[0]])
            raise ValueError(f"the target of the buffer's sample {bad} holds an action that is "
                             "illegal in its state")


def check_average_state(state: Any, net: AZNet) -> None:
    """``ValueError`` unless ``state`` holds finite weights of ``net``'s shapes: the moving
    average of the learner's weights (:mod:`.averaging`)."""
    try:
        check_weights(net, state)
    except ValueError as e:
        raise ValueError(f"the average's weights do not fit the network: {e}") from None
    if _non_finite(state) is not None:
        raise ValueError("the average's weights are not all finite")


def _non_finite(weights: Mapping[str, torch.Tensor]) -> str | None:
    """The name of the first tensor of floats in ``weights`` with a NaN or an infinity."""
    return next((name for name, tensor in weights.items()
                 if tensor.is_floating_point() and not torch.isfinite(tensor).all()), None)


def check_learner_state(state: Any, net: torch.nn.Module) -> None:
    """``ValueError`` unless ``state`` is a learner's :meth:`state_dict` for ``net``:
    finite weights, and an AdamW state of the network's shapes with finite numbers."""
    state = _mapping(state, "the learner", ("net", "optimizer", "steps"))
    _whole(state["steps"], "the learner's step count")
    weights = _mapping(state["net"], "the network's weights", ())
    for name, tensor in weights.items():
        if not isinstance(tensor, torch.Tensor):
            raise ValueError(f"the network's {name} is not a tensor")
    if (name := _non_finite(weights)) is not None:
        raise ValueError(f"the network's {name} holds NaN or infinite weights")
    optimizer = _mapping(state["optimizer"], "the optimiser", ("state", "param_groups"))
    groups = optimizer["param_groups"]
    params = list(net.parameters())
    if (not isinstance(groups, list) or len(groups) != 1 or not isinstance(groups[0], Mapping)
            or list(groups[0].get("params", ())) != list(range(len(params)))):
        raise ValueError(f"the optimiser does not hold one group of the network's "
                         f"{len(params)} parameters")
    for key in ("lr", "weight_decay", "eps"):
        value = groups[0].get(key)
        if isinstance(value, bool) or not isinstance(value, int | float) or not (
                math.isfinite(value) and value >= 0):
            raise ValueError(f"the optimiser's {key} is {value!r}, not a finite number >= 0")
    moments = _mapping(optimizer["state"], "the optimiser's state", ())
    for index, entry in moments.items():
        if not isinstance(index, int) or not 0 <= index < len(params):
            raise ValueError(f"the optimiser has a state for parameter {index!r}, which the "
                             "network does not have")
        entry = _mapping(entry, f"the optimiser's state of parameter {index}",
                         ("step", "exp_avg", "exp_avg_sq"))
        for key in ("step", "exp_avg", "exp_avg_sq"):
            tensor = entry[key]
            if not isinstance(tensor, torch.Tensor) or not tensor.is_floating_point():
                raise ValueError(f"the optimiser's {key} of parameter {index} is not a tensor "
                                 "of floats")
            if key != "step" and tensor.shape != params[index].shape:
                raise ValueError(f"the optimiser's {key} of parameter {index} has shape "
                                 f"{tuple(tensor.shape)}, the parameter "
                                 f"{tuple(params[index].shape)}")
            if not torch.isfinite(tensor).all() or (key != "exp_avg" and (tensor < 0).any()):
                raise ValueError(f"the optimiser's {key} of parameter {index} holds NaN, "
                                 "infinite or impossible negative numbers")
