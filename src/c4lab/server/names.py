"""Display names: the one rule a name given to a seat must meet, on the
server (a room's creator, a join) and in ``c4lab connect`` before it
connects (``--name``), so that the two never disagree.

This module imports nothing of c4lab but the error codes, so that the
command checks ``--name`` without loading the server.
"""

from __future__ import annotations

from c4lab.server.errors import BAD_MESSAGE, BAD_NAME, RoomError

#: The name of a person who gives none: no side letter in it ("Player B"
#: was one), since a rematch swaps the sides and a name goes with its person;
#: every screen names the side beside it ("B (black), Player").
DEFAULT_NAME = "Player"
#: The longest display name, in characters.
NAME_MAX = 24
#: Characters a name may not hold (besides those that do not print): a name is shown as text, never markup.
NOT_IN_A_NAME = "<>&\"'`"


def check_name(name: str | None, default: str) -> str:
    """A display name: plain text, 1 to ``NAME_MAX`` characters once
    stripped, no markup; ``default`` where none is given (None, "" or
    spaces alone: refused before, where "" was not).  ``RoomError``
    (``bad-name``) saying what is wrong otherwise."""
    if name is None:
        return default
    if not isinstance(name, str):
        raise RoomError(BAD_MESSAGE, "a name must be a string")
    name = name.strip()
    if not name:
        return default
    bad = sorted({c for c in name if c in NOT_IN_A_NAME or not c.isprintable()})
    if bad:
        raise RoomError(BAD_NAME, f"a name must be plain text: {''.join(bad)!r} not allowed")
    if not 1 <= len(name) <= NAME_MAX:
        raise RoomError(BAD_NAME, f"a name has 1 to {NAME_MAX} characters, not {len(name)}")
    return name
