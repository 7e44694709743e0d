"""The sides and a game's end in the words every screen uses (docs/design.md,
"One vocabulary on every screen"): the letter first, the colour as a helper,
the player after the side, the result in one sentence."""

from __future__ import annotations

from c4lab.rules.sides import LETTERS, SIDE_NAMES, result_clause, result_words, side_with_name


def test_a_side_is_its_letter_then_its_colour_and_a_player_follows_it() -> None:
    assert SIDE_NAMES == {"A": "A (white)", "B": "B (black)"}  # RULES.md: A holds white, B black
    assert side_with_name("B", "Bob") == "B (black), Bob"


def test_every_end_of_a_game_is_one_sentence_naming_the_winner_and_how() -> None:
    def ann(side: str) -> str:
        return f"{side_with_name(side, 'Ann')},"

    assert result_words("A", "four", ann, win_line="d1 d2 d3 d4") == "A (white), Ann, wins: four in a row (d1 d2 d3 d4)"
    assert result_words("B", "resign") == "B (black) wins: A (white) resigned"
    assert result_words("A", "forfeit") == "A (white) wins: B (black) forfeited (away too long)"
    assert result_words("draw", "full") == "Draw: the board is full"
    assert result_words(None, "abandoned") == "Abandoned: the players left"
    assert result_words(None, "abandoned", left="you") == "Abandoned: you left"  # a terminal game a person quit


def test_where_no_board_stands_beside_the_words_the_letter_alone() -> None:
    assert result_words("B", "resign", names=LETTERS) == "B wins: A resigned"


def test_in_a_message_s_parentheses_the_result_begins_in_lower_case_unless_with_a_side() -> None:
    assert result_clause("A", "four") == "A (white) wins: four in a row"
    assert result_clause("draw", "full") == "draw: the board is full"
    assert result_clause(None, "abandoned", names=LETTERS) == "abandoned: the players left"
