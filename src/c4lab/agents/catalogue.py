"""How the agents are offered to a player: levels by strength, then the
research agents, then the experimental ones.

The registry (:mod:`c4lab.agents.base`) knows what each agent is; this
module knows how a person picking an opponent should meet them.  The page's
player picker and ``/api/agents`` read :func:`catalogue`.  An agent that is
not named here (one added later, or by another package) is listed as
experimental: nothing is promoted to a level by default.
"""

from __future__ import annotations

from dataclasses import dataclass

from c4lab.agents.base import AgentInfo

#: The levels, weakest first, with one line for a player choosing an opponent.
LEVELS: tuple[tuple[str, str], ...] = (
    ("random", "a beginner's game: every move at random"),
    ("normal", "a casual opponent: short searches, some mistakes"),
    ("hard", "a strong opponent: longer searches, exact in the end game"),
    ("impossible", "twice hard's search: hard to beat"),
    ("master", "our strongest searcher, 1 s a move"),
    ("perfect", "the exact solver: perfect play wherever it answers within 1 s"),
)

#: The agents of game-AI research, each as the literature describes it.
AGENTS: tuple[tuple[str, str], ...] = (
    ("heuristic", "hand-written rules: win, block, build threats"),
    ("minimax", "alpha-beta search, 1 s a move"),
    ("uct", "UCT as the classic pseudo-code"),
    ("mcts-solver", "UCT that proves wins and losses"),
    ("solver", "the exact solver, master when it cannot answer in time"),
    ("ntuple", "learnt by self-play: an n-tuple network (TD learning)"),
    ("ntuple-puct", "the learnt network with a tree search (PUCT) on it"),
)

GROUPS = ("level", "agent", "experimental")

#: The opponent a person meets without choosing one (the page's new game,
#: ``c4lab play``'s ``--player2``, the terminal game) and the agent that
#: answers ``c4lab move`` without ``--agent``: strong, and quick to start.
DEFAULT_LEVEL = "hard"


@dataclass(frozen=True)
class Offer:
    """An agent as the picker shows it: its group, a one-line summary."""

    name: str
    group: str  # one of GROUPS
    summary: str
    help: str


def catalogue(infos: list[AgentInfo]) -> list[Offer]:
    """``infos`` as offers: the levels weakest first, then the research
    agents, then every other one (experimental) by name."""
    known = {i.name: i for i in infos}
    offers = [Offer(n, "level", s, known[n].help) for n, s in LEVELS if n in known]
    offers += [Offer(n, "agent", s, known[n].help) for n, s in AGENTS if n in known]
    named = {n for n, _ in LEVELS + AGENTS}
    offers += [Offer(i.name, "experimental", i.help, i.help) for i in sorted(infos, key=lambda i: i.name)
               if i.name not in named]
    return offers
