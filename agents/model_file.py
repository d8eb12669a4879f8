"""Model files: a policy saved as its network's config and its weights, nothing pickled.

A policy file (``.pt``) is one ``torch.save`` of plain data::

    {"format": "patchwork-policy", "version": 1,
     "config": {"net": "stencil",
                "net_kwargs": {"channels": 32, "blocks": 4, "hidden": 256, "maps": 16},
                "observation_size": 1189, "n_actions": 2026},
     "state_dict": {"mlp_extractor.stem.weight": tensor, ...},
     "sha256": "..."}

and is read back with ``torch.load(..., weights_only=True)``: it names no class, so it
loads wherever this package is installed, whatever module the network was trained from.
The config is what :func:`policy_config` gives and :func:`build_policy` reads; ``sha256``
is :func:`weights_digest` of the weights, so a damaged byte among them is caught (torch's
archive does not check its contents).

:func:`load_policy` also reads the ``MaskablePPO`` zips that ``model.save`` writes (such as
a training run's ``best.zip``), again without unpickling anything: the zip's ``policy.pth``
is a state dict, and its ``data`` JSON gives the observation size and, as plain JSON,
the ``policy_kwargs`` (``{"net_kwargs": {"kind": "stencil", ...}}`` for this project's
networks, ``{"net_arch": ...}`` or nothing for an MLP).

Every problem (a missing file, a damaged one, another format or version, weights that do
not fit the network) is a one-line :class:`FileNotFoundError` or :class:`ModelFileError`
naming the file. Converting a zip::

    python -m patchwork_env.agents.model_file best.zip best.pt
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import pickle
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
from gymnasium import spaces
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from stable_baselines3.common.torch_layers import FlattenExtractor
from torch import nn

from patchwork_env.agents.ppo.networks import NETS, FastMaskablePolicy, PatchworkPolicy
from patchwork_env.data.actions import N_ACTIONS
from patchwork_env.files.atomic import write_bytes

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

FORMAT = "patchwork-policy"
"""The ``format`` entry of a policy file."""
VERSION = 1
"""The version of the policy file format this module writes and reads."""
SB3_POLICY_KWARGS = ("net_kwargs", "net_arch", "ortho_init")
"""The ``policy_kwargs`` of a MaskablePPO zip that :func:`load_policy` understands."""


class ModelFileError(ValueError):
    """A model file that cannot be read, or that does not hold a policy this package plays."""


class _Refused(Exception):
    """Why a file's contents are refused (in words fit to follow "cannot load X:")."""


# ----- a policy as a config, and back ---------------------------------------------------

ACTIVATIONS: dict[str, type[nn.Module]] = {"tanh": nn.Tanh, "relu": nn.ReLU}
"""The activations an MLP policy may use, by the name its config gives."""
NET_KINDS = (*NETS, "mlp")
"""Every ``net`` a policy config may name."""


def _no_schedule(_: float) -> float:
    """The learning rate of a policy built to play, not to learn."""
    return 0.0


def mlp_arch(net_arch: Any) -> dict[str, list[int]]:
    """SB3's ``net_arch`` (``None``, a list for both heads, or ``{"pi": .., "vf": ..}``) as
    ``{"pi": [...], "vf": [...]}``."""
    if net_arch is None:
        return {"pi": [64, 64], "vf": [64, 64]}  # sb3's default for an MLP policy
    if isinstance(net_arch, dict):
        if set(net_arch) - {"pi", "vf"}:
            raise ValueError(f"net_arch keys must be pi and vf, got {sorted(net_arch)}")
        return {"pi": [int(n) for n in net_arch.get("pi", [])],
                "vf": [int(n) for n in net_arch.get("vf", [])]}
    if isinstance(net_arch, list | tuple):
        return {"pi": [int(n) for n in net_arch], "vf": [int(n) for n in net_arch]}
    raise ValueError(f"net_arch must be a list or a dict of lists, got {net_arch!r}")


def policy_config(policy: MaskableActorCriticPolicy) -> dict[str, Any]:
    """The JSON-able description of ``policy``'s network that :func:`build_policy` reads:
    ``net`` (one of :data:`NET_KINDS`), ``net_kwargs``, ``observation_size``,
    ``n_actions``; ``ValueError`` for a policy it cannot describe."""
    if not isinstance(policy.observation_space, spaces.Box) or len(
            policy.observation_space.shape) != 1:
        raise ValueError("only policies over flat Box observations can be described")
    size = int(policy.observation_space.shape[0])
    n_actions = int(policy.action_space.n)
    if isinstance(policy, PatchworkPolicy):
        net = policy.net_kwargs.get("kind", "conv")
        kwargs: dict[str, Any] = policy.mlp_extractor.config()
    elif type(policy) in (MaskableActorCriticPolicy, FastMaskablePolicy):
        names = {cls: name for name, cls in ACTIVATIONS.items()}
        if (policy.activation_fn not in names
                or policy.features_extractor_class is not FlattenExtractor):
            raise ValueError("only MLP policies with tanh or relu activations over "
                             "flattened observations can be described")
        net = "mlp"
        kwargs = {"net_arch": mlp_arch(policy.net_arch),
                  "activation": names[policy.activation_fn]}
    else:
        raise ValueError(f"cannot describe a {type(policy).__name__}")
    return {"net": net, "net_kwargs": kwargs, "observation_size": size, "n_actions": n_actions}


def build_policy(config: dict[str, Any]) -> MaskableActorCriticPolicy:
    """A policy of the network ``config`` describes (see :func:`policy_config`), in
    evaluation mode on the CPU, with fresh weights; ``ValueError`` if it describes none."""
    if not isinstance(config, dict) or set(config) != {"net", "net_kwargs",
                                                        "observation_size", "n_actions"}:
        raise ValueError("the network config must have exactly the keys net, net_kwargs, "
                         f"observation_size and n_actions, got {config!r}")
    net, kwargs = config["net"], config["net_kwargs"]
    size, n_actions = config["observation_size"], config["n_actions"]
    if net not in NET_KINDS:
        raise ValueError(f"unknown network {net!r}: the networks are {', '.join(NET_KINDS)}")
    if not isinstance(kwargs, dict):
        raise ValueError(f"net_kwargs must be a dict, got {kwargs!r}")
    if not isinstance(size, int) or size < 1:
        raise ValueError(f"observation_size must be a positive int, got {size!r}")
    if n_actions != N_ACTIONS:
        raise ValueError(f"a policy plays {N_ACTIONS} actions, this one {n_actions!r}")
    obs_space = spaces.Box(0.0, 1.0, (size,), np.float32)
    act_space = spaces.Discrete(N_ACTIONS)
    try:
        if net == "mlp":
            kwargs = dict(kwargs)
            activation = kwargs.pop("activation", "tanh")
            if activation not in ACTIVATIONS:
                raise ValueError(f"activation must be one of {', '.join(ACTIVATIONS)}, "
                                 f"got {activation!r}")
            arch = mlp_arch(kwargs.pop("net_arch", None))
            if kwargs:
                raise ValueError(f"unknown MLP arguments {sorted(kwargs)}")
            policy: MaskableActorCriticPolicy = FastMaskablePolicy(
                obs_space, act_space, _no_schedule, net_arch=arch,
                activation_fn=ACTIVATIONS[activation], ortho_init=False)
        else:
            policy = PatchworkPolicy(obs_space, act_space, _no_schedule,
                                     net_kwargs={"kind": net, **kwargs}, ortho_init=False)
    except (KeyError, TypeError, ValueError, RuntimeError) as e:
        raise ValueError(f"cannot build a {net} network from {kwargs}: {e}") from None
    policy.set_training_mode(False)
    return policy


# ----- files --------------------------------------------------------------------------

def save_policy(policy: MaskableActorCriticPolicy, path: str | os.PathLike[str]) -> Path:
    """Write ``policy`` (its network config and weights) to ``path`` as a policy file,
    atomically; ``ValueError`` for a policy whose network has no config."""
    return write_policy_file(path, policy_config(policy), policy.state_dict())


def write_policy_file(path: str | os.PathLike[str], config: dict[str, Any],
                      state_dict: dict[str, Any]) -> Path:
    """Write a policy file (format, version, the JSON-able ``config``, the weights and
    their digest) to ``path`` atomically: a reader never sees half a file, and a failed
    write (a full disk) is a one-line :class:`~patchwork_env.files.atomic.WriteError`
    naming the file, leaving no temporary behind."""
    path = Path(path)
    state = {k: v.detach().cpu().clone() for k, v in state_dict.items()}
    payload = {"format": FORMAT, "version": VERSION, "config": config,
               "state_dict": state, "sha256": weights_digest(state)}
    buf = io.BytesIO()
    torch.save(payload, buf)
    write_bytes(path, buf.getvalue())
    return path


def load_policy(path: str | os.PathLike[str] | Traversable, device: str = "cpu"
                ) -> MaskableActorCriticPolicy:
    """The policy saved at ``path`` (a policy file, or a MaskablePPO zip), in evaluation mode.

    ``FileNotFoundError`` if there is no such file; :class:`ModelFileError` (one line, naming
    the file) if it cannot be read or holds no policy this package can build.
    """
    source = Path(path) if isinstance(path, str | os.PathLike) else path
    if not source.is_file():
        raise FileNotFoundError(f"no model file at {path}")
    try:
        data = source.read_bytes()
    except OSError as e:
        raise ModelFileError(f"cannot read {path}: {e.strerror or e}") from None
    sb3 = _is_sb3_zip(data)
    what = "MaskablePPO checkpoint" if sb3 or str(path).endswith(".zip") else "policy file"
    try:
        config, state = read_sb3_zip(data) if sb3 else read_policy_file(data)
        try:
            policy = build_policy(config)
        except ValueError as e:
            raise _Refused(f"its network config is not one this package builds ({e})"
                           ) from None
        _check_weights(policy, state, config["net"])
        policy.load_state_dict(state)
    except _Refused as e:
        raise ModelFileError(f"cannot load {path} as a {what}: {e}") from None
    except Exception as e:  # zip, torch and JSON errors alike mean a damaged file
        reason = str(e).splitlines()[0] if str(e) else ""
        raise ModelFileError(f"cannot load {path} as a {what} ({type(e).__name__}: "
                             f"{reason})") from e
    return policy.to(device)


def weights_digest(state: dict[str, torch.Tensor]) -> str:
    """The SHA-256 of a state dict: its names, dtypes, shapes and bytes, in name order."""
    digest = hashlib.sha256()
    for name in sorted(state):
        tensor = state[name].detach().cpu().contiguous()
        digest.update(f"{name}:{tensor.dtype}:{tuple(tensor.shape)};".encode())
        digest.update(tensor.reshape(-1).view(torch.uint8).numpy().tobytes())
    return digest.hexdigest()


def read_policy_file(data: bytes) -> tuple[dict[str, Any], dict[str, torch.Tensor]]:
    """``(config, state_dict)`` from the bytes of a policy file, its checksum verified."""
    if not zipfile.is_zipfile(io.BytesIO(data)):
        raise _Refused("it is not a torch archive (truncated, or another kind of file)")
    try:
        payload = torch.load(io.BytesIO(data), map_location="cpu", weights_only=True)
    except pickle.UnpicklingError:
        raise _Refused("it holds objects other than tensors and plain data, so it was not "
                       "written by save_policy") from None
    if not isinstance(payload, dict) or payload.get("format") != FORMAT:
        found = payload.get("format") if isinstance(payload, dict) else type(payload).__name__
        raise _Refused(f"its format is {found!r}, not {FORMAT!r}")
    if payload.get("version") != VERSION:
        raise _Refused(f"it has format version {payload.get('version')!r}; this version of "
                       f"patchwork-env reads version {VERSION}")
    missing = [k for k in ("config", "state_dict", "sha256") if k not in payload]
    if missing:
        raise _Refused(f"it lacks its {' and '.join(missing)}")
    state = payload["state_dict"]
    if not isinstance(state, dict) or not all(
            isinstance(k, str) and isinstance(v, torch.Tensor) for k, v in state.items()):
        raise _Refused("its weights are not a dict of named tensors")
    if weights_digest(state) != payload["sha256"]:
        raise _Refused("its weights do not match their checksum (the file is damaged)")
    return payload["config"], state


def read_sb3_zip(data: bytes) -> tuple[dict[str, Any], dict[str, torch.Tensor]]:
    """``(config, state_dict)`` from the bytes of a MaskablePPO zip, unpickling nothing."""
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        meta = json.loads(archive.read("data"))
        weights = archive.read("policy.pth")
    try:
        state = torch.load(io.BytesIO(weights), map_location="cpu", weights_only=True)
    except pickle.UnpicklingError:
        raise _Refused("its policy.pth holds more than tensors") from None
    return sb3_config(meta), state


def sb3_config(meta: dict[str, Any]) -> dict[str, Any]:
    """The network config of a MaskablePPO zip, from its ``data`` JSON."""
    kwargs = meta.get("policy_kwargs") or {}
    if not isinstance(kwargs, dict) or ":serialized:" in kwargs:
        raise _Refused("its policy_kwargs are pickled objects, not plain JSON")
    unknown = sorted(set(kwargs) - set(SB3_POLICY_KWARGS))
    if unknown:
        raise _Refused(f"its policy_kwargs {unknown} are not understood (known: "
                       f"{', '.join(SB3_POLICY_KWARGS)})")
    try:
        shape = meta["observation_space"]["_shape"]
        shape = [int(n) for n in (json.loads(shape) if isinstance(shape, str) else shape)]
        n_actions = int(meta["action_space"]["n"])
    except (KeyError, TypeError, ValueError):
        raise _Refused("it does not record the sizes of its observations and actions"
                       ) from None
    if len(shape) != 1:
        raise _Refused(f"its observations have shape {tuple(shape)}, not a flat vector")
    if "net_kwargs" in kwargs:
        net_kwargs = dict(kwargs["net_kwargs"])
        net = net_kwargs.pop("kind", "conv")
    else:
        try:
            net, net_kwargs = "mlp", {"net_arch": mlp_arch(kwargs.get("net_arch"))}
        except ValueError as e:
            raise _Refused(str(e)) from None
    return {"net": net, "net_kwargs": net_kwargs, "observation_size": int(shape[0]),
            "n_actions": n_actions}


def _is_sb3_zip(data: bytes) -> bool:
    """Whether ``data`` is a zip with the members ``model.save`` writes."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            names = set(archive.namelist())
    except zipfile.BadZipFile:
        return False
    return {"data", "policy.pth"} <= names


def _few(names: list[str], n: int = 3) -> str:
    """Up to ``n`` names, and how many more there are."""
    more = f" and {len(names) - n} more" if len(names) > n else ""
    return ", ".join(names[:n]) + more


def _check_weights(policy: MaskableActorCriticPolicy, state: Any, net: str) -> None:
    """Refuse weights that are not the tensors ``policy`` has, or not finite."""
    if not isinstance(state, dict) or not all(
            isinstance(k, str) and isinstance(v, torch.Tensor) for k, v in state.items()):
        raise _Refused("its weights are not a dict of named tensors")
    expected = policy.state_dict()
    missing = [k for k in expected if k not in state]
    unexpected = [k for k in state if k not in expected]
    shapes = [f"{k} is {tuple(state[k].shape)} (the network's: {tuple(v.shape)})"
              for k, v in expected.items() if k in state and state[k].shape != v.shape]
    problems = ([f"missing {_few(missing)}"] if missing else []) + (
        [f"unexpected {_few(unexpected)}"] if unexpected else []) + shapes[:3]
    if problems:
        raise _Refused(f"its weights do not fit its {net} network: {'; '.join(problems)}")
    if not all(torch.isfinite(v).all() for v in state.values() if v.is_floating_point()):
        raise _Refused("some of its weights are NaN or infinite")


def main(argv: list[str] | None = None) -> int:
    """Convert a model file (e.g. a MaskablePPO zip) to a policy file."""
    parser = argparse.ArgumentParser(prog="python -m patchwork_env.agents.model_file",
                                     description=main.__doc__)
    parser.add_argument("source", help="a MaskablePPO zip or a policy file")
    parser.add_argument("target", help="the policy file to write (.pt)")
    args = parser.parse_args(argv)
    try:
        policy = load_policy(args.source)
    except (FileNotFoundError, ModelFileError) as e:
        parser.exit(2, f"error: {e}\n")
    save_policy(policy, args.target)
    config = policy_config(policy)
    print(f"wrote {args.target}: a {config['net']} network {config['net_kwargs']} over "
          f"{config['observation_size']} observation features")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
