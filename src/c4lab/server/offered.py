"""The files a server offers its rooms' agents: n-tuple networks
(``--network FILE``, ``ntuple:weights=NAME``) and Q-tables (``--qtable
FILE``, ``qlearning:table=NAME``).

A room's agent never opens a file a visitor names: ``weights=PATH`` or
``table=PATH`` from the page would let anyone who reaches the server probe
its file system (what exists, what is readable) and make it load any large
file.  Instead the person running the server names the files on its
command line; each is loaded and checked at start (a bad one stops the
server with one line), and a room may then ask for one by its file name
alone (``ntuple:weights=net.npz``, ``qlearning:table=q.npz``), which the
server maps to the file it was given.  Nothing else is ever opened for a
file parameter.  Both kinds go through the one mechanism here; a
``FileKind`` says what differs (the option, the parameter, the loader).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from c4lab.agents import agent_infos, parse_spec


def _network_board(path: Path) -> str:
    """The board of the n-tuple network in ``path`` (``NetworkError``, a
    ``ValueError``, or ``OSError`` for a bad file)."""
    from c4lab.agents.ntuple import load_network  # lazy: numpy and the kernels only when a network is offered

    return load_network(path).variant.notation


def _qtable_board(path: Path) -> str:
    """The board of the Q-table in ``path`` (``TableError``, a
    ``ValueError``, or ``OSError`` for a bad file)."""
    from c4lab.agents.qtable import QTable  # lazy: numpy and the kernels only when a table is offered

    return QTable.load(path).variant.notation


@dataclass(frozen=True)
class FileKind:
    """A kind of file a room may name: the serve option that offers it,
    the spec parameter that names it, what it is called in messages, the
    key of its list in ``/api/agents`` and ``/api/limits``, the loader
    (checks the file, returns its board) and the agent offered only when
    the server offers such a file (``qlearning``: it cannot play without
    a table; the n-tuple agents have their shipped network)."""

    option: str
    param: str
    what: str
    key: str
    board_of: Callable[[Path], str]
    agent: str | None = None


NETWORK = FileKind("--network", "weights", "network", "networks", _network_board)
QTABLE = FileKind("--qtable", "table", "Q-table", "tables", _qtable_board, agent="qlearning")
KINDS = (NETWORK, QTABLE)


@dataclass(frozen=True)
class OfferedFile:
    """A file a room may use: ``name`` is what a spec says
    (``weights=NAME``, ``table=NAME``), ``path`` the file the server loads,
    ``board`` the board it was trained for (shown in the picker)."""

    kind: FileKind
    name: str
    path: str
    board: str

    def public(self) -> dict[str, str]:
        """As ``/api/agents`` and ``/api/limits`` list it."""
        return {"name": self.name, "board": self.board}


def offered_files(given: Iterable[tuple[FileKind, str | Path]]) -> tuple[OfferedFile, ...]:
    """Each file loaded and checked, by its file name; ``ValueError`` (one
    line naming the option and the file) for one that is missing, damaged
    or not of its kind, two of one kind with the same file name, or a path
    a spec cannot carry (a comma separates a spec's parameters).  The same
    file given twice is offered once."""
    offered: dict[tuple[str, str], OfferedFile] = {}
    for kind, path_given in given:
        path = Path(os.path.abspath(Path(path_given).expanduser()))  # not resolved: the name is the one given
        where = f"{kind.option} {path_given}"
        if "," in str(path):
            raise ValueError(f"{where}: its path has a comma, which an agent spec cannot carry; "
                             "rename it or its folder")
        earlier = offered.get((kind.param, path.name))
        if earlier is not None and earlier.path == str(path):
            continue
        if earlier is not None:
            raise ValueError(f"{where}: a {kind.what} of the file name {path.name!r} is offered already "
                             f"({earlier.path}); rooms name a {kind.what} by its file name alone")
        try:
            board = kind.board_of(path)
        except (OSError, ValueError) as exc:  # NetworkError and TableError are ValueErrors
            raise ValueError(f"{where}: {str(exc).replace(str(path), str(path_given))}") from None
        offered[(kind.param, path.name)] = OfferedFile(kind, path.name, str(path), board)
    return tuple(offered.values())


def spec_file(spec: str) -> tuple[FileKind, str] | None:
    """The kind and the file a spec's file parameter names, for an agent
    that takes one (``ntuple:weights=nets/a.npz``: the network
    ``nets/a.npz``), else None."""
    name, raw = parse_spec(spec)
    params = {p.name for info in agent_infos() if info.name == name for p in info.params}
    return next(((kind, raw[kind.param]) for kind in KINDS if kind.param in params and kind.param in raw), None)


def by_file_name(spec: str) -> str:
    """``spec`` with its file named by file name alone, as a room names an
    offered file (``ntuple:weights=nets/a.npz``: ``ntuple:weights=a.npz``);
    a spec without one as it is."""
    found = spec_file(spec)
    if found is None:
        return spec
    name, raw = parse_spec(spec)
    raw[found[0].param] = Path(found[1]).expanduser().name
    return f"{name}:" + ",".join(f"{key}={value}" for key, value in raw.items())


__all__ = ["KINDS", "NETWORK", "QTABLE", "FileKind", "OfferedFile", "by_file_name", "offered_files", "spec_file"]
