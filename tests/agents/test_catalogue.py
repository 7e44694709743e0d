"""How the agents are offered to a player (c4lab.agents.catalogue)."""

from __future__ import annotations

from c4lab.agents import AgentInfo, RandomAgent, agent_infos
from c4lab.agents.catalogue import AGENTS, LEVELS, catalogue


def test_every_level_and_research_agent_named_in_the_catalogue_is_registered() -> None:
    registered = {i.name for i in agent_infos()}
    assert {name for name, _ in LEVELS + AGENTS} <= registered


def test_an_agent_the_catalogue_does_not_name_is_experimental_never_a_level() -> None:
    newcomer = AgentInfo("zz-new", "an agent added later", (), RandomAgent)
    offers = catalogue([*agent_infos(), newcomer])
    assert offers[-1].name == "zz-new" and offers[-1].group == "experimental"
    assert [o.name for o in offers if o.group == "level"] == [name for name, _ in LEVELS]
