#!/usr/bin/env python3
"""A c4lab engine in plain Python (standard library only): a model for an
engine written in any language.  It speaks the engine protocol
(docs/engine-protocol.md) on standard input and output, keeps its own copy
of the rules (RULES.md), and plays like this: a move that wins at once,
else one that hands the opponent no immediate win, else the column
nearest the centre.  Run it as ``engine:cmd=python3 simple_engine.py``.
"""

import re
import sys

LETTERS = "abcdefghijkl"
DIRECTIONS = ((1, 0), (0, 1), (1, 1), (1, -1))


class Board:
    """A position read from its notation: the cells, whose turn, the winner."""

    def __init__(self, text):
        found = re.fullmatch(r"([0-9]+)x([0-9]+)((?:/X[a-l][0-9]+)*)(?:/B([a-l])([0-9]+))?(?::([a-l+]+))?", text)
        if not found:
            raise ValueError("it is not in RULES.md's notation")
        self.width, self.height = int(found[1]), int(found[2])
        if not (4 <= self.width <= 12 and 4 <= self.height <= 12):
            raise ValueError("width and height go from 4 to 12")
        # (column, row) -> "A", "B" or "#": a forbidden cell or a ban piece
        self.cells = {(LETTERS.index(c[0]), int(c[1:]) - 1): "#" for c in re.findall(r"X([a-l][0-9]+)", found[3])}
        # the bonus cell, if any: a ban may follow only a landing there that did not win
        self.bonus = (LETTERS.index(found[4]), int(found[5]) - 1) if found[4] else None
        self.to_move, self.winner = "A", None
        for token in re.findall(r"[a-l](?:\+[a-l])?", found[6] or ""):
            self.play(token)

    def landing(self, column):
        """The row a piece dropped in ``column`` lands on (the lowest cell
        that is empty and not forbidden), None when the column is full."""
        return next((r for r in range(self.height) if (column, r) not in self.cells), None)

    def wins(self, column, row, side):
        for dx, dy in DIRECTIONS:
            count = 1
            for sign in (1, -1):
                x, y = column + sign * dx, row + sign * dy
                while self.cells.get((x, y)) == side:
                    count, x, y = count + 1, x + sign * dx, y + sign * dy
            if count >= 4:
                return True
        return False

    def moves(self):
        """Column letters only: a piece that lands on the bonus cell without
        a ``+x`` declines the ban, which is always legal."""
        if self.winner:
            return []
        return [LETTERS[c] for c in range(self.width) if self.landing(c) is not None]

    def play(self, token):
        column = LETTERS.index(token[0])
        row = self.landing(column) if column < self.width and not self.winner else None
        if row is None:  # a column off the board or full, or a move after the game ended
            raise ValueError(f"{token!r} is not a legal move")
        self.cells[(column, row)] = self.to_move
        if self.wins(column, row, self.to_move):
            self.winner = self.to_move
        if len(token) == 3:  # "b+a": then a ban piece in column a
            ban = LETTERS.index(token[2])
            if (column, row) != self.bonus or self.winner or ban >= self.width or self.landing(ban) is None:
                raise ValueError(f"{token!r} is not a legal move")
            self.cells[(ban, self.landing(ban))] = "#"
        self.to_move = "B" if self.to_move == "A" else "A"

    def after(self, token):
        board = Board.__new__(Board)
        board.__dict__.update(self.__dict__, cells=dict(self.cells))
        board.play(token)
        return board


def choose(board):
    """A win, else a move after which the opponent cannot win at once,
    else the column nearest the centre."""
    me, centre = board.to_move, (board.width - 1) / 2

    def rank(token):
        after = board.after(token)
        if after.winner == me:
            return (0, 0)
        loses = any(after.after(reply).winner for reply in after.moves())
        return (1 + loses, abs(LETTERS.index(token) - centre))

    return min(board.moves(), key=rank)


def words_of(line):
    """The words of a line, split at spaces and tabs only, as the protocol
    says: ``line.split()`` would also split at other spaces (a no-break
    space inside a position string), and read a word the driver never
    sent.  A carriage return left in the line (a line ends in ``\\n`` or
    ``\\r\\n``, nothing else), or a byte that is no UTF-8 (read as a lone
    surrogate), is a ValueError that says where."""
    for at, char in enumerate(line):
        if char == "\r":
            raise ValueError(f"a carriage return at character {at} (a line ends in '\\n' or '\\r\\n')")
        if "\udc80" <= char <= "\udcff":
            raise ValueError(f"byte 0x{ord(char) - 0xDC00:02X} at character {at} is not UTF-8")
    return [word for word in line.replace("\t", " ").split(" ") if word]


#: The words each command takes after its keyword (``setoption``'s value
#: runs to the end of the line; ``go``'s limits are read by ``go_error``).
WORDS_AFTER = {"c4lab": 0, "isready": 0, "newgame": 0, "position": 1, "stop": 0, "quit": 0}
#: ``go``'s limits: positive numbers in ASCII digits, no exponent (``\d``
#: would take other scripts' digits too, and ``int()`` reads them).
LIMITS = {
    "time": re.compile(r"(?=[0-9.]*[1-9])([0-9]+(\.[0-9]*)?|\.[0-9]+)"),  # '0.5', '2', '.5': not '0' or '1e-3'
    "iterations": re.compile(r"0*[1-9][0-9]*"),
}


def shown(text):
    """``text`` quoted for an error line, cut short if it is long: no line
    a driver reads may be longer than 65,536 characters."""
    return repr(text) if len(text) <= 60 else f"{text[:60]!r}... ({len(text)} characters)"


def go_error(words):
    """Why the words after ``go`` are not ``[time S] [iterations N]``, or
    None.  This engine answers as fast as it can whatever the limits: it
    reads them only to refuse a ``go`` that is not one."""
    seen = set()
    for at in range(1, len(words), 2):
        key = words[at]
        if key not in LIMITS or key in seen:
            return f"'go' takes 'time S' and 'iterations N', each at most once, not {shown(key)}"
        seen.add(key)
        value = words[at + 1] if at + 1 < len(words) else ""
        if not LIMITS[key].fullmatch(value):
            return f"{key} needs a positive number" + (f", not {shown(value)}" if value else "")
    return None


def main():
    # UTF-8 whatever this machine's locale, lines ended by "\n" alone (a "\r" stays in its line, for
    # words_of to refuse), a byte that is no UTF-8 kept for the error that names it
    sys.stdin.reconfigure(encoding="utf-8", errors="surrogateescape", newline="\n")
    sys.stdout.reconfigure(encoding="utf-8", newline="\n")
    board = None
    for line in sys.stdin:
        line = line.removesuffix("\n").removesuffix("\r") if line.endswith("\n") else line
        try:
            words = words_of(line)
        except ValueError as why:  # never die of bad input: say why, read on
            print(f"error bad message {shown(line)}: {why}")
            sys.stdout.flush()
            continue
        if not words:
            continue
        command = words[0]
        takes = WORDS_AFTER.get(command, len(words))  # setoption, go and unknown commands: read below
        if len(words) > 1 + takes:
            print(f"error unexpected {shown(words[1 + takes])} after {shown(' '.join(words[:1 + takes]))}")
        elif command == "c4lab":
            print("id name simple_engine.py")
            print("id author the c4lab manual")
            print("c4labok")
        elif command == "isready":
            print("readyok")
        elif command == "newgame":
            board = None
        elif command == "position" and len(words) == 1:
            board = None
            print("error 'position' needs a position string")
        elif command == "position":
            try:
                board = Board(words[1])
            except (ValueError, IndexError, TypeError) as why:  # never die of bad input: say why, read on
                board = None
                print(f"error cannot read the position {shown(words[1])}: {why}")
        elif command == "go":
            if why := go_error(words):
                print(f"error {why}")
            elif board is None or not board.moves():
                print("error go: no position, or the game is over")
            else:
                print(f"bestmove {choose(board)}")
        elif command == "setoption":  # it has no options: every one is unknown
            name = words[2] if len(words) > 2 and words[1] == "name" else "?"
            print(f"error unknown option {shown(name)}: this engine has no options")
        elif command == "quit":
            break
        elif command != "stop":
            print(f"error unknown command {shown(command)}")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
