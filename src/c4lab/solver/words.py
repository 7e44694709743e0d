"""The word operations of the solver's search, for one 64-bit word and for three.

The search (:mod:`c4lab.solver.negamax`) is written once, over bitboards of
either type: a ``uint64`` (boards with ``W * (H + 1) <= 64``, 7x6 among
them) or a tuple of three ``uint64`` words, lowest first (up to 192 bits:
12x12 is 156).  Each operation here is a generic function that numba
resolves by the type of its first argument when it compiles the search, so
each width gets its own machine code with the operation inlined: nothing is
decided at run time.  Bit ``c * (H + 1) + r`` is cell (column ``c``, row
``r``) in both; with three words a column may straddle two words, so the
addition carries across words and the shifts move bits between words.

What truly differs by width lives here, not in the search:

* the arithmetic (``add``, ``shl``, ``shr``, ``popcount``...); what is
  built on it (the win test :func:`completing`) is written once;
* the transposition table (:func:`table_slot`, :func:`table_get`,
  :func:`table_put`): both widths key a position by ``cur | (mask +
  bottom)`` with a tag for the ban piece and the table generation; one word
  keeps two 16-byte entries a 32-byte row (the first for the bigger search),
  three words one entry a row.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core.dispatcher import Dispatcher
from numba.extending import intrinsic, overload

from c4lab.rules.kernels import U0, U1, U

U64 = U(64)

#: numba's options for every operation here: each is compiled into the
#: search that uses it and called from nowhere else (neither from Python nor
#: through a C pointer), so it gets no C entry point, which numba builds for
#: every overload by default (a tenth of the solver's first compilation).
#: (``Any``: numba's type stubs list only the public ``jit`` options.)
INTERNAL: Any = {"no_cfunc_wrapper": True}

#: The three-word table tag keeps the generation modulo 2**40.
GEN_MASK = U((1 << 40) - 1)


def _by_width(word: Any, one: Callable[..., Any], three: Callable[..., Any]) -> Callable[..., Any]:
    """The implementation for the type of ``word`` (a numba type), as the
    plain function numba compiles into the caller."""
    chosen = one if isinstance(word, types.Integer) else three
    return chosen.py_func if isinstance(chosen, Dispatcher) else chosen


# -- bit arithmetic ----------------------------------------------------------------


def and_(a, b):
    """``a & b``."""


@overload(and_, jit_options=INTERNAL)
def _and(a, b):
    return _by_width(a, lambda a, b: a & b, lambda a, b: (a[0] & b[0], a[1] & b[1], a[2] & b[2]))


def or_(a, b):
    """``a | b``."""


@overload(or_, jit_options=INTERNAL)
def _or(a, b):
    return _by_width(a, lambda a, b: a | b, lambda a, b: (a[0] | b[0], a[1] | b[1], a[2] | b[2]))


def xor(a, b):
    """``a ^ b``."""


@overload(xor, jit_options=INTERNAL)
def _xor(a, b):
    return _by_width(a, lambda a, b: a ^ b, lambda a, b: (a[0] ^ b[0], a[1] ^ b[1], a[2] ^ b[2]))


def andnot(a, b):
    """``a & ~b``."""


@overload(andnot, jit_options=INTERNAL)
def _andnot(a, b):
    return _by_width(a, lambda a, b: a & ~b, lambda a, b: (a[0] & ~b[0], a[1] & ~b[1], a[2] & ~b[2]))


def nonzero(a):
    """Whether any bit of ``a`` is set."""


@overload(nonzero, jit_options=INTERNAL)
def _nonzero(a):
    return _by_width(a, lambda a: a != U0, lambda a: (a[0] | a[1] | a[2]) != U0)


def equal(a, b):
    """``a == b``."""


@overload(equal, jit_options=INTERNAL)
def _equal(a, b):
    return _by_width(a, lambda a, b: a == b, lambda a, b: ((a[0] ^ b[0]) | (a[1] ^ b[1]) | (a[2] ^ b[2])) == U0)


def zero(like):
    """The empty bitboard of ``like``'s width."""


@overload(zero, jit_options=INTERNAL)
def _zero(like):
    return _by_width(like, lambda like: U0, lambda like: (U0, U0, U0))


def load(X, i, like):
    """The bitboard of ``like``'s width stored at ``X[i]`` (and ``X[i + 1]``,
    ``X[i + 2]`` for three words)."""


@overload(load, jit_options=INTERNAL)
def _load(X, i, like):
    return _by_width(like, lambda X, i, like: X[i], lambda X, i, like: (X[i], X[i + 1], X[i + 2]))


def store(X, i, word):
    """Write ``word`` at ``X[i]`` (and ``X[i + 1]``, ``X[i + 2]`` for three words)."""


def _store3(X, i, word):
    X[i] = word[0]
    X[i + 1] = word[1]
    X[i + 2] = word[2]


def _store1(X, i, word):
    X[i] = word


@overload(store, jit_options=INTERNAL)
def _store(X, i, word):
    return _by_width(word, _store1, _store3)


def shl(a, s):
    """``a << s`` for 0 < s < 64."""


@njit(inline="always")
def _shl3(a, s):
    t = U64 - s
    return (a[0] << s, (a[1] << s) | (a[0] >> t), (a[2] << s) | (a[1] >> t))


@overload(shl, jit_options=INTERNAL)
def _shl(a, s):
    return _by_width(a, lambda a, s: a << s, _shl3)


def shr(a, s):
    """``a >> s`` for 0 < s < 64."""


@njit(inline="always")
def _shr3(a, s):
    t = U64 - s
    return ((a[0] >> s) | (a[1] << t), (a[1] >> s) | (a[2] << t), a[2] >> s)


@overload(shr, jit_options=INTERNAL)
def _shr(a, s):
    return _by_width(a, lambda a, s: a >> s, _shr3)


def add(a, b):
    """``a + b`` (with three words the carries cross the words; the top carry
    is dropped)."""


@njit(inline="always")
def _add3(a, b):
    r0 = a[0] + b[0]
    c0 = U1 if r0 < a[0] else U0
    t1 = a[1] + b[1]
    r1 = t1 + c0
    c1 = U1 if (t1 < a[1]) | (r1 < t1) else U0
    return (r0, r1, a[2] + b[2] + c1)


@overload(add, jit_options=INTERNAL)
def _add(a, b):
    return _by_width(a, lambda a, b: a + b, _add3)


@njit(inline="always")
def _popcount1(x):
    x = x - ((x >> U1) & U(0x5555555555555555))
    x = (x & U(0x3333333333333333)) + ((x >> U(2)) & U(0x3333333333333333))
    x = (x + (x >> U(4))) & U(0x0F0F0F0F0F0F0F0F)
    return (x * U(0x0101010101010101)) >> U(56)


def popcount(a):
    """The number of bits set in ``a``."""


@overload(popcount, jit_options=INTERNAL)
def _popcount(a):
    def three(a):
        return _popcount1(a[0]) + _popcount1(a[1]) + _popcount1(a[2])

    return _by_width(a, lambda a: _popcount1(a), three)


def several(a):
    """Whether ``a`` holds two bits or more."""


@overload(several, jit_options=INTERNAL)
def _several(a):
    def three(a):
        return _popcount1(a[0]) + _popcount1(a[1]) + _popcount1(a[2]) > U1

    return _by_width(a, lambda a: (a & (a - U1)) != U0, three)


# -- the game on bitboards ------------------------------------------------------


@njit(inline="always")
def completing(p, stride):
    """The cells where one more piece of ``p``'s owner would complete four
    (occupied and off-board cells not removed: callers intersect): three in
    a line below (vertical), or on one side, or two on one side and one on
    the other, in the three other directions.  Written with the generic
    operations, so numba inlines it whole into each width's search."""
    r = and_(and_(shl(p, U1), shl(p, U(2))), shl(p, U(3)))
    for d in (stride, stride - U1, stride + U1):
        l1 = shl(p, d)
        l2 = shl(p, d + d)
        l3 = shl(p, d + d + d)
        r1 = shr(p, d)
        r2 = shr(p, d + d)
        r3 = shr(p, d + d + d)
        r = or_(r, and_(and_(l1, l2), or_(l3, r1)))
        r = or_(r, and_(and_(r1, r2), or_(r3, l1)))
    return r


@njit(inline="always")
def _and3(a, b):
    return (a[0] & b[0], a[1] & b[1], a[2] & b[2])


@njit(inline="always")
def _or3(a, b):
    return (a[0] | b[0], a[1] | b[1], a[2] | b[2])


# -- the transposition table -----------------------------------------------------------
#
# A table is ``size`` rows of four words (32 bytes), ``size`` a power of two.
# The position's key is ``cur | (mask + bottom)``: in each column the side to
# move's pieces below a marker bit on the landing cell (the guard bit when the
# column is full), and the forbidden cells above it; with the board's
# forbidden cells it gives ``cur`` and ``mask`` back, so it is unique on one
# board (one table generation holds positions of one board only).  A tag
# adds the ban piece's cell (index + 1, 0: none) and the table generation
# (older entries never match).  A flag (upper or lower bound) and the bound
# are stored with them.
#
# One word: a row holds two entries of two words (key; flag, value + 128,
# the entry's empty cells, tag): the first keeps the entry with more empty
# cells (a bigger search to save), the second takes the others.  Three
# words: a row is one entry (three key words; flag, value + 128, tag).


@njit(inline="always")
def _low_index1(x):
    """The index of the lowest bit of ``x`` plus one, 0 if none."""
    return _popcount1((x & (~x + U1)) - U1) + U1 if x else U0


@njit(inline="always")
def _low_index(a):
    """The index of the lowest bit of three words plus one, 0 if none."""
    index = U0
    if a[0]:
        index = _low_index1(a[0])
    elif a[1]:
        index = _low_index1(a[1]) + U64
    elif a[2]:
        index = _low_index1(a[2]) + U(128)
    return index


def low_index(a):
    """The index of the lowest set bit of ``a`` plus one (0 if none)."""


@overload(low_index, jit_options=INTERNAL)
def _low_index_any(a):
    return _by_width(a, lambda a: _low_index1(a), lambda a: _low_index(a))


@njit(inline="always")
def _row1(key, size):
    h = key * U(0x9E3779B97F4A7C15)
    h ^= h >> U(32)
    h *= U(0xD6E8FEB86659FD93)
    h ^= h >> U(29)
    return h & U(size - 1)


@njit(inline="always")
def _slot1(cur, mask, neutral, bottom, playable, generation, size):
    key = cur | (mask + bottom)
    tag = _low_index1(neutral & playable) | ((generation & U(0xFFFFFFFF)) << U(8))
    return _row1(key, size), key, tag


@njit(inline="always")
def _slot3(cur, mask, neutral, bottom, playable, generation, size):
    key = _or3(cur, _add3(mask, bottom))
    tag = _low_index(_and3(neutral, playable)) | ((generation & GEN_MASK) << U(8))
    h = key[0] * U(0x9E3779B97F4A7C15) ^ (key[1] + U(0x632BE59BD9B4E019)) * U(0xC2B2AE3D27D4EB4F)
    h ^= (key[2] + tag) * U(0x165667B19E3779F9)
    h ^= h >> U(32)
    h *= U(0xD6E8FEB86659FD93)
    h ^= h >> U(29)
    return h & U(size - 1), key, tag


@njit(inline="always")
def _mirror1(key, width, stride):
    """``key`` with its columns in the reverse order (one word)."""
    column = (U1 << stride) - U1
    out = U0
    for c in range(width):
        out |= ((key >> (U(c) * stride)) & column) << (U(width - 1 - c) * stride)
    return out


@njit(inline="always")
def _canonical_slot1(cur, mask, neutral, bottom, playable, generation, size, width, stride):
    key = cur | (mask + bottom)
    if not (neutral & playable):
        mirrored = _mirror1(key, width, stride)
        key = min(key, mirrored)
    tag = _low_index1(neutral & playable) | ((generation & U(0xFFFFFFFF)) << U(8))
    return _row1(key, size), key, tag


def _canonical_slot3(cur, mask, neutral, bottom, playable, generation, size, width, stride):
    return _slot3(cur, mask, neutral, bottom, playable, generation, size)


def canonical_slot(cur, mask, neutral, bottom, playable, generation, size, width, stride):
    """:func:`table_slot` of the smaller of the position and its mirror image
    (a position with a ban piece: its own); one word only (three words: its
    own slot)."""


@overload(canonical_slot, jit_options=INTERNAL)
def _canonical_slot(cur, mask, neutral, bottom, playable, generation, size, width, stride):
    return _by_width(cur, _canonical_slot1, _canonical_slot3)


def table_slot(cur, mask, neutral, bottom, playable, generation, size):
    """Where the position goes in a table of ``size`` rows, and what
    identifies it there: ``(row, key, tag)``."""


@overload(table_slot, jit_options=INTERNAL)
def _table_slot(cur, mask, neutral, bottom, playable, generation, size):
    return _by_width(cur, _slot1, _slot3)


@njit(inline="always")
def _get1(tt, row, key, tag):
    for e in (0, 2):
        meta = tt[row, e + 1]
        if tt[row, e] == key and meta >> U(24) == tag:
            return np.int64(meta & U(0xFF)), np.int64((meta >> U(8)) & U(0xFF)) - 128
    return np.int64(0), np.int64(0)


@njit(inline="always")
def _get3(tt, row, key, tag):
    meta = tt[row, 3]
    if meta >> U(16) == tag and tt[row, 0] == key[0] and tt[row, 1] == key[1] and tt[row, 2] == key[2]:
        return np.int64(meta & U(0xFF)), np.int64((meta >> U(8)) & U(0xFF)) - 128
    return np.int64(0), np.int64(0)


def table_get(tt, row, key, tag):
    """``(flag, value)`` stored for the position at ``row`` (flag 0: none)."""


@overload(table_get, jit_options=INTERNAL)
def _table_get(tt, row, key, tag):
    return _by_width(key, _get1, _get3)


@njit(inline="always")
def _put1(tt, row, key, tag, flag, value, empty):
    meta = U(flag) | (U(value + 128) << U(8)) | (U(empty) << U(16)) | (tag << U(24))
    first = tt[row, 1]
    if tt[row, 0] == key and first >> U(24) == tag:
        tt[row, 1] = meta
    elif tt[row, 2] == key and tt[row, 3] >> U(24) == tag:
        tt[row, 3] = meta
    elif first >> U(32) != tag >> U(8) or U(empty) >= (first >> U(16)) & U(0xFF):
        tt[row, 0] = key  # an older generation's, or a smaller search's: replaced
        tt[row, 1] = meta
    else:
        tt[row, 2] = key
        tt[row, 3] = meta


@njit(inline="always")
def _put3(tt, row, key, tag, flag, value, empty):
    tt[row, 0] = key[0]
    tt[row, 1] = key[1]
    tt[row, 2] = key[2]
    tt[row, 3] = U(flag) | (U(value + 128) << U(8)) | (tag << U(16))


def table_put(tt, row, key, tag, flag, value, empty):
    """Store ``flag`` and ``value`` for the position (``empty``: its empty
    cells, which the one-word table's replacement weighs)."""


@overload(table_put, jit_options=INTERNAL)
def _table_put(tt, row, key, tag, flag, value, empty):
    return _by_width(key, _put1, _put3)


# -- raw memory ----------------------------------------------------------------------


@intrinsic
def data_pointer(typingctx, arr):
    """The address of an array's first element (a raw pointer: no reference
    count, so passing it down a recursion costs no atomic operations)."""
    sig = types.CPointer(arr.dtype)(arr)

    def codegen(context, builder, signature, args):
        return context.make_array(signature.args[0])(context, builder, args[0]).data

    return sig, codegen


@intrinsic
def prefetch(typingctx, ptr, index):
    """Ask the CPU to load ``ptr[index]``'s cache line (a hint: no effect on
    the result)."""
    sig = types.void(ptr, index)

    def codegen(context, builder, signature, args):
        address = builder.gep(args[0], [args[1]])
        i8p = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        fn = builder.module.declare_intrinsic("llvm.prefetch", [i8p], ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32]))
        builder.call(fn, [builder.bitcast(address, i8p), i32(0), i32(3), i32(1)])
        return context.get_dummy_value()

    return sig, codegen


def _pointer_at(dtype: Any) -> Any:
    """An intrinsic that turns an address (a ``uint64``) into a pointer to
    ``dtype`` (for arrays that a context array refers to by address)."""

    @intrinsic
    def pointer_at(typingctx, address):  # type: ignore[no-untyped-def]
        sig = types.CPointer(dtype)(address)

        def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
            return builder.inttoptr(args[0], context.get_value_type(signature.return_type))

        return sig, codegen

    return pointer_at


int32_at = _pointer_at(types.int32)
int8_at = _pointer_at(types.int8)
