"""One name per agent (``c4lab.agents.canonical_spec``): a spec printed the
one way its values read back, so that ``uct:iterations=0200`` and
``uct:iterations=200`` are one agent in an arena run and its report."""

from __future__ import annotations

import pytest

from c4lab.agents import canonical_spec, make_agent
from c4lab.agents.spec_names import same_agent


@pytest.mark.parametrize(("given", "canonical"), [
    ("uct:iterations=0200", "uct:iterations=200"),
    ("uct:iterations=+200", "uct:iterations=200"),
    ("master:time=0.50", "master:time=0.5"),
    ("master:time=.5", "master:time=0.5"),
    ("master:time=5e-1", "master:time=0.5"),
    ("master:time=2.0", "master:time=2"),  # a whole number of seconds as it is usually written
    ("master:time=None", "master:time=none"),
    ("uct:tt=1", "uct:tt=true"),
    ("uct:tt=off", "uct:tt=false"),
    ("uct:seed=01,iterations=0200", "uct:iterations=200,seed=1"),  # the agent's own order of its parameters
])
def test_a_spec_is_printed_as_its_values_read(given: str, canonical: str) -> None:
    assert canonical_spec(given) == canonical
    assert canonical_spec(canonical) == canonical  # already canonical: unchanged
    settings = [{k: v for k, v in vars(make_agent(spec)).items() if k in ("iterations", "time", "config")}
                for spec in (given, canonical)]
    assert settings[0] == settings[1]  # the very same agent


@pytest.mark.parametrize("spec", [
    "uct", "hard", "master:time=0.5", "uct:iterations=200",  # canonical already
    "master:time=1.23456789012345",  # every digit a float keeps
    "uct:final=visits", "ntuple:weights=./net-01.npz",  # text as given
])
def test_a_canonical_spec_is_left_as_it_is(spec: str) -> None:
    assert canonical_spec(spec) == spec


@pytest.mark.parametrize("spec", [
    "nobody:depth=01",  # an unknown agent (a plugin not installed here): a saved file still reads
    "uct:iterations=abc", "uct:depth=01", "uct:", "uct:iterations",  # make_agent's errors to tell
])
def test_a_spec_that_does_not_parse_is_left_to_make_agent(spec: str) -> None:
    assert canonical_spec(spec) == spec


@pytest.mark.parametrize(("first", "second", "same"), [
    ("master", "master:time=1", True),  # master's default budget written out
    ("random", "random:seed=none", True),
    ("master", "master:time=2", False),
    ("random", "random:seed=1", False),  # a fixed seed is another agent than a fresh one each game
    ("hard", "uct", False),  # another name, whatever it plays
    ("nobody", "nobody:depth=1", False),  # an unknown agent: not told
])
def test_same_agent_fills_in_the_defaults_a_spec_leaves_out(first: str, second: str, same: bool) -> None:
    """Review: ``master`` and ``master:time=1`` passed as two agents in an
    arena run (their canonical specs differ, as a default written out is
    kept): ``same_agent`` tells them apart from agents that differ."""
    assert same_agent(first, second) is same
