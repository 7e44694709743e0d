"""One name per agent: a spec printed the one way its values read back.

``uct:iterations=0200`` and ``uct:iterations=200`` build the same agent,
as do ``master:time=0.50`` and ``master:time=.5``; an arena run, its
results file and its report named them as two agents (two rows, an
"agent" against itself).  ``canonical_spec`` parses a spec with its
agent's ``Param`` list and prints it again: each value as its type
prints it (``200``, ``0.5``, ``true``, ``none``; text as given), the keys
in the order the agent declares them.  A spec that does not parse (an
unknown agent, a plugin no longer installed, a bad value) is returned as
given: the error is ``make_agent``'s to tell, and a results file written
before this canonical form, or by an agent not installed here, still
reads.
"""

from __future__ import annotations

import math
from typing import Any

from c4lab.agents.base import AgentInfo, SpecError, agent_infos, parse_spec

__all__ = ["canonical_spec", "same_agent"]


#: Specs already put in canonical form (a results file names its agents once a game, a million times).
_known: dict[str, str] = {}


def canonical_spec(spec: str) -> str:
    """``spec`` with each value written as its type prints it and its keys in
    the agent's order: ``canonical_spec("uct:seed=01,iterations=0200")`` is
    ``"uct:iterations=200,seed=1"``; a spec that does not parse is returned
    unchanged (see the module's docstring)."""
    if not isinstance(spec, str) or ":" not in spec:  # a name alone is its own canonical form (and needs no registry)
        return spec
    if spec not in _known:
        found = _canonical(spec)
        if found is None:
            return spec  # not kept: an agent registered later (a notebook's) may read it
        _known[spec] = found
    return _known[spec]


def _canonical(spec: str) -> str | None:
    """``canonical_spec``'s work; ``None`` for a spec that does not parse."""
    try:
        name, raw = parse_spec(spec)
    except SpecError:
        return None
    info = _info(name)
    if info is None or not raw:
        return None
    params = {p.name: p for p in info.params}
    if any(key not in params for key in raw):
        return None
    try:
        values = {key: _text(params[key].convert(name, value)) for key, value in raw.items()}
    except SpecError:
        return None
    ordered = [f"{p.name}={values[p.name]}" for p in info.params if p.name in values]
    return f"{name}:{','.join(ordered)}"


def same_agent(first: str, second: str) -> bool:
    """Whether two specs that differ build the same agent: the same name, and
    the same value of every parameter once the defaults (the agent's, a
    preset's) fill in what a spec leaves out: ``master`` and
    ``master:time=1``.  False where either does not parse (as
    ``canonical_spec``)."""
    ours, theirs = _every_value(first), _every_value(second)
    return ours is not None and ours == theirs


def _every_value(spec: str) -> tuple[str, tuple[tuple[str, str], ...]] | None:
    """``spec``'s agent and the value of each of its parameters, written as
    ``canonical_spec`` writes them, the defaults filled in; ``None`` for a
    spec that does not parse."""
    try:
        name, raw = parse_spec(spec)
    except SpecError:
        return None
    info = _info(name)
    if info is None or any(key not in {p.name for p in info.params} for key in raw):
        return None
    given = {**info.defaults, **raw}
    try:
        values = tuple((p.name, _text(p.convert(name, given[p.name]) if p.name in given else p.default))
                       for p in info.params)
    except SpecError:
        return None
    return name, values


def _info(name: str) -> AgentInfo | None:
    return next((info for info in agent_infos() if info.name == name), None)


def _text(value: Any) -> str:
    """How ``value`` (a parameter's, read from a spec by ``Param.convert``)
    is written in a canonical spec: it reads back as the same value."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        text = repr(value)  # the shortest text that reads back as this float
        return text[:-2] if text.endswith(".0") and math.isfinite(value) else text
    return str(value)
