"""One inference service for many self-play processes.

The self-play workers run the engine and their search trees on their own cores; at every
simulation step each sends its new leaves to the service, which evaluates the leaves of
all workers in one network call on the run's device (a GPU, where there is one) and
sends the results back. This is how self-play feeds an accelerator large batches while
the tree work spreads over many cores.

Transport: each worker has a block of shared memory, the size of its largest batch, that
holds its leaves' observations going in and their logits and values coming out; a pipe
carries a few bytes each way (how many leaves are waiting; that the results are there).
Nothing is pickled per call.

The service batches in *rounds*: a round waits for one message from every worker taking
part (a batch of leaves, or the word that it is done) and evaluates the leaves in worker
order. The batches are therefore the same from run to run for a seed, whatever the timing,
and so are the games. :meth:`InferenceService.begin` names the workers of the next
rounds; a worker leaves them by saying it is done (:meth:`RemoteEvaluator.done`).
"""

from __future__ import annotations

import contextlib
import multiprocessing
import struct
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from multiprocessing.shared_memory import SharedMemory
from typing import Any

import numpy as np

from patchwork_env.data.actions import N_ACTIONS

NetworkEvaluator = Callable[[np.ndarray, Any], tuple[np.ndarray, np.ndarray]]
"""``evaluate(observations (k, size) float32, None) -> (logits (k, 2026), values (k,))``:
a network's evaluator (:func:`~patchwork_env.agents.az.net.make_evaluator`), which needs
no masks."""

_REQUEST = struct.Struct("<i")
"""A worker's message: the number of leaves waiting in its block, or :data:`_DONE`."""
_DONE = 0
_READY = b"\x01"
"""The service's answer: the results are in the block (or, for a done, noted)."""
_FAILED = b"\x00"
POLL_SECONDS = 0.2
"""How often the service's thread looks whether it is asked to stop."""


class ServiceError(RuntimeError):
    """The inference service failed (its network call raised); the message is one
    line."""


@dataclass(frozen=True)
class LeafBlock:
    """Where one worker's leaves and their results live: a shared-memory block laid out as
    observations ``(max_leaves, obs_size) float32``, logits ``(max_leaves, 2026) float32``,
    values ``(max_leaves,) float32``."""

    name: str
    max_leaves: int
    obs_size: int

    @property
    def nbytes(self) -> int:
        """The block's size."""
        return 4 * self.max_leaves * (self.obs_size + N_ACTIONS + 1)

    def arrays(self, memory: SharedMemory) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The block's three arrays, views into ``memory``."""
        n, size = self.max_leaves, self.obs_size
        obs = np.ndarray((n, size), np.float32, memory.buf, 0)
        logits = np.ndarray((n, N_ACTIONS), np.float32, memory.buf, 4 * n * size)
        values = np.ndarray((n,), np.float32, memory.buf, 4 * n * (size + N_ACTIONS))
        return obs, logits, values


@dataclass(frozen=True)
class ServiceLink:
    """What a worker process needs to reach the service: its block and its pipe's end
    (passed to the process when it starts)."""

    block: LeafBlock
    connection: Connection


class RemoteEvaluator:
    """A worker's :data:`~patchwork_env.agents.az.search.Evaluator` that has its leaves
    evaluated by the service at the other end of ``link``."""

    def __init__(self, link: ServiceLink) -> None:
        self.block = link.block
        self._connection = link.connection
        self._memory = SharedMemory(link.block.name)
        self._obs, self._logits, self._values = link.block.arrays(self._memory)

    def __call__(self, obs: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        k = len(obs)
        if not 0 < k <= self.block.max_leaves:
            raise ValueError(f"a worker sends 1..{self.block.max_leaves} leaves at once, "
                             f"got {k}")
        self._obs[:k] = obs
        self._ask(k)
        return self._logits[:k], self._values[:k]

    def done(self) -> None:
        """Say that this worker sends no more leaves until the service's next
        :meth:`~InferenceService.begin` (its rounds go on without it)."""
        self._ask(_DONE)

    def _ask(self, message: int) -> None:
        self._connection.send_bytes(_REQUEST.pack(message))
        if self._connection.recv_bytes() != _READY:
            raise ServiceError("the inference service failed; the learner's process "
                               "reports why")

    def close(self) -> None:
        """Let go of the shared memory."""
        del self._obs, self._logits, self._values
        self._memory.close()


class InferenceService:
    """Evaluates the leaves of ``n_workers`` workers with ``evaluate``, in a thread of
    this process (see the module docstring).

    ``max_leaves``: the most leaves a worker sends at once (its games in flight);
    ``obs_size``: the observation's size under the run's rules. :meth:`link` gives what
    worker ``i`` needs; :meth:`close` stops the thread and frees the shared memory.
    """

    def __init__(self, evaluate: NetworkEvaluator, n_workers: int, max_leaves: int,
                 obs_size: int) -> None:
        if n_workers < 1 or max_leaves < 1:
            raise ValueError("an inference service needs at least one worker and one leaf")
        self._evaluate = evaluate
        self._memory: list[SharedMemory] = []
        self._blocks: list[LeafBlock] = []
        self._arrays: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        self._ends: list[tuple[Connection, Connection]] = []
        self._active: list[int] = []
        self._changed = threading.Condition()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.failure: str | None = None
        """Why the service failed (one line), or ``None``."""
        self.batches = 0
        """Network calls made."""
        self.leaves = 0
        """Leaves evaluated."""
        try:
            for _ in range(n_workers):
                size = LeafBlock("", max_leaves, obs_size).nbytes
                memory = SharedMemory(create=True, size=size)
                self._memory.append(memory)
                block = LeafBlock(memory.name, max_leaves, obs_size)
                self._blocks.append(block)
                self._arrays.append(block.arrays(memory))
                self._ends.append(multiprocessing.Pipe())
        except BaseException:
            self.close()
            raise
        self._thread = threading.Thread(target=self._serve, name="inference-service",
                                        daemon=True)
        self._thread.start()

    def link(self, worker: int) -> ServiceLink:
        """What worker ``worker`` needs (its block and its end of the pipe)."""
        return ServiceLink(self._blocks[worker], self._ends[worker][1])

    def begin(self, workers: Sequence[int]) -> None:
        """The workers of the rounds to come (each until it says it is done)."""
        with self._changed:
            self._active = sorted(set(workers))
            self._changed.notify()

    # ----- the service's thread ------------------------------------------------------
    def _serve(self) -> None:
        while not self._stop.is_set():
            with self._changed:
                if not self._active:
                    self._changed.wait(POLL_SECONDS)
                active = list(self._active)
            if not active:
                continue
            messages = self._gather(active)
            if messages is None:
                return
            self._answer(messages)

    def _gather(self, active: list[int]) -> dict[int, int] | None:
        """One message from each of the ``active`` workers (``None``: asked to stop, or a
        worker's process ended, which its pool reports)."""
        messages: dict[int, int] = {}
        waiting = {self._ends[w][0]: w for w in active}
        while waiting:
            if self._stop.is_set():
                return None
            for connection in wait(list(waiting), POLL_SECONDS):
                worker = waiting.pop(connection)  # type: ignore[call-overload]
                try:
                    messages[worker] = _REQUEST.unpack(connection.recv_bytes())[0]
                except (EOFError, OSError):
                    return None
        return messages

    def _answer(self, messages: dict[int, int]) -> None:
        """Evaluate the round's leaves in one call and tell each worker; after a failed
        call, every later batch is refused (each worker then reports the failure)."""
        done = [w for w, k in messages.items() if k == _DONE]
        asking = [(w, k) for w, k in sorted(messages.items()) if k != _DONE]
        if done:
            with self._changed:
                self._active = [w for w in self._active if w not in done]
        if asking and self.failure is None:
            try:
                self._evaluate_round(asking)
            except Exception as e:  # the network call (a device out of memory, say)
                reason = str(e).splitlines()[0] if str(e) else type(e).__name__
                self.failure = f"the inference service's network call failed: {reason}"
        answer = _FAILED if self.failure is not None else _READY
        for worker in messages:
            self._ends[worker][0].send_bytes(_READY if worker in done else answer)

    def _evaluate_round(self, asking: list[tuple[int, int]]) -> None:
        """Evaluate the leaves of the workers ``asking`` (``(worker, leaves)``, in worker
        order) in one network call, and write each worker's results into its block."""
        first, k0 = asking[0]
        obs = (self._arrays[first][0][:k0] if len(asking) == 1 else
               np.concatenate([self._arrays[w][0][:k] for w, k in asking]))
        logits, values = self._evaluate(obs, None)
        values = np.asarray(values).reshape(-1)
        start = 0
        for w, k in asking:
            _, out_logits, out_values = self._arrays[w]
            out_logits[:k] = logits[start:start + k]
            out_values[:k] = values[start:start + k]
            start += k
        self.batches += 1
        self.leaves += start

    def close(self) -> None:
        """Stop the thread and free the shared memory (the workers must be gone or
        done)."""
        self._stop.set()
        with self._changed:
            self._changed.notify()
        if self._thread is not None:
            self._thread.join()
        for a, b in self._ends:
            a.close()
            b.close()
        self._ends, self._arrays = [], []
        for memory in self._memory:
            with contextlib.suppress(OSError):
                memory.close()
                memory.unlink()
        self._memory = []


__all__ = ["InferenceService", "LeafBlock", "NetworkEvaluator", "RemoteEvaluator",
           "ServiceError", "ServiceLink"]
