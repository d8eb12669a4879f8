"""How the engine's compiled code is built and cached.

* A batch loop is a plain Python function whose outer loop is a ``numba.prange``:
  :func:`compile_serial_and_parallel` turns it into a serial and a parallel ``njit``
  function, each cached on disk, and :func:`pick` chooses the parallel one for batches
  large enough to pay for the threads.
* numba judges an on-disk cache fresh by the source file of its own function only, so a
  batch loop of ``batch_kernels.py`` would go on running the old rules after an edit of
  ``kernels.py`` or ``bits.py``, which it inlines. Importing this module (``bits.py``
  does, before its first ``njit``) makes the caches of this package's functions stale
  as soon as any of the :data:`ENGINE_SOURCES` changes too.
"""

from __future__ import annotations

import functools
import hashlib
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numba
from numba import njit
from numba.core import caching

PARALLEL_MIN_BATCH = 256
"""Batches at least this large use the multi-threaded kernels (when numba has threads)."""


def renamed_copy(fn: Callable[..., Any], suffix: str) -> Callable[..., Any]:
    """A copy of ``fn`` named ``fn.__name__ + suffix``.

    numba's on-disk cache tells functions apart by name and bytecode, not by the
    ``parallel`` flag: compiled from one function, the serial and the parallel kernels
    would share a cache entry and the first one compiled would serve for both.
    """
    name = fn.__name__ + suffix
    code = fn.__code__.replace(co_name=name)
    if hasattr(code, "co_qualname"):
        code = code.replace(co_qualname=fn.__qualname__ + suffix)
    copy = types.FunctionType(code, fn.__globals__, name, fn.__defaults__, fn.__closure__)
    copy.__qualname__ = fn.__qualname__ + suffix
    copy.__module__ = fn.__module__
    copy.__doc__ = fn.__doc__
    return copy


def compile_serial_and_parallel(fn: Callable[..., Any]) -> tuple[Any, Any]:
    """``fn`` compiled serial and multi-threaded, each with its own on-disk cache."""
    return njit(cache=True)(fn), njit(cache=True, parallel=True)(renamed_copy(fn, "_parallel"))


def pick(kernels: tuple[Any, Any], n: int) -> Any:
    """The serial or the parallel kernel of a pair, for a batch of ``n`` games."""
    serial, parallel = kernels
    if n >= PARALLEL_MIN_BATCH and numba.get_num_threads() > 1:
        return parallel
    return serial


# ---------------------------------------------------------------------------------------
# on-disk caches that notice edits to the modules compiled code inlines

ENGINE_SOURCES = ("data/actions", "data/patches", "data/rules", "data/tables", "engine/bits",
                  "engine/kernels", "engine/batch_kernels", "engine/compiling")
"""The modules of this package whose functions and tables compiled code may inline."""

_PACKAGE_DIR = Path(__file__).resolve().parents[1]


@functools.cache
def _file_digest(path: str, mtime_ns: int, size: int) -> bytes:
    return hashlib.sha256(Path(path).read_bytes()).digest()


def engine_sources_stamp() -> str:
    """A hash of the contents of the :data:`ENGINE_SOURCES` files."""
    digest = hashlib.sha256()
    for name in ENGINE_SOURCES:
        path = _PACKAGE_DIR / f"{name}.py"
        st = path.stat()
        digest.update(_file_digest(str(path), st.st_mtime_ns, st.st_size))
    return digest.hexdigest()


def _stamping_engine_sources(base: type) -> type:
    """The cache locator ``base``, for this package's functions only, with a freshness
    stamp that also covers :data:`ENGINE_SOURCES`."""

    class Locator(base):
        covers_engine_sources = True

        def get_source_stamp(self) -> Any:
            return super().get_source_stamp(), engine_sources_stamp()

        @classmethod
        def from_function(cls, py_func: Any, py_file: str) -> Any:
            if not str(getattr(py_func, "__module__", "")).startswith("patchwork_env"):
                return None
            return super().from_function(py_func, py_file)

    Locator.__name__ = Locator.__qualname__ = f"EngineSources{base.__name__}"
    return Locator


def _install_engine_locators() -> None:
    """Put the locators of :func:`_stamping_engine_sources` before numba's own (once)."""
    impl = getattr(caching, "CacheImpl", None) or getattr(caching, "_CacheImpl", None)
    classes = getattr(impl, "_locator_classes", None)
    if not isinstance(classes, list) or any(
            getattr(c, "covers_engine_sources", False) for c in classes):
        return  # another numba layout (caches then keep numba's own stamp), or done
    bases = [getattr(caching, name, None) for name in
             ("UserProvidedCacheLocator", "InTreeCacheLocator", "UserWideCacheLocator")]
    classes[:0] = [_stamping_engine_sources(base) for base in bases if base is not None]


_install_engine_locators()
