"""The PettingZoo environment (``c4lab.env``): PettingZoo's own API and seed
checks, the action encoding, masks that are exactly the legal moves, the
planes, rewards, and what an illegal action does."""

from __future__ import annotations

import random
import re
import warnings

import numpy as np
import pytest

pytest.importorskip("pettingzoo")

from gymnasium.spaces import Discrete
from pettingzoo.test import api_test, seed_test

from c4lab.env import AGENTS, CHANNELS, env, raw_env
from c4lab.rules import Cell, IllegalMoveError, Move, Position, SecondBonusCellError

PLAYER_OF = {"A": "player_0", "B": "player_1"}

BOARDS = [
    pytest.param("7x6", False, id="classic"),
    pytest.param("random", False, id="random-enhanced"),
    pytest.param("random", True, id="random-bonus"),
    pytest.param("9x8/Xd3/Bb1", False, id="bonus-board"),
]


@pytest.mark.parametrize(("board", "bonus"), BOARDS)
def test_pettingzoo_api_test_passes(board: str, bonus: bool) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # its advice (all-zero first planes, Dict spaces) is not a failure
        api_test(env(board=board, bonus=bonus, render_mode="ansi"), num_cycles=300)


@pytest.mark.parametrize(("board", "bonus"), BOARDS)
def test_pettingzoo_seed_test_passes(board: str, bonus: bool) -> None:
    seed_test(lambda: env(board=board, bonus=bonus), num_cycles=300)


def test_the_classic_board_has_seven_actions_and_six_by_seven_planes() -> None:
    e = env()
    e.reset()
    assert e.possible_agents == ["player_0", "player_1"]
    assert e.action_space("player_0") == Discrete(7)
    assert e.observation_space("player_1")["observation"].shape == (6, 7, len(CHANNELS))
    assert e.observation_space("player_1")["action_mask"].shape == (7,)


def test_a_bonus_board_adds_one_action_per_column_pair() -> None:
    e = raw_env(board="9x8/Xd3/Bb1")
    assert e.action_space("player_0").n == 9 + 9 * 9
    assert e.action_to_move(4) == Move(4)
    assert e.action_to_move(9 + 1 * 9 + 0) == Move.parse("b+a")
    for action in range(e.num_actions):
        assert e.move_to_action(e.action_to_move(action)) == action


def test_a_bonus_cell_asked_for_on_a_board_with_its_own_is_refused_when_the_environment_is_made() -> None:
    """It played the board's own bonus cell and dropped the one asked for
    without a word; the refusal comes at construction, not at ``reset``."""
    with pytest.raises(SecondBonusCellError, match=r"^the board 9x8/Xd3/Bb1 has its bonus cell \(b1\) already, "
                                                   r"and the bonus asked for would draw another"):
        env(board="9x8/Xd3/Bb1", bonus=True)
    assert raw_env(board="9x8/Xd3", bonus=True).has_bonus  # a board without one draws it


def test_random_boards_are_padded_to_twelve_by_twelve_and_redrawn_at_each_reset() -> None:
    e = raw_env(board="random", bonus=True)
    assert e.action_space("player_0").n == 12 + 144
    assert e.observation_space("player_0")["observation"].shape == (12, 12, len(CHANNELS))
    boards = set()
    for seed in range(8):
        e.reset(seed=seed)
        variant = e.position.variant
        assert len(variant.forbidden) == 1 and variant.bonus is not None
        boards.add(variant)
        planes = e.observe("player_0")["observation"]
        blocked = planes[:, :, CHANNELS.index("blocked")]
        # Off the board (above it and right of it) counts as blocked.
        assert blocked[: 12 - variant.height].all() and blocked[:, variant.width :].all()
        assert blocked.sum() == 144 - variant.width * variant.height + 1
    assert len(boards) > 1
    e.reset(seed=3)
    first = e.position
    e.reset(seed=3)
    assert e.position == first


def test_a_position_string_is_where_every_game_starts() -> None:
    e = env(board="7x6:ddd")
    e.reset()
    assert e.agent_selection == "player_1"  # B is to move after three moves
    assert e.unwrapped.position.notation == "7x6:ddd"
    with pytest.raises(ValueError, match="finished"):
        raw_env(board="7x6:dcdcdcd")


@pytest.mark.parametrize(("options", "words"), [
    ({"bonus": "yes"}, "bonus must be True or False, not 'yes'"),
    ({"bonus": 1}, "bonus must be True or False, not 1"),
    ({"board": 7}, "board must be a position string like '7x6' or '9x8/Xd3', or 'random', not 7"),
])
def test_an_environments_options_of_the_wrong_kind_are_refused_with_what_to_pass(options: dict, words: str) -> None:
    # "no" would have been a true bonus
    with pytest.raises(TypeError, match=re.escape(words)):
        raw_env(**options)


@pytest.mark.parametrize("seed", ["x", "1", 1.5, True])
def test_a_seed_that_is_no_integer_is_refused_when_made_and_at_reset(seed: object) -> None:
    """As ``Variant.enhanced`` refuses it: ``random`` quietly hashed a
    string or a float into a seed, so ``seed="1"`` drew other boards than
    ``seed=1``."""
    with pytest.raises(ValueError, match=re.escape(f"the environment's seed must be an integer, not {seed!r}")):
        env(board="random", seed=seed)  # type: ignore[arg-type]
    e = env(board="random")
    with pytest.raises(ValueError, match=re.escape(f"reset's seed must be an integer, not {seed!r}")):
        e.reset(seed=seed)


def test_a_numpy_integer_seeds_as_the_same_python_integer_does() -> None:
    boards = []
    for seed in (np.int64(5), 5):
        e = raw_env(board="random", seed=seed)  # type: ignore[arg-type]
        e.reset()
        boards.append(e.position.notation)
    assert boards[0] == boards[1]


def test_planes_show_the_board_from_the_observing_agent_and_top_row_first() -> None:
    e = raw_env(board="9x8/Xd3/Bb1:b+ac")  # A on b1 (the bonus), ban on a1, B on c1
    e.reset()
    obs = {agent: e.observe(agent)["observation"] for agent in AGENTS}
    bottom = 7  # row 1 is the last row of the planes
    for channel, cells in {
        "own": {(bottom, 1)},
        "opponent": {(bottom, 2)},
        "blocked": {(8 - 3, 3)},
        "ban": {(bottom, 0)},
        "bonus": set(),  # taken
    }.items():
        assert set(zip(*np.nonzero(obs["player_0"][:, :, CHANNELS.index(channel)]))) == cells, channel
    assert (obs["player_1"][:, :, 0] == obs["player_0"][:, :, 1]).all()
    assert (obs["player_1"][:, :, 1] == obs["player_0"][:, :, 0]).all()
    e = raw_env(board="9x8/Xd3/Bb1")
    e.reset()
    bonus = e.observe("player_0")["observation"][:, :, CHANNELS.index("bonus")]
    assert set(zip(*np.nonzero(bonus))) == {(bottom, 1)}


def _expected_planes(position: Position, agent: str) -> dict[str, set[tuple[int, int]]]:
    """What the planes should hold, computed from the public Position API."""
    variant = position.variant
    side = "A" if agent == "player_0" else "B"
    out: dict[str, set[tuple[int, int]]] = {c: set() for c in CHANNELS}
    for cell, piece in position.cells.items():
        key = "ban" if piece == "ban" else "own" if piece == side else "opponent"
        out[key].add((variant.height - 1 - cell.row, cell.col))
    out["blocked"] = {(variant.height - 1 - c.row, c.col) for c in variant.forbidden}
    if variant.bonus is not None and position.piece_at(variant.bonus) is None:
        out["bonus"].add((variant.height - 1 - variant.bonus.row, variant.bonus.col))
    return out


def test_the_mask_is_exactly_the_legal_moves_along_random_games() -> None:
    rng = random.Random(7)
    for game in range(40):
        board = rng.choice(["7x6", "4x4/Xa1", "6x5/Xc3/Bc4", "5x5/Bc1"])
        e = raw_env(board=board)
        e.reset(seed=game)
        for agent in e.agent_iter():
            obs, reward, terminated, _, _ = e.last()
            position = e.position
            if terminated:
                winner = position.result
                assert winner is not None
                expected = 0 if winner == "draw" else (1 if agent == PLAYER_OF[winner] else -1)
                assert reward == expected
                e.step(None)
                continue
            assert position.to_move is not None and agent == PLAYER_OF[position.to_move]
            legal = {e.move_to_action(m) for m in position.legal_moves()}
            assert set(np.flatnonzero(obs["action_mask"])) == legal
            other = AGENTS[1 - AGENTS.index(agent)]
            assert not e.observe(other)["action_mask"].any()  # only the agent to move may act
            planes = obs["observation"]
            for channel, cells in _expected_planes(position, agent).items():
                assert set(zip(*np.nonzero(planes[:, :, CHANNELS.index(channel)]))) == cells
            e.step(rng.choice(sorted(legal)))
        assert e.position.is_over


def test_a_bonus_landing_offers_the_decline_and_every_ban() -> None:
    e = env(board="7x6/Xc2/Bd1")
    e.reset()
    mask = e.last()[0]["action_mask"]
    w = 7
    assert mask[3] == 1  # d, landing on d1 and declining
    assert all(mask[w + 3 * w + b] == 1 for b in range(w))  # d+a .. d+g
    assert mask[w + 2 * w + 0] == 0  # c+a: c does not land on the bonus
    e.step(w + 3 * w + 0)
    assert e.unwrapped.position.notation == "7x6/Xc2/Bd1:d+a"


def test_winner_gets_one_and_loser_minus_one() -> None:
    e = env(board="7x6:dcdcdc")
    e.reset()
    e.step(3)  # A completes d1-d4
    assert e.terminations == {"player_0": True, "player_1": True}
    assert e.rewards == {"player_0": 1, "player_1": -1}
    assert e.last()[1] == -1  # player_1 sees its loss
    assert e.render() is None  # no render mode


def test_an_illegal_action_loses_the_game_as_in_pettingzoo_classic_games() -> None:
    e = env(board="4x4:aaaa")  # column a is full
    e.reset()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        e.step(0)
    assert all(e.terminations.values())
    assert e.rewards == {"player_0": -1, "player_1": 0}


def test_an_action_outside_the_space_raises() -> None:
    e = env()
    e.reset()
    with pytest.raises(AssertionError):
        e.step(7)


def test_the_raw_environment_raises_on_an_illegal_action_and_changes_nothing() -> None:
    e = raw_env(board="9x8/Xd3/Bb1")
    e.reset()
    with pytest.raises(IllegalMoveError):
        e.step(9 + 2 * 9 + 0)  # c+a: no bonus landing in c
    assert e.position.ply == 0 and e.agent_selection == "player_0"


def test_ansi_rendering_is_the_positions_text() -> None:
    e = env(board="9x8/Xd3/Bb1:b+ac", render_mode="ansi")
    e.reset()
    assert e.render() == Position.parse("9x8/Xd3/Bb1:b+ac").render()
    assert e.unwrapped.position.piece_at(Cell.parse("a1")) == "ban"
