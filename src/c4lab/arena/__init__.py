"""Agents against agents: games, paired matches (the full arena comes later)."""

from c4lab.arena.match import GameRecord, MatchResult, paired_match, play_game

__all__ = ["GameRecord", "MatchResult", "paired_match", "play_game"]
