"""Low-level machinery of the compiled engine: bit tricks, random numbers, byte rows.

Nothing here knows of Patchwork's rules; everything is an inlined ``njit`` helper or an
LLVM intrinsic that :mod:`.kernels` and :mod:`.batch_kernels` build on.

* Bitboards: a quilt is 81 bits held in two ``uint64`` words, ``lo`` and ``hi``; cell ``c``
  is bit ``c`` of the 81-bit number ``lo | hi << 64``. :func:`popcount`,
  :func:`lowest_bit`, :func:`bit_index`, :func:`kth_bit` count and find set bits;
  :func:`shift_down` moves every bit down by ``d`` without a branch; :func:`disjoint` and
  :func:`covers` compare two bitboards; :func:`list_set_bits` and :func:`fill_set_bits`
  visit the set bits in order.
* Small arrays in a word: :func:`with_byte` and :func:`byte_of` keep up to eight bytes in
  one ``uint64``, so a kernel can put a few values aside without allocating an array.
* Random numbers: splitmix64 used as a counter-based generator. Every row of a batch
  derives its own state from the call's seed and its row index (:func:`row_seed`), so a
  result does not depend on the number of threads or on which thread ran which row.
* Byte rows: a legal mask is a ``bool`` array whose rows the kernels see as ``uint8``
  rows, one byte (0 or 1) per action. Writing and sampling them a byte at a time costs
  more than the rules themselves, so eight entries move per ``uint64``: unaligned loads
  and stores (:func:`load_u64`, :func:`store_u64`), cache prefetches
  (:func:`prefetch_row`), a bitboard written as 81 bytes (:func:`write_bitboard`) and
  the count of set bytes in a run of words (:func:`count_set_bytes`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from llvmlite import ir
from numba import njit
from numba import types as nb_types
from numba.core import cgutils
from numba.core.extending import intrinsic

from patchwork_env.engine import compiling  # noqa: F401  (first: its cache locators apply to every njit below)

ONE = np.uint64(1)
"""``1`` as a ``uint64`` (numba would otherwise mix signed and unsigned integers)."""

_M1 = np.uint64(0x5555555555555555)
_M2 = np.uint64(0x3333333333333333)
_M4 = np.uint64(0x0F0F0F0F0F0F0F0F)
_H01 = np.uint64(0x0101010101010101)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_BYTE = np.uint64(0xFF)
_SPREAD = np.uint64(0x8040201008040201)  # byte k keeps bit k
_LOW7 = np.uint64(0x7F7F7F7F7F7F7F7F)
_HIGH = np.uint64(0x8080808080808080)
_LANES = np.uint64(0x00FF00FF00FF00FF)
_H16 = np.uint64(0x0001000100010001)

# ---------------------------------------------------------------------------------------
# bitboards: counting, finding and shifting set bits


@njit(cache=True, inline="always")
def popcount(x):
    """The number of set bits of the ``uint64`` ``x`` (as an ``int64``)."""
    x = x - ((x >> np.uint64(1)) & _M1)
    x = (x & _M2) + ((x >> np.uint64(2)) & _M2)
    x = (x + (x >> np.uint64(4))) & _M4
    return np.int64((x * _H01) >> np.uint64(56))


@njit(cache=True, inline="always")
def lowest_bit(x):
    """``x`` with every set bit but the lowest one cleared (0 if ``x`` is 0)."""
    return x & (~x + ONE)


@njit(cache=True, inline="always")
def bit_index(bit):
    """The index (0..63) of the single set bit of ``bit``."""
    return popcount(bit - ONE)


@njit(cache=True, inline="always")
def kth_bit(lo, hi, k):
    """The index of the ``k``-th (from 0) set bit of the two-word bitboard ``lo, hi``."""
    c = popcount(lo)
    if k >= c:
        k -= c
        lo = hi
        offset = 64
    else:
        offset = 0
    for _ in range(k):
        lo &= lo - ONE
    return offset + bit_index(lowest_bit(lo))


@njit(cache=True, inline="always")
def shift_down(lo, hi, d):
    """The two-word bitboard shifted so that bit ``a`` holds former bit ``a + d``,
    ``0 <= d < 64``.

    No branches (the legal-mask kernels shift by every cell offset of every shape): the
    high word goes down by 1 then by ``63 - d``, which stays defined, and gives 0, at d = 0.
    """
    d = np.uint64(d)
    return (lo >> d) | ((hi << ONE) << (np.uint64(63) - d)), hi >> d


@njit(cache=True, inline="always")
def disjoint(a_lo, a_hi, b_lo, b_hi):
    """Whether the bitboards ``a`` and ``b`` have no set bit in common."""
    return (a_lo & b_lo) == 0 and (a_hi & b_hi) == 0


@njit(cache=True, inline="always")
def covers(a_lo, a_hi, b_lo, b_hi):
    """Whether every set bit of ``b`` is set in ``a``."""
    return (a_lo & b_lo) == b_lo and (a_hi & b_hi) == b_hi


@njit(cache=True, inline="always")
def list_set_bits(out, n, base, lo, hi):
    """Write ``base + c`` for every set bit ``c`` of the bitboard ``lo, hi`` to ``out``, from
    ``out[n]`` on and in increasing order; returns the new length."""
    for w in range(2):
        bits = hi if w else lo
        while bits:
            low = lowest_bit(bits)
            out[n] = base + w * 64 + bit_index(low)
            n += 1
            bits ^= low
    return n


@njit(cache=True, inline="always")
def fill_set_bits(row, lo, hi, value):
    """``row[c] = value`` for every set bit ``c`` of the bitboard ``lo, hi``."""
    for w in range(2):
        bits = hi if w else lo
        while bits:
            low = lowest_bit(bits)
            row[w * 64 + bit_index(low)] = value
            bits ^= low


# ---------------------------------------------------------------------------------------
# small arrays in a word


@njit(cache=True, inline="always")
def with_byte(word, k, value):
    """``word`` with its byte ``k`` (0..7) replaced by the low byte of ``value``."""
    shift = np.uint64(8 * k)
    return (word & ~(_BYTE << shift)) | ((np.uint64(value) & _BYTE) << shift)


@njit(cache=True, inline="always")
def byte_of(word, k):
    """Byte ``k`` (0..7) of ``word``, as an ``int64``."""
    return np.int64((word >> np.uint64(8 * k)) & _BYTE)


# ---------------------------------------------------------------------------------------
# splitmix64, a counter-based random generator


@njit(cache=True, inline="always")
def next_random(rng):
    """Advance a splitmix64 state; returns ``(new_state, 64 random bits)``."""
    rng = rng + _GOLDEN
    z = rng
    z = (z ^ (z >> np.uint64(30))) * _MIX1
    z = (z ^ (z >> np.uint64(27))) * _MIX2
    return rng, z ^ (z >> np.uint64(31))


@njit(cache=True, inline="always")
def random_below(rng, n):
    """``(new_state, k)`` with ``k`` uniform in ``0..n-1`` (bias below 2**-40)."""
    rng, bits = next_random(rng)
    return rng, np.int64(((bits >> np.uint64(11)) * np.uint64(n)) >> np.uint64(53))


@njit(cache=True, inline="always")
def row_seed(seed, row):
    """The generator state of batch row ``row`` for a call seeded with ``seed``."""
    _, bits = next_random(np.uint64(seed) ^ (np.uint64(row) * _MIX2))
    return bits


# ---------------------------------------------------------------------------------------
# byte rows: unaligned loads and stores, prefetch (LLVM intrinsics)


def _pointer(context: Any, builder: Any, row_type: Any, row: Any, offset: Any,
             bits: int = 64) -> Any:
    """LLVM pointer to the ``bits``-bit integer at byte ``offset`` of the byte array
    ``row``."""
    data = context.make_array(row_type)(context, builder, row).data
    return builder.bitcast(builder.gep(data, [offset]), ir.IntType(bits).as_pointer())


@intrinsic
def store_u64(typingctx, row, offset, value):
    """Store the ``uint64`` ``value`` at byte ``offset`` of the byte array ``row``.

    An unaligned 8-byte store: mask blocks start at any byte.
    """

    def codegen(context, builder, signature, args):
        row_v, offset_v, value_v = args
        target = _pointer(context, builder, signature.args[0], row_v, offset_v)
        builder.store(value_v, target).align = 1
        return context.get_dummy_value()

    return nb_types.void(row, offset, value), codegen


@intrinsic
def load_u64(typingctx, row, offset):
    """The ``uint64`` at byte ``offset`` of the byte array ``row`` (an unaligned load)."""

    def codegen(context, builder, signature, args):
        row_v, offset_v = args
        value = builder.load(_pointer(context, builder, signature.args[0], row_v, offset_v))
        value.align = 1
        return value

    return nb_types.uint64(row, offset), codegen


def _prefetch_intrinsic(write: bool) -> Any:
    """An intrinsic ``(row, offset)`` that asks the CPU to fetch the cache line holding byte
    ``offset`` of the array ``row`` (for writing or for reading)."""

    @intrinsic
    def prefetch(typingctx, row, offset):
        def codegen(context, builder, signature, args):
            row_v, offset_v = args
            target = _pointer(context, builder, signature.args[0], row_v, offset_v, bits=8)
            i32 = ir.IntType(32)
            fn = cgutils.get_or_insert_function(
                builder.module, ir.FunctionType(ir.VoidType(), [target.type, i32, i32, i32]),
                "llvm.prefetch.p0")
            # (address, 1 = write / 0 = read, locality 3 = keep in all levels, data cache)
            builder.call(fn, [target, ir.Constant(i32, int(write)), ir.Constant(i32, 3),
                              ir.Constant(i32, 1)])
            return context.get_dummy_value()

        return nb_types.void(row, offset), codegen

    return prefetch


prefetch_for_write = _prefetch_intrinsic(write=True)
"""``prefetch_for_write(row, offset)``: fetch the cache line of ``row[offset]`` to write it."""
prefetch_for_read = _prefetch_intrinsic(write=False)
"""``prefetch_for_read(row, offset)``: fetch the cache line of ``row[offset]`` to read it."""

PREFETCH_AHEAD = 4
"""Mask rows ahead of the one being written or read whose cache lines are requested early:
a large batch's mask outgrows the caches, and waiting for each row's lines in turn would
take a good share of the mask's time."""


@njit(cache=True, inline="always")
def prefetch_row(rows, i, write):
    """Request the cache lines of row ``i`` of the 2-D byte array ``rows``, if it exists."""
    if i < rows.shape[0]:
        row = rows[i]
        for offset in range(0, row.shape[0], 64):
            if write:
                prefetch_for_write(row, offset)
            else:
                prefetch_for_read(row, offset)


# ---------------------------------------------------------------------------------------
# byte rows: eight entries per word


@njit(cache=True, inline="always")
def byte_to_bools(b):
    """The 8 bits of the byte ``b`` as 8 bytes of 0 or 1, bit 0 in the lowest byte."""
    return ((((b * _H01) & _SPREAD) + _LOW7) & _HIGH) >> np.uint64(7)


@njit(cache=True, inline="always")
def write_bitboard(row, base, lo, hi):
    """``row[base + c] = bit c`` of an 81-cell bitboard, eight cells per store, no branches."""
    for j in range(8):
        store_u64(row, base + 8 * j, byte_to_bools((lo >> np.uint64(8 * j)) & _BYTE))
    store_u64(row, base + 64, byte_to_bools(hi & _BYTE))
    store_u64(row, base + 72, byte_to_bools((hi >> np.uint64(8)) & _BYTE))
    row[base + 80] = (hi >> np.uint64(16)) & ONE


@njit(cache=True, inline="always")
def set_bytes_in_word(word):
    """How many of the 8 bytes of a mask word are set (each byte is 0 or 1)."""
    return np.int64((word * _H01) >> np.uint64(56))


@njit(cache=True, inline="always")
def sum_byte_lanes(lanes):
    """The sum of the 8 byte lanes of ``lanes`` (each at most 255)."""
    lanes = (lanes & _LANES) + ((lanes >> np.uint64(8)) & _LANES)
    return np.int64((lanes * _H16) >> np.uint64(48))


MAX_WORDS_COUNTED = 255
"""The most words :func:`count_set_bytes` may sum: a byte lane holds at most 255."""


@njit(cache=True, inline="always")
def count_set_bytes(row, lo, hi):
    """Set bytes in the words ``lo..hi-1`` of the byte row ``row`` (at most
    :data:`MAX_WORDS_COUNTED` words): a plain sum of the words cannot carry between lanes."""
    lanes = np.uint64(0)
    for j in range(lo, hi):
        lanes += load_u64(row, 8 * j)
    return sum_byte_lanes(lanes)
