"""Agents against agents.

``match``: quick paired matches (``paired_match``; one game is
``c4lab.game.play_game``).  The arena proper (``c4lab arena``) is in its
own modules, imported where used: ``schedule`` (``ArenaConfig``),
``games`` (a pair's games judged, the ``Game`` record), ``executors``,
``results``, ``runner`` (``run_arena``), ``stats`` and ``report``.  They are
not imported here because ``schedule`` registers the ``engine:cmd=...``
agent, which only local commands may offer.
"""

from c4lab.arena.match import MatchResult, paired_match

__all__ = ["MatchResult", "paired_match"]
