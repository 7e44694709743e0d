"""The agents: one module per family, each registering its spec names.

``make_agent("random:seed=3")`` builds one; ``agent_infos()`` lists them.
The registry (``c4lab.agents.base``) imports the agent families itself, on
first use, from the ``c4lab.agents`` entry points of the installed packages:
the built-in families, the adapters (``c4lab.adapters.kaggle``) and any
other package's agents.  Nothing here imports a family, so importing the
registry stays light.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

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

if TYPE_CHECKING:  # pragma: no cover
    from c4lab.agents.human import HumanAgent, QuitGame
    from c4lab.agents.random_agent import RandomAgent

#: Agent classes re-exported here, loaded on first use (they need the
#: compiled rules engine; the registry does not).
_LAZY = {"HumanAgent": "human", "QuitGame": "human", "RandomAgent": "random_agent"}

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


def __getattr__(name: str) -> Any:
    home = _LAZY.get(name)
    if home is None:
        raise AttributeError(f"module 'c4lab.agents' has no attribute {name!r}")
    return getattr(import_module(f"c4lab.agents.{home}"), name)
