"""What the agents of a room may cost the server: which agents a room may
use (an allowlist) and how much one move may think (time, iterations,
depth, tree nodes).

A spec above a limit is refused with the limit and what to choose within
it; it is never clipped to fit, so what a room plays is always what its
creator asked for.  The
limits are ``c4lab serve`` options; ``/api/agents`` shows them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from c4lab.agents import Agent, AgentInfo, agent_infos, make_agent, parse_spec
from c4lab.agents.base import MAX_SECONDS
from c4lab.server.offered import KINDS, OfferedFile

#: The agents a room may use by default: the built-in players, none of
#: which starts a program, opens a file or needs an optional package.
#: An agent registered later (another package's) is *not* reachable from
#: the network until the server's ``--allow-agent`` names it; ``qlearning``
#: is offered when the server offers a Q-table (``--qtable FILE``).
DEFAULT_AGENTS = frozenset({
    "random", "normal", "hard", "impossible", "master", "perfect",
    "heuristic", "minimax", "uct", "mcts-solver", "solver",
    "hybrid", "uct-tt", "uct-lgr", "uct-lgr2", "uct-smart", "ntuple", "ntuple-puct",
})
#: Agents that start programs (``engine``) or open files (``qlearning``'s
#: table) on this machine: refused with that reason unless offered
#: (``qlearning`` with a Q-table the server offers; ``engine`` never).
LOCAL_ONLY = frozenset({"engine", "qlearning"})
#: Parameters that name a file on this machine (``ntuple:weights=FILE``,
#: ``qlearning:table=FILE``): refused from a room like ``LOCAL_ONLY``
#: agents, except the name of a file the server offers (``--network FILE``,
#: ``--qtable FILE``: ``c4lab.server.offered``).
FILE_PARAMS = frozenset({"weights", "table"})

#: Defaults, measured on this project's 2-core machine: UCT does about a
#: million iterations a second; minimax to depth 10 takes under 1 s on an
#: empty 12x12 board (depth 12: 10 s, depth 14: three minutes).
MAX_TIME = 5.0
MAX_ITERATIONS = 500_000
MAX_DEPTH = 10
#: UCT's tree (about 100 bytes a node): its default, 200 MB at most.
MAX_NODES = 2_000_000
AGENT_THREADS = 2
#: The most agent threads a server takes: each may hold a move's search
#: (a UCT tree up to ``MAX_NODES``, about 200 MB; the solver's table,
#: 32 MB) at once, so 256 of them can ask for tens of gigabytes.
MAX_AGENT_THREADS = 256


class LimitError(ValueError):
    """A spec the server refuses: ``limit`` names the limit it broke."""

    def __init__(self, limit: str, message: str) -> None:
        super().__init__(message)
        self.limit = limit
        self.message = message

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.limit, self.message))


@dataclass(frozen=True)
class AgentLimits:
    """The bounds on a room's agents (``check`` applies them)."""

    max_time: float = MAX_TIME
    max_iterations: int = MAX_ITERATIONS
    max_depth: int = MAX_DEPTH
    threads: int = AGENT_THREADS
    allowed: frozenset[str] = DEFAULT_AGENTS
    max_nodes: int = MAX_NODES
    #: The files a room may name by file name (``weights=NAME``, ``table=NAME``).
    files: tuple[OfferedFile, ...] = ()
    #: The option that sets each bounded parameter, named when the server's
    #: own agent (the hints') is above it; a room's refusal, read by a
    #: person who has no such option, says what to choose instead.
    options: dict[str, str] = field(default_factory=lambda: {
        "time": "--max-think", "iterations": "--max-iterations", "depth": "--max-depth", "nodes": "",
    })

    def __post_init__(self) -> None:
        """``LimitError`` naming the setting (its field) that is out of bounds."""
        if not self.max_time >= 1.0:
            raise LimitError(
                "max_time", f"the think-time limit must be at least 1 s (the levels think 1 s), not {self.max_time:g}"
            )
        if self.max_time > MAX_SECONDS:
            raise LimitError("max_time", f"the think-time limit must be at most {MAX_SECONDS:,} s (a year, an "
                                         f"agent's own bound), not {self.max_time:g}")
        for name in ("max_iterations", "max_depth", "threads", "max_nodes"):
            if getattr(self, name) < 1:
                raise LimitError(name, f"{name.replace('_', ' ')} must be at least 1, not {getattr(self, name)}")
        if self.threads > MAX_AGENT_THREADS:
            raise LimitError("threads", f"agent threads must be at most {MAX_AGENT_THREADS}, not {self.threads}: "
                                        "each may hold a search (up to about 200 MB) at once")

    @classmethod
    def with_agents(cls, extra: Iterable[str] = (), **bounds: Any) -> AgentLimits:
        """The default allowlist extended by ``extra`` (``--allow-agent``);
        ``ValueError`` for a name that is no agent or one a server never
        offers (its message begins with the name: the command puts its
        option before it)."""
        known = _infos()
        for name in extra:
            if name == "engine":  # not even registered in a server: cmd= is whatever a visitor writes
                raise ValueError("'engine': a server never offers it (engine:cmd= would run "
                                 "any program a visitor names on this machine)")
            if name == "qlearning":  # table= would be any path a visitor writes
                raise ValueError("'qlearning': offer its tables instead, --qtable FILE (repeatable), "
                                 "and rooms may use qlearning:table=ITS-FILE-NAME (never a path on this machine)")
            if name not in known:
                raise ValueError(f"{name!r}: no such agent (known agents: {', '.join(sorted(known))})")
        return cls(allowed=DEFAULT_AGENTS | frozenset(extra), **bounds)

    def bounds(self) -> dict[str, float | int]:
        """Each bounded spec parameter and its largest value."""
        return {"time": self.max_time, "iterations": self.max_iterations, "depth": self.max_depth,
                "nodes": self.max_nodes}

    @property
    def agents(self) -> frozenset[str]:
        """The agents a room may use: ``allowed`` and those an offered file
        brings (``qlearning`` with a Q-table)."""
        return self.allowed | {f.kind.agent for f in self.files if f.kind.agent}

    def offered(self, info: AgentInfo) -> bool:
        """Whether a room may use this agent here."""
        return info.name in self.agents and info.name != "human" and not info.unavailable

    def agent_bounds(self, info: AgentInfo) -> dict[str, float | int]:
        """The bounds that apply to this agent's parameters."""
        names = {p.name for p in info.params}
        return {name: value for name, value in self.bounds().items() if name in names}

    def offered_file(self, param: str, name: str | None) -> OfferedFile | None:
        """The offered file a spec's ``param=`` (``weights``, ``table``) names, if any."""
        return next((f for f in self.files if f.kind.param == param and f.name == name), None)

    def local_spec(self, spec: str, listed: bool = True) -> tuple[str, OfferedFile | None]:
        """``spec`` as this machine makes it: an offered file's name
        (``weights=net.npz``, ``table=q.npz``) replaced by its path, and the
        file; a spec that would open any other file is ``LimitError``
        unless an agent ``--allow-agent`` named may (not ``listed``: the
        server's own)."""
        name, raw = parse_spec(spec)
        if listed and name in LOCAL_ONLY and name not in self.agents:
            raise LimitError("agent", f"{spec!r} runs a program or opens a file: only the local command line may use it"
                                      f"{self._files_text(name)}")
        params = self._params(name)
        offered = next((found for kind in KINDS if kind.param in raw and kind.param in params
                        if (found := self.offered_file(kind.param, raw[kind.param])) is not None), None)
        if offered is not None:
            raw = {**raw, offered.kind.param: offered.path}
            spec = f"{name}:" + ",".join(f"{key}={value}" for key, value in raw.items())
        opened = FILE_PARAMS & set(raw) - ({offered.kind.param} if offered else set())
        if listed and opened and name not in self.allowed - DEFAULT_AGENTS:
            raise LimitError("agent", f"{spec!r} opens a file: only the local command line may use it"
                                      f"{self._files_text(name)}")
        return spec, offered

    def _params(self, name: str) -> set[str]:
        info = _infos().get(name)
        return {p.name for p in info.params} if info is not None else set()

    def _files_text(self, name: str) -> str:
        """For a refusal of a file parameter: the files of that kind this
        server offers (``weights=``: its networks, ``table=``: its Q-tables)."""
        kind = next((k for k in KINDS if k.param in self._params(name)), None)
        if kind is None:
            return ""
        files = [f for f in self.files if f.kind is kind]
        if not files:
            return f" (this server offers no {kind.what}s: its {kind.option} FILE would)"
        return f" (this server's {kind.what}s: " + ", ".join(f"{kind.param}={f.name} ({f.board})" for f in files) + ")"

    def make_stored(self, spec: str) -> Agent:
        """The agent of a stored room's ``spec`` (made under other limits,
        perhaps: not held to the numbers), its offered file read from the
        file given at start; ``LimitError`` for a ``weights=`` or
        ``table=`` no longer offered, never a file of that name opened."""
        local, offered = self.local_spec(spec)
        return self._made(local, offered)

    @staticmethod
    def _made(spec: str, offered: OfferedFile | None) -> Agent:
        """The agent of a local spec; with an offered file it names the
        file as the room did (its refusals say ``net.npz``, never the
        server's path to it)."""
        if offered is None:
            return make_agent(spec)
        try:
            agent = make_agent(spec)
        except ValueError as exc:
            raise ValueError(str(exc).replace(offered.path, offered.name)) from None
        if hasattr(agent, "source"):
            agent.source = offered.name
        return agent

    def make(self, spec: str, listed: bool = True) -> Agent:
        """The agent of ``spec`` if a room may use it, else ``LimitError``
        naming the limit (a malformed spec: the registry's ``ValueError``).
        Not ``listed``: the server's own agent (the hints'), held to the
        numbers but not to the allowlist."""
        name, raw = parse_spec(spec)
        asked = spec
        spec, offered = self.local_spec(spec, listed)
        info = _infos().get(name)
        if info is None:
            return make_agent(spec)  # the registry's error: unknown agent, and the known ones
        if listed and name not in self.agents:
            allowed = ", ".join(sorted(self.agents))
            raise LimitError("agent", f"agent {name!r} is not offered by this server (allowed: {allowed})")
        values = _values(info, raw)  # before making it: nothing is allocated for a refused spec
        for param, limit in self.agent_bounds(info).items():
            value = values.get(param)
            if value is not None and value > limit:
                raise LimitError(param, self._over(asked, param, value, limit, listed))
        agent = self._made(spec, offered)  # checks every key and value
        if agent.is_human:
            raise LimitError("agent", f"{asked!r} is not a computer player")
        return agent

    def _over(self, asked: str, param: str, value: float, limit: float, listed: bool) -> str:
        """Why ``asked`` is refused: its ``param`` is ``value``, above
        ``limit``.  A room's agent (``listed``) is asked for by a person,
        on the page or through the API, who has no option of this server
        to change: they are told what the server lets an agent do and what
        to choose instead.  The server's own (the hints') is its operator's
        doing: the option that sets the limit is named."""
        if not listed:
            option = self.options.get(param)
            where = f" ({option})" if option else ""
            unit = " s a move" if param == "time" else ""
            return f"{asked!r}: {param}={_number(value)} is above this server's limit of {_number(limit)}{unit}{where}"
        lets = {
            "time": f"think at most {_number(limit)} s a move",
            "iterations": f"run at most {limit:,} iterations a move",
            "depth": f"look at most {limit} moves ahead",
            "nodes": f"keep at most {limit:,} nodes in its tree",
        }.get(param, f"take at most {param}={_number(limit)}")
        return (f"{asked!r}: {param}={_number(value)} is more than this server allows: it lets an agent {lets}; "
                f"choose {param}={_number(limit)} or less")

    def public(self) -> dict[str, Any]:
        """The limits as ``/api/limits`` shows them."""
        return {
            "max_time": self.max_time, "max_iterations": self.max_iterations, "max_depth": self.max_depth,
            "max_nodes": self.max_nodes, "agent_threads": self.threads, "agents": sorted(self.agents),
            **{kind.key: [f.public() for f in self.files if f.kind is kind] for kind in KINDS},
        }

    def describe(self) -> str:
        """One line for the server's start-up message, with the files rooms
        may name (``weights=net.npz (6x5/Xc2)``) when the server offers any."""
        files = ", ".join(f"{f.kind.param}={f.name} ({f.board})" for f in self.files)
        return (
            f"agents: at most {self.max_time:g} s, {self.max_iterations:,} iterations or depth "
            f"{self.max_depth} a move, {self.threads} thread{'s' if self.threads != 1 else ''}; "
            f"allowed: {', '.join(sorted(self.agents))}" + (f"; files rooms may name: {files}" if files else "")
        )


#: ``c4lab play``: one person on their own machine, who may ask an agent
#: for a long think (the allowlist still applies: the page is a web page).
#: It has no options for them, so even its own refusals name none.
PERSONAL = AgentLimits(max_time=3600.0, max_iterations=10**9, max_depth=64, options={})


def _number(value: float) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def _infos() -> dict[str, AgentInfo]:
    return {info.name: info for info in agent_infos()}


def _values(info: AgentInfo, raw: dict[str, str]) -> dict[str, Any]:
    """The parameters an agent is made with: its defaults, its preset's,
    then the spec's (already checked by ``make_agent``)."""
    params = {p.name: p for p in info.params}
    values: dict[str, Any] = {name: p.default for name, p in params.items()}
    for key, text in {**info.defaults, **raw}.items():
        if key in params:
            values[key] = params[key].convert(info.name, text)
    return values
