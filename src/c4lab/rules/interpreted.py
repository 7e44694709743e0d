"""The rules' kernels run by Python's interpreter, from their own source:
what plays the moves of a process's first positions, before the compiled
kernel is worth its compiling.

Reading a position with moves plays them with ``kernels.play_all``, which
numba compiles (``play`` and the win tests inlined into it) in 0.9-1.2 s on
a first start, for a string of a few moves.  The same source run by the
interpreter plays a move in 20-30 microseconds.  So a process plays the
moves of the positions it reads interpreted until the compiled kernel is
there (something else compiled or loaded it) or until it has played
``INTERPRETED_MOVES`` of them; then it compiles.  A command that reads
one position never compiles ``play_all`` at all: the very first ``c4lab
move 9x8/Xd3:dd --agent master`` went from 7.73-7.85 to 5.68-6.01 s
(2026-12-06, two alternated pairs; its child compiling minimax now starts
before the moves are read, not after), and a process that reads thousands
of positions loses 0.06 s at most.

There is no second copy of the rules: ``interpreted`` makes new
function objects from the compiled kernels' own code (``py_func``), whose
calls to other kernels go to those kernels' code too.  A test plays random
games, legal and illegal moves, on every kind of board both ways and
checks the same states and answers come back.
"""

from __future__ import annotations

import types
from collections.abc import Callable
from functools import cache
from typing import Any

import numpy as np
from numba.core.dispatcher import Dispatcher

from c4lab.rules import kernels as K

#: The most moves a process plays interpreted (0.04-0.06 s of them) before
#: it compiles ``play_all`` (about 0.9 s, or a load from numba's cache).
INTERPRETED_MOVES = 2_000

_played = 0  # the moves this process has played interpreted so far


@cache
def _namespace() -> dict[str, Any]:
    """The kernels module's names, each compiled kernel replaced by a
    function made from its Python code whose global names are looked up
    here: a kernel that calls another calls that one's code, not numba's
    compiled version (which would compile it)."""
    names = dict(vars(K))
    for name, value in vars(K).items():
        if isinstance(value, Dispatcher):
            code = value.py_func
            names[name] = types.FunctionType(code.__code__, names, code.__name__, code.__defaults__, code.__closure__)
    return names


def interpreted(kernel: Dispatcher) -> Callable[..., Any]:
    """``kernel`` (a compiled function of ``c4lab.rules.kernels``) run by
    the interpreter, with every kernel it calls."""
    return _namespace()[kernel.py_func.__name__]  # type: ignore[no-any-return]


def play_all(geo: np.ndarray, st: np.ndarray, codes: np.ndarray) -> tuple[int, int]:
    """``kernels.play_all``: ``codes`` applied to ``st`` in order up to the
    first illegal one, ``(how many were applied, the error of the next or
    OK)``; interpreted while the compiled kernel is not there and the
    process has played fewer than ``INTERPRETED_MOVES`` moves so."""
    global _played
    if not K.play_all.signatures and _played + len(codes) <= INTERPRETED_MOVES:
        _played += len(codes)
        done, err = interpreted(K.play_all)(geo, st, codes)
        return int(done), int(err)
    done, err = K.play_all(geo, st, codes)
    return int(done), int(err)
