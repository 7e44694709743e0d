"""The rules' kernels run by Python's interpreter, from their own source:
what answers ``Position``'s first questions in a process, before the
compiled kernels are worth their compiling.

``Position`` asks the rules' kernels (``rules.kernels``) everything: reading
a position with moves plays them (``play_all``), ``is_legal`` (``check``),
``legal_moves``, ``play``, the winning line.  numba compiles each on its
first call: 0.2 to 1.2 s each on a first start (``play_all`` 0.9-1.2 s,
``play`` and the win tests inlined into it), for a string of a few moves
or one legality test.  The same source run by the interpreter takes 20-30
microseconds a move.  So a process runs them interpreted until a kernel
is compiled for the same arguments (something else compiled or loaded
it), or until it has done ``INTERPRETED_MOVES`` moves and calls so; then
compiled.  A command that reads one position and checks one answer
(``c4lab move``, ``c4lab solve``, ``c4lab show``) compiles none of them,
and a process that reads thousands of positions loses 0.06 s at most.
The very first ``c4lab move 9x8/Xd3:dd --agent master`` went from
7.73-7.85 to 5.68-6.01 s with ``play_all`` alone interpreted (2026-12-06,
two alternated pairs: the child compiling minimax also starts 1.4 s
sooner).  What prepares a process for games (a server's warm-up,
``position.load_kernels``) asks for the compiled kernels at once
(``use_compiled``).

There is no second copy of the rules: ``interpreted`` makes new function
objects from the compiled kernels' own code (``py_func``), whose calls to
other kernels go to those kernels' code too.  Tests play random games,
legal and illegal moves, on every kind of board both ways and check that
the same states and answers come back.
"""

from __future__ import annotations

import types
from collections.abc import Callable
from functools import cache
from typing import Any

from numba.core.dispatcher import Dispatcher

from c4lab.rules import kernels as K

#: The most work a process does interpreted (0.04-0.06 s of it), in moves
#: played and other calls, before it compiles the kernels it calls.
INTERPRETED_MOVES = 2_000

_played = 0  # the moves (and other calls) this process has run interpreted so far
_compiled: set[str] = set()  # the kernels that run compiled from now on, by name


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


def _ready(kernel: Dispatcher, args: tuple[Any, ...]) -> bool:
    """Whether ``kernel`` is compiled (or loaded) in this process for the
    types of ``args``: a call then compiles nothing."""
    return bool(kernel.overloads) and tuple(kernel.typeof_pyval(a) for a in args) in kernel.overloads


def call(kernel: Dispatcher, *args: Any, work: int = 1) -> Any:
    """``kernel(*args)``: compiled where it is compiled for these arguments
    or ``use_compiled`` asked for it, else interpreted while the process
    has run less than ``INTERPRETED_MOVES`` (``work``: this call's share,
    the moves it plays), else compiled from then on."""
    global _played
    if not isinstance(kernel, Dispatcher):  # numba's compiler off (NUMBA_DISABLE_JIT): Python already
        return kernel(*args)
    name = kernel.py_func.__name__
    if name not in _compiled:
        if not _ready(kernel, args) and _played + work <= INTERPRETED_MOVES:
            _played += work
            return interpreted(kernel)(*args)
        _compiled.add(name)
    return kernel(*args)


def use_compiled(*kernels: Dispatcher) -> None:
    """From now on ``kernels`` run compiled in this process: their next
    call compiles them (or loads them from numba's cache).  For what
    prepares a process for games (a server's warm-up, a child compiling
    aside), so that no game meets the compiler later."""
    _compiled.update(kernel.py_func.__name__ for kernel in kernels)
