"""Registering an agent of one's own (docs/writing-agents.md): the mistakes
a first agent makes are told at its ``@register`` line, in one sentence,
and a notebook's cell may be run again."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import c4lab
from c4lab.agents import Param, agent_infos, base

SRC = Path(c4lab.__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def registry() -> Iterator[None]:
    """The registry as it was before each test: the agents registered here
    must not reach the conformance suite, which plays every registered one."""
    agent_infos()  # c4lab's own agents first, as a script meets them
    before = dict(base._REGISTRY)
    yield
    base._REGISTRY.clear()
    base._REGISTRY.update(before)


@pytest.mark.parametrize("kind, shown", [(int | None, "int | None"), (list, "list"), (Path, "Path")])
def test_a_parameter_of_a_type_a_spec_cannot_give_is_refused_where_it_is_declared(kind: object, shown: str) -> None:
    with pytest.raises(TypeError, match=re.escape(f"Param('depth', {shown}, ...): a spec gives a parameter as text, "
                                                  "so its type is one of int, float, bool or str")):
        Param("depth", kind, None, "how deep")  # type: ignore[arg-type]


def test_the_agent_list_lives_on_after_a_refused_parameter() -> None:
    """An agent with ``Param("depth", int | None, ...)`` was registered,
    and ``c4lab agents`` then failed for every agent (an ``AttributeError``
    traceback from ``type.__name__``); now the class is refused."""
    script = (
        "from c4lab.agents import Agent, Analysis, Param, register\n"
        "try:\n"
        "    @register('deep', 'how deep', [Param('depth', int | None, None, 'how deep')])\n"
        "    class Deep(Agent):\n"
        "        def __init__(self, depth=None):\n"
        "            self.depth = depth\n"
        "        def analyse(self, position, budget=None):\n"
        "            return position.legal_moves()[0], Analysis()\n"
        "except TypeError as err:\n"
        "    print(err)\n"
        "from c4lab.cli import main\n"
        "main(['agents'], standalone_mode=False)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, check=False,
                         env=env)
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("Param('depth', int | None, ...)")
    assert "random:" in run.stdout and "deep:" not in run.stdout


