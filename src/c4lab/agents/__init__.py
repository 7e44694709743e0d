"""The agents: one module per family, each registering its spec names.

``make_agent("random:seed=3")`` builds one; ``agent_infos()`` lists them.
"""

from c4lab.adapters import kaggle  # noqa: F401  (registers 'kaggle'; imports kaggle_environments lazily)
from c4lab.agents import heuristic, human, master, minimax, qlearning, random_agent, solver_agent, uct  # noqa: F401  (registers them)
from c4lab.agents.base import (
    Agent,
    AgentInfo,
    Analysis,
    Budget,
    MoveStats,
    Param,
    SpecError,
    agent_infos,
    make_agent,
    parse_spec,
    register,
)
from c4lab.agents.human import HumanAgent, QuitGame
from c4lab.agents.random_agent import RandomAgent

__all__ = [
    "Agent",
    "AgentInfo",
    "Analysis",
    "Budget",
    "HumanAgent",
    "MoveStats",
    "Param",
    "QuitGame",
    "RandomAgent",
    "SpecError",
    "agent_infos",
    "make_agent",
    "parse_spec",
    "register",
]
