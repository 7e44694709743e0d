"""The arena: schedules, refereed games, the results file, runs, reports."""

from __future__ import annotations

import copy
import dataclasses
import errno
import html
import json
import math
import os
import pickle
import re
import signal
import subprocess
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from c4lab.agents import Agent, Analysis, Budget, make_agent
from c4lab.arena import executors, paired_match
from c4lab.arena.executors import LocalExecutor
from c4lab.arena.games import Game, play_pair
from c4lab.arena.report import (
    FORFEIT_COLUMNS,
    NOT_AVAILABLE,
    NOTE,
    PAIRING_COLUMNS,
    board_sizes,
    cross_cell_percent,
    describe_setting,
    forfeit_rows,
    pairing_rows,
    plot_by_size,
    render_text,
    standing_rows,
    summarise,
    write_report,
)
from c4lab.arena.results import ResultsError, open_results, read_results
from c4lab.arena.runner import run_arena, running_summary
from c4lab.arena.schedule import (
    ArenaConfig,
    ArenaError,
    ArenaTypeError,
    SettingError,
    agent_labels,
    read_openings,
)
from c4lab.arena.sprt import SPRT
from c4lab.cli import main
from c4lab.cli.arena import OPTION_OF
from c4lab.game import play_game
from c4lab.rules import Move, Position
from testkit import register_misbehaving

RANDOMS = ("random:seed=1", "random:seed=2")


# -- the schedule ---------------------------------------------------------------


def test_round_robin_meets_every_two_agents_and_gauntlet_only_the_first():
    specs = ("random:seed=1", "random:seed=2", "heuristic")
    assert ArenaConfig(specs).pairings() == [(specs[0], specs[1]), (specs[0], specs[2]), (specs[1], specs[2])]
    assert ArenaConfig(specs, gauntlet=True).pairings() == [(specs[0], specs[1]), (specs[0], specs[2])]


def test_every_pairing_gets_the_same_starts_and_the_seed_decides_them():
    config = ArenaConfig(("random:seed=1", "random:seed=2", "heuristic"), games=6, board="random", plies=2, seed=5)
    tasks = config.tasks()
    assert len(tasks) == 3 * 3
    for pair in range(3):
        assert len({t.start for t in tasks if t.pair == pair}) == 1
    again = ArenaConfig(config.specs, games=6, board="random", plies=2, seed=5).tasks()
    assert [t.start for t in again] == [t.start for t in tasks]
    other = ArenaConfig(config.specs, games=6, board="random", plies=2, seed=6).tasks()
    assert [t.start for t in other] != [t.start for t in tasks]


def test_random_boards_are_enhanced_boards_with_two_opening_moves():
    config = ArenaConfig(RANDOMS, games=20, board="random", bonus=True, plies=2, seed=1)
    starts = [config.start(k) for k in range(10)]
    assert len({s.variant.size for s in starts}) > 3
    assert all(len(s.variant.forbidden) == 1 and s.variant.bonus is not None for s in starts)
    assert all(s.ply == 2 for s in starts)


def test_classic_and_explicit_boards():
    assert ArenaConfig(RANDOMS, plies=0).start(0).notation == "7x6"
    assert ArenaConfig(RANDOMS, board="9x8/Xd3", plies=0).start(3).notation == "9x8/Xd3"


def test_bonus_means_what_it_means_everywhere_a_random_bonus_cell_on_any_board():
    """``--bonus`` is ``rules.setup.starting_position``'s: on the classic
    board or a given one too, a bonus cell drawn for each pair."""
    config = ArenaConfig(RANDOMS, games=20, bonus=True, plies=0, seed=2)
    starts = [config.start(k) for k in range(10)]
    assert all((s.variant.width, s.variant.height, s.variant.forbidden) == (7, 6, ()) for s in starts)
    assert all(s.variant.bonus is not None for s in starts) and len({s.variant.bonus for s in starts}) > 1
    assert ArenaConfig(RANDOMS, board="9x8/Xd3", bonus=True).start(0).notation.startswith("9x8/Xd3/B")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"specs": ("random",)}, "at least two"),
        ({"specs": ("random", "random")}, "twice"),
        ({"specs": RANDOMS, "games": 3}, "even"),
        ({"specs": RANDOMS, "board": "7x6:q"}, "^ArenaConfig.board "),
        ({"specs": RANDOMS, "board": "7x6:d", "bonus": True}, "only be added to an empty board"),
        ({"specs": RANDOMS, "limit": 0}, "limit"),
        # a slip of the finger sat there drawing a hundred billion starts, without a word
        ({"specs": RANDOMS, "games": 100_000_000_000}, "makes 100,000,000,000 games in 1 pairing.*at most 1,000,000"),
        ({"specs": (*RANDOMS, "heuristic"), "games": 400_000}, "makes 1,200,000 games in 3 pairing"),
    ],
)
def test_bad_settings_are_refused_with_a_reason(kwargs, message):
    with pytest.raises(ArenaError, match=message):
        ArenaConfig(**kwargs)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"specs": "random"}, r"^ArenaConfig.specs must be a tuple of agent specs like \('uct', 'random'\), not 'random'$"),
        ({"specs": ("random", 3)}, r"^ArenaConfig.specs must be a tuple of agent specs"),
        ({"specs": RANDOMS, "openings": "7x6:dd"}, r"^ArenaConfig.openings must be a tuple of position strings, not '7x6:dd'$"),
        ({"specs": RANDOMS, "seed": "1"}, r"^ArenaConfig.seed must be an integer, not '1'$"),
        ({"specs": RANDOMS, "seed": 1.5}, r"^ArenaConfig.seed must be an integer, not 1.5$"),
        ({"specs": RANDOMS, "seed": None}, r"^ArenaConfig.seed must be an integer, not None$"),
        ({"specs": RANDOMS, "games": "4"}, r"^ArenaConfig.games must be an integer, not '4'$"),
        ({"specs": RANDOMS, "plies": 2.0}, r"^ArenaConfig.plies must be an integer, not 2.0$"),
        ({"specs": RANDOMS, "limit": "2"}, r"^ArenaConfig.limit must be a number of seconds, not '2'$"),
        ({"specs": RANDOMS, "bonus": "yes"}, r"^ArenaConfig.bonus must be True or False, not 'yes'$"),
        ({"specs": RANDOMS, "board": 7}, r"^ArenaConfig.board must be 'classic', 'random' or a position string, not 7$"),
    ],
)
def test_settings_of_the_wrong_type_are_refused_naming_the_field(kwargs, message):
    # a config built in Python has no command line to check it: a seed of "1" or None ran, reproducibly, as
    # some other seed; the string "random" ran as six agents named by its letters.  A TypeError, as a wrong
    # type is everywhere in the API (make_agent(None), Position.parse(None)), and an ArenaError still.
    with pytest.raises(ArenaTypeError, match=message) as caught:
        ArenaConfig(**kwargs)
    assert isinstance(caught.value, TypeError) and isinstance(caught.value, ArenaError)
    assert caught.value.field == message.split(" ")[0].removeprefix("^ArenaConfig.")  # the setting at fault
    again = pickle.loads(pickle.dumps(caught.value))  # across a worker's process, as it was
    assert (str(again), again.field) == (str(caught.value), caught.value.field)


def test_a_spec_of_the_wrong_type_is_a_type_error_in_every_way_into_the_arena() -> None:
    """make_agent(None) said 'must be a non-empty string' as a SpecError (a
    ValueError); SPRT.parse(None) was an AttributeError ('NoneType' object
    has no attribute 'split')."""
    with pytest.raises(TypeError, match=r"^an agent spec must be a str like 'hard' .*\(type NoneType\)$"):
        paired_match(None, "random", [Position.parse("4x4")])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"^SPRT.parse takes a str like 'elo0=0,elo1=20', not None \(type NoneType\)$"):
        SPRT.parse(None)  # type: ignore[arg-type]
    # a number of seconds as the budget: the error named play_game, which the person never called
    with pytest.raises(TypeError, match=r"^paired_match: the budget is a Budget \(Budget\(iterations=N\) or "
                                        r"Budget\(time=SECONDS\)\) or None, not float 0.5$"):
        paired_match("random:seed=1", "random:seed=2", [Position.parse("4x4")], budget=0.5)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("kwargs", "field", "python", "command"),
    [
        ({"games": 3}, "games", "ArenaConfig.games must be a positive even number (games come in pairs), not 3",
         "--games must be a positive even number (games come in pairs), not 3"),
        ({"limit": 0}, "limit", "ArenaConfig.limit (the seconds a move may take) must be positive, not 0",
         "--limit (the seconds a move may take) must be positive, not 0"),
        ({"margin": -1}, "margin",
         "ArenaConfig.margin (the seconds allowed past ArenaConfig.limit) must be 0 or more, not -1",
         "--margin (the seconds allowed past --limit) must be 0 or more, not -1"),
        ({"board": "4x4:abababa"}, "board", "ArenaConfig.board '4x4:abababa' is a finished game",
         "--board '4x4:abababa' is a finished game"),
        ({"board": "7x6:{q}"}, "board", "ArenaConfig.board '7x6:{q}': invalid position '7x6:{q}': move 0",
         "--board '7x6:{q}': invalid position '7x6:{q}': move 0"),
    ],
)
def test_a_bad_value_names_the_field_in_python_and_the_option_in_the_command(
        kwargs, field, python, command, tmp_path):
    # a config built in Python was told of --games, --limit and --board, options it never had
    with pytest.raises(SettingError) as raised:
        ArenaConfig(RANDOMS, **kwargs)
    assert raised.value.field == field and str(raised.value).startswith(python)
    assert isinstance(raised.value, ArenaError) and str(pickle.loads(pickle.dumps(raised.value))) == str(raised.value)
    args = [arg for key, value in kwargs.items() for arg in (f"--{key}", str(value))]
    result = CliRunner().invoke(main, ["arena", *RANDOMS, *args, "--out", str(tmp_path / "run.jsonl")])
    # the option at fault quoted as click quotes one (it was "Error: --games ...", --bonus alone read so)
    assert result.exit_code == 2, result.output
    assert result.output.startswith(f"Error: Invalid value for '{args[0]}': {command}"), result.output
    assert len(result.output.splitlines()) == 1 and list(tmp_path.iterdir()) == []


def test_negative_opening_moves_are_the_field_s_setting_error_too() -> None:
    """Review: ``ArenaConfig(plies=-1)`` was a plain ``ArenaError`` whose
    ``field`` was None and whose message named no field, where every other
    field's bad value is its ``SettingError`` (the command refuses
    ``--opening-moves -1`` itself, as click refuses a number out of range)."""
    with pytest.raises(SettingError) as raised:
        ArenaConfig(RANDOMS, plies=-1)
    assert raised.value.field == "plies"
    assert str(raised.value) == "ArenaConfig.plies (the random opening moves) must be 0 or more, not -1"
    assert raised.value.worded(OPTION_OF) == "--opening-moves (the random opening moves) must be 0 or more, not -1"


@pytest.mark.parametrize(("args", "refusal"), [
    (("--sprt", "elo0=0,elo1"), ("'--sprt': SPRT: 'elo1' is not key=value (expected elo0=0,elo1=20,alpha=0.05,"
                                "beta=0.05)")),
    (("--openings", "{tmp}/starts.txt"), "'--openings': {tmp}/starts.txt:2: invalid position 'abc'"),
    (("--board", "4x4", "--opening-moves", "40"), ("'--opening-moves': 40 random opening moves (--opening-moves) "
                                                  "end every game on '4x4'")),
], ids=["sprt", "openings", "opening-moves"])
def test_every_setting_the_arena_refuses_names_its_option_as_click_does(tmp_path, args, refusal):
    """Review: the arena's refusals read "Error: --games ...", "Error:
    SPRT: ..." (no option named), "Error: FILE:2: ..." for an openings
    file, where --bonus and every other command's options read "Invalid
    value for '--X': ..."; too many --opening-moves was found only as the
    run began and named no option."""
    (tmp_path / "starts.txt").write_text("7x6:dd\nabc\n")
    result = CliRunner().invoke(main, ["arena", *RANDOMS, *(a.format(tmp=tmp_path) for a in args),
                                       "--out", str(tmp_path / "run.jsonl")])
    assert result.exit_code == 2, result.output
    assert result.output.startswith(f"Error: Invalid value for {refusal.format(tmp=tmp_path)}"), result.output
    assert len(result.output.splitlines()) == 1 and not (tmp_path / "run.jsonl").exists()


def test_a_test_of_more_than_two_agents_is_refused_naming_sprt_as_click_does(tmp_path):
    """Review: three agents with --sprt read "Error: --sprt needs exactly
    two agents", the one refusal of the arena that named no option in
    click's words; run_arena from Python refuses it with the same words."""
    specs = (*RANDOMS, "random:seed=3")
    result = CliRunner().invoke(main, ["arena", *specs, "--sprt", "elo0=0,elo1=20",
                                       "--out", str(tmp_path / "run.jsonl")])
    assert (result.exit_code, result.output) == (
        2, "Error: Invalid value for '--sprt': a sequential test (SPRT) needs exactly two agents, not 3\n")
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(ValueError, match=r"^a sequential test \(SPRT\) needs exactly two agents, not 3$"):
        run_arena(ArenaConfig(specs), tmp_path / "run.jsonl", sprt=SPRT.parse("elo0=0,elo1=20"))
    assert list(tmp_path.iterdir()) == []


def test_a_bonus_cell_asked_for_on_a_board_with_its_own_names_both_fields_in_python_and_both_options_in_the_command(
        tmp_path):
    # a config built in Python played the board's own bonus cell and dropped the one asked for without a word
    with pytest.raises(SettingError) as raised:
        ArenaConfig(RANDOMS, board="6x5/Xc2/Bb2", bonus=True)
    assert raised.value.field == "bonus"
    assert str(raised.value) == ("ArenaConfig.board 6x5/Xc2/Bb2 has its bonus cell (b2) already, and ArenaConfig.bonus "
                                 "would draw another: give one or the other")
    result = CliRunner().invoke(main, ["arena", *RANDOMS, "--board", "6x5/Xc2/Bb2", "--bonus",
                                       "--out", str(tmp_path / "run.jsonl")])
    assert (result.exit_code, result.output) == (
        2, ("Error: Invalid value for '--bonus': --board 6x5/Xc2/Bb2 has its bonus cell (b2) already, and --bonus "
           "would draw another: give one or the other\n"))
    assert list(tmp_path.iterdir()) == []


def test_a_config_given_lists_and_numpy_integers_keeps_tuples_and_ints():
    config = ArenaConfig(list(RANDOMS), games=np.int64(4), seed=np.int64(3), openings=["7x6:dd"])
    assert config == ArenaConfig(RANDOMS, games=4, seed=3, openings=("7x6:dd",))
    assert type(config.seed) is int and config.specs == RANDOMS


def test_a_config_is_hashable_and_keeps_its_own_copy_of_extra_as_the_results_file_reads_it():
    # Review: ArenaConfig was unhashable (its extra dict), so no dict of runs could be keyed by config,
    # and it kept the caller's dict, which the caller could go on changing.
    notes = {"note": "first try", "sizes": (5, 6), 7: None}
    config = ArenaConfig(RANDOMS, extra=notes)
    notes["note"] = "changed afterwards"
    assert config.to_dict()["extra"] == {"note": "first try", "sizes": [5, 6], "7": None}
    assert {config: "run 1"}[ArenaConfig(RANDOMS, extra={"note": "first try", "sizes": [5, 6], "7": None})] == "run 1"
    assert hash(config) == hash(ArenaConfig(RANDOMS)) and config != ArenaConfig(RANDOMS)


def test_a_configs_extra_cannot_be_changed_in_place_and_still_writes_and_reads_as_json():
    # Review: extra is out of the hash, yet config.extra["note"] = ... changed what the config equals, and what
    # a run would write to its results file, behind its back; now it is a read-only copy, at every depth.
    config = ArenaConfig(RANDOMS, extra={"note": "first try", "runs": {"sizes": [5, 6]}})
    with pytest.raises(TypeError):
        config.extra["note"] = "changed"  # type: ignore[index]
    with pytest.raises(TypeError):
        config.extra["runs"]["sizes"] = []
    with pytest.raises(AttributeError):
        config.extra["runs"]["sizes"].append(7)
    assert config.extra["note"] == "first try" and config.extra["runs"]["sizes"] == (5, 6)
    text = json.dumps(config.to_dict())  # the results file's header
    again = ArenaConfig.from_dict(json.loads(text))
    assert again == config and again.to_dict() == config.to_dict()
    assert again.to_dict()["extra"] == {"note": "first try", "runs": {"sizes": [5, 6]}}
    assert pickle.loads(pickle.dumps(config)) == config == copy.deepcopy(config)
    assert dataclasses.replace(config, games=4).extra == config.extra


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"out": Path("runs")}, r"^extra must hold JSON values only \(it is saved with the results\): .*PosixPath"),
        ({"loss": float("nan")}, r"^extra must hold JSON values only"),
        ({(1, 2): "pair"}, r"^extra must hold JSON values only .*: keys must be str"),
        (["note"], r"^ArenaConfig.extra must be a dict of JSON values, not \['note'\]$"),
    ],
)
def test_an_extra_that_json_cannot_hold_is_refused_when_the_config_is_made(extra, message):
    # It failed when the run wrote its header: "Object of type PosixPath is not JSON serializable", naming no setting.
    with pytest.raises(ArenaError, match=message):
        ArenaConfig(RANDOMS, extra=extra)


def test_a_run_whose_extra_has_a_tuple_resumes_with_the_same_config(tmp_path):
    # Review: the file read back {"sizes": [5, 6]}, the config said (5, 6): "another experiment (different extra:
    # {"sizes": [5, 6]} in the file, {"sizes": [5, 6]} asked)".
    config = ArenaConfig(RANDOMS, games=2, board="5x4", extra={"sizes": (5, 6)})
    out = tmp_path / "run.jsonl"
    assert run_arena(config, out, executor=LocalExecutor(1)).played == 2
    assert run_arena(config, out, executor=LocalExecutor(1)).played == 0


def test_bad_agent_specs_fail_before_any_game():
    with pytest.raises(ArenaError, match="nosuchagent"):
        ArenaConfig(("random", "nosuchagent")).check_agents()
    with pytest.raises(ArenaError, match="human"):
        ArenaConfig(("random", "human")).check_agents()


def test_openings_file_is_read_strictly(tmp_path):
    good = tmp_path / "good.txt"
    good.write_text("# starts\n7x6:dd\n\n9x8/Xd3:a\n")
    assert read_openings(good) == ("7x6:dd", "9x8/Xd3:a")
    config = ArenaConfig(RANDOMS, games=6, openings=read_openings(good))
    assert [config.start(k).notation for k in range(3)] == ["7x6:dd", "9x8/Xd3:a", "7x6:dd"]
    bad = tmp_path / "bad.txt"
    bad.write_text("7x6:dd\n7x6:dq\n")
    with pytest.raises(ArenaError, match=r"bad\.txt:2"):
        read_openings(bad)
    notepad = tmp_path / "notepad.txt"  # Windows' Notepad saves UTF-8 with a byte-order mark first
    notepad.write_bytes(b"\xef\xbb\xbf7x6:dd\r\n9x8/Xd3:a\r\n")
    assert read_openings(notepad) == ("7x6:dd", "9x8/Xd3:a")
    latin = tmp_path / "latin.txt"
    latin.write_bytes(b"7x6:dd\n# d\xe9but\n")
    with pytest.raises(ArenaError, match=r"latin\.txt:2: not UTF-8 text \(byte 0xe9\)"):
        read_openings(latin)


def test_openings_a_run_is_too_short_to_play_are_noted() -> None:
    openings = ("7x6:dd", "7x6:cc", "7x6:ee")
    assert ArenaConfig(RANDOMS, games=6, openings=openings).schedule_notes() == []
    assert ArenaConfig(RANDOMS, games=2, openings=openings).schedule_notes(OPTION_OF) == [
        ("--games 2 makes 1 pair of games a pairing: only the first 1 of the 3 openings are played "
        "(--games 6 plays each once)")]
    # From Python the note calls the settings as ArenaConfig does (no command's options there).
    assert ArenaConfig(RANDOMS, games=2, openings=openings).schedule_notes() == [
        ("games=2 makes 1 pair of games a pairing: only the first 1 of the 3 openings are played "
         "(games=6 plays each once)")]


def test_pairs_that_start_alike_and_so_repeat_their_games_are_noted(tmp_path) -> None:
    # `--board 4x4 --opening-moves 0 --games 2000` played one pair 1000 times
    # (the arena seeds random from the start) and ranked it 2000-0 in silence.
    config = ArenaConfig(("qlearning", "random"), games=6, board="4x4", plies=0)
    assert config.schedule_notes(OPTION_OF) == [
        ("the 3 pairs of each pairing start from only 1 position (--opening-moves 0 on one board): agents that "
         "play alike from a start (deterministic ones, and those whose spec gives a seed) repeat their games there, "
         "and the statistics count each repeat as a new game (the arena gives the agents it seeds new seeds at each "
         "repeat); more --opening-moves, --board random or --openings give more starts")]
    assert "start from only 4 positions (the same start drawn again)" in ArenaConfig(
        RANDOMS, games=20, board="4x4", plies=1).schedule_notes()[0]
    assert config.schedule_notes()[0].endswith(  # from Python: the fields
        "more ArenaConfig.plies, board='random' or ArenaConfig.openings give more starts")
    assert "(plies=0 on one board)" in config.schedule_notes()[0]
    reused = ArenaConfig(RANDOMS, games=4, openings=("7x6:dd",))
    assert "(openings used again)" in reused.schedule_notes()[0]
    # not --opening-moves nor --board, which --openings refuses: a longer file
    assert reused.schedule_notes(OPTION_OF)[0].endswith("; more positions in the file of --openings give more starts")
    assert "start from only 9 positions (the same start drawn again)" in ArenaConfig(
        RANDOMS, games=20, bonus=True, plies=0).schedule_notes()[0]  # two of ten bonus cells alike
    for quiet in (ArenaConfig(RANDOMS, games=10, plies=2), ArenaConfig(RANDOMS, games=20, board="random", plies=0),
                  ArenaConfig(RANDOMS, games=2, plies=0)):
        assert quiet.schedule_notes() == []
    result = CliRunner().invoke(main, ["arena", "random", "heuristic", "--board", "4x4", "--opening-moves", "0",
                                       "--games", "4", "--out", str(tmp_path / "a.jsonl")])
    assert result.exit_code == 0
    assert "note: the 2 pairs of each pairing start from only 1 position" in result.stderr


def test_the_report_says_how_many_games_differ_where_some_repeat_others_move_for_move(tmp_path) -> None:
    """Review: the note before the games was the only word on repeats; the
    report, the file that travels, said 10-0, p 0.002 and Elo >= +140 from
    2 different games.  It says how many differ, in the text, the HTML and
    the JSON; where every game differs it says nothing."""
    config = ArenaConfig(("minimax:depth=2", "heuristic:seed=1"), games=10, plies=0)
    outcome = run_arena(config, tmp_path / "det.jsonl", executor=LocalExecutor(1))
    summary = summarise(config, outcome.games)
    assert summary.distinct_games == 2 and summary.to_dict()["distinct_games"] == 2
    said = ("Only 2 of the 10 games differ: the others repeat one of them move for move (the same start, and "
            "agents that play alike from it), and every figure above counts each repeat as a new game.")
    assert said in " ".join(render_text(summary).split())
    write_report(summary, tmp_path / "report")
    assert html.escape(said) in (tmp_path / "report" / "report.html").read_text(encoding="utf-8")
    varied = ArenaConfig(("minimax:depth=2", "heuristic:seed=1"), games=4, plies=4, seed=3)
    summary = summarise(varied, run_arena(varied, tmp_path / "varied.jsonl", executor=LocalExecutor(1)).games)
    assert summary.distinct_games == 4 and "differ" not in render_text(summary)


# -- refereed games ---------------------------------------------------------------


class Crasher(Agent):
    def analyse(self, position: Position, budget: Budget | None = None) -> tuple[Move, Analysis]:
        raise RuntimeError("out of ideas")


class Cheater(Agent):
    def analyse(self, position: Position, budget: Budget | None = None) -> tuple[Move, Analysis]:
        return Move.parse("a+b") if position.variant.bonus is None else position.legal_moves()[0], Analysis()


class Sleeper(Agent):
    def analyse(self, position: Position, budget: Budget | None = None) -> tuple[Move, Analysis]:
        time.sleep(0.3)
        return position.legal_moves()[0], Analysis()


@pytest.mark.parametrize(
    ("culprit", "reason", "detail"),
    [(Crasher(), "crash", "RuntimeError: out of ideas"), (Cheater(), "illegal", "a+b"), (Sleeper(), "time", "took")],
)
@pytest.mark.parametrize("side", ["A", "B"])
def test_an_agent_that_crashes_cheats_or_overruns_loses_and_the_record_says_why(culprit, reason, detail, side):
    other = make_agent("random:seed=3")
    other.choose(Position.parse("7x6"))  # loads the compiled kernels before the clock runs
    a, b = (culprit, other) if side == "A" else (other, culprit)
    game = Game.of(play_game(a, b, Position.parse("7x6"), a_spec="a", b_spec="b", policy="judge", limit=0.1, margin=0.1))
    assert game.forfeit is not None
    assert (game.forfeit.side, game.forfeit.reason) == (side, reason)
    assert detail in game.forfeit.detail
    assert game.forfeit.detail.startswith(f"move {1 if side == 'A' else 2}")  # which move, whatever the reason
    assert game.result == ("B" if side == "A" else "A")
    record = game.to_dict()
    assert record["forfeit"]["reason"] == reason
    assert Game.from_dict(json.loads(json.dumps(record))) == game


def test_a_forfeit_is_a_loss_in_every_figure_and_the_report_says_so(tmp_path):
    """x crashes in the first game of a pair and wins the second: 1-0-1,
    pentanomial 0/0/1/0/0 (one point of two), Elo 0, forfeits 1; the text
    and the page say under the forfeits that they are counted so."""
    from c4lab.arena.report import FORFEIT_NOTE

    crashed = Game.of(play_game(Crasher(), make_agent("random:seed=3"), Position.parse("7x6"), a_spec="x",
                                b_spec="random:seed=3", policy="judge", limit=5, margin=1))
    won = Game("7x6:adcdcdcd", "B", "random:seed=3", "x", "7x6", 0, 0, 1)
    summary = summarise(ArenaConfig(("x", "random:seed=3"), games=2), [crashed, won])
    assert summary.forfeit_counts == {"x": 1, "random:seed=3": 0}
    x = summary.table.standing("x")
    assert (x.wins, x.draws, x.losses, x.elo) == (1, 0, 1, 0.0)
    assert summary.pairings[0].pairs.counts == (0, 0, 1, 0, 0)
    text = " ".join(render_text(summary).split())
    assert "Games lost by forfeit" in text and FORFEIT_NOTE in text
    # the row names the opponent: the pairing's number alone told nothing a reader could look up
    assert [(f["agent"], f["against"], f["pairing"]) for f in summary.forfeits] == [("x", "random:seed=3", 0)]
    assert re.search(r"┃ agent +┃ against +┃ pairing.*\n.*\n│ x +│ random:seed=3 +│ 0 +│", render_text(summary))
    write_report(summary, tmp_path / "rep")
    assert FORFEIT_NOTE in (tmp_path / "rep" / "report.html").read_text()


def test_the_forfeits_table_goes_by_pairing_then_pair_and_game():
    """Review: in the order games end (pair by pair, every pairing's) one
    engine's forfeits were strewn through the table."""
    from types import SimpleNamespace

    from c4lab.arena.report import forfeit_rows

    def lost(pairing: int, pair: int, game: int) -> dict:
        return {"agent": "e", "against": "r", "pairing": pairing, "pair": pair, "game": game, "position": "7x6",
                "reason": "crash", "detail": ""}

    ended = [lost(0, 0, 1), lost(1, 0, 0), lost(0, 1, 0), lost(1, 1, 1), lost(0, 0, 0)]
    summary = SimpleNamespace(forfeits=ended, label=str)
    assert [row[2:5] for row in forfeit_rows(summary)] == [  # type: ignore[arg-type]
        ["0", "0", "0"], ["0", "0", "1"], ["0", "1", "0"], ["1", "0", "0"], ["1", "1", "1"]]


def test_each_forfeit_is_found_in_the_results_file_by_its_numbers_and_shown_by_its_position(tmp_path, monkeypatch):
    """The forfeits' pairing, pair and game are the results file's own
    (from 0: the report says so under the table, with the page), and the
    row's position is the game up to the forfeit, which c4lab show reads.
    The numbers were shown bare (from 0 or from 1? the pairings are not
    numbered) and nothing showed the game itself."""
    from c4lab.arena.report import FORFEIT_WHERE

    x = f"{register_misbehaving(monkeypatch)}:how=number"  # answers 3 for a move: illegal
    config = ArenaConfig(("random:seed=1", "heuristic", x), games=4, board="6x5")
    outcome = run_arena(config, tmp_path / "run.jsonl", executor=LocalExecutor(jobs=1))
    summary = summarise(config, outcome.games)
    assert len(summary.forfeits) == 8  # x loses each of its 8 games at its first answer
    records = [json.loads(line) for line in (tmp_path / "run.jsonl").read_text().splitlines()[1:]]
    for row in forfeit_rows(summary):
        shown = dict(zip(FORFEIT_COLUMNS, row, strict=True))
        found = [r for r in records if (str(r["pairing"]), str(r["pair"]), str(r["game"]))
                 == (shown["pairing"], shown["pair"], shown["game"])]
        assert len(found) == 1 and found[0]["forfeit"]["reason"] == shown["reason"] == "illegal", shown
        assert shown["position"] == found[0]["position"] and shown["agent"] == x in (found[0]["A"], found[0]["B"])
        assert config.pairings()[int(shown["pairing"])] == (shown["against"], x)  # pairing 0: the first row
        first_plays_a = found[0]["A"] == config.pairings()[int(shown["pairing"])][0]
        assert first_plays_a == (shown["game"] == "0")
    done = CliRunner().invoke(main, ["show", summary.forfeits[0]["position"]])
    assert done.exit_code == 0, done.output
    text = " ".join(render_text(summary).split())
    assert FORFEIT_WHERE in text and "c4lab show POSITION" in FORFEIT_WHERE
    write_report(summary, tmp_path / "rep")
    assert html.escape(FORFEIT_WHERE) in (tmp_path / "rep" / "report.html").read_text()


def test_the_report_page_shows_an_agents_name_with_markup_as_text(tmp_path):
    """A results file someone sent may name its agents anything: the page
    (cross table, ranking, pairings, forfeits) writes them escaped, and no
    element of theirs is ever made."""
    bad = '<img src=x onerror="alert(1)">'
    games = [Game("7x6:adcdcdcd", "A", "random:seed=3", bad, "7x6", 0, 0, 0),
             Game("7x6:adcdcdcd", "A", "random:seed=3", "heuristic", "7x6", 1, 0, 0),
             Game("7x6:adcdcdcd", "A", bad, "heuristic", "7x6", 2, 0, 0)]
    summary = summarise(ArenaConfig(("random:seed=3", bad, "heuristic"), games=2), games)
    write_report(summary, tmp_path / "rep")
    page = (tmp_path / "rep" / "report.html").read_text()
    assert "<img src=x" not in page and "<img " not in page.replace('<img alt="', "")
    assert page.count(html.escape(bad)) >= 4  # the ranking, the pairings and the cross table's row and column


def test_a_report_names_the_agents_of_a_run_stopped_before_their_games(tmp_path):
    """The ranking, the pairings' figures and the fitted ratings come from
    games: an agent of the run with none yet was missing from all of them
    without a word."""
    games = [Game("7x6:adcdcdcd", "A", "random:seed=3", "heuristic", "7x6", 0, 0, 0)]
    summary = summarise(ArenaConfig(("random:seed=3", "heuristic", "minimax[x]"), games=2), games)
    said = "Not ranked, no game played yet (the run stopped before their games): minimax[x]."
    assert said in render_text(summary).replace("\n", " ") and "Ranking (1 game)" in render_text(summary)
    write_report(summary, tmp_path / "rep")
    assert f"<p>{html.escape(said)}</p>" in (tmp_path / "rep" / "report.html").read_text()
    whole = summarise(ArenaConfig(("random:seed=3", "heuristic"), games=2), games)
    assert "Not ranked" not in render_text(whole)


def test_a_games_score_reads_a_spec_in_any_spelling_as_a_matchs_score_does():
    # score_of compared the text: uct:iterations=0200 "did not play" a game of uct:iterations=200
    won = Game("7x6:adcdcdcd", "B", "uct:iterations=200", "random:seed=3", "7x6", 0, 0, 1)
    assert won.score_of("uct:iterations=0200") == 0.0
    assert won.score_of("random:seed=03") == 1.0
    with pytest.raises(ValueError, match=r"^'uct:iterations=300' did not play this game$"):
        won.score_of("uct:iterations=300")


class Bracketed(Agent):
    def analyse(self, position: Position, budget: Budget | None = None) -> tuple[Move, Analysis]:
        raise RuntimeError("[/bold] [red]stderr of an engine")


def test_the_text_report_shows_brackets_in_specs_and_forfeits_as_they_are():
    """Issue review: ``c4lab report`` (and the arena's own report) ended in
    rich's MarkupError traceback for a forfeit whose detail (an engine's
    stderr, an exception's message) or a spec held "[/bold]": the tables
    read their cells as markup."""
    specs = ("x[/b]", "[red]y", "z")
    crashed = Game.of(play_game(Bracketed(), make_agent("random:seed=3"), Position.parse("7x6"), a_spec=specs[0],
                                b_spec=specs[1], policy="judge", limit=5, margin=1))
    won = Game("7x6:adcdcdcd", "B", specs[1], specs[0], "7x6", 0, 0, 1)
    summary = summarise(ArenaConfig(specs, games=2), [crashed, won])
    text = render_text(summary)
    assert "[/bold] [red]stderr of an" in " ".join(text.split())  # folded after "an" in the detail column
    assert "x[/b]" in text and "[red]y" in text


@pytest.mark.parametrize("width", [80, 100])
def test_the_text_report_fits_a_terminal_s_width(width: int) -> None:
    """Review: at 100 or 80 columns every row of the ranking and pairings
    (140 and about 200 wide) broke across two lines in the middle of a cell;
    on a terminal the tables now fit its width, a long cell folding within
    its column.  A file's report keeps its tables as wide as they need."""
    games = [Game("7x6:adcdcdcd", "B", "random", "heuristic", "7x6", 0, 0, 0),
             Game("7x6:dadcdcdc", "A", "heuristic", "random", "7x6", 0, 0, 1),
             Game("7x6:adcdcdcd", "B", "random", "normal", "7x6", 1, 0, 0)]
    summary = summarise(ArenaConfig(("random", "heuristic", "normal"), games=2), games)
    lines = render_text(summary, width=width).splitlines()
    assert max(len(line) for line in lines) <= width
    assert any(line.startswith("│ 1 │") for line in lines)  # the ranking's rows, whole
    assert max(len(line) for line in render_text(summary).splitlines()) > 140  # a file's pairings: one line a row


def test_the_running_summary_counts_forfeits_so_a_broken_agent_shows_at_once():
    crashed = Game.of(play_game(Crasher(), make_agent("random:seed=3"), Position.parse("7x6"), a_spec="x",
                                b_spec="random:seed=3", policy="judge", limit=5, margin=1))
    config = ArenaConfig(("x", "random:seed=3"), games=2)
    assert running_summary(config, [crashed]) == "x 0 - 1 random:seed=3, 1 forfeit"
    assert running_summary(config, [crashed, crashed]) == "x 0 - 2 random:seed=3, 2 forfeits"
    assert running_summary(config, []) == "x 0 - 0 random:seed=3"  # the names say whose score is whose
    three = ArenaConfig(("x", "random:seed=3", "heuristic"), games=2)
    assert running_summary(three, []) == ""  # no "leader x (0)" before a game
    assert running_summary(three, [crashed]) == "leader random:seed=3 (1), 1 forfeit"


def test_a_normal_game_is_recorded_as_one_position_string_with_its_result_and_times():
    game = Game.of(play_game(
        make_agent("heuristic:seed=1"), make_agent("random:seed=2"), Position.parse("7x6:d"),
        a_spec="heuristic:seed=1", b_spec="random:seed=2", policy="judge", limit=5, margin=1,
    ))
    position = Position.parse(game.position)
    assert position.is_over and position.result == game.result
    assert game.position.startswith("7x6:d")
    assert game.forfeit is None
    assert len(game.times["A"]) + len(game.times["B"]) == position.ply - 1
    assert game.to_dict()["A"] == "heuristic:seed=1"


def test_a_pair_swaps_the_sides_on_the_same_start():
    config = ArenaConfig(("heuristic:seed=1", "random:seed=2"), games=2, plies=2, seed=3)
    task, records = play_pair(config.tasks()[0])
    assert [(r["A"], r["B"]) for r in records] == [("heuristic:seed=1", "random:seed=2"), ("random:seed=2", "heuristic:seed=1")]
    assert records[0]["start"] == records[1]["start"] == task.start
    assert all(r["position"].startswith(task.start) for r in records)


# -- runs, the results file and resuming ---------------------------------------------


@pytest.mark.parametrize(("jobs", "message"), [
    (0, "LocalExecutor: jobs must be at least 1 (None: one a core), not 0"),
    ("2", "LocalExecutor: jobs must be an integer, not '2' (1 or more; None: one a core)"),
    (1.5, "LocalExecutor: jobs must be an integer, not 1.5 (1 or more; None: one a core)"),
])
def test_a_local_executor_of_no_positive_number_of_jobs_is_refused_naming_it(jobs: object, message: str) -> None:
    """From Python (the command's --jobs is checked by click): 0 took every
    core without a word, "2" was "'<' not supported between instances of
    'str' and 'int'", and the message named --jobs, which a script has not."""
    with pytest.raises(ValueError) as caught:
        LocalExecutor(jobs)  # type: ignore[arg-type]
    assert str(caught.value) == message
    assert LocalExecutor(np.int64(2)).jobs == 2  # type: ignore[arg-type]


def test_a_ray_executor_of_no_positive_number_of_jobs_is_refused_before_ray_starts() -> None:
    """As the local executor's: 0 started a local Ray on every core."""
    from c4lab.arena.executors import RayExecutor

    with pytest.raises(ValueError) as caught:
        RayExecutor(jobs=0)
    assert str(caught.value) == "RayExecutor: jobs must be at least 1 (None: one a core), not 0"


def test_a_round_robin_run_saves_every_game_and_ranks_the_agents(tmp_path):
    out = tmp_path / "run.jsonl"
    config = ArenaConfig(("heuristic:seed=1", "random:seed=1", "random:seed=2"), games=4, board="random", seed=2)
    outcome = run_arena(config, out, executor=LocalExecutor(2))
    assert outcome.played == len(outcome.games) == 12
    saved = read_results(out)
    assert saved.config == config
    assert sorted((g.pairing, g.pair, g.game) for g in saved.games) == sorted(
        (g.pairing, g.pair, g.game) for g in outcome.games
    )
    summary = summarise(config, saved.games)
    assert summary.table.standings[0].agent == "heuristic:seed=1"
    assert sum(s.games for s in summary.table.standings) == 24
    text = render_text(summary)
    assert "Ranking" in text and "heuristic:seed=1" in text and "95% CI" in text


@pytest.mark.parametrize("cut", [40, None], ids=["half a line", "a lone game of a pair"])
def test_an_interrupted_run_resumes_and_plays_only_what_is_missing(tmp_path, cut):
    out = tmp_path / "run.jsonl"
    config = ArenaConfig(RANDOMS, games=8, seed=4)
    full = run_arena(config, tmp_path / "full.jsonl", executor=LocalExecutor(1))
    # Keep the header and two pairs, then half of a line (or the first game
    # of the third pair), as a killed run leaves it.
    lines = (tmp_path / "full.jsonl").read_text().splitlines(keepends=True)
    out.write_text("".join(lines[:5]) + lines[5][:cut])
    assert read_results(out).cut_line == (cut is not None)
    again = run_arena(config, out, executor=LocalExecutor(1))
    assert again.played == 4
    assert len(read_results(out).games) == 8
    # Seeded random agents: the resumed run plays exactly the same games.
    assert sorted(g.position for g in again.games) == sorted(g.position for g in full.games)
    assert run_arena(config, out, executor=LocalExecutor(1)).played == 0


def test_the_cross_table_plot_s_two_cells_of_a_pairing_add_up_to_100() -> None:
    """Review: 11.5 and 8.5 of 20 were drawn 57 % and 42 %."""
    assert [cross_cell_percent(x) for x in (11.5 / 20, 8.5 / 20, 0.5, 1.0, 0.0, 1 / 3, 2 / 3)] == [
        "57.5%", "42.5%", "50%", "100%", "0%", "33.3%", "66.7%"]


def test_the_score_by_size_plot_names_each_size_s_number_of_games() -> None:
    """Review: a bar of 1.0 from 2 games on 12x6 read as one from 200:
    each size's label gives its games."""
    games = [Game.of(play_game(make_agent(a), make_agent(b), Position.parse(board), a_spec=a, b_spec=b),
                     pairing=0, pair=k, game=g)
             for k, board in enumerate(("4x4", "12x6", "4x4")) for g, (a, b) in enumerate((RANDOMS, RANDOMS[::-1]))]
    summary = summarise(ArenaConfig(RANDOMS, games=6, board="random"), games)
    assert board_sizes(summary) == {"4x4": 4, "12x6": 2}
    assert plot_by_size(summary).startswith(b"\x89PNG")


def test_a_board_spelt_otherwise_is_the_same_experiment(tmp_path) -> None:
    """Review: ``--board 7x6`` plays the games of ``--board classic`` and was
    refused as another experiment on its results file, as was
    ``9x8/Xe2/Xd3`` on one of ``9x8/Xd3/Xe2``: a board is kept in its
    canonical notation, as the specs and the openings are."""
    assert ArenaConfig(RANDOMS, board="7x6").board == "classic" == ArenaConfig(RANDOMS).board
    assert ArenaConfig(RANDOMS, board="9x8/Xe2/Xd3").board == "9x8/Xd3/Xe2"
    assert ArenaConfig(RANDOMS, board="7x6:dd").board == "7x6:dd"
    out = tmp_path / "run.jsonl"
    run_arena(ArenaConfig(RANDOMS, games=2, board="classic"), out, executor=LocalExecutor(1))
    assert run_arena(ArenaConfig(RANDOMS, games=2, board="7x6"), out, executor=LocalExecutor(1)).played == 0


def test_a_results_file_of_another_experiment_is_not_touched(tmp_path):
    out = tmp_path / "run.jsonl"
    run_arena(ArenaConfig(RANDOMS, games=4, seed=1), out, executor=LocalExecutor(1))
    before = out.read_bytes()
    notes: list[str] = []
    with pytest.raises(ResultsError, match="another experiment.*seed"):
        # a schedule worth a note (one start for both pairs): none before the refusal (review), as nothing is played
        run_arena(ArenaConfig(RANDOMS, games=4, seed=2, plies=0), out, executor=LocalExecutor(1), on_note=notes.append)
    assert notes == []
    with pytest.raises(ResultsError, match=r"different games: 4 in the file, 2 asked\): .*\(more games extend it\)"):
        run_arena(ArenaConfig(RANDOMS, games=2, seed=1), out, executor=LocalExecutor(1))  # fewer: some would go
    with pytest.raises(ResultsError, match=r"different games: 4 in the file, 6 asked, seed: 1 in the file, 2 asked"):
        run_arena(ArenaConfig(RANDOMS, games=6, seed=2), out, executor=LocalExecutor(1))  # the values, not the names
    assert out.read_bytes() == before


def test_more_games_extend_a_run_with_the_pairs_a_longer_run_would_have_played(tmp_path):
    """Review: going from 40 games to 80 was refused as another experiment,
    though pair k starts from the same position whatever the number."""
    out = tmp_path / "run.jsonl"
    run_arena(ArenaConfig(RANDOMS, games=4, seed=3), out, executor=LocalExecutor(1))
    extended = run_arena(ArenaConfig(RANDOMS, games=8, seed=3), out, executor=LocalExecutor(1))
    assert extended.played == 4 and len(extended.games) == 8
    assert read_results(out).config.games == 8  # the header says what the file now holds
    whole = run_arena(ArenaConfig(RANDOMS, games=8, seed=3), tmp_path / "whole.jsonl", executor=LocalExecutor(1))
    assert sorted(g.position for g in extended.games) == sorted(g.position for g in whole.games)


def test_report_says_when_it_left_out_a_cut_last_line_and_ray_address_needs_ray(tmp_path):
    out = tmp_path / "run.jsonl"
    run_arena(ArenaConfig(RANDOMS, games=4, seed=1), out, executor=LocalExecutor(1))
    out.write_bytes(out.read_bytes()[:-20])  # a run stopped while it wrote its last game
    result = CliRunner().invoke(main, ["report", str(out)])
    assert result.exit_code == 0
    assert "the last line of" in result.stderr and "is cut short" in result.stderr
    # the first game of the cut pair is left out too, as the arena leaves it out: it counted in W/D/L
    # ("Ranking (3 games)") but not in the pairs, and gave one side the first move of a pair alone
    assert "Ranking (2 games)" in result.stdout
    assert f"note: 1 game of {out} without the other game of its pair left out" in result.stderr
    data = json.loads(CliRunner().invoke(main, ["report", str(out), "--json"]).stdout)
    assert data["games"] == 2 == 2 * sum(data["pairings"][0]["pentanomial"])
    result = CliRunner().invoke(main, ["arena", *RANDOMS, "--ray-address", "127.0.0.1:1", "--out", str(tmp_path / "r")])
    assert result.exit_code == 2 and "--ray-address 127.0.0.1:1 is for --executor ray" in result.stderr


@pytest.mark.parametrize("cut", [False, True], ids=["whole", "a cut last line, rewritten"])
def test_a_results_file_is_written_by_one_run_at_a_time(tmp_path, cut):
    """The same command started twice on one file: the second is refused
    at once and writes nothing (both appending the same pairs left a file
    that no longer read: "game (0, 8, 0) is recorded twice"); once the first
    ends, the file is free again."""
    out = tmp_path / "run.jsonl"
    config = ArenaConfig(RANDOMS, games=4, seed=1)
    run_arena(config, out, executor=LocalExecutor(1))
    if cut:
        out.write_bytes(out.read_bytes()[:-20])
    writer, _ = open_results(out, config)  # a run under way
    try:
        before = out.read_bytes()
        with pytest.raises(ResultsError, match=r"run.jsonl is being written by another arena run: wait for it"):
            run_arena(config, out, executor=LocalExecutor(1))
        assert out.read_bytes() == before
    finally:
        writer.close()
    assert len(run_arena(config, out, executor=LocalExecutor(1)).games) == 4


def _edited(line: str, **changes: object) -> str:
    """A results line with some fields changed (a hand-edited file)."""
    return json.dumps({**json.loads(line), **changes}) + "\n"


@pytest.mark.parametrize(
    ("damage", "where"),
    [
        (lambda lines: ["not json\n", *lines[1:]], ":1:"),
        (lambda lines: [*lines[:2], "{\"position\": 3}\n", *lines[2:]], ":3:"),
        (lambda lines: [*lines[:2], lines[1]], ":3: game .* twice"),
        (lambda lines: [lines[0], lines[1].replace('"result":"', '"result":"x')], ":2:"),
        # a forfeit the winner "lost": counted as its win, listed among its forfeits
        (lambda lines: [lines[0], _edited(lines[1], result="A", forfeit={"side": "A", "reason": "time",
                                                                          "detail": "x"})], ":2: .*side A forfeits"),
        (lambda lines: [lines[0], _edited(lines[1], forfeit={"side": "C", "reason": "time", "detail": "x"})],
         ":2: .*forfeit side must be A or B"),
        (lambda lines: [lines[0], _edited(lines[1], times={"A": [-1.0], "B": []})], ":2: .*-1.0 seconds"),
        # a move time more or less than the moves played: the report's mean s/move was of times no move took
        (lambda lines: [lines[0], _edited(lines[1], times={**json.loads(lines[1])["times"], "A": [
            *json.loads(lines[1])["times"]["A"], 9.0]})], r":2: .*times has \d+ for A, which played \d+ moves"),
        (lambda lines: [lines[0], _edited(lines[1], times={"A": json.loads(lines[1])["times"]["A"]})],
         ":2: .*times must give A and B"),
        # plies, for a reader's convenience, said what the moves did not
        (lambda lines: [lines[0], _edited(lines[1], plies=json.loads(lines[1])["plies"] + 1)],
         r":2: .*plies is \d+, but \d+ moves lead from the start to the position"),
        (lambda lines: [lines[0], _edited(lines[1], plies="7")], ":2: .*plies is '7'"),
    ],
)
def test_a_damaged_results_file_is_an_error_naming_its_line(tmp_path, damage, where):
    out = tmp_path / "run.jsonl"
    run_arena(ArenaConfig(RANDOMS, games=2, seed=1), out, executor=LocalExecutor(1))
    out.write_text("".join(damage(out.read_text().splitlines(keepends=True))))
    with pytest.raises(ResultsError, match=where):
        read_results(out)


def _record(position: str, start: str, times: dict[str, list[float]], forfeit: tuple[str, str] | None) -> dict:
    """A results line's record: ``forfeit`` is (side, reason), the result its loss."""
    from c4lab.game import Forfeit

    result = Position.parse(position).result if forfeit is None else ("B" if forfeit[0] == "A" else "A")
    game = Game(position, result, "random:seed=1", "random:seed=2", start, 0, 0, 0, times,
                Forfeit(*forfeit, "x") if forfeit else None)
    return game.to_dict()


@pytest.mark.parametrize(("position", "start", "times", "forfeit"), [
    ("7x6:dcdcdcd", "7x6", {"A": [0.1] * 4, "B": [0.1] * 3}, None),  # won: one time a move
    ("7x6:dcdcdcd", "7x6:dcd", {"A": [0.1] * 2, "B": [0.1] * 2}, None),  # the start's moves were no one's here
    ("7x6:dc", "7x6", {"A": [0.1], "B": [0.1]}, ("A", "crash")),  # a crash times no answer
    ("7x6:dc", "7x6", {"A": [0.1, 1.5], "B": [0.1]}, ("A", "time")),  # the answer that came too late
    ("7x6:dcd", "7x6", {"A": [0.1, 0.1], "B": [0.1, 0.1]}, ("B", "illegal")),  # the illegal answer
    ("7x6", "7x6", {"A": [], "B": []}, ("B", "time")),  # not ready in time, before any clock ran
    ("7x6", "7x6", {"A": [1.5], "B": []}, ("A", "time")),  # too slow for its first move
    ("7x6", "7x6", {"A": [], "B": []}, ("B", "crash")),  # could not start
])
def test_a_record_has_one_time_a_move_and_one_more_for_the_answer_that_lost(position, start, times, forfeit):
    """Each way a game ends (play_game, play_pair), as the arena writes it:
    a time for each move played, and one more for the side whose answer
    lost on time or as an illegal move; it reads back as written."""
    record = _record(position, start, times, forfeit)
    assert Game.from_dict(record).to_dict() == record


@pytest.mark.parametrize(("position", "start", "times", "forfeit", "said"), [
    ("7x6:dcdcdcd", "7x6", {"A": [0.1] * 4, "B": [0.1] * 4}, None, "times has 4 for B, which played 3 moves"),
    ("7x6:dcdcdcd", "7x6", {"A": [0.1] * 3, "B": [0.1] * 3}, None, "times has 3 for A, which played 4 moves"),
    ("7x6:dcdcdcd", "7x6:dcd", {"A": [0.1] * 4, "B": [0.1] * 3}, None, "times has 4 for A, which played 2 moves"),
    ("7x6:dc", "7x6", {"A": [0.1, 0.1], "B": [0.1]}, ("A", "crash"), "times has 2 for A, which played 1 move"),
    ("7x6:dc", "7x6", {"A": [0.1], "B": [0.1]}, ("A", "time"),
     "times has 1 for A, which played 1 move and lost on time with one more answer: 2"),
    ("7x6:dcd", "7x6", {"A": [0.1, 0.1], "B": [0.1]}, ("B", "illegal"),
     "times has 1 for B, which played 1 move and lost as an illegal move with one more answer: 2"),
    ("7x6", "7x6", {"A": [0.1], "B": []}, ("B", "crash"), "times has 1 for A, which played 0 moves"),
    # the side that forfeits after a move is the side to move: its next answer lost
    ("7x6:dc", "7x6", {"A": [0.1], "B": [0.1, 1.5]}, ("B", "time"), "side B forfeits where A is to move"),
])
def test_a_record_whose_times_cannot_be_its_moves_is_refused(position, start, times, forfeit, said):
    """Review: the number of move times was not checked against the moves
    played, so an edited file skewed "mean s/move"; the results reader
    names the file and line (``test_a_damaged_results_file...``)."""
    with pytest.raises(ValueError, match=re.escape(said)):
        Game.from_dict(_record(position, start, times, forfeit))


NO_WHOLE_LINE = "no newline): not an arena results file, or one whose header was cut short"


@pytest.mark.parametrize(("content", "said"), [
    (b'{"c4lab_arena":1,"config":{"specs"', f"holds no whole line (34 bytes, {NO_WHOLE_LINE}"),
    (b"\x7fELF\x02\x01\x01\x00", f"holds no whole line (8 bytes, {NO_WHOLE_LINE}"),
], ids=["a header cut short", "a program"])
@pytest.mark.parametrize("command", ["arena", "report"])
def test_a_file_without_a_whole_line_is_refused_saying_so_and_left_as_it_was(tmp_path, content, said, command):
    """Review: a file of bytes with no newline (a header cut short, a
    program given by mistake) was said to be empty.  Its bytes may be
    anything: nothing is overwritten."""
    out = tmp_path / "run.jsonl"
    out.write_bytes(content)
    args = ["arena", *RANDOMS, "--games", "2", "--jobs", "1", "--out", str(out)] if command == "arena" \
        else ["report", str(out)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2, result.output
    assert result.output == f"Error: {out} {said}\n"
    assert out.read_bytes() == content and sorted(tmp_path.iterdir()) == [out]


def test_an_empty_results_file_is_started_anew_by_the_arena_saying_so(tmp_path):
    """Review: a file of 0 bytes -- what a run killed between creating the
    file and writing its header leaves -- was refused ("is empty: not an
    arena results file") until removed by hand, though it holds nothing to
    lose.  The arena starts it anew with a note; the same command then
    resumes it as any other."""
    out = tmp_path / "run.jsonl"
    out.write_bytes(b"")
    args = ["arena", *RANDOMS, "--games", "2", "--jobs", "1", "--out", str(out)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert f"note: {out} was empty (0 bytes): starting it anew\n" in result.stderr
    assert "2 games played now, 2 in" in result.stdout
    saved = read_results(out)
    assert len(saved.whole_pairs()) == 2 and saved.config.specs == RANDOMS
    again = CliRunner().invoke(main, args)  # a file with games: resumed, no note
    assert again.exit_code == 0 and "was empty" not in again.stderr and "0 games played now, 2 in" in again.stdout


def test_the_report_of_an_empty_results_file_says_there_are_no_results_yet(tmp_path):
    """An empty file (0 bytes) is no results yet, said in one line by
    ``c4lab report`` (status 2), the file left as it was."""
    out = tmp_path / "run.jsonl"
    out.write_bytes(b"")
    result = CliRunner().invoke(main, ["report", str(out)])
    assert result.exit_code == 2
    assert result.output == (f"Error: {out} is empty (0 bytes): no arena results yet (a run stopped before it "
                             "wrote its first line; an arena run that writes to it starts it anew)\n")
    assert out.read_bytes() == b"" and sorted(tmp_path.iterdir()) == [out]


def test_a_results_folder_removed_during_a_run_stops_it_with_one_line(tmp_path):
    """Review: the run went on writing into the removed file and ended
    "400 games played now, 400 in gone/x.jsonl", status 0, with no file:
    every game lost without a word."""
    folder = tmp_path / "gone"
    folder.mkdir()

    def remove(done, total, summary):
        if done and folder.exists():
            (folder / "run.jsonl").unlink()
            folder.rmdir()

    out = str(folder / "run.jsonl")
    with pytest.raises(ResultsError, match=r"run\.jsonl was removed during the run \(or its folder was\)"):
        run_arena(ArenaConfig(RANDOMS, games=8, seed=1), out, executor=LocalExecutor(1), progress=remove)


def test_a_results_file_that_cannot_be_written_during_a_run_is_one_line_and_keeps_what_was_saved(
    tmp_path, monkeypatch
):
    """Review: a full disk while the arena appended a pair was a traceback
    (an OSError), not the one line of bad input."""
    out = tmp_path / "run.jsonl"
    fsync, calls = os.fsync, []

    def full_disk(fd):
        calls.append(fd)
        if len(calls) > 2:  # the header and the first pair are on disk; the second pair is not
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        fsync(fd)

    monkeypatch.setattr(os, "fsync", full_disk)
    result = CliRunner().invoke(main, ["arena", *RANDOMS, "--games", "8", "--jobs", "1", "--out", str(out)])
    monkeypatch.setattr(os, "fsync", fsync)
    assert result.exit_code == 2, result.output
    said = (f"Error: cannot write the games to {out}: No space left on device; the run stops (the games saved so "
            "far are kept: the same command resumes it)")
    assert result.stderr.strip().splitlines()[-1:] == [said]
    assert len(read_results(out).whole_pairs()) >= 2


def test_sprt_stops_a_lopsided_match_early(tmp_path):
    config = ArenaConfig(("heuristic:seed=1", "random:seed=1"), games=400, board="6x5", plies=1, seed=1)
    sprt = SPRT.parse("elo0=0,elo1=50,alpha=0.05,beta=0.05")
    outcome = run_arena(config, tmp_path / "sprt.jsonl", executor=LocalExecutor(2), sprt=sprt)
    assert outcome.stopped is not None and "H1" in outcome.stopped
    assert len(outcome.games) < 400
    # the file keeps the test, so that the report says why the run has fewer games than its schedule
    assert read_results(tmp_path / "sprt.jsonl").sprt == "elo0=0,elo1=50,alpha=0.05,beta=0.05"
    report = CliRunner().invoke(main, ["report", str(tmp_path / "sprt.jsonl")])
    assert report.exit_code == 0 and outcome.stopped in report.stdout
    assert f"stopped early: {outcome.stopped}" in (tmp_path / "sprt-report" / "report.html").read_text()


def test_more_games_asked_of_a_run_its_test_has_decided_leave_its_file_as_it_was(tmp_path):
    """Review: ``--games 200`` on a run whose SPRT had accepted H1 at
    ``--games 100`` played nothing but rewrote the header with 200, and
    the first command was then refused as another experiment."""
    out = tmp_path / "s.jsonl"
    config = ArenaConfig(("heuristic:seed=1", "random:seed=1"), games=100, board="6x5", plies=1, seed=1)
    sprt = SPRT.parse("elo0=0,elo1=200")
    first = run_arena(config, out, executor=LocalExecutor(1), sprt=sprt)
    assert first.stopped is not None
    before = out.read_bytes()
    notes: list[str] = []
    more = run_arena(replace(config, games=200), out, executor=LocalExecutor(1), sprt=sprt, on_note=notes.append,
                     names={"games": "--games"})
    assert more.played == 0 and more.stopped == first.stopped and more.config.games == 100
    assert out.read_bytes() == before
    assert notes[-1] == (f"the sequential test had already decided this run ({first.stopped}): --games 200 plays no "
                         f"more games, and {out} keeps its 100")
    assert run_arena(config, out, executor=LocalExecutor(1), sprt=sprt).played == 0  # the first command: not refused


def test_a_saved_game_that_is_not_from_its_pairs_start_is_refused_and_nothing_is_written(tmp_path):
    """A results file checked only against the schedule's header took games
    of another run (a file edited, or two joined) as pairs played.  A game
    whose start is not its pair's, or whose position is no game from its
    start, is an error naming the file, and the file stays as it was."""
    out = tmp_path / "a.jsonl"
    config = ArenaConfig(("heuristic:seed=1", "random:seed=1"), games=4, board="6x5", plies=2, seed=1)
    run_arena(config, out, executor=LocalExecutor(1))
    header, *games = out.read_text().splitlines()
    record = json.loads(games[0])
    other = "6x5:" + "".join(m for m in "abcdef" if not record["start"].endswith(":" + m * 2))[:2]
    moved = {**record, "start": other, "position": other + record["position"][len(record["start"]):]}
    if Position.parse(moved["position"]).result != record["result"] and moved["forfeit"] is None:
        # a crash: it times no answer, so the record's times stay its moves' (a loss on time would time one more)
        moved["forfeit"] = {"side": "A" if record["result"] == "B" else "B", "reason": "crash", "detail": "edited"}
    edited = "\n".join([header, json.dumps(moved), *games[1:]]) + "\n"
    out.write_text(edited)
    with pytest.raises(ResultsError, match=rf"a\.jsonl:2: game \(0, 0, 0\) starts from {other}, where pair 1 of this "
                       r"experiment starts from .*: the file holds games of another run, or its header was edited"):
        run_arena(ArenaConfig(config.specs, games=8, board="6x5", plies=2, seed=1), out, executor=LocalExecutor(1))
    assert out.read_text() == edited  # the header not rewritten for the 8 games asked
    out.write_text("\n".join([header, json.dumps({**record, "position": "6x5:ffff"}), *games[1:]]) + "\n")
    with pytest.raises(ResultsError, match=r"a\.jsonl:2: not a game record .*is not a game from its start.*; "
                       r"remove the line, and the same arena run on this file plays its pair again"):
        read_results(out)


def test_a_blank_line_in_a_results_file_is_skipped_and_a_removed_game_is_played_again(tmp_path) -> None:
    """Review: one blank line (a file edited by hand) made the whole file
    unreadable ("not a game record (JSONDecodeError: Expecting value ...)");
    it is skipped.  A broken record's error says to remove its line: the
    same run then plays that game's pair again, as it says."""
    out = tmp_path / "a.jsonl"
    config = ArenaConfig(("heuristic:seed=1", "random:seed=1"), games=4, board="5x4", plies=2, seed=1)
    run_arena(config, out, executor=LocalExecutor(1))
    header, *games = out.read_text().splitlines()
    out.write_text("\n".join([header, games[0], "", "  ", *games[1:]]) + "\n")
    assert len(read_results(out).games) == 4
    out.write_text("\n".join([header, *games[:-1]]) + "\n")  # the last game's line removed
    run_arena(config, out, executor=LocalExecutor(1))
    again = read_results(out)
    assert len(again.games) == 4 and len(again.done_pairs()) == 2


@pytest.mark.parametrize(("openings", "said"), [
    (["zzz"], r"opening 1, 'zzz', is not a position"),
    (["5x4:b", "5x4:abababa"], r"opening 2, '5x4:abababa', is a finished game"),
    ("5x4:b", r"openings must be a tuple of position strings, not '5x4:b'"),
])
def test_a_results_header_whose_openings_are_no_starts_is_refused_and_no_report_is_written(tmp_path, openings, said):
    """The header's openings were read as they stood: a report was drawn
    from a file whose openings were no positions, finished games, or a
    string read as one opening a character.  Each is one line naming the
    file's header, and no report folder is made."""
    out = tmp_path / "a.jsonl"
    header = {"c4lab_arena": 1, "config": {**ArenaConfig(("random", "heuristic"), board="5x4").to_dict(),
                                           "openings": openings}}
    out.write_text(json.dumps(header) + "\n")
    result = CliRunner().invoke(main, ["report", str(out)])
    assert result.exit_code == 2
    assert re.fullmatch(rf"Error: {re.escape(str(out))}:1: not an arena results header \(\w+: .*{said}.*\)",
                        result.output.strip()), result.output
    assert not (tmp_path / "a-report").exists()


def test_a_report_refuses_games_that_do_not_start_where_the_headers_openings_do(tmp_path):
    """A header whose openings were edited after the run still named real
    starts, and the report drew the games all the same, under a schedule
    they were not played from; now the first such game is named by its line."""
    out = tmp_path / "a.jsonl"
    run_arena(ArenaConfig(("heuristic:seed=1", "random:seed=1"), games=2, openings=("5x4:b",)), out,
              executor=LocalExecutor(1))
    header, *games = out.read_text().splitlines()
    out.write_text("\n".join([header.replace('"5x4:b"', '"5x4:c"'), *games]) + "\n")
    result = CliRunner().invoke(main, ["report", str(out)])
    assert result.exit_code == 2
    assert result.output.strip() == (f"Error: {out}:2: game (0, 0, 0) starts from 5x4:b, where pair 1 of this "
                                     "experiment starts from 5x4:c: the file holds games of another run, or its "
                                     "header was edited")
    assert not (tmp_path / "a-report").exists()


def test_an_arena_config_refuses_openings_that_are_no_starts_and_keeps_them_canonical():
    """From Python, a bad opening was taken and failed (or played a
    finished game) only when its pair came."""
    with pytest.raises(SettingError, match=r"^ArenaConfig\.openings: opening 1, 'zzz', is not a position"):
        ArenaConfig(("random", "heuristic"), openings=("zzz",))
    with pytest.raises(SettingError, match=r"opening 1, '5x4:abababa', is a finished game$"):
        ArenaConfig(("random", "heuristic"), openings=("5x4:abababa",))
    assert ArenaConfig(("random", "heuristic"), openings=("5x4:b",)).openings == ("5x4:b",)


def test_openings_replace_the_board_and_the_random_moves_which_the_config_neither_takes_nor_writes():
    """Review: ``c4lab arena --openings`` wrote ``"board": "classic",
    "plies": 2`` in ``--json``'s config (and the results header) of a run
    on openings of 9x8, settings no game used; and from Python a board
    given with openings was ignored without a word (the command refuses
    it)."""
    config = ArenaConfig(("random", "heuristic"), openings=("9x8/Xd3:d",))
    data = config.to_dict()
    assert "board" not in data and "plies" not in data and "bonus" not in data
    assert data["openings"] == ["9x8/Xd3:d"] and ArenaConfig.from_dict(data) == config
    # a header written before, from Python, with a board beside the openings: read, the board dropped
    assert ArenaConfig.from_dict({**data, "board": "5x4", "plies": 3}) == config
    for given, said in (({"board": "9x8"}, "board"), ({"plies": 4}, "plies"), ({"bonus": True}, "bonus")):
        with pytest.raises(SettingError, match=rf"^ArenaConfig\.openings give the start positions; "
                                               rf"ArenaConfig\.{said} cannot be given with them$") as refused:
            ArenaConfig(("random", "heuristic"), openings=("9x8/Xd3:d",), **given)
        assert refused.value.field == said
    plain = ArenaConfig(("random", "heuristic"), board="9x8/Xd3").to_dict()
    assert (plain["board"], plain["plies"], plain["bonus"]) == ("9x8/Xd3", 2, False)


def test_one_agent_under_two_names_is_noted_before_the_run(tmp_path):
    """Review: ``master`` and ``master:time=1`` (its default written out)
    were ranked as two agents without a word.  They still play (a pairing
    of an agent with itself is a check some runs want), with a note."""
    notes: list[str] = []
    config = ArenaConfig(("random:seed=none", "random"), games=2, board="4x4")
    run_arena(config, tmp_path / "a.jsonl", executor=LocalExecutor(1), on_note=notes.append)
    assert ("random:seed=none and random are one agent (one spec writes out the other's defaults): "
            "the run counts its games under both names") in notes


def test_a_run_resumed_under_another_test_or_none_has_its_header_say_so(tmp_path):
    """The header keeps the test of the run that wrote last: the report
    tells what the arena told, not what an earlier run was tested by."""
    out = tmp_path / "sprt.jsonl"
    config = ArenaConfig(("heuristic:seed=1", "random:seed=1"), games=40, board="6x5", plies=1, seed=1)
    # elo1=200: a sweep decides in 8 pairs, well inside the 20 of the schedule
    first = run_arena(config, out, executor=LocalExecutor(1), sprt=SPRT.parse("elo0=0,elo1=200,alpha=0.05,beta=0.05"))
    assert first.stopped is not None and len(first.games) < 40
    other = SPRT.parse("elo0=0,elo1=500,alpha=0.05,beta=0.05")
    again = run_arena(config, out, executor=LocalExecutor(1), sprt=other)  # decided at once, on the games saved
    assert again.played == 0 and again.stopped is not None and again.stopped != first.stopped
    assert read_results(out).sprt == other.text()
    report = CliRunner().invoke(main, ["report", str(out)])
    assert report.exit_code == 0 and again.stopped in report.stdout
    whole = run_arena(config, out, executor=LocalExecutor(1))  # no test: every game of the schedule
    assert len(whole.games) == 40 and whole.stopped is None
    assert read_results(out).sprt is None
    report = CliRunner().invoke(main, ["report", str(out)])
    assert report.exit_code == 0 and "SPRT" not in report.stdout
    assert "stopped early" not in (tmp_path / "sprt-report" / "report.html").read_text()


def test_an_sprt_on_the_default_number_of_games_is_told_that_it_is_its_ceiling(tmp_path):
    """Review: ``--sprt elo0=0,elo1=20`` without ``--games`` played the
    default 10 games and ended "no decision after 5 pairs", not a word
    before; given ``--games``, nothing is said."""
    runner = CliRunner()
    args = ["arena", *RANDOMS, "--board", "4x4", "--jobs", "1", "--sprt", "elo0=0,elo1=20"]
    default = runner.invoke(main, [*args, "--out", str(tmp_path / "a.jsonl")])
    assert default.exit_code == 0, default.output
    assert ("note: --sprt plays at most --games 10 (5 pairs), the default: a test seldom decides so soon"
            in default.stderr)
    given = runner.invoke(main, [*args, "--games", "10", "--out", str(tmp_path / "b.jsonl")])
    assert given.exit_code == 0 and "--sprt plays at most" not in given.stderr


def test_the_sprt_ceiling_note_is_said_once_the_results_file_is_taken_and_not_again_on_resuming(tmp_path):
    """Review: the note was printed by the command before the run, so that it
    came before a refusal of the results file (one that holds another
    experiment) and again on resuming a finished run."""
    runner = CliRunner()
    args = ["arena", *RANDOMS, "--jobs", "1", "--sprt", "elo0=0,elo1=20", "--out", str(tmp_path / "a.jsonl")]
    assert runner.invoke(main, [*args, "--board", "4x4"]).exit_code == 0
    resumed = runner.invoke(main, [*args, "--board", "4x4"])
    assert resumed.exit_code == 0 and "--sprt plays at most" not in resumed.stderr
    other = runner.invoke(main, [*args, "--board", "5x4"])  # the file holds the 4x4 experiment: refused
    assert other.exit_code == 2 and "--sprt plays at most" not in other.stderr, other.stderr


def test_an_sprt_that_has_not_decided_when_the_games_run_out_says_where_it_stands(tmp_path):
    """--sprt with too few --games for a decision: the run ends with every
    game played and the test undecided; arena and report say so, with the
    LLR and its bounds (they said nothing at all about the test before)."""
    out = tmp_path / "sprt.jsonl"
    test = "elo0=0,elo1=20,alpha=0.05,beta=0.05"
    runner = CliRunner()
    played = runner.invoke(main, ["arena", *RANDOMS, "--games", "4", "--board", "6x5", "--jobs", "1",
                                  "--sprt", test, "--out", str(out), "--json"])
    assert played.exit_code == 0, played.output
    data = json.loads(played.stdout)
    assert data["stopped"] is None and data["games"] == 4
    # the LLR is the test's on the pairing's pentanomial (its values are checked in test_arena_stats.py)
    llr = SPRT.parse(test).llr(data["pairings"][0]["pentanomial"])
    bound = 2.944439  # log(0.95 / 0.05)
    assert data["sprt"] == {"test": test, "pairs": 2, "llr": pytest.approx(llr),
                            "lower": pytest.approx(-bound), "upper": pytest.approx(bound), "accepted": None}
    line = f"SPRT {test}: no decision after 2 pairs, LLR {round(llr, 2) + 0.0:.2f} (bounds -2.94, 2.94)"
    report = runner.invoke(main, ["report", str(out)])
    assert report.exit_code == 0 and line in report.stdout
    page = (tmp_path / "sprt-report" / "report.html").read_text()
    assert line in page and "stopped early" not in page
    as_json = json.loads(runner.invoke(main, ["report", str(out), "--json"]).stdout)
    assert as_json["stopped"] is None and as_json["sprt"] == data["sprt"]


def test_an_llr_next_to_zero_is_written_without_a_minus() -> None:
    """Review: a test interrupted early printed "LLR -0.00"."""
    from c4lab.arena.runner import sprt_line

    test = SPRT.parse("elo0=0,elo1=20")
    state = {"test": "elo0=0,elo1=20", "pairs": 1, "llr": -0.001, "lower": -2.944, "upper": 2.944, "accepted": None}
    assert sprt_line(test, state) == "SPRT elo0=0,elo1=20: no decision after 1 pair, LLR 0.00 (bounds -2.94, 2.94)"
    assert "LLR -0.01 " in sprt_line(test, {**state, "llr": -0.006})


@pytest.mark.parametrize(
    ("sprt", "why"),
    [
        ('"garbage"', "'garbage' is not key=value"),
        ('"elo0=0,elo1=0,alpha=0.05,beta=0.05"', "elo1 must be above elo0"),
        ("20", "not a string: 20"),
    ],
)
def test_a_header_whose_test_is_not_one_is_an_error_naming_line_1(tmp_path, sprt, why):
    out = tmp_path / "run.jsonl"
    run_arena(ArenaConfig(RANDOMS, games=2, seed=1), out, executor=LocalExecutor(1))
    header, *games = out.read_text().splitlines(keepends=True)
    out.write_text(json.dumps({**json.loads(header), "sprt": json.loads(sprt)}) + "\n" + "".join(games))
    with pytest.raises(ResultsError, match=r":1: the header's \"sprt\" is not a test \(.*" + why):
        read_results(out)
    result = CliRunner().invoke(main, ["report", str(out)])
    assert result.exit_code == 2, result.output
    [line] = result.output.strip().splitlines()
    assert line.startswith(f"Error: {out}:1: the header's \"sprt\" is not a test (") and why in line


@pytest.mark.parametrize(("key", "value", "said"), [
    *(("engines", v, "is not a name for each engine spec of the run") for v in
      ('"fake"', '{"nosuchagent": "fake"}', '{"random:seed=1": 3}', "[]")),
    *(("stand_ins", v, "is not a list of notes") for v in ('"a note"', "3", "[1]", '{"a": "b"}')),
])
def test_a_header_whose_engines_or_stand_ins_are_not_what_they_name_is_an_error_naming_line_1(
    tmp_path, key, value, said
):
    out = tmp_path / "run.jsonl"
    run_arena(ArenaConfig(RANDOMS, games=2, seed=1), out, executor=LocalExecutor(1))
    header, *games = out.read_text().splitlines(keepends=True)
    out.write_text(json.dumps({**json.loads(header), key: json.loads(value)}) + "\n" + "".join(games))
    with pytest.raises(ResultsError) as caught:
        read_results(out)
    assert str(caught.value) == f"{out}:1: the header's \"{key}\" {said} ({json.dumps(json.loads(value))})"


@pytest.mark.parametrize(("given", "refusal"), [
    ("elo0=0,elo1=7000", ("elo1=7000 is too far from 0 to test: its expected score is 1 to double precision "
                          "(above 6381.8359)")),
    ("elo0=-7000,elo1=0", ("elo0=-7000 is too far from 0 to test: its opponent's expected score is 1 to double "
                           "precision (below -6381.8359)"))])
def test_a_header_whose_test_an_earlier_c4lab_ran_but_this_one_cannot_evaluate_still_loads(tmp_path, given, refusal):
    """c4lab arena took --sprt elo0=0,elo1=7000 until hypotheses whose
    score is 1 to double precision were refused, and elo0=-7000,elo1=0
    (the same test, agents swapped) until the range was made the same
    either way; it kept them in the header: such a file stopped loading
    (report, resume), its games with it.  It loads; the report says the
    test is not evaluated and why, and the arena refuses that test at its
    command line, before any game, naming the bound."""
    out = tmp_path / "run.jsonl"
    run_arena(ArenaConfig(RANDOMS, games=2, seed=1), out, executor=LocalExecutor(1))
    header, *games = out.read_text().splitlines(keepends=True)
    test = f"{given},alpha=0.05,beta=0.05"
    out.write_text(json.dumps({**json.loads(header), "sprt": test}) + "\n" + "".join(games))
    saved = read_results(out)
    assert saved.sprt == test and len(saved.games) == 2
    why = f"SPRT {test}: not evaluated, {refusal}"
    runner = CliRunner()
    report = runner.invoke(main, ["report", str(out)])
    assert report.exit_code == 0 and why in report.stdout and "accepted" not in report.stdout
    assert html.escape(why) in (tmp_path / "run-report" / "report.html").read_text()
    as_json = runner.invoke(main, ["report", str(out), "--json"])
    assert as_json.exit_code == 0 and as_json.stderr == f"note: {why}\n"
    assert json.loads(as_json.stdout)["sprt"] is None and json.loads(as_json.stdout)["stopped"] is None
    refused = runner.invoke(main, ["arena", *RANDOMS, "--games", "4", "--sprt", given, "--out", str(out)])
    assert refused.exit_code == 2 and refused.output == f"Error: Invalid value for '--sprt': SPRT: {refusal}\n"
    assert read_results(out).sprt == test and len(read_results(out).games) == 2  # nothing written
    resumed = run_arena(ArenaConfig(RANDOMS, games=4, seed=1), out, executor=LocalExecutor(1))  # without the test
    assert resumed.played == 2 and read_results(out).sprt is None and len(read_results(out).games) == 4


def test_a_test_the_arena_takes_is_kept_as_given_and_read_back(tmp_path):
    """The last testable hypothesis: the arena took elo1=6381.8359 and wrote
    it as 6381.84, whose score is 1, and the file it had written no longer
    loaded ('the header's "sprt" is not a test')."""
    out = tmp_path / "run.jsonl"
    test = "elo0=0,elo1=6381.8359,alpha=0.05,beta=0.05"
    played = CliRunner().invoke(main, ["arena", *RANDOMS, "--games", "2", "--board", "5x4", "--jobs", "1",
                                       "--sprt", test, "--out", str(out)])
    assert played.exit_code == 0, played.output
    assert read_results(out).sprt == test
    report = CliRunner().invoke(main, ["report", str(out)])
    assert report.exit_code == 0 and "SPRT accepted H0 (elo0=0) after 1 pair" in report.stdout


_worker_start = executors._worker_start


def _deaf_to_sigterm(started: object = None) -> None:
    _worker_start(started)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)


_DIES = {"marker": ""}  # set by a test before the pool forks its workers


def _dies_the_first_time(task):
    """``play_pair``, in a worker that kills itself (as the out-of-memory
    killer would) the first time it is given a task; ``always`` as marker:
    every time."""
    marker = _DIES["marker"]
    if marker == "always" or not os.path.exists(marker):
        if marker != "always":
            open(marker, "w").close()
        os.kill(os.getpid(), signal.SIGKILL)
    return play_pair(task)


def test_a_worker_that_dies_with_a_pair_has_it_played_again_and_the_run_ends(tmp_path, monkeypatch):
    """Issue review: a worker process killed in the middle of a pair
    (``kill -9``, the out-of-memory killer) was replaced by the pool, but
    its pair never came back and the arena waited for ever."""
    _DIES["marker"] = str(tmp_path / "died")
    monkeypatch.setattr(executors, "play_pair", _dies_the_first_time)
    config = ArenaConfig(RANDOMS, games=8, board="5x4", plies=1, seed=1)
    tasks = config.tasks()
    runner = LocalExecutor(2)
    try:
        done = [task for task, _games in runner.run(tasks)]
    finally:
        runner.close()
    assert os.path.exists(_DIES["marker"])  # a worker did die
    assert sorted(t.key for t in done) == sorted(t.key for t in tasks)  # every pair once, none twice


def test_a_pair_whose_worker_dies_twice_stops_the_run_with_one_line(tmp_path, monkeypatch):
    _DIES["marker"] = "always"
    monkeypatch.setattr(executors, "play_pair", _dies_the_first_time)
    config = ArenaConfig(RANDOMS, games=2, board="5x4", plies=1, seed=1)
    runner = LocalExecutor(2)
    began = time.monotonic()
    try:
        with pytest.raises(executors.WorkerLost, match="a worker process died twice playing pair 1 of random:seed=1"):
            list(runner.run(config.tasks()))
    finally:
        runner.close()
    assert time.monotonic() - began < 60


class Exiter(Agent):
    def analyse(self, position: Position, budget: Budget | None = None) -> tuple[Move, Analysis]:
        raise SystemExit(5)


class MoveAlone(Agent):
    def analyse(self, position: Position, budget: Budget | None = None):  # type: ignore[override]
        return position.legal_moves()[0]


class Swapped(Agent):
    def analyse(self, position: Position, budget: Budget | None = None):  # type: ignore[override]
        return Analysis(), position.legal_moves()[0]


@pytest.mark.parametrize(("culprit", "detail"), [
    (Exiter(), "raised SystemExit: 5"),
    (MoveAlone(), "MoveAlone.analyse must return (Move, Analysis), not Move.parse('a')"),
    (Swapped(), ("Swapped.analyse must return (Move, Analysis), not an analysis Move.parse('a') "
                "(the pair is the other way round: the move first)")),
])
def test_an_agent_that_calls_sys_exit_or_answers_a_move_alone_loses_with_a_clear_reason(culprit, detail):
    """Issue review: ``sys.exit`` in an agent ended the whole arena without a
    word (``--jobs 1``) or killed its worker (a hang); a bare ``Move`` from
    ``analyse`` was a TypeError inside c4lab."""
    game = Game.of(play_game(culprit, make_agent("random:seed=3"), Position.parse("7x6"), a_spec="a", b_spec="b",
                             policy="judge", limit=5, margin=1))
    assert game.forfeit is not None and (game.forfeit.side, game.forfeit.reason) == ("A", "crash")
    assert detail in game.forfeit.detail


class Tokener(Agent):
    def analyse(self, position: Position, budget: Budget | None = None):  # type: ignore[override]
        return position.legal_moves()[-1].token, Analysis()


def test_a_token_answered_by_analyse_is_played_and_choose_gives_it_as_a_move():
    """Review: ``choose`` of an agent that answered ``("d", Analysis())``
    returned the string, though it is typed ``-> Move`` (the arena and
    ``c4lab move`` play the token, as documented)."""
    agent = Tokener()
    move = agent.choose(Position.parse("7x6:dd"))
    assert isinstance(move, Move) and move == Move.parse("g")
    game = Game.of(play_game(agent, make_agent("random:seed=3"), Position.parse("5x4"), a_spec="t", b_spec="r",
                             policy="judge", limit=5, margin=1))
    assert game.forfeit is None and game.position.startswith("5x4:e")


class NoAnswer(Agent):
    def analyse(self, position: Position, budget: Budget | None = None):  # type: ignore[override]
        return None


def test_a_forfeit_for_an_answer_of_the_wrong_shape_names_the_answer_not_c4labs_own_source():
    """Issue review: an ``analyse`` that returned ``None`` lost with "raised
    AnswerError: ... at .../c4lab/agents/base.py:159", as if the agent had
    raised there: it raised nothing, and that line is c4lab's."""
    game = Game.of(play_game(make_agent("random:seed=3"), NoAnswer(), Position.parse("7x6"), a_spec="a",
                             b_spec="mine", policy="judge", limit=5, margin=1))
    assert game.forfeit is not None and (game.forfeit.side, game.forfeit.reason) == ("B", "crash")
    assert game.forfeit.detail == (
        "move 2 of the game: player B (mine) failed: NoAnswer.analyse must return (Move, Analysis), not None"
    )


@pytest.mark.parametrize(("name", "status", "group"), [("SIGTERM", 143, False), ("SIGHUP", 129, True)])
def test_a_kill_or_a_closed_terminal_stops_an_arena_and_its_workers_and_keeps_the_games(tmp_path, name, status, group):
    """Issue review: SIGTERM ended the arena's own process alone, and a
    worker busy in a search went on at a full core, an orphan.  A terminal
    closed under the run sends SIGHUP to the whole group, the workers too:
    it killed them all, each worker's engine programs left running in
    their own sessions; now the workers leave it to the run, which stops
    them and keeps its games, as on Ctrl-C."""
    out = tmp_path / "run.jsonl"
    command = [sys.executable, "-m", "c4lab", "arena", "master:time=0.05,seed=1", "heuristic:seed=1",
               "--games", "40", "--board", "random", "--jobs", "2", "--out", str(out)]
    run = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    deadline = time.monotonic() + 600  # generous: on an empty numba cache and a loaded machine, minutes
    while (not out.exists() or len(out.read_text().splitlines()) < 5) and time.monotonic() < deadline:
        time.sleep(0.1)
    workers = subprocess.run(["pgrep", "-P", str(run.pid)], capture_output=True, text=True, check=False).stdout.split()
    assert workers
    signum = getattr(signal, name)
    if group:
        os.killpg(run.pid, signum)  # the whole group, as a terminal does
    else:
        run.send_signal(signum)  # the arena's process alone, as kill does
    _, err = run.communicate(timeout=60)
    assert run.returncode == status, err
    saved = len(read_results(out).games)
    assert f"stopped by a signal: {saved} games saved in {out}" in err
    assert "Traceback" not in err
    for pid in workers:
        status_file = Path(f"/proc/{pid}/status")
        assert not status_file.exists() or "zombie" in status_file.read_text().lower()


def test_an_early_stop_ends_even_where_a_worker_does_not_end_at_its_sigterm(tmp_path, monkeypatch):
    """The workers of a run stopped early get SIGTERM; one that does not
    end at it is killed after a grace period, and the run returns (the
    pool's own ``terminate`` waited for such a worker forever)."""
    monkeypatch.setattr(executors, "_worker_start", _deaf_to_sigterm)
    monkeypatch.setattr(executors, "STOP_GRACE", 0.5)
    config = ArenaConfig(("heuristic:seed=1", "random:seed=1"), games=400, board="6x5", plies=1, seed=1)
    sprt = SPRT.parse("elo0=0,elo1=50,alpha=0.05,beta=0.05")
    outcome = []
    run = threading.Thread(target=lambda: outcome.append(
        run_arena(config, tmp_path / "sprt.jsonl", executor=LocalExecutor(2), sprt=sprt)), daemon=True)
    run.start()
    run.join(120)
    assert outcome and outcome[0].stopped is not None


def test_a_stop_whose_pool_never_finishes_terminating_still_returns(monkeypatch):
    """Seen in test runs: an arena stopped early hung for half an hour with
    no worker left.  ``_terminate`` bounds its wait for the pool's
    ``terminate``, but the stop then called the pool's ``join``, which has
    no bound and waits for the same threads.  A pool whose ``terminate``
    and ``join`` never return: the stop comes back all the same."""
    never = threading.Event()

    class StuckPool:
        _pool = ()  # its worker processes: none left

        def terminate(self) -> None:
            never.wait()

        def join(self) -> None:
            never.wait()

    monkeypatch.setattr(executors, "STOP_GRACE", 0.1)
    executor = LocalExecutor(2)
    executor._pool = StuckPool()  # type: ignore[assignment]  (a run stopped before it finished)
    stopping = threading.Thread(target=executor.close, daemon=True)
    stopping.start()
    stopping.join(30)
    assert not stopping.is_alive()
    never.set()


# -- reports -----------------------------------------------------------------------


def test_report_writes_three_plots_and_a_self_contained_page(tmp_path):
    out = tmp_path / "run.jsonl"
    config = ArenaConfig(("heuristic:seed=1", "random:seed=1", "random:seed=2"), games=2, board="random", seed=2)
    run_arena(config, out, executor=LocalExecutor(1))
    files = write_report(summarise(config, read_results(out).games), tmp_path / "rep")
    names = sorted(f.name for f in files)
    assert names == ["by-size.png", "cross-table.png", "elo.png", "report.html"]
    for f in files:
        if f.suffix == ".png":
            assert f.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    page = (tmp_path / "rep" / "report.html").read_text()
    assert page.count("data:image/png;base64,") == 3 and "heuristic:seed=1" in page


def test_the_report_page_names_the_starts_the_run_played(tmp_path):
    # A run from an openings file opened its page with "board classic, ...,
    # 2 random opening moves": it played neither.
    openings = ("7x6:dd", "9x8/Xd3:a", "7x6:c")
    from_file = ArenaConfig(RANDOMS, games=2, openings=openings, gauntlet=True, limit=5, margin=0.5)
    run_arena(from_file, tmp_path / "o.jsonl", executor=LocalExecutor(1))
    write_report(summarise(from_file, read_results(tmp_path / "o.jsonl").games), tmp_path / "rep")
    page = (tmp_path / "rep" / "report.html").read_text()
    assert ("3 start positions from an openings file, used in turn, 2 games per pairing (gauntlet), "
            "seed 0, limit 5 s + 0.5 s per move") in page
    assert "random opening" not in page and "board classic" not in page
    random_boards = ArenaConfig(RANDOMS, games=2, board="random", bonus=True, plies=1)
    assert describe_setting(random_boards).startswith(
        "board random with bonus, 1 random opening move, 2 games per pairing (round robin)")


# -- the command line ------------------------------------------------------------------


def test_without_a_terminal_the_arena_prints_a_progress_line_every_tenth_of_the_run(tmp_path):
    """Review: under ``nohup`` or a job scheduler (stderr no terminal) a run
    printed nothing until its end."""
    result = CliRunner().invoke(main, ["arena", *RANDOMS, "--games", "20", "--board", "5x4", "--jobs", "1",
                                       "--out", str(tmp_path / "plain.jsonl")])
    assert result.exit_code == 0, result.output
    lines = [line for line in result.stderr.splitlines() if line.startswith("games ")]
    assert [line.split()[1] for line in lines] == [f"{done}/20" for done in range(2, 21, 2)]
    assert re.fullmatch(r"games 20/20  random:seed=1 \d+(\.5)? - \d+(\.5)? random:seed=2  \(\d+ s\)", lines[-1])


def test_cli_arena_then_report(tmp_path):
    out = tmp_path / "cli.jsonl"
    runner = CliRunner()
    result = runner.invoke(
        main,
        ["arena", "heuristic:seed=1", "random:seed=1", "--games", "4", "--board", "random", "--seed", "3",
         "--jobs", "1", "--out", str(out), "--json"],
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)  # stderr has the progress lines
    assert data["played"] == 4 and data["games"] == 4
    assert data["pairings"][0]["first"] == "heuristic:seed=1"
    report = runner.invoke(main, ["report", str(out), "--out-dir", str(tmp_path / "r")])
    assert report.exit_code == 0, report.output
    assert "Ranking" in report.output and (tmp_path / "r" / "report.html").exists()
    # the JSON keeps the settings its figures come from (it had none: no seed, board or limit to publish)
    again = json.loads(runner.invoke(main, ["report", str(out), "--out-dir", str(tmp_path / "r"), "--json"]).stdout)
    for settings in (data["config"], again["config"]):
        assert settings == read_results(out).config.to_dict()
        assert (settings["seed"], settings["board"], settings["games"], settings["limit"]) == (3, "random", 4, 30.0)
    (tmp_path / "afile").write_text("")
    for where in ("afile/sub", "missing/deep/sub"):  # a folder under a file; folders that do not exist
        refused = runner.invoke(main, ["report", str(out), "--out-dir", str(tmp_path / where)])
        assert refused.exit_code == 2 and "is not a folder" in refused.output and "Traceback" not in refused.output
    assert not (tmp_path / "missing").exists()


def test_cli_arena_refuses_bad_input_clearly(tmp_path):
    runner = CliRunner()
    result = runner.invoke(main, ["arena", "random", "--out", str(tmp_path / "x.jsonl")])
    assert result.exit_code == 2 and "at least two" in result.output
    result = runner.invoke(main, ["arena", "random", "random:seed=1", "--sprt", "elo0=0", "--out", str(tmp_path / "x.jsonl")])
    assert result.exit_code == 2 and "elo1" in result.output
    # `--sprt "$TEST"` with TEST unset ran the whole match with no test, in silence
    result = runner.invoke(main, ["arena", "random", "random:seed=1", "--sprt", "", "--out", str(tmp_path / "x.jsonl")])
    assert result.exit_code == 2 and "SPRT: '' is not key=value" in result.output
    assert not (tmp_path / "x.jsonl").exists()
    (tmp_path / "bad.jsonl").write_text("garbage\n")
    result = runner.invoke(main, ["report", str(tmp_path / "bad.jsonl")])
    assert result.exit_code == 2 and "bad.jsonl:1" in result.output


@pytest.mark.parametrize("executor", [[], ["--executor", "ray"]])
def test_an_empty_ray_address_is_refused_as_an_empty_sprt_is(tmp_path, executor):
    """`--ray-address "$RAY"` with RAY unset was taken for the option left
    out: the games ran here (or on a new local Ray) without a word."""
    out = tmp_path / "x.jsonl"
    result = CliRunner().invoke(main, ["arena", "random", "random:seed=1", "--games", "2", *executor,
                                       "--ray-address", "", "--out", str(out)])
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [
        ("Error: Invalid value for '--ray-address': an empty address: give the cluster's HOST:PORT (or auto), "
         "or leave the option out to start a local Ray")]
    assert not out.exists()


def test_report_of_a_run_with_no_finished_game_is_one_line_and_writes_nothing(tmp_path):
    out = tmp_path / "run.jsonl"
    played = CliRunner().invoke(main, ["arena", "heuristic:seed=1", "random:seed=1", "--games", "2", "--board", "6x5",
                                       "--jobs", "1", "--out", str(out)])
    assert played.exit_code == 0, played.output
    header, first = out.read_text().splitlines()[:2]
    for name, text in (("header.jsonl", header + "\n"), ("cut.jsonl", header + "\n" + first[: len(first) // 2])):
        (tmp_path / name).write_text(text)  # an arena stopped before its first game ended; one killed mid-line
        result = CliRunner().invoke(main, ["report", str(tmp_path / name)])
        assert result.exit_code == 2, result.output
        assert result.output.strip().splitlines() == [f"Error: {tmp_path / name}: no finished game yet, nothing to report"]
        assert not (tmp_path / (name[:-6] + "-report")).exists()


def test_a_report_that_cannot_be_written_whole_leaves_the_last_one_as_it_was(tmp_path):
    """The report wrote its four files in place, one after the other: a
    full disk left a page cut short beside new plots and said only that it
    could not write.  Now the four are written whole, all or none (a file
    size limit stands in for the full disk, reached in the page)."""
    import resource

    out = tmp_path / "run.jsonl"
    run_arena(ArenaConfig(("heuristic:seed=1", "random:seed=1"), games=2, board="6x5"), out, executor=LocalExecutor(1))
    sizes = {f.name: f.stat().st_size for f in write_report(summarise(read_results(out).config, read_results(out).games),
                                                            tmp_path / "sizes")}
    limit = max(size for name, size in sizes.items() if name != "report.html") + 1
    assert sizes["report.html"] > limit  # the page is the file the disk fills up in
    folder = tmp_path / "run-report"
    folder.mkdir()
    for name in sizes:
        (folder / name).write_text(f"the last report's {name}")

    def small_disk() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    done = subprocess.run([sys.executable, "-m", "c4lab", "report", str(out)], capture_output=True, text=True,
                          timeout=120, check=False, preexec_fn=small_disk)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip() == f"Error: cannot write the report in {str(folder)!r}: File too large"
    assert {f.name: f.read_text() for f in folder.iterdir()} == {name: f"the last report's {name}" for name in sizes}


@pytest.mark.parametrize(("command", "said"), [
    (["report", "{fifo}"], ("Error: {fifo} is a pipe or a device, not an arena results file (one is read from a file "
                            "on disk)")),
    (["arena", "heuristic", "random", "--openings", "{fifo}", "--out", "{out}"],
     ("Error: Invalid value for '--openings': the openings file {fifo} is a pipe or a device: give the name of a file "
      "on disk")),
])
def test_a_pipe_given_as_results_or_openings_is_refused_at_once(tmp_path, command, said):
    """A named pipe as the results of ``c4lab report`` or the arena's
    ``--openings`` waited for ever for a writer, saying nothing (as a
    network or a Q-table that is a pipe did until refused); now it is one
    line, and nothing is written."""
    fifo, out = tmp_path / "fifo", tmp_path / "out.jsonl"
    os.mkfifo(fifo)
    args = [arg.format(fifo=fifo, out=out) for arg in command]
    done = subprocess.run([sys.executable, "-m", "c4lab", *args], capture_output=True, text=True, timeout=60,
                          check=False)
    assert done.returncode == 2 and done.stderr.strip() == said.format(fifo=fifo), done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fifo"]


def test_a_sweep_shows_no_invented_interval_or_p_value(tmp_path):
    config = ArenaConfig(("heuristic:seed=1", "random:seed=1"), games=4, board="6x5", plies=0, seed=1)
    outcome = run_arena(config, tmp_path / "sweep.jsonl", executor=LocalExecutor(1))
    summary = summarise(config, outcome.games)
    assert summary.pairings[0].games.counts == (4, 0, 0)  # seeded: the same four wins every run
    row = dict(zip(PAIRING_COLUMNS, pairing_rows(summary)[0], strict=True))
    assert row["95% CI (games)"] == row["95% CI (pairs)"] == row["p (equal)"] == row["p (pairs)"] == NOT_AVAILABLE
    assert row["Elo diff"] == ">=-72"  # no finite estimate: 4 wins in 4 bound it at -72 Elo (exact interval)
    assert NOTE in render_text(summary)
    data = summary.to_dict()["pairings"][0]
    assert data["elo_ci"] is None and data["p_value"] is None and data["pentanomial_p_value"] is None
    assert data["elo"] is None and data["elo_bound"]["at_least"] == -72.1


def test_a_paired_match_reports_the_pairs_p_value_beside_the_games():
    """x wins or splits every pair (pairs 1, 2, 1, 2, ...): 12-0-4 game by
    game, p = 0.021; every pair at least even, the pairs' p is 0.0047."""
    from scipy.stats import norm

    config = ArenaConfig(("x", "y"), games=16)
    summary = summarise(config, _games_of("x", "y", [1, 1, 1, 0] * 4))
    row = dict(zip(PAIRING_COLUMNS, pairing_rows(summary)[0], strict=True))
    assert row["pairs 0/½/1/1½/2"] == "0/0/4/0/4" and row["W-D-L"] == "12-0-4"
    games_p = 2 * norm.cdf(-0.25 / (0.75 * 0.25 / 16) ** 0.5)  # per game: mean 0.75, variance 0.1875
    pairs_p = 2 * norm.cdf(-0.25 / (0.25 / 8**0.5))  # per pair: means ½ and 1, sd 0.25, 8 pairs
    assert (row["p (equal)"], row["p (pairs)"]) == (f"{games_p:.3g}", f"{pairs_p:.3g}") == ("0.0209", "0.00468")
    data = summary.to_dict()["pairings"][0]
    assert data["pentanomial_p_value"] == pytest.approx(pairs_p)
    assert data["pentanomial_los"] == pytest.approx(norm.cdf(0.25 / (0.25 / 8**0.5)))


def test_ctrl_c_stops_the_workers_keeps_the_saved_pairs_and_the_run_resumes(tmp_path):
    out = tmp_path / "run.jsonl"
    command = [sys.executable, "-m", "c4lab", "arena", "master:time=0.05,seed=1", "heuristic:seed=1",
               "--games", "40", "--board", "random", "--jobs", "2", "--out", str(out)]
    # Its own process group, as a terminal gives it: Ctrl-C reaches the workers too.
    # And SIGINT ignored, as a non-interactive shell starts a background job:
    # the arena must not depend on the disposition it inherits.
    # (An ignored signal stays ignored across exec.)
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        run = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    finally:
        signal.signal(signal.SIGINT, previous)
    deadline = time.monotonic() + 600  # generous: on an empty numba cache and a loaded machine, minutes
    while (not out.exists() or len(out.read_text().splitlines()) < 5) and time.monotonic() < deadline:
        time.sleep(0.1)
    os.killpg(run.pid, signal.SIGINT)
    _, err = run.communicate(timeout=60)
    assert run.returncode == 130, err
    saved = len(read_results(out).games)
    assert f"interrupted: {saved} games saved in {out}" in err
    assert 4 <= saved < 40
    resumed = subprocess.run(command, check=False, capture_output=True, text=True, timeout=600)
    assert resumed.returncode == 0, resumed.stderr
    assert f"{40 - saved} games played now, 40 in {out}" in resumed.stdout


def _games_of(first, second, scores):
    """Arena records of a pairing in which ``first`` scored ``scores`` (1 or
    0 a game), games 0 and 1 of each pair with the sides swapped."""
    games = []
    for i, score in enumerate(scores):
        a, b = (first, second) if i % 2 == 0 else (second, first)
        winner = first if score == 1 else second
        games.append(Game(position="7x6", result="A" if winner == a else "B", a=a, b=b, start="7x6",
                          pairing=0, pair=i // 2, game=i % 2))
    return games


def test_a_one_all_pairing_shows_elo_0_and_no_interval_that_spans_everything():
    config = ArenaConfig(("x", "y"), games=2)
    summary = summarise(config, _games_of("x", "y", [1, 0]))
    row = dict(zip(PAIRING_COLUMNS, pairing_rows(summary)[0], strict=True))
    assert row["W-D-L"] == "1-0-1" and row["Elo diff"] == "0"  # not "-0"
    assert row["95% CI (games)"] == row["95% CI (pairs)"] == NOT_AVAILABLE  # not [-inf, +inf]
    assert all(r[9] == "0" and r[10] == NOT_AVAILABLE for r in standing_rows(summary))
    text = render_text(summary)
    assert NOTE in text and "[-inf, +inf]" not in text and "-0 " not in text
    assert "too few" in NOTE  # the note does not claim that every game ended alike
    data = summary.to_dict()
    assert data["pairings"][0]["elo_ci"] is None and data["standings"][0]["elo_ci"] is None


def test_an_interval_reaching_a_perfect_score_has_an_open_end_not_a_number():
    config = ArenaConfig(("x", "y"), games=10)
    summary = summarise(config, _games_of("x", "y", [1, 1, 1, 1, 1, 1, 1, 1, 1, 0]))
    low, high = summary.to_dict()["pairings"][0]["elo_ci"]
    assert low > 0 and high is None  # 9-0-1: 0.9 + 1.96·0.095 > 1
    assert pairing_rows(summary)[0][6].endswith(", +inf]")


def test_unseeded_agents_get_a_seed_from_the_game_so_a_game_replays_anywhere():
    """``heuristic`` and ``random`` without seed=: each game's agents get
    seeds from the experiment's seed, start and specs, so two runs (two
    processes, local or Ray) play the same games."""
    config = ArenaConfig(("heuristic", "random"), games=4, board="random", seed=5)
    first = [play_pair(task)[1] for task in config.tasks()]
    again = [play_pair(task)[1] for task in config.tasks()]
    assert [g["position"] for p in first for g in p] == [g["position"] for p in again for g in p]
    assert all(g["A"] in ("heuristic", "random") for p in first for g in p)  # the specs as given
    from c4lab.arena.games import seeded

    assert seeded("heuristic:seed=3", 5, "7x6", "heuristic:seed=3", "random", "A") == "heuristic:seed=3"
    assert seeded("minimax:depth=2", 5, "7x6", "minimax:depth=2", "random", "A") == "minimax:depth=2"  # no seed
    derived = seeded("uct:iterations=10", 5, "7x6", "uct:iterations=10", "random", "A")
    assert derived.startswith("uct:iterations=10,seed=")
    assert derived != seeded("uct:iterations=10", 5, "7x6", "uct:iterations=10", "random", "B")


def test_a_start_played_again_gets_new_seeds_so_seeded_agents_play_new_games():
    """Pairs from one start (one opening, or ``--opening-moves 0``) each give
    the agents the arena seeds seeds of their own: random against random
    from the empty 4x4 board plays a different game in each pair, where it
    replayed the first pair's two games in every one.  The first pair from
    a start keeps the seeds it had, and so every run whose starts differ
    plays the games it played before."""
    config = ArenaConfig(("random", "uct:iterations=20"), games=8, board="4x4", plies=0, seed=3)
    tasks = config.tasks()
    assert [task.repeat for task in tasks] == [0, 1, 2, 3]
    games = [g["position"] for task in tasks for g in play_pair(task)[1]]
    assert len(set(games)) == len(games)  # eight different games from one start
    from c4lab.arena.games import seeded

    first = seeded("random", 3, "4x4", "random", "uct:iterations=20", "A")
    assert first == seeded("random", 3, "4x4", "random", "uct:iterations=20", "A", repeat=0)
    assert first != seeded("random", 3, "4x4", "random", "uct:iterations=20", "A", repeat=1)
    openings = ArenaConfig(RANDOMS, games=10, openings=("7x6:dd", "7x6:cc", "7x6:ee"))
    assert [task.repeat for task in openings.tasks()] == [0, 0, 0, 1, 1]


def test_a_missing_ray_says_the_install_command_the_docs_give(monkeypatch, tmp_path):
    # It said "pip install 'c4lab[ray]'", which asks the package index for a
    # c4lab; the project is installed from its folder.
    monkeypatch.setitem(sys.modules, "ray", None)
    result = CliRunner().invoke(main, [
        "arena", "random", "heuristic", "--games", "2", "--executor", "ray", "--out", str(tmp_path / "r.jsonl"),
    ])
    assert result.exit_code == 2
    assert "Error: --executor ray needs Ray: python3 -m pip install -e '.[ray]' in c4lab's folder" in result.output
    assert "python3 -m pip install -e '.[ray]'" in (Path(__file__).parents[2] / "docs/experiments.md").read_text()


def test_a_ray_address_with_no_cluster_is_a_one_line_error_at_once(tmp_path):
    pytest.importorskip("ray")
    began = time.monotonic()
    result = CliRunner().invoke(main, [
        "arena", "random", "heuristic", "--games", "2", "--executor", "ray", "--ray-address", "127.0.0.1:1",
        "--out", str(tmp_path / "r.jsonl"),
    ])
    assert time.monotonic() - began < 10  # was: minutes of Ray's warnings, never an end
    assert result.exit_code == 2
    errors = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert errors == ["Error: --ray-address 127.0.0.1:1: no Ray cluster answers there (Connection refused)"]
    assert not (tmp_path / "r.jsonl").exists()
    from c4lab.arena.executors import check_ray_address

    with pytest.raises(ValueError, match="is not HOST:PORT"):
        check_ray_address("somewhere")


@pytest.mark.parametrize(("answer", "what"), [
    (None, "it says nothing"),
    (b"HTTP/1.1 400 Bad Request\r\n\r\n", "it does not speak gRPC"),
    (b"\x00\x00\x00\x04\x00\x00\x00\x00\x00", None),  # a gRPC server's SETTINGS frame: let Ray join it
])
def test_a_ray_address_where_something_else_listens_is_refused_before_ray_hangs_on_it(answer, what):
    import socket
    import threading

    from c4lab.arena.executors import check_ray_address

    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]

    def serve() -> None:
        conn, _ = server.accept()
        with conn:
            conn.recv(64)
            if answer is not None:
                conn.sendall(answer)
            else:
                time.sleep(1.0)  # a listener that never says a word

    threading.Thread(target=serve, daemon=True).start()
    with server:
        if what is None:
            check_ray_address(f"127.0.0.1:{port}", timeout=0.5)
        else:
            with pytest.raises(ValueError) as error:
                check_ray_address(f"ray://127.0.0.1:{port}", timeout=0.5)
            assert str(error.value) == (f"--ray-address ray://127.0.0.1:{port}: something listens there, "
                                        f"but not a Ray cluster ({what})")


def test_an_agent_that_cannot_play_a_board_the_run_draws_is_refused_before_any_game(tmp_path):
    """A network learnt for one board, in a run whose boards are drawn
    (random boards, a random bonus cell) or listed (--openings): every board
    follows from the seed or the file, so the refusal comes first, not as
    forfeits game after game."""
    from c4lab.agents.ntuple_net import Network
    from c4lab.rules import Position

    net = tmp_path / "n.npz"
    Network.create(Position.parse("6x5").variant, tuples=4, length=4).save(net)
    (tmp_path / "starts.txt").write_text("6x5:cc\n7x6:dd\n")
    for extra in (["--board", "random"], ["--board", "6x5", "--bonus"], ["--openings", str(tmp_path / "starts.txt")]):
        out = tmp_path / "run.jsonl"
        result = CliRunner().invoke(main, ["arena", f"ntuple:weights={net}", "random", "--games", "4", "--jobs", "1",
                                           "--out", str(out), *extra])
        assert result.exit_code == 2, result.output
        assert "a board of this run" in result.output and "trained for the board 6x5" in result.output
        assert not out.exists()
    mixed = CliRunner().invoke(main, ["arena", "random", "random:seed=1", "--openings", str(tmp_path / "starts.txt"),
                                      "--board", "6x5", "--opening-moves", "3", "--out", str(tmp_path / "m.jsonl")])
    assert mixed.exit_code == 2, mixed.output
    assert mixed.output.splitlines()[-1] == ("Error: Invalid value for '--openings': the file gives the start "
                                             "positions; --board and --opening-moves cannot be given with it")


def test_more_jobs_than_cores_is_run_with_a_note_on_what_it_costs_agents_on_a_clock(tmp_path, monkeypatch):
    """Agents on a clock share the cores when more games run at once than
    there are cores: weaker moves and more time forfeits, which a
    researcher should hear of before publishing the figures; at most one
    game a core, no note."""
    import c4lab.cores

    monkeypatch.setattr(c4lab.cores, "usable_cores", lambda: 1)
    args = ["arena", *RANDOMS, "--board", "4x4", "--games", "2"]
    crowded = CliRunner().invoke(main, [*args, "--jobs", "2", "--out", str(tmp_path / "two.jsonl")])
    assert crowded.exit_code == 0, crowded.output
    assert "note: --jobs 2 on 1 core: an agent that thinks on a clock gets less than a core" in crowded.stderr
    alone = CliRunner().invoke(main, [*args, "--jobs", "1", "--out", str(tmp_path / "one.jsonl")])
    assert alone.exit_code == 0 and "note: --jobs" not in alone.stderr


def test_mean_seconds_a_move_leave_out_the_answer_that_lost_the_game_and_the_report_says_so(tmp_path):
    """A hung engine forfeits on time after --limit + --margin; that wait was
    counted as one of its moves, so its 'mean s/move' read 0.336 s where its
    moves took 0.001 s.  The record keeps the wait; the means are of the
    moves played, and the tables, the JSON and the page say what was left out."""
    from c4lab.game import Forfeit

    hung, other = "engine:cmd=./hang.sh", "random:seed=1"
    config = ArenaConfig((hung, other), games=2, limit=1, margin=0.5)
    timed_out = Game("7x6:acac", "B", hung, other, "7x6", 0, 0, 0, {"A": [0.002, 0.004, 1.5], "B": [0.01, 0.03]},
                     Forfeit("A", "time", "move 5 of player A: no 'bestmove' within 1.5 s"))
    crashed = Game("7x6:ab", "A", other, hung, "7x6", 0, 0, 1, {"A": [0.02], "B": [0.006]},
                   Forfeit("B", "crash", "move 4 of player B: the engine exited"))  # a crash times no answer
    assert (timed_out.unplayed, crashed.unplayed) == ("A", None)
    summary = summarise(config, [timed_out, crashed])
    assert summary.move_times[hung] == pytest.approx((0.004, 0.006))  # 0.002, 0.004, 0.006: not the 1.5 s wait
    assert summary.move_times[other] == pytest.approx((0.02, 0.03))
    standing = {s["spec"]: s for s in summary.to_dict()["standings"]}
    assert (standing[hung]["mean_move_s"], standing[hung]["max_move_s"], standing[hung]["moves_left_out"]) == (
        0.004, 0.006, 1)
    assert standing[other]["moves_left_out"] == 0
    note = ("mean s/move is over the moves played: an answer that lost its game on time or as an illegal move is "
            "left out (1 here)")
    assert note in " ".join(render_text(summary).split())
    assert [row[-1] for row in standing_rows(summary)] == ["0.020", "0.004"]
    write_report(summary, tmp_path)
    assert note in (tmp_path / "report.html").read_text()
    assert timed_out.to_dict()["times"]["A"] == [0.002, 0.004, 1.5]  # the record keeps the wait
    assert "mean s/move is over" not in render_text(summarise(config, [crashed]))  # nothing left out: no note


def test_an_agent_that_played_no_move_has_no_mean_seconds_a_move_rather_than_zero(tmp_path):
    """An engine too slow for --limit loses each game at its first answer:
    it played no move, and the ranking said it thought 0.000 s a move (the
    JSON 0.0), which reads as the fastest agent of the run.  It has no
    figure: "-" in the tables and on the page, null in the JSON."""
    from c4lab.game import Forfeit

    slow, other = "engine:cmd=./slow.py", "random:seed=1"
    config = ArenaConfig((slow, other), games=2, limit=1, margin=0.5)
    games = [
        Game("7x6:abc", "A", other, slow, "7x6:ab", 0, 0, 0, {"A": [0.01], "B": [1.5]},
             Forfeit("B", "time", "move 4 of player B: no 'bestmove' within 1.5 s")),
        Game("7x6:ab", "B", slow, other, "7x6:ab", 0, 0, 1, {"A": [1.5], "B": []},
             Forfeit("A", "time", "move 3 of player A: no 'bestmove' within 1.5 s")),
    ]
    summary = summarise(config, games)
    assert [row[1:2] + row[-1:] for row in standing_rows(summary)] == [[other, "0.010"], [slow, "-"]]
    standing = {s["spec"]: s for s in summary.to_dict()["standings"]}
    assert (standing[slow]["mean_move_s"], standing[slow]["max_move_s"], standing[slow]["moves_left_out"]) == (
        None, None, 2)
    assert (standing[other]["mean_move_s"], standing[other]["max_move_s"]) == (0.01, 0.01)
    write_report(summary, tmp_path)
    assert f"<td>{slow}</td>" in (page := (tmp_path / "report.html").read_text())
    assert "0.000" not in page


def test_the_report_page_says_under_each_plot_what_it_shows(tmp_path):
    """The page's plots had their file names for captions and alt text
    ("elo.png"); each now says what it draws, the Elo plot which of the
    report's two Elo figures it is (the ranking's performance, not the
    fitted ratings) and that a sweep is left out of it."""
    import html

    summary = summarise(ArenaConfig(("x", "y"), games=4), _games_of("x", "y", [1, 0, 1, 1]))
    write_report(summary, tmp_path)
    page = html.unescape((tmp_path / "report.html").read_text())
    captions = re.findall(r"<figcaption>(.*?)</figcaption>", page)
    assert [c.split(":")[0] for c in captions] == ["Cross table", "Elo vs field", "Score by board size"]
    assert "not the fitted ratings" in captions[1] and "won or lost every game" in captions[1]
    assert re.findall(r'<img alt="([^"]*)"', page) == captions  # read aloud, or shown where images are not
    assert 'alt="elo.png"' not in page


def test_the_elo_plot_draws_an_agent_that_won_or_lost_every_game_at_its_bound(tmp_path):
    """A gauntlet whose opponents all lost every game (broken engines, or a
    field far too weak) has no finite "Elo vs field" anywhere: the plot left
    every such agent out and drew an empty frame.  Each is drawn at the bound
    the ranking prints (>= for a sweep, <= for no point), open on the far side."""
    from c4lab.arena.report import EloPoint, elo_points, plot_elo
    from c4lab.arena.stats import elo_bound

    games = _games_of("x", "y", [1, 1, 1, 1]) + [
        dataclasses.replace(g, pairing=1) for g in _games_of("x", "z", [1, 1, 1, 1])
    ]
    summary = summarise(ArenaConfig(("x", "y", "z"), games=4, gauntlet=True), games)
    best, worst = elo_bound(8, 0, 0), elo_bound(0, 0, 4)
    assert best is not None and worst is not None
    assert elo_points(summary) == [
        EloPoint("x", best[1], best[1], math.inf, ">="),
        EloPoint("y", worst[1], -math.inf, worst[1], "<="),
        EloPoint("z", worst[1], -math.inf, worst[1], "<="),
    ]
    assert plot_elo(summary).startswith(b"\x89PNG")
    mixed = summarise(ArenaConfig(("x", "y"), games=4), _games_of("x", "y", [1, 0, 1, 1]))
    x = next(s for s in mixed.table.standings if s.agent == "x")
    assert elo_points(mixed)[0] == EloPoint("x", x.elo, x.elo_low, x.elo_high)  # an estimate: as before


def _games_with_draws(first, second, scores):
    """As ``_games_of``, with 0.5 a drawn game."""
    games = _games_of(first, second, [1 if s == 0.5 else s for s in scores])
    return [Game(g.position, "draw", g.a, g.b, g.start, g.pairing, g.pair, g.game) if score == 0.5 else g
            for g, score in zip(games, scores, strict=True)]


def test_a_small_lopsided_match_has_an_exact_p_value_beside_the_normal_one(tmp_path):
    """9-1-0 in 10 games: the Wald test said p < 1e-15; the exact two-sided
    sign test on the 9 decisive games says 2 / 2**9 = 0.0039, and the report
    says which to read (tables, page, --json)."""
    config = ArenaConfig(("x", "y"), games=10)
    summary = summarise(config, _games_with_draws("x", "y", [1, 1, 1, 1, 1, 1, 1, 1, 1, 0.5]))
    row = dict(zip(PAIRING_COLUMNS, pairing_rows(summary)[0], strict=True))
    assert row["W-D-L"] == "9-1-0"
    assert (row["p (equal)"], row["p (sign)"]) == ("<1e-15", "0.00391")
    data = summary.to_dict()["pairings"][0]
    assert data["sign_p_value"] == 2 / 2**9 and data["p_value"] < 1e-15
    assert data["pentanomial_sign_p_value"] == 2 / 2**5  # 5 pairs won (2, 2, 2, 2 and 1½ points), none lost
    note = "read p (sign) there, the exact two-sided sign test on the wins and losses"
    assert note in " ".join(render_text(summary).split())
    write_report(summary, tmp_path)
    assert note in (tmp_path / "report.html").read_text()


def test_a_sweep_has_an_exact_p_value_where_the_normal_one_has_none():
    config = ArenaConfig(("x", "y"), games=10)
    summary = summarise(config, _games_of("x", "y", [1] * 10))
    row = dict(zip(PAIRING_COLUMNS, pairing_rows(summary)[0], strict=True))
    assert (row["p (equal)"], row["p (sign)"]) == (NOT_AVAILABLE, "0.00195")  # 2 / 2**10
    # the note on p (equal) and p (pairs) is for figures shown: both n/a here, it said "too sure" of none
    assert "p (sign) there" not in render_text(summary)


def test_a_long_match_says_nothing_of_small_samples():
    config = ArenaConfig(("x", "y"), games=60)
    summary = summarise(config, _games_of("x", "y", [1, 0, 1] * 20))
    assert "p (sign) there" not in render_text(summary)
    row = dict(zip(PAIRING_COLUMNS, pairing_rows(summary)[0], strict=True))
    assert row["W-D-L"] == "40-0-20" and float(row["p (sign)"]) > float(row["p (equal)"])  # exact: the wider


def test_specs_that_differ_only_in_how_a_number_is_written_are_one_agent(tmp_path):
    """`uct:iterations=0200` and `uct:iterations=200` were two agents of a
    run and of its report; the arena names each agent by its canonical spec
    (``canonical_spec``), refuses the same agent twice, and still reads a
    results file that spelt it otherwise."""
    config = ArenaConfig(("uct:iterations=0200,seed=01", "random:seed=1"), games=2, board="5x4", plies=0)
    assert config.specs == ("uct:iterations=200,seed=1", "random:seed=1")
    with pytest.raises(ArenaError, match=r"^agent specs 'uct:iterations=0200' and 'uct:iterations=200' are the same "
                                         r"agent \(uct:iterations=200\): give it once$"):
        ArenaConfig(("uct:iterations=0200", "uct:iterations=200"), games=2)
    result = CliRunner().invoke(main, ["arena", "master:time=0.50", "master:time=0.5", "--out", str(tmp_path / "x")])
    assert result.exit_code == 2 and "are the same agent (master:time=0.5)" in result.output
    # A results file written before: the header and the games spell the agent as given.
    out = tmp_path / "old.jsonl"
    run_arena(config, out, executor=LocalExecutor(1))
    lines = out.read_text().replace("uct:iterations=200,seed=1", "uct:iterations=0200,seed=01")
    out.write_text(lines)
    assert "uct:iterations=0200,seed=01" in lines and "uct:iterations=200" not in lines
    saved = read_results(out)
    assert saved.config == config and {g.a for g in saved.games} == set(config.specs)
    assert set(summarise(saved.config, saved.games).table.agents) == set(config.specs)  # one row each
    again = run_arena(ArenaConfig(("uct:iterations=200,seed=1", "random:seed=1"), games=4, board="5x4", plies=0),
                      out, executor=LocalExecutor(1))  # the same experiment, extended: resumed, not refused
    assert again.played == 2 and {g.a for g in read_results(out).games} == set(config.specs)


def test_ctrl_c_before_the_header_is_written_counts_no_games_and_shows_no_traceback(tmp_path, monkeypatch):
    out = tmp_path / "run.jsonl"

    def stopped_at_once(config, path, **kwargs):  # the file made, its header not yet written
        Path(path).touch()
        raise KeyboardInterrupt

    monkeypatch.setattr("c4lab.arena.runner.run_arena", stopped_at_once)
    result = CliRunner().invoke(main, ["arena", *RANDOMS, "--games", "2", "--out", str(out)])
    assert result.exit_code == 130, result.output
    assert f"interrupted: 0 games saved in {out}; the same command resumes the run" in result.output
    assert "Traceback" not in result.output and out.read_bytes() == b""


def test_ctrl_c_before_the_file_is_made_says_it_was_not_written(tmp_path, monkeypatch):
    """Review: Ctrl-C before the results file existed said "0 games saved
    in ss.jsonl", of a file that was never made."""
    out = tmp_path / "run.jsonl"

    def stopped_at_once(config, path, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr("c4lab.arena.runner.run_arena", stopped_at_once)
    result = CliRunner().invoke(main, ["arena", *RANDOMS, "--games", "2", "--out", str(out)])
    assert result.exit_code == 130, result.output
    assert f"interrupted before any game: {out} was not written; the same command starts the run" in result.output
    assert "saved" not in result.output and not out.exists()


def test_the_report_of_an_unfinished_run_says_so(tmp_path):
    """Review: ``c4lab report`` on a run stopped after 10 of its 30 games
    never said, in the terminal, that the run was unfinished; nor did the
    page, the file that travels."""
    out = tmp_path / "run.jsonl"
    page = tmp_path / "run-report" / "report.html"
    run_arena(ArenaConfig(RANDOMS, games=4, board="5x4", seed=1), out, executor=LocalExecutor(1))
    runner = CliRunner()
    whole = runner.invoke(main, ["report", str(out)])
    assert whole.exit_code == 0 and "unfinished" not in whole.output
    assert "unfinished" not in page.read_text()
    lines = out.read_text().splitlines()
    out.write_text("\n".join(lines[:3]) + "\n")  # the header and the first pair: a run stopped there
    cut = runner.invoke(main, ["report", str(out)])
    assert cut.exit_code == 0
    assert ("note: the run is unfinished: 2 of its 4 games played (the same c4lab arena command resumes it)"
            in cut.stderr)
    assert ("; <strong>unfinished</strong>: 2 of its 4 games played (the same c4lab arena command resumes it).</p>"
            in page.read_text())


def test_an_agent_that_gives_a_name_goes_by_it_in_the_report_and_the_progress_line(tmp_path):
    """``engine:cmd=...,name=mine``: its name was ignored, and every table
    showed the whole spec, command line and all."""
    engine = "engine:cmd=c4lab engine --agent heuristic,name=heur"
    games = [Game("7x6:adcdcdcd", "A", engine, "random:seed=3", "7x6", 0, 0, 0),
             Game("7x6:adcdcdcd", "A", "random:seed=3", engine, "7x6", 0, 0, 1)]
    config = ArenaConfig((engine, "random:seed=3"), games=2)
    summary = summarise(config, games)
    text = render_text(summary)
    assert re.search(r"│ 1 +│ heur +│", text) and re.search(r"│ heur +│ random:seed=3 +│", text)
    assert f"Named by their name=: heur = {engine}." in " ".join(text.split())
    assert "cmd=" not in text.replace(f"heur = {engine}", "")  # the spec appears in that note only
    assert summary.to_dict()["standings"][0]["name"] == "heur"
    assert summary.to_dict()["standings"][0]["spec"] == engine  # the results and the JSON keep the spec
    assert running_summary(config, games) == "heur 1 - 1 random:seed=3"
    write_report(summary, tmp_path / "rep")
    page = (tmp_path / "rep" / "report.html").read_text()
    assert "<td>heur</td>" in page and html.escape(f"heur = {engine}") in page


@pytest.mark.parametrize(("specs", "named"), [
    (("engine:cmd=./a,name=x", "engine:cmd=./b,name=x"), {}),  # two alike: neither
    (("engine:cmd=./a,name=random", "random"), {}),  # the name of another spec: the spec
    (("engine:cmd=./a,name=a", "engine:cmd=./b"), {"engine:cmd=./a,name=a": "a"}),
    (("heuristic", "random:seed=1"), {}),
])
def test_a_name_that_would_read_as_another_agent_names_nobody(specs, named):
    assert agent_labels(specs) == named
    assert [ArenaConfig(specs).label(spec) for spec in specs] == [named.get(spec, spec) for spec in specs]


def test_a_results_file_in_a_folder_that_does_not_exist_is_refused_and_no_folder_is_made(tmp_path: Path) -> None:
    """Review: ``run_arena(..., "/nonexistent/x.jsonl")`` made the folder
    (at the root, as root) and played; ``c4lab arena --out`` refuses it."""
    from c4lab.arena.runner import run_arena

    config = ArenaConfig(("random", "heuristic"), games=2, board="5x4")
    with pytest.raises(ResultsError, match=r"cannot write .*x\.jsonl: the folder '.*missing' does not exist"):
        run_arena(config, tmp_path / "missing" / "x.jsonl", executor=LocalExecutor(jobs=1))
    assert not (tmp_path / "missing").exists()
