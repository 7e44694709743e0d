"""Kaggle ConnectX: our agents inside ``kaggle_environments``, Kaggle's
agents (``kaggle:agent=...``) on our variants, and the conversions."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from types import ModuleType

import pytest

from c4lab.adapters.kaggle import (
    BLOCKED,
    ConnectXError,
    KaggleAgent,
    connectx_agent,
    from_connectx,
    position_from_cells,
    to_connectx,
)
from c4lab.agents import Agent, Analysis, Budget, SpecError, make_agent
from c4lab.game import play_game
from c4lab.rules import Cell, IllegalMoveError, Move, Piece, Position, Variant


def random_position(rng: random.Random, variant: Variant, plies: int) -> Position:
    """``plies`` random moves (fewer if the game would end) on ``variant``."""
    position = Position(variant)
    for _ in range(plies):
        following = position.play(rng.choice(position.legal_moves()))
        if following.is_over:
            break
        position = following
    return position


# ---------------------------------------------------------------------------
# Conversions
# ---------------------------------------------------------------------------


def test_to_connectx_writes_rows_top_first_with_marks_and_blocked_cells() -> None:
    obs, config = to_connectx(Position.parse("9x8/Xd3/Bb1:b+ac"))
    board = obs["board"]
    assert (config["columns"], config["rows"], config["inarow"]) == (9, 8, 4)
    assert obs["mark"] == 1  # A to move (A played b+a, B c)
    bottom = 7 * 9
    assert board[bottom : bottom + 3] == [BLOCKED, 1, 2]  # a1 the ban, b1 A's, c1 B's
    assert board[5 * 9 + 3] == BLOCKED  # d3, forbidden
    assert sum(v != 0 for v in board) == 4


def test_positions_round_trip_through_connectx_on_random_boards() -> None:
    rng = random.Random(5)
    for _ in range(150):
        variant = Variant.enhanced(rng)
        position = random_position(rng, variant, rng.randint(0, variant.playable_cells))
        back = from_connectx(*to_connectx(position))
        assert back.variant == variant  # a 3 reads as a forbidden cell
        assert back.cells == position.cells
        assert back.to_move == position.to_move
        assert back.legal_moves() == position.legal_moves()


def test_a_board_is_replayed_in_an_order_that_fits_gravity_and_alternation() -> None:
    # a: A, A, B and b: B, B bottom up, c: A.  A's second piece must wait for
    # B's first, so the pieces cannot go in column by column.
    cells: dict[str, Piece] = {"a1": "A", "a2": "A", "a3": "B", "b1": "B", "b2": "B", "c1": "A"}
    position = position_from_cells(Variant(7, 6), {Cell.parse(k): v for k, v in cells.items()})
    assert {c.name: p for c, p in position.cells.items()} == cells
    assert position.to_move == "A" and position.ply == 6
    assert position_from_cells(Variant(4, 4, (Cell.parse("b1"),)), {Cell.parse("b2"): "A"}).notation == "4x4/Xb1:b"


def test_boards_no_game_reaches_are_refused() -> None:
    config = {"columns": 7, "rows": 6, "inarow": 4}
    empty = [0] * 42
    floating = empty.copy()
    floating[4 * 7] = 1  # a2 with a1 empty
    with pytest.raises(ConnectXError, match="floats"):
        from_connectx({"board": floating, "mark": 2}, config)
    two_a = empty.copy()
    two_a[35], two_a[36] = 1, 1
    with pytest.raises(ConnectXError, match="as many pieces"):
        from_connectx({"board": two_a, "mark": 2}, config)
    with pytest.raises(ConnectXError, match="mark 1"):
        from_connectx({"board": empty, "mark": 2}, config)
    with pytest.raises(ConnectXError, match="four in a row"):
        from_connectx({"board": empty, "mark": 1}, {**config, "inarow": 5})
    with pytest.raises(ConnectXError, match="out of range"):
        from_connectx({"board": [0] * 39, "mark": 1}, {"columns": 13, "rows": 3, "inarow": 4})


# ---------------------------------------------------------------------------
# Our agents in ConnectX
# ---------------------------------------------------------------------------


def test_our_agent_plays_a_whole_connectx_game(kaggle: ModuleType) -> None:
    env = kaggle.make("connectx", debug=True)
    env.run([connectx_agent("heuristic:seed=1"), "random"])
    first, second = env.state
    assert first.status == second.status == "DONE"
    assert {first.reward, second.reward} in ({1, -1}, {0})


@pytest.mark.parametrize("ours_first", [True, False])
def test_our_heuristic_and_master_beat_kaggles_random_agent(kaggle: ModuleType, ours_first: bool) -> None:
    """Our agents win against Kaggle's random one.  (Compiled first: the
    game measures play, and on a cold cache under load master's first move
    compiled past Kaggle's time for a step.)"""
    from c4lab.agents.base import warm_once  # lazy: only this test compiles ahead

    for spec in ("heuristic:seed=2", "master:time=0.1,seed=3"):
        warm_once(spec, Position(Variant.classic()))
        env = kaggle.make("connectx", debug=True)
        ours = connectx_agent(spec)
        env.run([ours, "random"] if ours_first else ["random", ours])
        state = env.state[0 if ours_first else 1]
        assert state.reward == 1, (spec, env.render(mode="ansi"))


def test_our_agent_plays_other_connectx_board_sizes(kaggle: ModuleType) -> None:
    env = kaggle.make("connectx", configuration={"columns": 9, "rows": 5}, debug=True)
    env.run(["negamax", connectx_agent("heuristic:seed=4")])
    assert all(s.status == "DONE" for s in env.state)


class Recorder(Agent):
    """Plays the leftmost legal column and remembers what it was shown."""

    def __init__(self) -> None:
        self.seen: list[Position] = []
        self.new_games = 0

    def analyse(self, position: Position, budget: Budget | None = None) -> tuple[Move, Analysis]:
        self.seen.append(position)
        return position.legal_moves()[0], Analysis()

    def new_game(self) -> None:
        self.new_games += 1


def test_the_wrapper_follows_the_game_so_the_agent_sees_the_true_history() -> None:
    recorder = Recorder()
    play = connectx_agent(recorder)
    game = Position.parse("7x6")
    for opponent in "gfe":  # we are A: a, then B plays g, f, e
        obs, config = to_connectx(game)
        game = game.play(Move(play(obs, config)), opponent)
    assert [p.notation for p in recorder.seen] == ["7x6", "7x6:ag", "7x6:agaf"]
    assert recorder.new_games == 1
    # A board that is not one move on from ours: a new game, rebuilt from the cells.
    obs, config = to_connectx(Position.parse("7x6:dd"))
    play(obs, config)
    assert recorder.new_games == 2 and recorder.seen[-1].cells == Position.parse("7x6:dd").cells


def test_an_agent_may_answer_a_move_token_as_in_the_arena() -> None:
    """The answer is read as the arena reads it (``game.play_answer``): a
    token names its move (docs/writing-agents.md), where `.column` of it
    failed inside the adapter; a token that is no move is an error naming
    the agent."""

    class Tokens(Recorder):
        def __init__(self, token: str) -> None:
            super().__init__()
            self.token = token

        def analyse(self, position: Position, budget: Budget | None = None) -> tuple[Move, Analysis]:
            return self.token, Analysis()  # type: ignore[return-value]

    obs, config = to_connectx(Position.parse("7x6"))
    assert connectx_agent(Tokens("c"))(obs, config) == 2
    with pytest.raises(IllegalMoveError, match=r"'h' in '7x6': column h is beyond .* \(played by agent 'Tokens'\)"):
        connectx_agent(Tokens("h"))(obs, config)



@pytest.mark.parametrize(("spec", "budget", "message"), [
    (5, None, "connectx_agent takes an agent spec like 'master:time=0.5' or an Agent, not int 5"),
    (None, None, "connectx_agent takes an agent spec like 'master:time=0.5' or an Agent, not NoneType None"),
    ("random", 0.5, ("an agent's budget is a Budget (Budget(iterations=N) or Budget(time=SECONDS)) or None, "
                    "not float 0.5")),
])
def test_a_wrapper_of_no_agent_or_no_budget_is_refused_when_it_is_made(
    spec: object, budget: object, message: str
) -> None:
    """Not at the first move of a Kaggle game, which Kaggle reports as the
    agent's error (a number was an AttributeError: 'int' object has no
    attribute 'spec')."""
    with pytest.raises(TypeError) as caught:
        connectx_agent(spec, budget)  # type: ignore[arg-type]
    assert str(caught.value) == message


# ---------------------------------------------------------------------------
# Kaggle's agents as ours
# ---------------------------------------------------------------------------


def test_the_kaggle_spec_is_registered_without_importing_kaggle_environments() -> None:
    code = (
        "import sys, c4lab.agents as a; assert 'kaggle' in {i.name for i in a.agent_infos()}; "
        "assert 'kaggle_environments' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_a_missing_kaggle_environments_is_explained(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "kaggle_environments", None)
    with pytest.raises(SpecError, match="pip install --no-deps kaggle-environments==1.33.2"):
        make_agent("kaggle:agent=random")


def test_a_kaggle_move_prints_only_the_move_without_openspiel(kaggle: ModuleType) -> None:
    # Importing kaggle_environments without OpenSpiel (the install the docs
    # give) printed "Loading environment open_spiel_env failed: ..." on
    # stdout, before the move of `c4lab move` and its JSON record.
    code = (
        "import sys; sys.modules['pyspiel'] = None; sys.argv = ['c4lab', 'move', '--json', '7x6', "
        "'--agent', 'kaggle:agent=random,seed=1']; from c4lab.cli import run; run()"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    lines = done.stdout.splitlines()
    assert len(lines) == 1 and json.loads(lines[0])["agent"] == "kaggle:agent=random,seed=1", done.stdout


@pytest.mark.parametrize(
    "board",
    ["7x6", "9x8/Xd3", "4x5/Xb1", "8x4/Xh4", "5x9/Xc9", "10x5/Xe2", "7x6/Xc2/Bd1"],
)
def test_kaggle_negamax_plays_legal_moves_to_the_end_on_our_boards(kaggle: ModuleType, board: str) -> None:
    negamax = make_agent("kaggle:agent=negamax,seed=1")
    for a, b in ((negamax, make_agent("random:seed=2")), (make_agent("heuristic:seed=3"), negamax)):
        record = play_game(a, b, Position.parse(board))  # an illegal move would raise
        assert record.final.is_over
        assert all(m.ban is None for m in record.final.moves)  # Kaggle's agents decline bans


def test_kaggle_negamax_beats_random_and_takes_a_win_in_one(kaggle: ModuleType) -> None:
    negamax = make_agent("kaggle:agent=negamax,seed=4")
    assert negamax.choose(Position.parse("7x6:dcdcdc")) == Move(3)
    assert negamax.choose(Position.parse("6x6/Xd1:dcdcdc")) == Move(3)  # d1 forbidden: d2, d3, d4, then d5
    wins = sum(
        play_game(negamax, make_agent(f"random:seed={i}"), Position.parse("7x6")).final.result == "A"
        for i in range(4)
    )
    assert wins >= 3


def test_a_seeded_kaggle_agent_repeats_itself_and_leaves_global_random_alone(kaggle: ModuleType) -> None:
    start = Position.parse("8x5/Xc3")
    games = []
    for _ in range(2):
        random.seed(99)
        record = play_game(make_agent("kaggle:agent=random,seed=8"), make_agent("random:seed=9"), start)
        games.append(record.final.notation)
        assert random.random() == random.Random(99).random()
    assert games[0] == games[1]


def test_columns_capped_by_a_forbidden_cell_are_still_played(kaggle: ModuleType) -> None:
    # Kaggle sees a forbidden top cell as a full column; when only such columns
    # are left, the agent plays the legal column nearest the centre.
    rng = random.Random(0)
    while True:
        position = Position.parse("4x4/Xa4")
        while not position.is_over and any(m.column > 0 for m in position.legal_moves()):
            position = position.play(rng.choice([m for m in position.legal_moves() if m.column > 0]))
        if not position.is_over:
            break
    agent = make_agent("kaggle:agent=negamax")
    assert isinstance(agent, KaggleAgent)
    move, analysis = agent.analyse(position)
    assert move == Move(0) and "capped" in (analysis.note or "")
