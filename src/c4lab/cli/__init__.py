"""The ``c4lab`` command.  Thin: it parses options and dispatches.

Heavy modules (numpy, numba, the rules engine, rich) are imported inside the
commands, so ``c4lab --help`` answers at once.  The command group and its
``run`` are in ``group.py``, the option types and checks the commands
share in ``options.py``; each other module registers a family of
commands on the group: ``positions.py`` (show, move, solve, agents,
engine), ``games.py`` (play, analyse, serve, connect, games),
``training.py`` (train), ``book.py``, ``bench.py``, ``prepare.py``, ``arena.py`` (arena,
report).
"""

from __future__ import annotations

from c4lab.cli import arena, bench, book, games, positions, prepare, training  # noqa: F401  (each registers its commands)
from c4lab.cli.group import QUICK_EXIT, main, run
from c4lab.cli.options import BadInput, bad_option

__all__ = ["QUICK_EXIT", "BadInput", "bad_option", "main", "run"]
