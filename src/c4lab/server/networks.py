"""The n-tuple networks a server offers its rooms (``--network FILE``).

A room's agent never opens a file a visitor names: ``ntuple:weights=PATH``
from the page would let anyone who reaches the server probe its file
system (what exists, what is readable) and make it load any large file.
Instead the person running the server names the files on its command
line; each is loaded and checked at start (a bad one stops the server with
one line), and a room may then ask for one by its file name alone
(``ntuple:weights=net.npz``), which the server maps to the file it was
given.  Nothing else is ever opened for ``weights=``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from c4lab.agents import agent_infos, parse_spec


@dataclass(frozen=True)
class OfferedNetwork:
    """A network file a room may use: ``name`` is what a spec says
    (``weights=NAME``), ``path`` the file the server loads, ``board`` the
    board it was trained for (shown in the picker)."""

    name: str
    path: str
    board: str


def offered_networks(paths: Iterable[str | Path]) -> tuple[OfferedNetwork, ...]:
    """Each file loaded and checked, by its file name; ``ValueError`` (one
    line naming the file) for one that is missing, damaged or not a
    network, two of the same file name, or a path a spec cannot carry (a
    comma separates a spec's parameters).  The same file given twice is
    offered once."""
    from c4lab.agents.ntuple import load_network  # lazy: numpy and the kernels only when a network is offered

    offered: dict[str, OfferedNetwork] = {}
    for given in paths:
        path = Path(os.path.abspath(Path(given).expanduser()))  # not resolved: the name is the one given
        if "," in str(path):
            raise ValueError(f"--network {given}: its path has a comma, which an agent spec cannot carry; "
                             "rename it or its folder")
        if path.name in offered and offered[path.name].path == str(path):
            continue
        if path.name in offered:
            raise ValueError(f"--network {given}: a network of the file name {path.name!r} is offered already "
                             f"({offered[path.name].path}); rooms name a network by its file name alone")
        try:
            network = load_network(path)
        except (OSError, ValueError) as exc:  # NetworkError is a ValueError
            raise ValueError(f"--network {given}: {str(exc).replace(str(path), str(given))}") from None
        offered[path.name] = OfferedNetwork(path.name, str(path), network.variant.notation)
    return tuple(offered.values())


def spec_network(spec: str) -> str | None:
    """The file a spec's ``weights=`` names, for an agent that takes one
    (``ntuple:weights=nets/a.npz``: ``nets/a.npz``), else None."""
    name, raw = parse_spec(spec)
    takes = any(p.name == "weights" for info in agent_infos() if info.name == name for p in info.params)
    return raw.get("weights") if takes else None


def by_network_name(spec: str) -> str:
    """``spec`` with its network file named by file name alone, as a room
    names an offered network (``ntuple:weights=nets/a.npz``:
    ``ntuple:weights=a.npz``); a spec without one as it is."""
    path = spec_network(spec)
    if path is None:
        return spec
    name, raw = parse_spec(spec)
    raw["weights"] = Path(path).expanduser().name
    return f"{name}:" + ",".join(f"{key}={value}" for key, value in raw.items())


__all__ = ["OfferedNetwork", "by_network_name", "offered_networks", "spec_network"]
