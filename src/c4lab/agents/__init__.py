"""The agents: one module per family, each registering its spec names.

``make_agent("random:seed=3")`` builds one; ``agent_infos()`` lists them.
The registry (``c4lab.agents.base``) imports the agent families itself, on
first use, from the ``c4lab.agents`` entry points of the installed packages:
the built-in families, the adapters (``c4lab.adapters.kaggle``) and any
other package's agents.  Nothing here imports a family, so importing the
registry stays light.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from c4lab.agents.base import (
    Agent,
    AgentError,
    AgentInfo,
    Analysis,
    AnswerError,
    Budget,
    MoveStats,
    Param,
    SpecError,
    agent_infos,
    make_agent,
    parse_spec,
    register,
)
from c4lab.agents.spec_names import canonical_spec
from c4lab.lazy import lazy_dir, lazy_names

if TYPE_CHECKING:  # pragma: no cover
    from c4lab.agents.human import HumanAgent, QuitGame
    from c4lab.agents.random_agent import RandomAgent

#: Agent classes re-exported here, loaded on first use (they need the
#: compiled rules engine; the registry does not).
_LAZY = {
    "HumanAgent": "c4lab.agents.human",
    "QuitGame": "c4lab.agents.human",
    "RandomAgent": "c4lab.agents.random_agent",
}

__all__ = [
    "Agent",
    "AgentError",
    "AgentInfo",
    "Analysis",
    "AnswerError",
    "Budget",
    "HumanAgent",
    "MoveStats",
    "Param",
    "QuitGame",
    "RandomAgent",
    "SpecError",
    "agent_infos",
    "canonical_spec",
    "make_agent",
    "parse_spec",
    "register",
]


__getattr__ = lazy_names(__name__, _LAZY)
__dir__ = lazy_dir(__name__, _LAZY)
