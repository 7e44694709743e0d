"""The word operations of the solver's search, for one 64-bit word and for three.

The search (:mod:`c4lab.solver.negamax`) is written once, over bitboards of
either type: a ``uint64`` (boards with ``W * (H + 1) <= 64``, 7x6 among
them) or a tuple of three ``uint64`` words, lowest first (up to 192 bits:
12x12 is 156).  Each operation here is resolved by the type of its first
argument when numba compiles the search, so each width gets its own machine
code: nothing is decided at run time.  Bit ``c * (H + 1) + r`` is cell (column ``c``, row
``r``) in both; with three words a column may straddle two words, so the
addition carries across words and the shifts move bits between words.

What truly differs by width lives here, not in the search:

* the arithmetic (``add``, ``shl``, ``shr``, ``popcount``...), numba
  intrinsics that write their few LLVM instructions into the search
  itself; what is built on it (the win test :func:`completing`) is written
  once;
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

#: numba's options for the table's operations: each is compiled into the
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
#
# Each operation is a numba intrinsic: it writes its few LLVM instructions
# straight into the function that calls it.  As overloads (a small function
# each, compiled on its own and called) they cost a quarter of the one-word
# search's first compilation, and inlined by numba (typed again at every
# call) more; LLVM's own ``ctpop`` and ``cttz`` count and find the bits.


def _is_one(word: Any) -> bool:
    """Whether a numba type is the one-word bitboard (else three words)."""
    return isinstance(word, types.Integer)


def _parts(builder: Any, word_type: Any, value: Any) -> list[Any]:
    """The LLVM values of a bitboard's words, lowest first."""
    if _is_one(word_type):
        return [value]
    return [builder.extract_value(value, i) for i in range(3)]


def _bitboard(context: Any, builder: Any, word_type: Any, parts: list[Any]) -> Any:
    """The bitboard of ``word_type`` made of ``parts`` (as :func:`_parts` gives them)."""
    if _is_one(word_type):
        return parts[0]
    value = ir.Constant(context.get_value_type(word_type), ir.Undefined)
    for i, part in enumerate(parts):
        value = builder.insert_value(value, part, i)
    return value


_I64 = ir.IntType(64)


def _fold(combine: Callable[[Any, Any], Any], values: list[Any]) -> Any:
    """``values`` combined two by two, left to right (the words' union, their sum)."""
    result = values[0]
    for value in values[1:]:
        result = combine(result, value)
    return result


def _count(builder: Any, parts: list[Any]) -> Any:
    """The number of bits set in the words ``parts`` (LLVM's ``ctpop``)."""
    return _fold(builder.add, [builder.ctpop(part) for part in parts])


def _named_intrinsic(typer: Callable[..., Any], name: str, doc: str) -> Any:
    """The intrinsic of ``typer`` (a typing function made by a factory
    here), under the operation's own name and docstring."""
    typer.__name__ = typer.__qualname__ = name
    typer.__doc__ = doc
    return intrinsic(typer)


def _elementwise(name: str, doc: str, op: Callable[[Any, Any, Any], Any]) -> Any:
    """The operation ``op(builder, x, y)`` word by word on two bitboards of one width."""

    def typer(typingctx: Any, a: Any, b: Any) -> Any:
        def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
            xs = _parts(builder, a, args[0])
            ys = _parts(builder, a, context.cast(builder, args[1], b, a))
            return _bitboard(context, builder, a, [op(builder, x, y) for x, y in zip(xs, ys)])

        return a(a, b), codegen

    return _named_intrinsic(typer, name, doc)


and_ = _elementwise("and_", "``a & b``.", lambda builder, x, y: builder.and_(x, y))
or_ = _elementwise("or_", "``a | b``.", lambda builder, x, y: builder.or_(x, y))
xor = _elementwise("xor", "``a ^ b``.", lambda builder, x, y: builder.xor(x, y))
andnot = _elementwise("andnot", "``a & ~b``.", lambda builder, x, y: builder.and_(x, builder.not_(y)))


@intrinsic
def nonzero(typingctx, a):
    """Whether any bit of ``a`` is set."""

    def codegen(context, builder, signature, args):
        union = _fold(builder.or_, _parts(builder, a, args[0]))
        return builder.icmp_unsigned("!=", union, union.type(0))

    return types.boolean(a), codegen


@intrinsic
def equal(typingctx, a, b):
    """``a == b``."""

    def codegen(context, builder, signature, args):
        differ = [builder.xor(x, y) for x, y in zip(_parts(builder, a, args[0]), _parts(builder, a, args[1]))]
        union = _fold(builder.or_, differ)
        return builder.icmp_unsigned("==", union, union.type(0))

    return types.boolean(a, b), codegen


@intrinsic
def zero(typingctx, like):
    """The empty bitboard of ``like``'s width."""

    def codegen(context, builder, signature, args):
        return _bitboard(context, builder, like, [_I64(0)] * (1 if _is_one(like) else 3))

    return like(like), codegen


def _element(context: Any, builder: Any, array_type: Any, array: Any, index_type: Any, index: Any, k: int) -> Any:
    """The address of ``array[index + k]`` (no bounds check, as numba's indexing)."""
    data = context.make_array(array_type)(context, builder, array).data
    at = context.cast(builder, index, index_type, types.int64)
    if k:
        at = builder.add(at, _I64(k))
    return builder.gep(data, [at])


@intrinsic
def load(typingctx, X, i, like):
    """The bitboard of ``like``'s width stored at ``X[i]`` (and ``X[i + 1]``,
    ``X[i + 2]`` for three words)."""

    def codegen(context, builder, signature, args):
        n = 1 if _is_one(like) else 3
        parts = [builder.load(_element(context, builder, X, args[0], i, args[1], k)) for k in range(n)]
        return _bitboard(context, builder, like, parts)

    return like(X, i, like), codegen


@intrinsic
def store(typingctx, X, i, word):
    """Write ``word`` at ``X[i]`` (and ``X[i + 1]``, ``X[i + 2]`` for three words)."""

    def codegen(context, builder, signature, args):
        for k, part in enumerate(_parts(builder, word, args[2])):
            builder.store(part, _element(context, builder, X, args[0], i, args[1], k))
        return context.get_dummy_value()

    return types.void(X, i, word), codegen


def _shift(name: str, doc: str, left: bool) -> Any:
    """The shift of a bitboard by ``0 < s < 64`` bits, towards the high
    bits (``left``) or the low ones; with three words each word takes the
    bits that leave its neighbour (the lower one, or the higher)."""

    def typer(typingctx: Any, a: Any, s: Any) -> Any:
        def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
            x = _parts(builder, a, args[0])
            n = context.cast(builder, args[1], s, types.uint64)
            shift, back = (builder.shl, builder.lshr) if left else (builder.lshr, builder.shl)
            t = builder.sub(_I64(64), n)
            parts = []
            for k in range(len(x)):
                part = shift(x[k], n)
                neighbour = k - 1 if left else k + 1
                if 0 <= neighbour < len(x):
                    part = builder.or_(part, back(x[neighbour], t))
                parts.append(part)
            return _bitboard(context, builder, a, parts)

        return a(a, s), codegen

    return _named_intrinsic(typer, name, doc)


shl = _shift("shl", "``a << s`` for 0 < s < 64.", True)
shr = _shift("shr", "``a >> s`` for 0 < s < 64.", False)


@intrinsic
def add(typingctx, a, b):
    """``a + b`` (with three words the carries cross the words; the top carry
    is dropped)."""

    def codegen(context, builder, signature, args):
        x = _parts(builder, a, args[0])
        y = _parts(builder, a, args[1])
        if len(x) == 1:
            return builder.add(x[0], y[0])
        r0 = builder.add(x[0], y[0])
        c0 = builder.zext(builder.icmp_unsigned("<", r0, x[0]), _I64)
        t1 = builder.add(x[1], y[1])
        r1 = builder.add(t1, c0)
        c1 = builder.zext(builder.or_(builder.icmp_unsigned("<", t1, x[1]), builder.icmp_unsigned("<", r1, t1)), _I64)
        return _bitboard(context, builder, a, [r0, r1, builder.add(builder.add(x[2], y[2]), c1)])

    return a(a, b), codegen


@intrinsic
def popcount(typingctx, a):
    """The number of bits set in ``a``."""

    def codegen(context, builder, signature, args):
        return _count(builder, _parts(builder, a, args[0]))

    return types.uint64(a), codegen


@intrinsic
def several(typingctx, a):
    """Whether ``a`` holds two bits or more."""

    def codegen(context, builder, signature, args):
        x = _parts(builder, a, args[0])
        if len(x) == 1:
            cleared = builder.and_(x[0], builder.sub(x[0], _I64(1)))
            return builder.icmp_unsigned("!=", cleared, _I64(0))
        return builder.icmp_unsigned(">", _count(builder, x), _I64(1))

    return types.boolean(a), codegen


@intrinsic
def low_index(typingctx, a):
    """The index of the lowest set bit of ``a`` plus one (0 if none)."""

    def codegen(context, builder, signature, args):
        index = _I64(0)
        for k, part in reversed(list(enumerate(_parts(builder, a, args[0])))):
            here = builder.add(builder.cttz(part, ir.IntType(1)(1)), _I64(64 * k + 1))
            index = builder.select(builder.icmp_unsigned("!=", part, _I64(0)), here, index)
        return index

    return types.uint64(a), codegen


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
def _row1(key, size):
    h = key * U(0x9E3779B97F4A7C15)
    h ^= h >> U(32)
    h *= U(0xD6E8FEB86659FD93)
    h ^= h >> U(29)
    return h & U(size - 1)


@njit(inline="always")
def _slot1(cur, mask, neutral, bottom, playable, generation, size):
    key = cur | (mask + bottom)
    tag = low_index(neutral & playable) | ((generation & U(0xFFFFFFFF)) << U(8))
    return _row1(key, size), key, tag


@njit(inline="always")
def _slot3(cur, mask, neutral, bottom, playable, generation, size):
    key = or_(cur, add(mask, bottom))
    tag = low_index(and_(neutral, playable)) | ((generation & GEN_MASK) << U(8))
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
    tag = low_index(neutral & playable) | ((generation & U(0xFFFFFFFF)) << U(8))
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
