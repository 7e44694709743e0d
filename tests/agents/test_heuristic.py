"""The heuristic agent: fast rules of thumb, one or two plies deep."""

from __future__ import annotations

import random

import pytest

from c4lab.agents import agent_infos, make_agent
from c4lab.agents.heuristic import HeuristicAgent, threats
from c4lab.game import play_game
from c4lab.rules import Position, Variant
from testkit import random_positions, safe_moves, winning_moves


def heuristic(seed: int = 0) -> HeuristicAgent:
    agent = make_agent(f"heuristic:seed={seed}")
    assert isinstance(agent, HeuristicAgent)
    return agent


def test_heuristic_is_registered_with_a_seed() -> None:
    info = next(i for i in agent_infos() if i.name == "heuristic")
    assert [p.name for p in info.params] == ["seed"]


def test_heuristic_always_plays_a_legal_move_on_every_kind_of_board() -> None:
    positions = random_positions(random.Random(2), 150)
    assert sum(any(m.ban is not None for m in p.legal_moves()) for p in positions) >= 10
    agent = heuristic()
    for position in positions:
        assert agent.choose(position) in position.legal_moves()


def test_the_same_seed_plays_the_same_game() -> None:
    board = Position.parse("8x8/Xd4/Bc2")
    games = [play_game(heuristic(s), heuristic(s + 100), board).final.notation for s in (1, 1, 2, 3)]
    assert games[0] == games[1] and len(set(games)) >= 2


@pytest.mark.parametrize(
    ("board", "winner"),
    [("7x6:aabbcc", "d"), ("9x8/Xd1:aabbcceeffg", "d"), ("12x12/Xf4:lalala", "l")],
)
def test_heuristic_takes_an_immediate_win(board: str, winner: str) -> None:
    position = Position.parse(board)
    assert winning_moves(position) == [winner]
    assert heuristic().choose(position).token == winner


@pytest.mark.parametrize(
    ("board", "block"),
    [
        ("7x6:aabbc", "d"),
        ("8x8/Xc1:ddeef", "g"),
        ("7x6/Ba1:bbccd", "a+e"),  # the piece blocks a1, the ban e1
    ],
)
def test_heuristic_blocks_an_immediate_loss(board: str, block: str) -> None:
    position = Position.parse(board)
    assert safe_moves(position) == [block]
    assert heuristic().choose(position).token == block


@pytest.mark.parametrize(
    "board",
    [
        "7x6:cacbagb",  # A's a2 b2 c2: a piece on d1 lets A win on d2
        "7x6/Xd2:baaccbagbgc",  # A's a3 b3 c3: the next piece in d skips d2 and lands on d3
    ],
)
def test_heuristic_never_plays_under_the_opponents_winning_cell(board: str) -> None:
    position = Position.parse(board)
    assert not winning_moves(position)
    assert winning_moves(position.play("d")) == ["d"]
    assert "d" not in safe_moves(position)
    for seed in range(10):
        assert heuristic(seed).choose(position).token != "d"


def test_heuristic_blocks_an_open_two_on_the_bottom_row() -> None:
    position = Position.parse("7x6:cgd")  # A's c1 d1: A on b1 or e1 would threaten twice
    assert len(threats(position.play("g", "b"), 0).now) == 2
    assert len(threats(position.play("g", "e"), 0).now) == 2
    for seed in range(10):
        assert heuristic(seed).choose(position).token in ("b", "e")


def test_heuristic_makes_a_double_threat_when_it_can() -> None:
    position = Position.parse("7x6:cgdg")
    for seed in range(10):
        move = heuristic(seed).choose(position)
        assert len(threats(position.play(move), 0).now) == 2


def test_heuristic_prefers_the_centre() -> None:
    assert heuristic().choose(Position.parse("7x6")).token == "d"
    assert {heuristic(s).choose(Position.parse("8x8")).token for s in range(10)} == {"d", "e"}


def test_threats_are_read_with_the_kernels_win_test() -> None:
    position = Position.parse("7x6/Xd2:baaccbagbgc")
    assert threats(position, 0).now == ()
    assert 2 in threats(position, 0).later  # d3, above the forbidden d2
    assert threats(position.play("d"), 0).now == (3,)


def test_heuristic_beats_random_in_most_games() -> None:
    wins = 0
    for seed in range(5):
        board = Position(Variant.enhanced(seed, bonus=seed % 2 == 1))
        agent = heuristic(seed)
        wins += play_game(agent, make_agent(f"random:seed={seed}"), board).result == "A"
        wins += play_game(make_agent(f"random:seed={seed}"), agent, board).result == "B"
    assert wins >= 8
