"""The one game loop (``c4lab.game.play_game``), as a specification.

Two agents move in turn from a start position to the end of the game.  A
bad answer of an agent (an exception, ``None`` or anything that is not a
move, an illegal move, a move over the time limit) is dealt with as the
caller's policy says: ``"judge"`` ends the game with a forfeit, recorded
with the seat, the agent and the answer; ``"raise"`` lets the error
propagate.  The arena judges; the terminal game, the Q-learning
evaluation, paired matches and most tests raise.
"""

from __future__ import annotations

import copy
import json
import pickle
import re
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from c4lab.agents import Agent, Analysis, Budget, RandomAgent, make_agent
from c4lab.arena import games as arena_games
from c4lab.arena import schedule
from c4lab.arena.executors import LocalExecutor
from c4lab.arena.games import Game, play_pair
from c4lab.arena.match import paired_match, random_openings
from c4lab.arena.report import summarise
from c4lab.arena.results import read_results
from c4lab.arena.runner import run_arena
from c4lab.arena.schedule import ArenaConfig
from c4lab.game import GameRecord, MoveTimes, SlowMoveError, Turn, answer_move, play_answer, play_game
from c4lab.rules import IllegalMoveError, Move, Position


class Answers(Agent):
    """An agent that answers ``answer(position)``, whatever that is."""

    def __init__(self, spec: str, answer: Callable[[Position], object]) -> None:
        self.spec = spec
        self.answer = answer
        self.games = 0

    def analyse(self, position: Position, budget: Budget | None = None) -> tuple[Move, Analysis]:
        return self.answer(position), Analysis()  # type: ignore[return-value]

    def new_game(self) -> None:
        self.games += 1


def mute() -> Answers:
    """The agent of the bug report: it answers ``None``."""
    return Answers("mute", lambda position: None)


def raising(position: Position) -> Move:
    raise RuntimeError("out of ideas")


def first_legal() -> Answers:
    return Answers("first-legal", lambda position: position.legal_moves()[0])


def sides(bad: Agent, seat: str) -> tuple[Agent, Agent]:
    """``bad`` in ``seat``, a well-behaved agent in the other."""
    return (bad, first_legal()) if seat == "A" else (first_legal(), bad)


def other(seat: str) -> str:
    return "B" if seat == "A" else "A"


START = Position.parse("7x6")
SEATS = pytest.mark.parametrize("seat", ["A", "B"])


# -- a normal game --------------------------------------------------------------

#: Games of seeded agents, as the two loops this one replaced played them
#: (``arena.match.play_game`` and ``arena.games.play_pair``).
SEEDED = [
    ("heuristic:seed=1", "random:seed=2", "7x6:d", None, "7x6:ddcgecf", "A"),
    ("random:seed=5", "minimax:depth=2", "9x8/Xd3/Bb5", None, "9x8/Xd3/Bb5:aecdafgadcgadaha", "B"),
    ("random:seed=1", "random:seed=2", "7x6", None, "7x6:cdcggcaegabgfedbaeadff", "B"),
    ("uct:seed=3", "random:seed=4", "6x5", Budget(iterations=300), "6x5:cbbecaeecac", "A"),
]


@pytest.mark.parametrize(("a", "b", "start", "budget", "final", "result"), SEEDED)
@pytest.mark.parametrize("policy", ["judge", "raise"])
def test_seeded_agents_play_the_same_moves_as_before_under_either_policy(a, b, start, budget, final, result, policy):
    record = play_game(make_agent(a), make_agent(b), Position.parse(start), budget, policy=policy)
    assert record.final.notation == final
    assert record.result == result and record.forfeit is None
    assert record.winner == (a if result == "A" else b)
    assert (record.a, record.b, record.start.notation) == (a, b, start)


def test_a_paired_match_plays_the_same_games_as_before():
    result = paired_match("heuristic:seed=1", "random:seed=2", random_openings(3, seed=1, plies=2))
    assert result.wins == (6, 0, 0)
    assert [g.final.notation for g in result.games] == [
        "6x5/Xb4:adddafaca", "6x5/Xb4:addcaefb", "11x11/Xh7:gdhhfce",
        "11x11/Xh7:gdhfeehdedgd", "5x11/Xa2:ddcdbda", "5x11/Xa2:ddbcbbbdedcd",
    ]


def test_the_record_names_the_sides_and_keeps_every_moves_time():
    a, b = first_legal(), make_agent("random:seed=2")
    record = play_game(a, b, Position.parse("7x6:d"), a_spec="first", b_spec="second")
    assert isinstance(record, GameRecord)
    assert (record.a, record.b) == ("first", "second")
    assert record.final.is_over and record.final.notation.startswith("7x6:d")
    assert len(record.times["A"]) + len(record.times["B"]) == record.final.ply - 1
    assert all(t >= 0 for ts in record.times.values() for t in ts)
    assert a.games == 1  # each agent is told a new game starts


def test_a_record_is_a_value_hashable_picklable_and_its_times_cannot_be_changed_after_the_fact():
    # Review: GameRecord was frozen but its times a dict of lists: hash(record) was a TypeError, and
    # record.times["A"].append(...) changed the record, and the arena's Game made from it (the same dict).
    record = play_game(first_legal(), make_agent("random:seed=2"), Position.parse("7x6:d"))
    assert isinstance(record.times, MoveTimes) and isinstance(record.times["A"], tuple)
    assert {record: "kept"}[pickle.loads(pickle.dumps(record))] == "kept"
    assert copy.deepcopy(record) == record
    with pytest.raises(AttributeError):
        record.times["A"].append(99.0)  # type: ignore[attr-defined]
    with pytest.raises(TypeError):
        record.times["A"] = ()  # type: ignore[index]
    game = Game.of(record)
    assert game.times == record.times and hash(game) == hash(Game.from_dict(json.loads(json.dumps(game.to_dict()))))


def test_times_given_as_lists_are_kept_as_tuples_that_the_caller_no_longer_holds():
    seconds = {"A": [0.5, 1], "B": [0.25]}
    start = Position.parse("7x6")
    record = GameRecord("a", "b", start, start, seconds)  # type: ignore[arg-type]
    seconds["A"].append(3.0)
    assert record.times == {"A": (0.5, 1.0), "B": (0.25,)}
    assert repr(record.times) == "MoveTimes({'A': (0.5, 1.0), 'B': (0.25,)})"
    assert record == GameRecord("a", "b", start, start, MoveTimes({"A": (0.5, 1.0), "B": (0.25,)}))


def test_a_draw_has_no_winner():
    record = play_game(first_legal(), first_legal(), Position.parse("4x4:bdbddcadcbaaca"))  # b, then c
    assert record.final.notation == "4x4:bdbddcadcbaacabc"
    assert record.final.result == record.result == "draw"
    assert record.winner is None


def test_an_agent_may_answer_a_move_token():
    turns: list[Turn] = []
    record = play_game(
        Answers("tokens", lambda p: p.legal_moves()[-1].token), first_legal(), START, on_move=turns.append
    )
    assert record.final.is_over
    assert all(isinstance(t.move, Move) for t in turns)


def test_the_hooks_see_each_position_before_its_move_and_each_move_after_it():
    asked: list[Position] = []
    turns: list[Turn] = []
    record = play_game(
        make_agent("random:seed=1"), make_agent("random:seed=2"), START, on_turn=asked.append, on_move=turns.append
    )
    assert [t.before for t in turns] == asked
    assert [t.side for t in turns] == [p.to_move for p in asked]
    assert all(t.before.play(t.move) == t.after for t in turns)
    assert turns[-1].after == record.final
    assert [t.seconds for t in turns if t.side == "A"] == pytest.approx(record.times["A"], abs=1e-5)


def test_an_error_in_a_hook_is_the_callers_and_propagates_even_when_judging():
    def boom(position: Position) -> None:
        raise KeyError("the screen is gone")

    with pytest.raises(KeyError, match="the screen is gone"):
        play_game(first_legal(), first_legal(), START, policy="judge", on_turn=boom)


def test_an_unknown_policy_is_refused():
    with pytest.raises(ValueError, match="judge, raise"):
        play_game(first_legal(), first_legal(), START, policy="forgive")  # type: ignore[arg-type]


@pytest.mark.parametrize("policy", ["raise", "judge"])
def test_a_finished_start_is_refused_rather_than_recorded_as_a_game_nobody_played(policy):
    # it was a record whose winner never moved (A's spec, for 4x4:abababa), as paired_match says
    with pytest.raises(ValueError, match=r"^play_game: the start \(4x4:abababa\) is a finished game"):
        play_game(first_legal(), first_legal(), Position.parse("4x4:abababa"), policy=policy)


@pytest.mark.parametrize("policy", ["raise", "judge"])
@pytest.mark.parametrize(
    "settings,error,words",
    [
        ({"budget": 100}, TypeError, "play_game: the budget is a Budget (Budget(iterations=N)"),
        ({"limit": "1"}, ValueError, "play_game: limit must be a positive number of seconds (or None: no limit), not '1'"),
        ({"limit": 0}, ValueError, "play_game: limit must be a positive number of seconds"),
        ({"limit": float("nan")}, ValueError, "play_game: limit must be a positive number of seconds"),
        ({"limit": 1, "margin": -1}, ValueError, "play_game: margin must be a number of seconds, 0 or more, not -1"),
    ],
)
def test_the_callers_bad_settings_are_its_errors_not_a_forfeit_of_player_a(settings, error, words, policy):
    # under "judge" each was a lost game of A's: a crash (the budget, a string limit) or a
    # move over the limit (0 or less), though no agent did anything wrong
    moved = []
    with pytest.raises(error, match=re.escape(words)):
        play_game(first_legal(), first_legal(), START, policy=policy, on_move=moved.append, **settings)
    assert moved == []


# -- bad answers, judged -------------------------------------------------------


@SEATS
def test_an_agent_that_answers_none_loses_by_forfeit_and_the_record_says_who_and_what(seat):
    record = play_game(*sides(mute(), seat), START, policy="judge")
    assert record.forfeit is not None
    assert (record.forfeit.side, record.forfeit.reason) == (seat, "illegal")
    assert f"player {seat} (mute) answered None, which is not a move" in record.forfeit.detail
    assert record.result == other(seat)
    assert record.winner == "first-legal"
    assert not record.final.is_over  # the game stopped where the bad answer came


@SEATS
def test_an_answer_of_the_wrong_type_is_not_a_move(seat):
    record = play_game(*sides(Answers("numbers", lambda p: 3), seat), START, policy="judge")
    assert record.forfeit is not None and record.forfeit.reason == "illegal"
    assert f"player {seat} (numbers) answered 3, which is not a move" in record.forfeit.detail


@SEATS
def test_an_agent_that_raises_loses_by_forfeit_with_its_error_and_where_it_raised(seat):
    record = play_game(*sides(Answers("crasher", raising), seat), START, policy="judge")
    assert record.forfeit is not None
    assert (record.forfeit.side, record.forfeit.reason) == (seat, "crash")
    assert f"player {seat} (crasher) raised RuntimeError: out of ideas at " in record.forfeit.detail
    assert "test_game.py" in record.forfeit.detail
    assert record.result == other(seat)


@SEATS
def test_an_illegal_move_loses_by_forfeit_naming_the_move_and_the_agent(seat):
    full = Position.parse("7x6:aaaaaa")  # column a is full: A or B plays it next
    start = full if seat == "A" else full.play("b")
    record = play_game(*sides(Answers("stubborn", lambda p: Move(0)), seat), start, policy="judge")
    assert record.forfeit is not None
    assert (record.forfeit.side, record.forfeit.reason) == (seat, "illegal")
    detail = record.forfeit.detail
    assert "illegal move 'a'" in detail and "column a is full" in detail and f"player {seat} (stubborn)" in detail


@SEATS
def test_a_move_over_the_time_limit_loses_by_forfeit(seat):
    slow = Answers("sleeper", lambda p: time.sleep(0.3) or p.legal_moves()[0])
    record = play_game(*sides(slow, seat), START, policy="judge", limit=0.1, margin=0.1)
    assert record.forfeit is not None
    assert (record.forfeit.side, record.forfeit.reason) == (seat, "time")
    # the game's move number, said as such: "move 2 of player B" read as B's second move (review)
    number = 1 if seat == "A" else 2
    assert record.forfeit.detail.startswith(f"move {number} of the game, by player {seat} (sleeper), took ")
    assert "limit 0.1 s + 0.1 s" in record.forfeit.detail


def test_without_a_limit_a_slow_move_is_only_timed():
    slow = Answers("sleeper", lambda p: time.sleep(0.01) or p.legal_moves()[0])
    record = play_game(slow, first_legal(), Position.parse("4x4"), policy="judge")
    assert record.forfeit is None and min(record.times["A"]) >= 0.01


def test_an_agent_without_a_spec_is_named_by_its_class():
    class Nameless(Agent):
        def analyse(self, position: Position, budget: Budget | None = None) -> tuple[Move, Analysis]:
            return None, Analysis()  # type: ignore[return-value]

    record = play_game(Nameless(), first_legal(), START, policy="judge")
    assert record.forfeit is not None and "player A (Nameless) answered None" in record.forfeit.detail


def test_agents_built_without_a_spec_are_named_so_a_decisive_games_winner_is_true_and_says_which_side() -> None:
    # both sides were "": a decisive game's winner was "", false as a draw's None
    record = play_game(RandomAgent(seed=1), RandomAgent(seed=2), Position.parse("7x6"))
    assert record.result in ("A", "B")
    assert (record.a, record.b) == ("RandomAgent (A)", "RandomAgent (B)")
    assert record.winner == f"RandomAgent ({record.result})"
    against_a_spec = play_game(RandomAgent(seed=1), make_agent("random:seed=2"), Position.parse("7x6"))
    assert (against_a_spec.a, against_a_spec.b) == ("RandomAgent", "random:seed=2")
    assert against_a_spec.winner


# -- bad answers, raised ------------------------------------------------------------


@SEATS
def test_under_the_raise_policy_an_answer_of_none_raises_an_illegal_move_error_naming_the_agent(seat):
    with pytest.raises(IllegalMoveError, match=rf"player {seat} \(mute\) answered None, which is not a move"):
        play_game(*sides(mute(), seat), START)


def test_under_the_raise_policy_the_agents_own_error_propagates_unchanged():
    with pytest.raises(RuntimeError, match="^out of ideas$"):
        play_game(first_legal(), Answers("crasher", raising), START, policy="raise")


def test_under_the_raise_policy_an_illegal_move_raises_and_names_the_agent():
    with pytest.raises(IllegalMoveError, match=r"column a is full \(played by player A \(stubborn\)\)"):
        play_game(Answers("stubborn", lambda p: Move(0)), first_legal(), Position.parse("7x6:aaaaaa"))


def test_under_the_raise_policy_a_slow_move_raises():
    slow = Answers("sleeper", lambda p: time.sleep(0.05) or p.legal_moves()[0])
    with pytest.raises(SlowMoveError, match=r"move 1 of the game, by player A \(sleeper\), took"):
        play_game(slow, first_legal(), START, limit=0.01)


# -- the arena judges ------------------------------------------------------------------


@pytest.fixture
def arena_knows_mute(monkeypatch: pytest.MonkeyPatch) -> None:
    """The arena builds its agents from specs: ``mute`` builds the agent
    that answers ``None`` (here only, not in the shared registry)."""

    def build(spec: str, **context: object) -> Agent:
        return mute() if spec == "mute" else make_agent(spec, **context)

    monkeypatch.setattr(arena_games, "make_agent", build)
    monkeypatch.setattr(schedule, "make_agent", build)


@pytest.mark.usefixtures("arena_knows_mute")
def test_an_arena_pair_with_an_agent_that_answers_none_is_two_forfeits_not_a_crash():
    config = ArenaConfig(("mute", "random:seed=1"), games=2, seed=1)
    _task, records = play_pair(config.tasks()[0])
    games = [Game.from_dict(json.loads(json.dumps(r))) for r in records]
    assert [(g.a, g.b, g.result) for g in games] == [("mute", "random:seed=1", "B"), ("random:seed=1", "mute", "A")]
    assert [g.forfeit.side if g.forfeit else None for g in games] == ["A", "B"]
    assert all(g.forfeit and "(mute) answered None" in g.forfeit.detail for g in games)


@pytest.mark.usefixtures("arena_knows_mute")
def test_an_arena_run_with_an_agent_that_answers_none_completes_its_schedule(tmp_path: Path):
    out = tmp_path / "run.jsonl"
    config = ArenaConfig(("random:seed=1", "mute", "random:seed=2"), games=4, seed=3)
    outcome = run_arena(config, out, executor=LocalExecutor(1))
    assert outcome.played == len(outcome.games) == 12
    summary = summarise(config, read_results(out).games)
    assert summary.forfeit_counts == {"random:seed=1": 0, "mute": 8, "random:seed=2": 0}
    assert {f["reason"] for f in summary.forfeits} == {"illegal"}


def test_play_game_given_a_spec_or_a_position_string_says_what_to_pass() -> None:
    agent = make_agent("random:seed=1")
    with pytest.raises(TypeError, match=r"^play_game: player A must be an Agent, not 'random' "
                                        r"\(make_agent\('random'\) builds it\)$"):
        play_game("random", agent, Position())  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"^play_game: player B must be an Agent, not None$"):
        play_game(agent, None, Position())  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"^play_game: the start must be a Position, not '7x6' "
                                        r"\(Position.parse\('7x6'\) reads it\)$"):
        play_game(agent, make_agent("random:seed=2"), "7x6")  # type: ignore[arg-type]


def test_the_rate_of_a_spec_that_did_not_play_is_refused_even_before_any_game() -> None:
    # an empty match (no openings) answered 0.0 for any spec at all, where score refuses it
    empty = paired_match("random:seed=1", "random:seed=2", [])
    assert empty.rate("random:seed=1") == 0.0
    for ask in (empty.score, empty.rate):
        with pytest.raises(ValueError, match=r"^'uct' did not play this match"):
            ask("uct")


def test_a_paired_match_plays_openings_given_by_a_generator() -> None:
    # the check of the openings used a generator up: no game was played, and no error said so
    given = [Position.parse("7x6"), Position.parse("6x5/Xc2")]
    from_list = paired_match("random:seed=1", "random:seed=2", given)
    from_generator = paired_match("random:seed=1", "random:seed=2", (p for p in given))
    assert len(from_generator.games) == 4
    assert [g.final for g in from_generator.games] == [g.final for g in from_list.games]


@pytest.mark.parametrize("one", [Position.parse("7x6"), "7x6"])
def test_a_paired_match_given_one_position_for_its_openings_says_to_pass_a_list(one) -> None:
    with pytest.raises(TypeError, match=r"^openings are a list of Positions, not one (Position|str) .*\(\[position\] for one\)"):
        paired_match("random:seed=1", "random:seed=2", one)


def test_a_paired_match_refuses_a_finished_opening_rather_than_count_games_nobody_played() -> None:
    finished = Position.parse("4x4:abababa")
    with pytest.raises(ValueError, match=r"^opening 1 \(4x4:abababa\) is a finished game"):
        paired_match("random:seed=1", "random:seed=2", [Position.parse("4x4"), finished])
    with pytest.raises(TypeError, match=r"^opening 0 must be a Position, not '4x4' \(Position.parse\('4x4'\) reads it\)$"):
        paired_match("random:seed=1", "random:seed=2", ["4x4"])  # type: ignore[list-item]


def test_a_match_scores_only_its_own_specs() -> None:
    result = paired_match("random:seed=1", "random:seed=2", random_openings(1, seed=1, plies=2))
    assert result.score("random:seed=1") + result.score("random:seed=2") == 2
    with pytest.raises(ValueError, match=r"^'random' did not play this match \(its specs: 'random:seed=1', 'random:seed=2'\)$"):
        result.score("random")  # scored 0 (or a draw's ½): a typo read as a lost match
    with pytest.raises(ValueError, match="did not play this match"):
        result.rate("random")


@pytest.mark.parametrize("seed", ["1", 1.5, None])
def test_random_openings_refuse_a_seed_that_is_not_an_integer(seed: object) -> None:
    with pytest.raises(ValueError, match=r"^random_openings: seed must be an integer, not "):
        random_openings(2, seed=seed)  # type: ignore[arg-type]


def test_a_paired_match_names_each_agent_as_the_arena_does_one_agent_one_name() -> None:
    """Review: ``uct:iterations=0200`` and ``uct:iterations=200`` were two
    agents here (a match of an agent against itself) while the arena reads
    them as one (``canonical_spec``)."""
    openings = random_openings(1, seed=1, plies=2)
    with pytest.raises(ValueError, match=r"^a match needs two different agents: 'uct:iterations=0200' and "
                                         r"'uct:iterations=200' are the same agent \(uct:iterations=200\)$"):
        paired_match("uct:iterations=0200", "uct:iterations=200", openings)
    with pytest.raises(ValueError, match=r"^a match needs two different agents: 'random' twice is the same agent"):
        paired_match("random", "random", openings)
    result = paired_match("random:seed=01", "random:seed=2", openings)
    assert (result.first, result.second) == ("random:seed=1", "random:seed=2")
    assert {game.a for game in result.games} == {"random:seed=1", "random:seed=2"}
    assert result.score("random:seed=01") == result.score("random:seed=1")
    assert result.score("random:seed=01") + result.score("random:seed=2") == 2


@pytest.mark.parametrize("start, answer", [
    ("7x6", "d"), ("7x6", Move(3)), ("5x5/Bb1", "b+d"), ("5x5/Bb1", "b"),  # a legal token or Move: itself
    ("7x6:dddddd", "d"), ("7x6", "h"), ("7x6", "b+c"), ("7x6", None), ("7x6", 3), ("7x6", "dd"),  # none is
])
def test_an_answer_said_and_not_played_is_checked_as_a_played_one(start: str, answer: object) -> None:
    """``c4lab move``, ``c4lab engine`` and the accuracy count only say the
    move an agent chose: ``answer_move`` checks it with the rules' legality
    test, without playing it, and takes it, or refuses it, exactly as
    ``play_answer`` (which plays it) does, in the same words."""
    position = Position.parse(start)
    try:
        played: Move | str = play_answer(position, answer, "agent 'x'").moves[-1]
    except IllegalMoveError as refused:
        played = str(refused)
    try:
        said: Move | str = answer_move(position, answer, "agent 'x'")
    except IllegalMoveError as refused:
        said = str(refused)
    assert said == played
