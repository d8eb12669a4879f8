"""Where a network runs: the ``--device`` and ``--precision`` choices, checked against this
machine.

* :func:`resolve_device`: ``auto`` (CUDA if this machine has it, else MPS, else the CPU),
  ``cpu``, ``cuda``, ``cuda:N`` or ``mps`` as a ``torch.device``; a device the machine
  lacks is a one-line :class:`DeviceError` naming the value and the choices it has.
* :data:`PRECISIONS` and :func:`check_precision`: ``fp32`` everywhere, ``bf16`` on CUDA and
  the CPU, ``fp16`` on CUDA only; :func:`autocast` runs a network's forward pass in one of
  them (``fp32``: as it is).
* :class:`Uploader`: observations from numpy to the device, through a pinned buffer and an
  asynchronous copy on CUDA.
* :func:`use_threads`: how many CPU threads a process's networks and engine kernels take.
"""

from __future__ import annotations

import contextlib
import copy
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:  # torch is imported when a device is resolved, not before (for --help)
    import torch

DEVICE_CHOICES = "auto, cpu, cuda, cuda:N or mps"
"""The device names, as the help and the errors list them."""
PRECISIONS = ("fp32", "bf16", "fp16")
"""The precisions of a network's forward pass: float32, or mixed with bfloat16 or float16."""
_NAME = re.compile(r"(auto|cpu|mps|cuda)(?::(\d+))?")


class DeviceError(ValueError):
    """A device or precision this machine cannot run (the message is one line)."""


def looks_like_device(name: str) -> bool:
    """Whether ``name`` is spelled as a device (``auto``, ``cpu``, ``cuda``, ``cuda:N``,
    ``mps``), whether or not this machine has it."""
    match = _NAME.fullmatch(name)
    return bool(match) and (match.group(2) is None or match.group(1) == "cuda")


def available_devices() -> list[str]:
    """The device names this machine can run: ``auto``, ``cpu``, then ``cuda`` and each
    ``cuda:N``, and ``mps``, where present."""
    import torch

    names = ["auto", "cpu"]
    if torch.cuda.is_available():
        names += ["cuda", *(f"cuda:{i}" for i in range(torch.cuda.device_count()))]
    if torch.backends.mps.is_available():
        names.append("mps")
    return names


def resolve_device(name: str | torch.device = "auto", what: str = "--device") -> torch.device:
    """The ``torch.device`` that ``name`` asks for on this machine; :class:`DeviceError`
    (``"{what} {name}: ..."``) for a name that is no device or one the machine lacks."""
    import torch

    if isinstance(name, torch.device):
        name = str(name)
    if not isinstance(name, str) or not looks_like_device(name):
        raise DeviceError(f"{what} {name}: not a device (choose {DEVICE_CHOICES})")
    choices = available_devices()
    if name == "auto":
        return torch.device(choices[2] if len(choices) > 2 else "cpu")
    if name not in choices:
        kind = name.partition(":")[0]
        if kind == "mps":
            lacks = "has no MPS device"
        elif kind not in choices:
            lacks = "has no CUDA device"
        else:
            last = torch.cuda.device_count() - 1
            lacks = ("has one CUDA device (cuda:0)" if last == 0
                     else f"has {last + 1} CUDA devices (cuda:0 to cuda:{last})")
        raise DeviceError(f"{what} {name}: this machine {lacks} (choose "
                          f"{', '.join(choices[:-1])} or {choices[-1]})")
    return torch.device(name)


def check_precision(precision: str, device: torch.device, what: str = "--precision") -> str:
    """``precision`` if a network on ``device`` can run in it; :class:`DeviceError` naming
    the precision, the device and the choices otherwise."""
    import torch

    if precision not in PRECISIONS:
        raise DeviceError(f"{what} {precision}: not a precision (choose {', '.join(PRECISIONS)})")
    if precision == "fp16" and device.type != "cuda":
        raise DeviceError(f"{what} fp16 runs on a CUDA device only, not on {device} (choose "
                          f"fp32{' or bf16' if device.type == 'cpu' else ''})")
    if precision == "bf16" and device.type not in ("cuda", "cpu"):
        raise DeviceError(f"{what} bf16 runs on a CUDA device or the CPU, not on {device} "
                          "(choose fp32)")
    if precision == "bf16" and device.type == "cuda" and not torch.cuda.is_bf16_supported():
        raise DeviceError(f"{what} bf16: this machine's {device} has no bfloat16 (choose fp32 "
                          "or fp16)")
    return precision


@contextlib.contextmanager
def autocast(device: torch.device, precision: str) -> Iterator[None]:
    """Run the forward passes inside in ``precision`` on ``device`` (``fp32``: as they
    are; ``bf16``, ``fp16``: torch's automatic mixed precision)."""
    import torch

    if precision == "fp32":
        yield
        return
    dtype = torch.bfloat16 if precision == "bf16" else torch.float16
    with torch.autocast(device_type=device.type, dtype=dtype):
        yield


def use_threads(threads: int) -> None:
    """Run this process's engine kernels (numba, at most as many threads as it started
    with) and, where torch is installed, its networks on ``threads`` threads each. Processes
    that share the cores each take their share: more threads than cores only wait on one
    another."""
    import numba

    numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
    try:
        import torch
    except ImportError:  # torch is optional: only the agents with a network need it
        return
    torch.set_num_threads(threads)


def on_cpu(value: Any) -> Any:
    """``value`` with every tensor in it (in dicts, lists and tuples) copied to the CPU
    where it is on another device: what a file or a process without an accelerator
    receives (a checkpoint, the weights sent to self-play workers)."""
    import torch

    if isinstance(value, torch.Tensor):
        return value.detach().cpu()
    if isinstance(value, dict):  # a shallow copy keeps a state dict's type and _metadata
        copied = copy.copy(value)
        for key, item in value.items():
            copied[key] = on_cpu(item)
        return copied
    if isinstance(value, list | tuple):
        return type(value)(on_cpu(v) for v in value)
    return value


class Uploader:
    """Copies numpy arrays to ``device``: on the CPU without a copy (``torch.from_numpy``);
    on CUDA through a pinned host buffer, reused from call to call, and an asynchronous
    copy."""

    def __init__(self, device: torch.device) -> None:
        self.device = device
        self._pinned: torch.Tensor | None = None
        self._copied: torch.cuda.Event | None = None

    def __call__(self, array: np.ndarray) -> torch.Tensor:
        import torch

        tensor = torch.from_numpy(np.ascontiguousarray(array))
        if self.device.type != "cuda":
            return tensor.to(self.device)
        return self._through_pinned(tensor)

    def _through_pinned(self, tensor: torch.Tensor) -> torch.Tensor:
        import torch

        if self._copied is not None:
            self._copied.synchronize()  # the previous copy has left the buffer
        n = tensor.numel()
        if self._pinned is None or self._pinned.dtype != tensor.dtype or self._pinned.numel() < n:
            self._pinned = torch.empty(n, dtype=tensor.dtype, pin_memory=True)
        staged = self._pinned[:n].view(tensor.shape)
        staged.copy_(tensor)
        result = staged.to(self.device, non_blocking=True)
        self._copied = torch.cuda.Event()
        self._copied.record()
        return result


__all__ = ["DEVICE_CHOICES", "PRECISIONS", "DeviceError", "Uploader", "autocast",
           "available_devices", "check_precision", "looks_like_device", "on_cpu",
           "resolve_device"]
