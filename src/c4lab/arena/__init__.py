"""Agents against agents.

``match``: single games and quick paired matches (``play_game``,
``paired_match``).  The arena proper (``c4lab arena``) is in its own
modules, imported where used: ``schedule`` (``ArenaConfig``), ``referee``,
``executors``, ``results``, ``runner`` (``run_arena``), ``stats`` and
``report``.  They are not imported here because ``schedule`` registers the
``engine:cmd=...`` agent, which only local commands may offer.
"""

from c4lab.arena.match import GameRecord, MatchResult, paired_match, play_game

__all__ = ["GameRecord", "MatchResult", "paired_match", "play_game"]
