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
from c4lab.agents import Agent, Analysis, Budget, Param, SpecError, agent_infos, base, make_agent, register
from c4lab.rules import Move, Position

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


def define_first_column(name: str = "first-column") -> type[Agent]:
    """A class as a notebook's cell defines it: the same qualified name each run."""

    @register(name, "the first legal column")
    class FirstColumn(Agent):
        def analyse(self, position: Position, budget: Budget | None = None) -> tuple[Move, Analysis]:
            return position.legal_moves()[0], Analysis()

    return FirstColumn


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


def test_the_engine_agent_unregistered_in_a_script_says_how_to_get_it() -> None:
    """``engine:cmd=...`` is registered by importing its module, which only
    local commands do (a server never starts programs): a script's
    ``make_agent`` says so, not a bare "unknown agent", and works once the
    module is imported.  In a process of its own: the suite imports it."""
    script = (
        "from c4lab.agents import SpecError, make_agent\n"
        "try:\n"
        "    make_agent('engine:cmd=true')\n"
        "except SpecError as err:\n"
        "    print(err)\n"
        "import c4lab.engine.client\n"
        "try:\n"
        "    make_agent('engine:cmd=true,handshake=0.5')\n"
        "except Exception as err:\n"
        "    print(type(err).__name__)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, check=False,
                         env=env)
    assert run.returncode == 0, run.stderr
    refused, started = run.stdout.splitlines()
    assert refused.startswith("unknown agent 'engine': it is registered by `import c4lab.engine.client` "
                              "(local use only: a server, and so the page of `c4lab play`, never starts programs;")
    assert started == "EngineError"  # known now: it started `true`, which speaks no protocol


@pytest.mark.parametrize("kind, default, shown", [
    (int, "x", "a str"), (int, 2.0, "a float"), (int, True, "a bool"), (bool, 1, "an int"), (float, "0.5", "a str"),
    (str, 3, "an int"),  # review: "not a int"
])
def test_a_default_that_is_not_a_value_of_its_parameters_type_is_refused_at_register(
        kind: type, default: object, shown: str) -> None:
    # nothing checked it: make_agent built the agent with depth='x' whenever a spec left depth out
    with pytest.raises(TypeError, match=re.escape(
            f"agent 'defaulted': Param('depth', {kind.__name__}, {default!r}, ...): its default is {shown}, "
            f"not {'an' if kind is int else 'a'} {kind.__name__} (the default is a value of the parameter's type, or None for one that may "
            "be left out)")):

        @register("defaulted", "a default", [Param("depth", kind, default, "how deep")])
        class Defaulted(Agent):
            def __init__(self, depth: object = None) -> None:
                self.depth = depth

            def analyse(self, position: Position, budget: Budget | None = None) -> tuple[Move, Analysis]:
                raise NotImplementedError

    with pytest.raises(SpecError, match="unknown agent 'defaulted'"):
        make_agent("defaulted")  # nothing half-registered


@pytest.mark.parametrize("kind, default", [(int, None), (int, 2), (float, 1), (float, 0.5), (bool, False), (str, "")])
def test_a_default_of_its_parameters_type_or_none_is_taken(kind: type, default: object) -> None:
    @register("defaulted", "a default", [Param("depth", kind, default, "how deep", nullable=True)])
    class Defaulted(Agent):
        def __init__(self, depth: object = None) -> None:
            self.depth = depth

        def analyse(self, position: Position, budget: Budget | None = None) -> tuple[Move, Analysis]:
            return position.legal_moves()[0], Analysis()

    assert make_agent("defaulted").depth == default  # type: ignore[attr-defined]


def test_a_declared_parameter_the_class_does_not_take_is_refused_at_register() -> None:
    with pytest.raises(TypeError, match=re.escape(
            "agent 'leveled': Leveled takes no keyword parameter depth, which its Param list declares "
            "(make_agent passes each by name: def __init__(self, depth=...))")):

        @register("leveled", "a level", [Param("depth", int, 2, "how deep")])
        class Leveled(Agent):
            def __init__(self, level: int = 1) -> None:
                self.level = level

            def analyse(self, position: Position, budget: Budget | None = None) -> tuple[Move, Analysis]:
                raise NotImplementedError

    with pytest.raises(SpecError, match="unknown agent 'leveled'"):
        make_agent("leveled:depth=3")  # nothing half-registered


def test_a_constructor_argument_no_parameter_declares_is_refused_at_register() -> None:
    with pytest.raises(TypeError, match=re.escape(
            "agent 'needy': Needy needs depth, which no Param declares (a spec can give only declared "
            "parameters: add Param('depth', ...) or a default)")):

        @register("needy", "needs a depth")
        class Needy(Agent):
            def __init__(self, depth: int) -> None:
                self.depth = depth

            def analyse(self, position: Position, budget: Budget | None = None) -> tuple[Move, Analysis]:
                raise NotImplementedError


def test_a_class_taking_keyword_arguments_takes_every_parameter() -> None:
    @register("keywords", "any keywords", [Param("depth", int, 2, "how deep")])
    class Keywords(Agent):
        def __init__(self, **options: int) -> None:
            self.options = options

        def analyse(self, position: Position, budget: Budget | None = None) -> tuple[Move, Analysis]:
            return position.legal_moves()[0], Analysis()

    assert make_agent("keywords:depth=3").options == {"depth": 3}  # type: ignore[attr-defined]


def test_a_notebook_cell_run_again_replaces_its_agent() -> None:
    define_first_column()
    second = define_first_column()  # was "agent name 'first-column' is registered twice"
    assert type(make_agent("first-column")) is second
    assert [info.name for info in agent_infos()].count("first-column") == 1


def test_another_class_under_a_taken_name_names_both() -> None:
    told = re.escape("agent name 'random' is registered twice: by c4lab.agents.random_agent.RandomAgent and by ")
    mine = re.escape("test_registry.define_first_column.<locals>.FirstColumn; give one of them another name")
    with pytest.raises(ValueError, match=f"{told}\\S*{mine}"):
        define_first_column("random")
    assert type(make_agent("random")).__name__ == "RandomAgent"



def test_the_registry_hands_out_presets_that_cannot_be_changed_after_the_fact() -> None:
    # Review: agent_infos() gives the registry's own objects, and a preset's defaults was a dict:
    # hard.defaults["iterations"] = "5" made every later "hard" a 5-iteration UCT, in the whole process.
    hard = next(info for info in agent_infos() if info.name == "hard")
    before = make_agent("hard").iterations  # type: ignore[attr-defined]
    with pytest.raises(TypeError):
        hard.defaults["iterations"] = "5"  # type: ignore[index]
    assert make_agent("hard").iterations == before == int(hard.defaults["iterations"])  # type: ignore[attr-defined]


@pytest.mark.parametrize("name", ["", "uct:x", "Bad Name", "a,b", "k=v"])
def test_a_name_no_spec_can_give_is_refused_at_register(name: str) -> None:
    """Review: ``register("uct:x", ...)`` was taken, and no spec could
    make it (``make_agent("uct:x")`` read ``x`` as a parameter); an empty
    name and one with a space were taken too."""
    with pytest.raises(ValueError, match=re.escape(f"agent name {name!r}: a spec names an agent with one word")):

        @register(name, "a name")
        class Named(Agent):
            def analyse(self, position: Position, budget: Budget | None = None) -> tuple[Move, Analysis]:
                raise NotImplementedError


@pytest.mark.parametrize("params, says", [
    ([Param("seed", int, None, "h"), Param("seed", int, None, "h")], "Param('seed', ...) is declared twice"),
    ([Param("n", int, 3, "h", minimum=5)], "Param('n', ...): its default 3 breaks its own rule (n must be at least 5"),
    ([Param("mode", str, "x", "h", choices=("a", "b"))],
     "Param('mode', ...): its default 'x' breaks its own rule (mode must be one of a, b"),
])
def test_a_param_list_that_breaks_its_own_rules_is_refused_at_register(params: list[Param], says: str) -> None:
    """Review: a default below its own minimum was taken (a spec leaving
    the parameter out built what ``n=3`` in a spec was refused), and so
    were a default that is none of the choices and a parameter declared
    twice."""
    with pytest.raises(TypeError, match=re.escape(f"agent 'ruled': {says}")):

        @register("ruled", "rules", params)
        class Ruled(Agent):
            def __init__(self, seed: int | None = None, n: int = 3, mode: str = "x") -> None:
                pass

            def analyse(self, position: Position, budget: Budget | None = None) -> tuple[Move, Analysis]:
                raise NotImplementedError
    with pytest.raises(SpecError, match="unknown agent 'ruled'"):
        make_agent("ruled")
