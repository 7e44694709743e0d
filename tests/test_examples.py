"""The two worked examples of the manual's "Writing your own agent"
(docs/writing-agents.md), run as the page says a user runs them:

- ``examples/myagent``: a Python agent in a package of its own, found
  through the ``c4lab.agents`` entry point group: listed by ``c4lab
  agents``, played by ``c4lab arena myagent hard --games 100``, offered by
  a server that allows it;
- ``examples/engine/simple_engine.py``: an engine in plain Python (the
  standard library only) speaking the engine protocol, played in the arena
  with ``engine:cmd=...`` on every kind of board.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import c4lab

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
ENGINE = EXAMPLES / "engine" / "simple_engine.py"
SRC = Path(c4lab.__file__).resolve().parents[1]  # the c4lab these tests import

tomllib = pytest.importorskip("tomllib")  # Python 3.11+: reads the example's pyproject.toml


def _installed(target: Path) -> Path:
    """``examples/myagent`` installed into ``target`` as pip puts it in
    site-packages: its module, and a ``.dist-info`` folder with its
    metadata and the entry points of its ``pyproject.toml``.  (pip itself
    would need the index for a build backend: these tests run offline.)"""
    package = EXAMPLES / "myagent"
    project = tomllib.loads((package / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    info = target / f"{project['name'].replace('-', '_')}-{project['version']}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {project['name']}\nVersion: {project['version']}\n", encoding="utf-8"
    )
    lines = []
    for group, entries in project["entry-points"].items():
        lines.append(f"[{group}]")
        lines += [f"{name} = {value}" for name, value in entries.items()]
    (info / "entry_points.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (target / "c4lab_myagent.py").write_text((package / "c4lab_myagent.py").read_text(encoding="utf-8"))
    return target


def _run(args: list[str], cwd: Path, path: Path | None = None, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(str(p) for p in (path, SRC) if p is not None)
    return subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout, check=False)


def _games(results: Path) -> list[dict]:
    lines = [json.loads(line) for line in results.read_text(encoding="utf-8").splitlines()]
    return lines[1:]  # the first line holds the settings, each other one a game


def test_the_example_package_declares_its_agent_in_c4labs_entry_point_group() -> None:
    from c4lab.agents.base import ENTRY_POINT_GROUP

    project = tomllib.loads((EXAMPLES / "myagent" / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["entry-points"][ENTRY_POINT_GROUP] == {"myagent": "c4lab_myagent"}
    assert len((EXAMPLES / "myagent" / "c4lab_myagent.py").read_text(encoding="utf-8").splitlines()) <= 40


def test_the_python_agent_is_listed_played_and_offered(tmp_path: Path) -> None:
    site = _installed(tmp_path / "site")

    listed = _run(["-m", "c4lab", "agents"], tmp_path, site)
    assert listed.returncode == 0, listed.stderr
    assert "myagent: wins when it can" in listed.stdout
    assert "    seed=None  (int)" in listed.stdout.split("myagent:")[1]

    moved = _run(["-m", "c4lab", "move", "7x6:dd", "--agent", "myagent:seed=1"], tmp_path, site)
    assert moved.returncode == 0 and moved.stdout.strip() in list("abcdefg"), moved.stderr

    # The page's command, as it is written there.
    played = _run(["-m", "c4lab", "arena", "myagent", "hard", "--games", "100", "--out", "arena.jsonl"],
                  tmp_path, site)
    assert played.returncode == 0, played.stderr
    games = _games(tmp_path / "arena.jsonl")
    assert len(games) == 100
    assert all(game["forfeit"] is None for game in games)
    assert {game["A"] for game in games} == {"myagent", "hard"}
    mine = sum(1.0 if game["result"] == ("A" if game["A"] == "myagent" else "B") else
               0.5 if game["result"] == "draw" else 0.0 for game in games)
    assert mine < 50  # hard is the stronger, as the page says

    # The picker reads /api/agents: a server that allows the agent offers it.
    offered = _run(["-c", (
        "import json\n"
        "from fastapi.testclient import TestClient\n"
        "from c4lab.server.app import create_app\n"
        "from c4lab.server.limits import AgentLimits\n"
        "from c4lab.server.storage import GameStore\n"
        "for allowed in ((), ('myagent',)):\n"
        "    store = GameStore('games.sqlite')\n"
        "    app = create_app(store, limits=AgentLimits.with_agents(allowed))\n"
        "    print(json.dumps([a for a in TestClient(app).get('/api/agents').json() if a['name'] == 'myagent']))\n"
        "    store.close()\n"
    )], tmp_path, site)
    assert offered.returncode == 0, offered.stderr
    without, with_it = (json.loads(line) for line in offered.stdout.splitlines())
    assert without == []
    assert [(a["group"], a["summary"]) for a in with_it] == [
        ("experimental", "wins when it can, hands over no immediate win, else plays near the centre")
    ]


def test_the_installed_python_agent_passes_the_conformance_suite(tmp_path: Path) -> None:
    """The page's command: the contract every agent passes, on the
    installed example.  It met ``KeyError: 'myagent'`` (the suite knew
    c4lab's agents only) and a request to add the agent to c4lab's own
    ``SPECS``."""
    checked = _run(["-m", "pytest", str(ROOT / "tests" / "agents" / "test_conformance.py"), "-k",
                    "myagent or every_registered_agent_is_checked", "-q", "-p", "no:cacheprovider",
                    "--rootdir", str(ROOT)], tmp_path, _installed(tmp_path / "site"), timeout=600)
    assert checked.returncode == 0, checked.stdout[-3000:]
    assert "4 passed" in checked.stdout, checked.stdout[-3000:]


def test_the_python_agent_takes_a_win_and_blocks_one(tmp_path: Path) -> None:
    """The agent's own play, as the page promises it.  In a process of its
    own: importing the module registers ``myagent``, which this session's
    registry must not keep."""
    checked = _run(["-c", (
        "from c4lab import Position\n"
        "from c4lab_myagent import MyAgent\n"
        "agent = MyAgent(seed=1)\n"
        "assert agent.choose(Position.parse('7x6:dedede')).token == 'd'  # A wins in d\n"
        "assert agent.choose(Position.parse('7x6:adada')).token == 'a'  # B blocks a\n"
        "start = Position.parse('9x8/Xd3/Bb1:b+ac')\n"
        "move, analysis = agent.analyse(start)\n"
        "assert start.is_legal(move) and analysis.note\n"
        "print('ok')\n"
    )], tmp_path, EXAMPLES / "myagent")
    assert checked.returncode == 0 and checked.stdout == "ok\n", checked.stderr


def _talk(lines: list[str]) -> list[str]:
    done = subprocess.run([sys.executable, str(ENGINE)], input="".join(f"{line}\n" for line in lines),
                          capture_output=True, text=True, timeout=30, check=False)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    return done.stdout.splitlines()


def test_the_engine_example_speaks_the_protocol() -> None:
    replies = _talk(["c4lab", "isready", "newgame", "position 7x6:dedede", "isready", "go time 1",
                     "position 9x8/Xd3/Bb1:b+ac", "go iterations 5", "position 7x6:4453", "go", "frobnicate", "setoption name level value 3",
                     "quit"])
    assert replies[0].startswith("id name ") and "c4labok" in replies
    assert replies[replies.index("c4labok") + 1:] == [
        "readyok",
        "readyok",
        "bestmove d",  # the win
        replies[replies.index("c4labok") + 4],
        "error cannot read the position '7x6:4453': it is not in RULES.md's notation",
        "error go: no position, or the game is over",
        "error unknown command 'frobnicate'",
        "error unknown option 'level': this engine has no options",  # as the protocol asks of every engine
    ]
    assert replies[replies.index("c4labok") + 4].startswith("bestmove ")


@pytest.mark.parametrize(("position", "why"), [
    ("13x6", "width and height go from 4 to 12"),
    ("7x6:dddddddd", "'d' is not a legal move"),
    ("7x6:hh", "'h' is not a legal move"),
    ("4x4/Ba1:a+e", "'a+e' is not a legal move"),
    ("4x4/Bb1:a+b", "'a+b' is not a legal move"),  # a ban after a landing off the bonus cell
    ("4x4/Bd1:aabbccd+a", "'d+a' is not a legal move"),  # nor after the bonus landing that won
    ("4x4:abababab", "'b' is not a legal move"),
])
def test_the_engine_example_answers_a_position_it_cannot_play_with_an_error_and_reads_on(
    position: str, why: str
) -> None:
    """As the protocol asks of every engine (docs/engine-protocol.md): a
    board wider than its column letters made the next ``go`` an IndexError
    that ended the engine, and a move into a full column was taken."""
    assert _talk([f"position {position}", "go", "position 7x6:dd", "go"]) == [
        f"error cannot read the position '{position}': {why}",
        "error go: no position, or the game is over",
        "bestmove d",
    ]


def test_the_engine_example_splits_words_where_the_protocol_does() -> None:
    """Review: ``line.split()`` split at a no-break space too, so that a
    position string holding one read as two words ('unknown command
    position'); words are split at spaces and tabs only, as the protocol
    says."""
    assert _talk(["position 7x6:d\u00a0d", "go", "position\t7x6:dd", "go"]) == [
        "error cannot read the position '7x6:d\\xa0d': it is not in RULES.md's notation",
        "error go: no position, or the game is over",
        "bestmove d",
    ]


def _talk_bytes(data: bytes, encoding: str) -> list[str]:
    """The example's answers to ``data`` (bytes as a driver writes them)
    on a machine whose standard streams' encoding is ``encoding``."""
    env = {**os.environ, "PYTHONIOENCODING": encoding}
    done = subprocess.run([sys.executable, str(ENGINE)], input=data, capture_output=True, env=env, timeout=30,
                          check=False)
    assert done.returncode == 0 and done.stderr == b"", done.stderr.decode(errors="replace")
    return done.stdout.decode("utf-8").split("\n")[:-1]


@pytest.mark.parametrize("encoding", ["ascii", "latin-1", "utf-8:strict"])
def test_the_engine_example_reads_and_writes_utf8_whatever_the_locale(encoding: str) -> None:
    """Review: the example read with this machine's encoding, as the
    protocol does not (it is UTF-8): where that was ASCII, a no-break space
    in a position string ended it with a UnicodeDecodeError; where it was
    Latin-1, it quoted 'Â\xa0' for it; a byte that is no UTF-8 ended it
    where errors are strict.  Digits of another script (U+0667, ARABIC-INDIC
    SEVEN) made a 7x6 board of '٧x6', as \\d matches them: RULES.md's
    notation is ASCII."""
    data = "position 7x6:d\u00a0d\nposition \u0667x6:dd\ngo\n".encode() + b"position 7x6:d\xc3d\nposition 7x6:dd\ngo\n"
    assert _talk_bytes(data, encoding) == [
        "error cannot read the position '7x6:d\\xa0d': it is not in RULES.md's notation",
        "error cannot read the position '\u0667x6:dd': it is not in RULES.md's notation",
        "error go: no position, or the game is over",
        "error bad message 'position 7x6:d\\udcc3d': byte 0xC3 at character 14 is not UTF-8",
        "bestmove d",
    ]


def test_the_engine_example_answers_a_line_that_is_no_message_with_an_error_and_reads_on() -> None:
    """Review: the example took 'isready now' for 'isready', 'go fast' for
    'go' and 'isready\\r\\r\\n' for a line (it stripped every '\\r' at the
    end).  The protocol's keywords are exact, a command takes the words it
    takes, and a line ends in '\\n' or '\\r\\n' alone: each is an error now,
    as from c4lab's own engine, and the example reads on.  A word longer
    than a driver reads is quoted by its start."""
    data = (b"isready now\nisready\r\r\nposition 7x6:dd\rgo\nposition 7x6:dd extra\nposition 7x6:dd\r\n"
            b"position\ngo\ngo fast\ngo time 0\ngo time 1e-3\ngo iterations 5 iterations 5\ngo time\n"
            + b"x" * 70_000 + b"\nposition 7x6:dd\ngo iterations 0005\ttime .5\nisready\r\n")
    assert _talk_bytes(data, "utf-8") == [
        "error unexpected 'now' after 'isready'",
        "error bad message 'isready\\r': a carriage return at character 7 (a line ends in '\\n' or '\\r\\n')",
        ("error bad message 'position 7x6:dd\\rgo': a carriage return at character 15 (a line ends in '\\n' or "
         "'\\r\\n')"),
        "error unexpected 'extra' after 'position 7x6:dd'",
        "error 'position' needs a position string",
        "error go: no position, or the game is over",
        "error 'go' takes 'time S' and 'iterations N', each at most once, not 'fast'",
        "error time needs a positive number, not '0'",
        "error time needs a positive number, not '1e-3'",
        "error 'go' takes 'time S' and 'iterations N', each at most once, not 'iterations'",
        "error time needs a positive number",
        f"error unknown command {'x' * 60!r}... (70000 characters)",
        "bestmove d",
        "readyok",
    ]


def test_the_engine_example_plays_the_arena_on_every_kind_of_board(tmp_path: Path) -> None:
    """Random boards from 4x4 to 12x12 with forbidden and bonus cells: no
    forfeit (a move it thinks legal that is not would lose with
    ``illegal``), and it beats ``random``."""
    spec = f"engine:cmd={sys.executable} {ENGINE}"
    played = _run(["-m", "c4lab", "arena", spec, "random", "--board", "random", "--bonus", "--games", "20",
                   "--seed", "3", "--out", "arena.jsonl"], tmp_path)
    assert played.returncode == 0, played.stderr
    games = _games(tmp_path / "arena.jsonl")
    assert len(games) == 20
    assert all(game["forfeit"] is None for game in games)
    assert len({game["position"].split(":")[0] for game in games}) >= 5  # several kinds of board
    wins = sum(game["result"] == ("A" if game["A"] == spec else "B") for game in games)
    assert wins >= 13  # 15 of 20 with this seed (a small board can be lost or drawn from the start)


def test_a_plugin_that_fails_on_import_is_named_in_one_line_and_the_other_agents_play(tmp_path: Path) -> None:
    """An installed plugin whose module raises as it is imported (a bad
    ``Param``, a missing dependency) left every command a traceback,
    ``move --agent random`` included: now each command says once which
    plugin did not load, where and why, and asking for its agent says so."""
    site = tmp_path / "site"
    info = site / "c4lab_broken-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: c4lab-broken\nVersion: 0.1\n", encoding="utf-8")
    (info / "entry_points.txt").write_text("[c4lab.agents]\nbroken = c4lab_broken\n", encoding="utf-8")
    (site / "c4lab_broken.py").write_text('"""A plugin with a bug."""\nraise ValueError("oops")\n', encoding="utf-8")
    moved = _run(["-m", "c4lab", "move", "4x4", "--agent", "random:seed=1"], tmp_path, site)
    assert moved.returncode == 0 and moved.stdout.strip() in list("abcd"), moved.stderr
    assert moved.stderr.strip() == (f"warning: the agent plugin 'broken' (c4lab_broken) did not load at "
                                    f"{site / 'c4lab_broken.py'}:2: ValueError: oops; its agents are left out")
    asked = _run(["-m", "c4lab", "move", "4x4", "--agent", "broken"], tmp_path, site)
    assert asked.returncode == 2 and "Traceback" not in asked.stderr
    assert "unknown agent 'broken'" in asked.stderr and "'broken' (c4lab_broken) did not load" in asked.stderr
    # the mistake the manual names: a Param whose type a spec cannot give, refused at the @register line (the
    # line was "<string>:12", the __init__ a dataclass writes)
    (site / "c4lab_broken.py").write_text(
        "from c4lab.agents import Agent, Param, register\n"
        "\n"
        "@register('brk', 'broken', [Param('depth', int | None, None, 'depth')])\n"
        "class Broken(Agent):\n"
        "    pass\n", encoding="utf-8")
    moved = _run(["-m", "c4lab", "move", "4x4", "--agent", "random:seed=1"], tmp_path, site)
    assert moved.stderr.startswith(f"warning: the agent plugin 'broken' (c4lab_broken) did not load at "
                                   f"{site / 'c4lab_broken.py'}:3: TypeError: Param('depth', int | None, ...)"), moved.stderr


@pytest.mark.parametrize("entry", ["aaa", "zzz"])
def test_a_plugin_that_takes_a_built_in_name_is_the_one_left_out_whatever_its_entry_point_s_name(
    tmp_path: Path, entry: str
) -> None:
    """Review: a plugin registering ``random`` under an entry point named
    before c4lab's own (``aaa``) made c4lab's module raise as it loaded:
    every command failed, ``move --agent heuristic`` included; named after
    them (``zzz``), the plugin was the one left out.  c4lab's own agents
    load first now."""
    site = tmp_path / "site"
    info = site / "c4lab_clash-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: c4lab-clash\nVersion: 0.1\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(f"[c4lab.agents]\n{entry} = c4lab_clash\n", encoding="utf-8")
    (site / "c4lab_clash.py").write_text(
        "from c4lab.agents import Agent, Analysis, register\n"
        "@register('random', 'my own random: the leftmost move')\n"
        "class MyRandom(Agent):\n"
        "    def analyse(self, position, budget=None):\n"
        "        return position.legal_moves()[0], Analysis()\n", encoding="utf-8")
    moved = _run(["-m", "c4lab", "move", "4x4:a", "--agent", "heuristic"], tmp_path, site)
    assert moved.returncode == 0 and moved.stdout.strip() in list("abcd"), moved.stderr
    assert moved.stderr.startswith(f"warning: the agent plugin '{entry}' (c4lab_clash) did not load at "
                                   f"{site / 'c4lab_clash.py'}:2: ValueError: agent name 'random' is registered "
                                   "twice: by c4lab.agents.random_agent.RandomAgent and by c4lab_clash.MyRandom")


def test_a_script_s_agent_under_a_taken_name_is_refused_at_its_register_line_and_the_rest_goes_on(
    tmp_path: Path,
) -> None:
    """Review: a script that registered ``random`` before its first lookup
    was not refused there; c4lab's own module raised at the next lookup of
    any agent, and every later one, until the process restarted."""
    script = (
        "from c4lab.agents import Agent, Analysis, make_agent, register\n"
        "try:\n"
        "    @register('random', 'mine')\n"
        "    class R(Agent):\n"
        "        def analyse(self, position, budget=None):\n"
        "            return position.legal_moves()[0], Analysis()\n"
        "except ValueError as exc:\n"
        "    print('refused:', exc)\n"
        "print(type(make_agent('heuristic')).__name__, type(make_agent('random')).__module__)\n"
    )
    done = _run(["-c", script], tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        ("refused: agent name 'random' is registered twice: by c4lab.agents.random_agent.RandomAgent and by "
         "__main__.R; give one of them another name"),
        "HeuristicAgent c4lab.agents.random_agent",
    ]
