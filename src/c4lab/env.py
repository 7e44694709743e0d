"""A PettingZoo AEC environment for every variant (``c4lab.env.env()``).

    >>> from c4lab.env import env
    >>> e = env(board="random", bonus=True, seed=1)
    >>> e.reset(seed=1)
    >>> observation, reward, terminated, truncated, info = e.last()

Agents ``"player_0"`` (A, moves first) and ``"player_1"`` (B).

**Boards.** ``board`` is a position string (``"7x6"``, ``"9x8/Xd3"``,
``"9x8/Xd3/Bb1:b+ac"``: each game starts there) or ``"random"``: every
``reset`` draws a new enhanced board (a random size from 4x4 to 12x12 and
one forbidden cell), from the seed given to ``reset`` or else the
environment's own generator (``seed=``); a seed is an integer (NumPy's
too) or ``None``.  ``bonus=True`` adds a random bonus
cell (drawn at each reset) to a board that has none.

**Spaces.** They are fixed for the environment's life, so they are sized for
the largest board it can produce: the board itself for a position string,
12 x 12 for ``"random"``.  A smaller board sits in the bottom-left corner of
the planes; the cells around it count as blocked.

**Actions** (``Discrete(N)``, ``N = S`` without a bonus cell, ``S + S*S``
with one, ``S`` the space's width): action ``c < S`` drops a piece in
column ``c`` (at a bonus landing: and declines the ban); action ``S + c*S + b``
drops in column ``c``, lands on the bonus cell and drops the ban piece in
column ``b`` (the token ``c+b``).  ``action_to_move`` and ``move_to_action``
convert.  ``observation["action_mask"]`` (int8) marks exactly the legal move
tokens of the position (``Position.legal_moves()``), for the agent to move
only.  An illegal action ends the game, losing (reward -1) for the agent that
played it (PettingZoo's ``TerminateIllegalWrapper``, as in its classic
games); the unwrapped ``raw_env`` raises ``IllegalMoveError`` instead.

**Observations** ``{"observation": planes, "action_mask": mask}``: ``planes``
is ``int8`` of shape ``(S_h, S, 5)``, row ``0`` the top row (as PettingZoo's
Connect Four), seen by the agent observing: channel 0 its own pieces, 1 the
opponent's, 2 blocked cells (forbidden, or off the board), 3 ban pieces, 4
the bonus cell while it is empty.

**Rewards**: +1 for the winner and -1 for the loser at the end, 0 otherwise
and for a draw.  ``render()`` in ``"ansi"`` mode returns ``Position.render()``.
"""

from __future__ import annotations

import random
from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces
from gymnasium.utils import EzPickle
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from c4lab.rules import IllegalMoveError, Move, Position
from c4lab.rules import kernels as K
from c4lab.rules.setup import starting_position
from c4lab.rules.sides import SIDES
from c4lab.rules.variant import MAX_SIDE, integer

AGENTS = ("player_0", "player_1")
CHANNELS = ("own", "opponent", "blocked", "ban", "bonus")
RANDOM = "random"

_OWN, _OPPONENT, _BLOCKED, _BAN, _BONUS = range(len(CHANNELS))


def env(
    board: str = "7x6",
    bonus: bool = False,
    seed: int | None = None,
    render_mode: str | None = None,
) -> AECEnv:
    """The environment, wrapped as PettingZoo's classic games are: illegal
    actions end the game with reward -1 for their player, actions outside
    the space raise, and ``reset`` must come first."""
    wrapped: AECEnv = raw_env(board=board, bonus=bonus, seed=seed, render_mode=render_mode)
    wrapped = wrappers.TerminateIllegalWrapper(wrapped, illegal_reward=-1)
    wrapped = wrappers.AssertOutOfBoundsWrapper(wrapped)
    wrapped = wrappers.OrderEnforcingWrapper(wrapped)
    return wrapped


def _seed(seed: object, what: str) -> int | None:
    """``seed`` as an ``int`` (NumPy's too) or ``None``; ``ValueError``
    naming ``what`` for anything else, as ``Variant.enhanced`` refuses it:
    ``random`` would quietly hash a string or a float into a seed."""
    return None if seed is None else integer(seed, what)


class raw_env(AECEnv, EzPickle):
    """The unwrapped environment; see the module docstring.  ``position``
    is the current ``Position``."""

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["ansi"], "name": "c4lab_v0", "is_parallelizable": False}

    def __init__(
        self,
        board: str = "7x6",
        bonus: bool = False,
        seed: int | None = None,
        render_mode: str | None = None,
    ) -> None:
        EzPickle.__init__(self, board, bonus, seed, render_mode)
        super().__init__()
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be None or 'ansi', not {render_mode!r}")
        if not isinstance(bonus, bool):  # "no" would be true
            raise TypeError(f"bonus must be True or False, not {bonus!r}")
        if not isinstance(board, str):
            raise TypeError(f"board must be a position string like '7x6' or '9x8/Xd3', or 'random', not {board!r}")
        self.render_mode = render_mode
        self.board = board
        self.bonus = bonus
        self._seed = _seed(seed, "the environment's seed")
        self._rng = random.Random(self._seed)
        if board == RANDOM:
            self.width = self.height = MAX_SIDE
            self.has_bonus = bonus
        else:
            start = starting_position(board, bonus, random.Random(0))  # checks the string now
            if start.is_over:
                raise ValueError(f"board {board!r} is a finished game")
            self.width, self.height = start.variant.width, start.variant.height
            self.has_bonus = start.variant.bonus is not None
        self.num_actions = self.width + (self.width * self.width if self.has_bonus else 0)

        self.possible_agents = list(AGENTS)
        self.agents = list(AGENTS)
        planes = spaces.Box(0, 1, (self.height, self.width, len(CHANNELS)), dtype=np.int8)
        mask = spaces.Box(0, 1, (self.num_actions,), dtype=np.int8)
        self.observation_spaces = {a: spaces.Dict({"observation": planes, "action_mask": mask}) for a in AGENTS}
        self.action_spaces = {a: spaces.Discrete(self.num_actions) for a in AGENTS}
        self.position = Position()

    # -- spaces --------------------------------------------------------------

    def observation_space(self, agent: str) -> spaces.Dict:
        """``agent``'s observations: the planes and the action mask (the same for both agents)."""
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Discrete:
        """``agent``'s actions: ``Discrete(N)``, the same for both agents."""
        return self.action_spaces[agent]

    # -- the action encoding ----------------------------------------------------

    def action_to_move(self, action: int) -> Move:
        """The move token of ``action`` (which need not be legal now)."""
        action = int(action)
        if not 0 <= action < self.num_actions:
            raise ValueError(f"action {action} is outside 0..{self.num_actions - 1}")
        if action < self.width:
            return Move(action)
        column, ban = divmod(action - self.width, self.width)
        return Move(column, ban)

    def move_to_action(self, move: Move | str) -> int:
        """The action of ``move`` (a ``Move`` or a token like ``'d+a'``)."""
        move = move if isinstance(move, Move) else Move.parse(move)
        if move.column >= self.width or (move.ban is not None and (move.ban >= self.width or not self.has_bonus)):
            raise ValueError(f"move {move} has no action in this environment")
        return move.column if move.ban is None else self.width + move.column * self.width + move.ban

    # -- the AEC API --------------------------------------------------------------

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """A new game: the board (drawn again for ``"random"`` or a random
        bonus cell), seeded by ``seed`` when given."""
        if seed is not None:
            self._rng = random.Random(_seed(seed, "reset's seed"))
        self.position = starting_position(self.board, self.bonus, self._rng)
        self.agents = list(AGENTS)
        self.rewards = dict.fromkeys(self.agents, 0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
        self.agent_selection = AGENTS[SIDES.index(self.position.to_move or "A")]

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """The planes and the action mask, as ``agent`` sees them."""
        variant = self.position.variant
        w, h = variant.width, variant.height
        geo, state = self.position.kernel_arrays()
        cells = K.board_grid(geo, state)  # column, then row from the bottom
        cells = cells.T[::-1]  # rows top first, then columns
        own = K.PIECE_A if agent == AGENTS[0] else K.PIECE_B
        opponent = K.PIECE_B if own == K.PIECE_A else K.PIECE_A
        planes = np.zeros((self.height, self.width, len(CHANNELS)), dtype=np.int8)
        planes[:, :, _BLOCKED] = 1
        board = planes[self.height - h :, :w]
        board[:, :, _OWN] = cells == own
        board[:, :, _OPPONENT] = cells == opponent
        board[:, :, _BLOCKED] = cells == K.FORBIDDEN
        board[:, :, _BAN] = cells == K.BAN
        if variant.bonus is not None and self.position.piece_at(variant.bonus) is None:
            board[h - 1 - variant.bonus.row, variant.bonus.col, _BONUS] = 1
        mask = np.zeros(self.num_actions, dtype=np.int8)
        if agent == self.agent_selection and not self.position.is_over:
            for move in self.position.legal_moves():
                mask[self.move_to_action(move)] = 1
        return {"observation": planes, "action_mask": mask}

    def step(self, action: int | None) -> None:
        """Play ``action`` for the agent to move.  Raises ``IllegalMoveError``
        (nothing changed) for an action that is not legal now."""
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        if action is None:
            raise IllegalMoveError(self.position.notation, "None", "a live agent must play an action")
        move = self.action_to_move(action)
        self.position = self.position.play(move)  # raises IllegalMoveError, changing nothing
        self._cumulative_rewards[agent] = 0
        result = self.position.result
        if result is not None:
            self.terminations = dict.fromkeys(self.agents, True)
            if result != "draw":
                winner = AGENTS[SIDES.index(result)]
                for a in self.agents:
                    self.rewards[a] = 1 if a == winner else -1
        if not self.position.is_over:
            self.agent_selection = AGENTS[SIDES.index(self.position.to_move or "A")]
        else:
            self.agent_selection = AGENTS[1 - AGENTS.index(agent)]
        self._accumulate_rewards()

    def render(self) -> str | None:
        """The board as text (``"ansi"``); nothing without a render mode."""
        if self.render_mode is None:
            return None
        return self.position.render()

    def close(self) -> None:
        """Nothing to release (no window)."""

    def __str__(self) -> str:
        return f"c4lab_v0({self.board!r}, bonus={self.bonus})"
