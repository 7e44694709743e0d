"""The files a server offers its rooms: n-tuple networks (``--network
FILE``) and Q-tables (``--qtable FILE``): a room names one by its file name
alone, the server opens only the files it was started with, and nothing a
visitor writes is ever opened."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient

from c4lab.agents.ntuple_net import Network
from c4lab.cli import games as cli_games
from c4lab.cli import main
from c4lab.rules import Position
from c4lab.server.app import create_app
from c4lab.server.limits import AgentLimits, LimitError
from c4lab.server.offered import NETWORK, QTABLE, by_file_name, offered_files
from c4lab.server.storage import GameStore


def network_file(path: Path, board: str = "4x4") -> Path:
    """A small untrained network for ``board`` written to ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    Network.create(Position.parse(board).variant, tuples=5, seed=1).save(path)
    return path


def room(http: Any, spec: str, board: str = "4x4") -> Any:
    return http.post("/api/rooms", json={"mode": "local", "board": board, "first": "A",
                                         "players": {"A": spec, "B": "human"}})


def test_a_room_plays_an_offered_network_by_its_file_name(store: GameStore, tmp_path: Path) -> None:
    net = network_file(tmp_path / "nets" / "small.npz")
    limits = AgentLimits(files=offered_files([(NETWORK, net)]))
    with TestClient(create_app(store, limits=limits), client=("203.0.113.7", 5000)) as http:
        agents = {a["name"]: a for a in http.get("/api/agents").json()}
        for name in ("ntuple", "ntuple-puct", "master"):  # every agent that takes weights= lists them
            assert agents[name]["networks"] == [{"name": "small.npz", "board": "4x4"}]
        assert "networks" not in agents["random"]
        assert http.get("/api/limits").json()["networks"] == [{"name": "small.npz", "board": "4x4"}]
        made = room(http, "ntuple:weights=small.npz")
        assert made.status_code == 200, made.json()
        code = made.json()["code"]
        deadline = time.monotonic() + 300  # the kernels may compile on a loaded machine
        while (state := http.get(f"/api/rooms/{code}").json())["position"] == "4x4":
            assert time.monotonic() < deadline, state
            time.sleep(0.1)
        assert state["seats"]["A"]["spec"] == "ntuple:weights=small.npz"  # as the room named it
        assert len(state["position"].split(":")[1]) == 1


def test_a_room_never_opens_a_path_or_a_file_not_offered(store: GameStore, tmp_path: Path) -> None:
    """A visitor's path (absolute, relative, the offered file by its path)
    is refused before anything is opened, and the refusal lists what the
    server offers; on another board the network is named as the room
    named it, never by the server's path."""
    net = network_file(tmp_path / "nets" / "small.npz")
    network_file(tmp_path / "other.npz")
    limits = AgentLimits(files=offered_files([(NETWORK, net)]))
    with TestClient(create_app(store, limits=limits), client=("203.0.113.7", 5000)) as http:
        for spec in (f"ntuple:weights={net}", f"ntuple:weights={tmp_path / 'other.npz'}", "ntuple:weights=other.npz",
                     "ntuple:weights=nets/small.npz", "ntuple:weights=../small.npz", "master:weights=/etc/passwd",
                     "qlearning:table=small.npz"):
            answer = room(http, spec)
            assert answer.status_code == 400, (spec, answer.json())
            assert "only the local command line may use it" in answer.json()["detail"]
        assert "this server's networks: weights=small.npz (4x4)" in room(http, "ntuple:weights=x.npz").json()["detail"]
        elsewhere = room(http, "ntuple:weights=small.npz", board="7x6").json()["detail"]
        assert "the network in small.npz was trained for the board 4x4, not 7x6" in elsewhere
        assert str(tmp_path) not in elsewhere
    with TestClient(create_app(store), client=("203.0.113.7", 5000)) as http:  # a server that offers none
        answer = room(http, "ntuple:weights=small.npz")
        assert answer.status_code == 400
        assert "this server offers no networks: its --network FILE would" in answer.json()["detail"]


def test_a_stored_room_reads_its_network_from_the_file_offered_and_never_from_its_name(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A room stored with ``weights=small.npz`` is made again from the file
    the server offers under that name; restarted without it, the room is
    refused, even with a file of that name in the server's folder."""
    net = network_file(tmp_path / "nets" / "small.npz")
    network_file(tmp_path / "small.npz", board="5x4")  # what make_agent would have opened from here
    monkeypatch.chdir(tmp_path)
    agent = AgentLimits(files=offered_files([(NETWORK, net)])).make_stored("ntuple:weights=small.npz")
    agent.check_board(Position.parse("4x4").variant)  # the offered 4x4 network, not ./small.npz (5x4)
    with pytest.raises(LimitError, match="opens a file"):
        AgentLimits().make_stored("ntuple:weights=small.npz")


def test_a_network_offered_is_checked_at_start(tmp_path: Path) -> None:
    net = network_file(tmp_path / "a" / "small.npz")
    (tmp_path / "damaged.npz").write_bytes(net.read_bytes()[:500])
    for paths, message in [
        ([tmp_path / "missing.npz"], "--network {tmp}/missing.npz: network file {tmp}/missing.npz does not exist"),
        ([tmp_path / "damaged.npz"], "--network {tmp}/damaged.npz: cannot read n-tuple network"),
        ([net, network_file(tmp_path / "b" / "small.npz")], "a network of the file name 'small.npz' is offered already"),
        ([network_file(tmp_path / "x,y" / "n.npz")], "its path has a comma"),
    ]:
        with pytest.raises(ValueError) as caught:
            offered_files((NETWORK, p) for p in paths)
        assert message.format(tmp=tmp_path) in str(caught.value)
    assert [n.name for n in offered_files([(NETWORK, net), (NETWORK, net)])] == ["small.npz"]  # the same file twice: once


def test_serve_refuses_a_bad_network_in_one_line_before_it_starts(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["serve", "--network", str(tmp_path / "missing.npz"), "--port", "8631"])
    assert result.exit_code == 2
    assert result.stderr.strip().count("\n") == 0
    assert result.stderr == f"Error: --network {tmp_path / 'missing.npz'}: network file {tmp_path / 'missing.npz'} does not exist\n"


def test_play_offers_its_players_networks_to_the_page_by_file_name(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``c4lab play -2 ntuple:weights=nets/small.npz`` opens the page with
    the player ``ntuple:weights=small.npz``, a name the local server offers
    (before, the page's room refused the spec: "opens a file")."""
    net = network_file(tmp_path / "nets" / "small.npz")
    extra = network_file(tmp_path / "extra.npz", board="5x4")
    served: dict[str, Any] = {}
    monkeypatch.setattr(cli_games, "_serve", lambda **options: served.update(options))
    result = CliRunner().invoke(main, ["play", "--board", "4x4", "--no-browser", "-2", f"ntuple:weights={net}",
                                       "--network", str(extra)])
    assert result.exit_code == 0, result.output
    assert "p2=ntuple%3Aweights%3Dsmall.npz" in served["query"]
    assert [(n.name, n.board) for n in served["limits"].files] == [("small.npz", "4x4"), ("extra.npz", "5x4")]
    assert served["limits"].make("ntuple:weights=small.npz").network.variant.notation == "4x4"
    assert by_file_name("random") == "random"


def test_play_offers_an_agent_of_one_s_own_named_for_a_player(monkeypatch: pytest.MonkeyPatch) -> None:
    """Review: ``c4lab play -2 centre`` (a plugin's agent) started, and the
    page's own request for the game was then refused: "agent 'centre' is not
    offered by this server".  The local server offers it; nobody else's."""
    from c4lab.agents import Agent, Analysis, agent_infos, base, register

    agent_infos()  # c4lab's own agents first; the registry is put back as it was after the test
    monkeypatch.setattr(base, "_REGISTRY", dict(base._REGISTRY))

    @register("centre", "the centre-most legal column")
    class Centre(Agent):
        def analyse(self, position: Position, budget: object = None) -> tuple[object, Analysis]:
            moves = position.legal_moves()
            return min(moves, key=lambda m: abs(2 * m.column - position.variant.width + 1)), Analysis()

    served: dict[str, Any] = {}
    monkeypatch.setattr(cli_games, "_serve", lambda **options: served.update(options))
    result = CliRunner().invoke(main, ["play", "--no-browser", "-2", "centre"])
    assert result.exit_code == 0, result.output
    limits = served["limits"]
    assert "centre" in limits.agents and "heuristic" in limits.agents
    assert isinstance(limits.make("centre"), Centre)
    result = CliRunner().invoke(main, ["play", "--no-browser", "-2", "random"])
    assert "centre" not in served["limits"].agents  # named on this command line only


def qtable_file(path: Path, board: str = "4x4") -> Path:
    """An empty Q-table for ``board`` (its agent wins, blocks or plays at random) written to ``path``."""
    import numpy as np  # lazy: only the Q-table tests need it

    from c4lab.agents.qtable import QTable

    width = Position.parse(board).variant.width
    path.parent.mkdir(parents=True, exist_ok=True)
    QTable(Position.parse(board).variant, np.zeros(0, np.uint64), np.zeros((0, 2 * width), np.float32),
           np.zeros(0, np.uint32), True).save(path)
    return path


def test_a_room_plays_an_offered_q_table_by_its_file_name(store: GameStore, tmp_path: Path) -> None:
    """``serve --qtable tables/q.npz``: ``qlearning`` is offered, with its
    tables listed, and a room's ``qlearning:table=q.npz`` plays from the
    file given; without a table the agent is not offered at all."""
    table = qtable_file(tmp_path / "tables" / "q.npz")
    limits = AgentLimits(files=offered_files([(QTABLE, table)]))
    with TestClient(create_app(store, limits=limits), client=("203.0.113.7", 5000)) as http:
        agents = {a["name"]: a for a in http.get("/api/agents").json()}
        assert agents["qlearning"]["tables"] == [{"name": "q.npz", "board": "4x4"}]
        assert "tables" not in agents["ntuple"] and "networks" not in agents["qlearning"]
        assert http.get("/api/limits").json()["tables"] == [{"name": "q.npz", "board": "4x4"}]
        assert "qlearning" in http.get("/api/limits").json()["agents"]
        made = room(http, "qlearning:table=q.npz")
        assert made.status_code == 200, made.json()
        deadline = time.monotonic() + 300  # the kernels may compile on a loaded machine
        while (state := http.get(f"/api/rooms/{made.json()['code']}").json())["position"] == "4x4":
            assert time.monotonic() < deadline, state
            time.sleep(0.1)
        assert state["seats"]["A"]["spec"] == "qlearning:table=q.npz"
    with TestClient(create_app(store), client=("203.0.113.7", 5000)) as http:
        assert "qlearning" not in {a["name"] for a in http.get("/api/agents").json()}


def test_a_room_never_opens_a_q_table_path_or_a_table_not_offered(store: GameStore, tmp_path: Path) -> None:
    """Before, ``--allow-agent qlearning`` let a visitor's ``table=`` name
    any path on the server; now only an offered table's name is read, and
    a table for another board is named as the room named it."""
    table = qtable_file(tmp_path / "tables" / "q.npz")
    qtable_file(tmp_path / "other.npz")
    limits = AgentLimits(files=offered_files([(QTABLE, table)]))
    with TestClient(create_app(store, limits=limits), client=("203.0.113.7", 5000)) as http:
        for spec in (f"qlearning:table={table}", "qlearning:table=/etc/passwd", "qlearning:table=tables/q.npz",
                     "qlearning:table=other.npz", f"qlearning:table={tmp_path / 'other.npz'}"):
            answer = room(http, spec)
            assert answer.status_code == 400, (spec, answer.json())
            assert "only the local command line may use it (this server's Q-tables: table=q.npz (4x4))" in \
                answer.json()["detail"]
        elsewhere = room(http, "qlearning:table=q.npz", board="5x4").json()["detail"]
        assert "the Q-table q.npz was trained on 4x4 boards" in elsewhere and str(tmp_path) not in elsewhere
    with TestClient(create_app(store), client=("203.0.113.7", 5000)) as http:
        answer = room(http, "qlearning:table=q.npz")
        assert "this server offers no Q-tables: its --qtable FILE would" in answer.json()["detail"]


def test_serve_refuses_a_bad_q_table_and_allow_agent_qlearning_in_one_line(tmp_path: Path) -> None:
    """A missing or damaged ``--qtable`` stops the server before it starts;
    ``--allow-agent qlearning`` (which let rooms name any path) points at
    ``--qtable``; a network given as a table is named as the wrong kind."""
    good = qtable_file(tmp_path / "q.npz")
    (tmp_path / "damaged.npz").write_bytes(good.read_bytes()[:300])
    net = network_file(tmp_path / "net.npz")
    for args, message in [
        (["--qtable", str(tmp_path / "missing.npz")], f"--qtable {tmp_path}/missing.npz: no Q-table at"),
        (["--qtable", str(tmp_path / "damaged.npz")], f"--qtable {tmp_path}/damaged.npz: "),
        (["--qtable", str(net)], f"--qtable {net}: "),
        (["--allow-agent", "qlearning"],
         "Invalid value for '--allow-agent': 'qlearning': offer its tables instead, --qtable FILE"),
    ]:
        result = CliRunner().invoke(main, ["serve", *args, "--port", "8632"])
        assert result.exit_code == 2, (args, result.output)
        assert result.stderr.count("\n") == 1, result.stderr
        assert message in result.stderr


def test_play_offers_its_players_q_table_to_the_page_by_file_name(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``c4lab play -2 qlearning:table=tables/q.npz`` opens the page with
    ``qlearning:table=q.npz``, which its local server offers (before, the
    page refused ``qlearning`` outright)."""
    table = qtable_file(tmp_path / "tables" / "q.npz")
    served: dict[str, Any] = {}
    monkeypatch.setattr(cli_games, "_serve", lambda **options: served.update(options))
    result = CliRunner().invoke(main, ["play", "--board", "4x4", "--no-browser", "-2", f"qlearning:table={table}"])
    assert result.exit_code == 0, result.output
    assert "p2=qlearning%3Atable%3Dq.npz" in served["query"]
    assert served["limits"].make("qlearning:table=q.npz").table.variant.notation == "4x4"


def test_the_start_up_line_names_the_files_rooms_may_name(tmp_path: Path) -> None:
    """The person running ``serve --network ... --qtable ...`` sees what a
    room may ask for (before, the line listed the agents alone)."""
    files = offered_files([(NETWORK, network_file(tmp_path / "net.npz")), (QTABLE, qtable_file(tmp_path / "q.npz"))])
    line = AgentLimits(files=files).describe()
    assert line.endswith("; files rooms may name: weights=net.npz (4x4), table=q.npz (4x4)")
    assert "qlearning" in line and "files" not in AgentLimits().describe()
