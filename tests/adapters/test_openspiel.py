"""Differential test against OpenSpiel's connect_four, an engine nobody here
wrote: random games on every plain board from 4x4 to 12x12 have the same
legal moves at every step and end on the same move with the same result."""

from __future__ import annotations

import random

import pytest

from c4lab.rules import Move, Position, Variant

pyspiel = pytest.importorskip("pyspiel")

SIZES = [(w, h) for w in range(4, 13) for h in range(4, 13)]


def play_both(width: int, height: int, games: int, seed: int) -> None:
    game = pyspiel.load_game(f"connect_four(rows={height},columns={width})")
    start = Position(Variant(width, height))
    rng = random.Random(seed)
    for number in range(games):
        theirs = game.new_initial_state()
        ours = start
        while not theirs.is_terminal():
            their_legal = theirs.legal_actions()
            assert [m.column for m in ours.legal_moves()] == their_legal, (ours.notation, number)
            assert not ours.is_over, f"{ours.notation}: we ended before OpenSpiel"
            column = rng.choice(their_legal)
            theirs.apply_action(column)
            ours = ours.play(Move(column))
        assert ours.is_over, f"{ours.notation}: OpenSpiel ended the game here, we did not"
        returns = theirs.returns()
        expected = "draw" if returns[0] == 0 else ("A" if returns[0] > 0 else "B")
        assert ours.result == expected, ours.notation


@pytest.mark.parametrize("width,height", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_random_games_agree_with_openspiel(width: int, height: int) -> None:
    play_both(width, height, games=30, seed=width * 100 + height)


@pytest.mark.slow
@pytest.mark.parametrize("width,height", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_thousands_of_random_games_agree_with_openspiel(width: int, height: int) -> None:
    play_both(width, height, games=2000, seed=7919 * width + height)
