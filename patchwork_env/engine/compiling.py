"""How the engine's compiled code is built and cached.

* A batch loop is a plain Python function whose outer loop is a ``numba.prange``:
  :func:`compile_serial_and_parallel` turns it into a serial and a parallel ``njit``
  function, each cached on disk, and :func:`pick` chooses the parallel one for batches
  large enough to pay for the threads.
* numba judges an on-disk cache fresh by the source file of its own function only, while
  compiled code carries the compiled functions it calls (and the tables it reads) inside
  it: a batch loop of ``batch_kernels.py`` would go on running the old rules after an
  edit of ``kernels.py``, and an agent's search after an edit of the helpers it calls.
  Importing this module (``bits.py`` does, before its first ``njit``) puts cache locators
  before numba's own for every ``patchwork_env`` function, whose freshness stamp also
  covers every source file that function's code may include: see :func:`sources_stamp`.
"""

from __future__ import annotations

import functools
import hashlib
import types
import warnings
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
# on-disk caches that notice edits to the modules compiled code includes

SHARED_FOLDERS = ("data", "engine")
"""The folders of this package whose functions and tables any compiled code may include."""

_PACKAGE_DIR = Path(__file__).resolve().parents[1]


@functools.cache
def _folder_digest(folder: str) -> bytes:
    """A hash of the names and contents of the ``.py`` files under ``folder`` (once per
    process: the code a process runs is the code it imported)."""
    digest = hashlib.sha256()
    root = Path(folder)
    for path in sorted(root.rglob("*.py")):
        digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.digest()


def subpackage_folder(module: str, py_file: str) -> Path:
    """The folder of the top-level subpackage ``patchwork_env.X`` that holds the module
    ``module``, loaded from ``py_file``: found from the file, since the subpackages do
    not all live inside the package's own folder (``agents/`` is installed as
    ``patchwork_env.agents``). A module directly in the package gives its own folder."""
    path = Path(py_file).resolve()
    up = len(module.split(".")) - 3 + (path.name == "__init__.py")
    return path.parents[up] if up >= 0 else path.parent


def sources_stamp(module: str, py_file: str) -> str:
    """A hash of every source file that the compiled code of a function of ``module``
    (loaded from ``py_file``) may include: the ``.py`` files of :data:`SHARED_FOLDERS` and
    of the subpackage folder the module lives in (:func:`subpackage_folder`)."""
    folders = {str(_PACKAGE_DIR / name) for name in SHARED_FOLDERS}
    folders.add(str(subpackage_folder(module, py_file)))
    digest = hashlib.sha256()
    for folder in sorted(folders):
        digest.update(_folder_digest(folder))
    return digest.hexdigest()


def _stamping_sources(base: type) -> type:
    """The cache locator ``base``, for this package's functions only, with a freshness
    stamp that also covers :func:`sources_stamp`."""

    class Locator(base):  # type: ignore[misc, valid-type]
        covers_included_sources = True

        def get_source_stamp(self) -> Any:
            return super().get_source_stamp(), sources_stamp(self._module, self._py_file)

        def get_disambiguator(self) -> str:
            # The stamp is in the cache's file names too: numba unpickles an index before
            # it compares stamps, and an index written before a type it names moved to
            # another module would fail to unpickle instead of reading as stale.
            stamp = sources_stamp(self._module, self._py_file)[:12]
            return f"{super().get_disambiguator()}-{stamp}"

        @classmethod
        def from_function(cls, py_func: Any, py_file: str) -> Any:
            module = str(getattr(py_func, "__module__", ""))
            if module != "patchwork_env" and not module.startswith("patchwork_env."):
                return None
            locator = super().from_function(py_func, py_file)
            if locator is not None:
                locator._module = module
            return locator

    Locator.__name__ = Locator.__qualname__ = f"IncludedSources{base.__name__}"
    return Locator


LOCATOR_BASES = ("UserProvidedCacheLocator", "InTreeCacheLocator", "UserWideCacheLocator")
"""numba's locators of functions backed by a source file, which get a stamping twin."""


def install_locators() -> bool:
    """Put the locators of :func:`_stamping_sources` before numba's own (once); whether
    they are in place. Where numba's cache machinery is laid out otherwise, numba's own
    locators stay in charge (each cache then goes by its own file only) and a
    ``RuntimeWarning`` says so."""
    impl = getattr(caching, "_CacheImpl", None) or getattr(caching, "CacheImpl", None)
    classes = getattr(impl, "_locator_classes", None)
    bases = [getattr(caching, name, None) for name in LOCATOR_BASES]
    mixin = getattr(caching, "_SourceFileBackedLocatorMixin", None)
    if (not isinstance(classes, list) or mixin is None
            or not all(isinstance(b, type) and issubclass(b, mixin) for b in bases)):
        warnings.warn(f"numba {numba.__version__} lays out its cache locators in a way "
                      "patchwork_env does not know: on-disk caches of compiled code go by "
                      "their own source file only, so after editing a module that compiled "
                      "code calls, clear the caches (__pycache__/*.nbi, *.nbc)",
                      RuntimeWarning, stacklevel=2)
        return False
    if not any(getattr(c, "covers_included_sources", False) for c in classes):
        classes[:0] = [_stamping_sources(base) for base in bases]
    return True


install_locators()
