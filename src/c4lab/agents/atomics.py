"""Atomic operations on array elements, for searches that share one tree
between threads (``c4lab.agents.ntuple_puct`` with ``threads=2``).

numba has no atomics on the CPU, so these are LLVM's own instructions
(``atomicrmw``, ``cmpxchg``, ordered loads and stores), each on the element
``a[i]`` of a one-dimensional C-contiguous array:

* :func:`fetch_add` adds to an integer or float element and returns the
  value it had (a node allocator: two threads never get the same nodes;
  visit counts and value sums that no concurrent update overwrites);
* :func:`compare_swap` sets an element from ``old`` to ``new`` only if it
  still holds ``old``, and says whether it did (one thread, and only one,
  claims a leaf to expand);
* :func:`load_acquire` and :func:`store_release` order a flag against the
  data it guards: whoever reads the flag set by ``store_release`` through
  ``load_acquire`` sees every write made before it (a node's children are
  written before it is marked expanded).

All are sequentially consistent where the ordering is not named; on x86 an
acquire load and a release store are plain moves that the compiler may not
reorder.
"""

from __future__ import annotations

from typing import Any

from numba import types
from numba.extending import intrinsic


def _element(context: Any, builder: Any, arrty: Any, arr: Any, index: Any) -> Any:
    """The address of ``arr[index]`` (C-contiguous, one dimension)."""
    data = context.make_array(arrty)(context, builder, arr).data
    return builder.gep(data, [index])


@intrinsic
def fetch_add(typingctx, arr, index, value):  # type: ignore[no-untyped-def]
    """``arr[index] += value`` as one atomic step; returns the old value."""
    sig = arr.dtype(arr, index, arr.dtype)

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        address = _element(context, builder, signature.args[0], args[0], args[1])
        op = "fadd" if isinstance(signature.args[0].dtype, types.Float) else "add"
        return builder.atomic_rmw(op, address, args[2], "seq_cst")

    return sig, codegen


@intrinsic
def compare_swap(typingctx, arr, index, old, new):  # type: ignore[no-untyped-def]
    """``arr[index] = new`` if it holds ``old``, as one atomic step; whether it did."""
    sig = types.boolean(arr, index, arr.dtype, arr.dtype)

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        address = _element(context, builder, signature.args[0], args[0], args[1])
        pair = builder.cmpxchg(address, args[2], args[3], "seq_cst", "seq_cst")
        return builder.extract_value(pair, 1)

    return sig, codegen


@intrinsic
def load_acquire(typingctx, arr, index):  # type: ignore[no-untyped-def]
    """``arr[index]``, read so that writes made before its ``store_release`` are seen."""
    sig = arr.dtype(arr, index)

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        address = _element(context, builder, signature.args[0], args[0], args[1])
        align = context.get_abi_sizeof(context.get_value_type(signature.args[0].dtype))
        return builder.load_atomic(address, "acquire", align)

    return sig, codegen


@intrinsic
def store_release(typingctx, arr, index, value):  # type: ignore[no-untyped-def]
    """``arr[index] = value``, after every write before it is visible."""
    sig = types.void(arr, index, arr.dtype)

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        address = _element(context, builder, signature.args[0], args[0], args[1])
        align = context.get_abi_sizeof(context.get_value_type(signature.args[0].dtype))
        builder.store_atomic(args[2], address, "release", align)
        return context.get_dummy_value()

    return sig, codegen


__all__ = ["compare_swap", "fetch_add", "load_acquire", "store_release"]
