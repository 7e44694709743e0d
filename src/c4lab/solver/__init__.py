"""The exact solver: scores of positions as RULES.md defines them, the
``solver`` and ``perfect`` agents, and the classic opening book.

``search`` (one-word bitboards) and ``wide`` (three words, boards up to
12x12) are the compiled searches; ``api`` is the Python API built on them.
"""

from c4lab.solver.api import Solution, Solver, solve

__all__ = ["Solution", "Solver", "solve"]
