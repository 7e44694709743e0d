"""An agent's stop request (``Agent.request_stop``, the engine protocol's
``stop``): a search finishes at once with what it found so far, every
search of an agent that runs several stops with it, and an agent that never
looks at the request plays as before."""

from __future__ import annotations

import threading
import time
from dataclasses import replace

import numpy as np
import pytest

from c4lab.agents import Agent, Analysis, Budget, make_agent
from c4lab.agents import uct_search as S
from c4lab.agents.base import StopRequest
from c4lab.agents.minimax import SearchTable, search
from c4lab.agents.ntuple import PUCT_CHUNK
from c4lab.agents.uct import UCTAgent
from c4lab.rules import Move, Position

#: An iteration budget no test waits for.
ENDLESS = 10**15


def test_a_request_is_set_from_another_thread_and_stays_until_cleared() -> None:
    agent = make_agent("uct:seed=1")
    request = agent.stop_request
    assert not request and agent.stop_request is request  # one for the agent's life
    threading.Thread(target=agent.request_stop).start()
    deadline = time.monotonic() + 10
    while not request and time.monotonic() < deadline:
        time.sleep(0.01)
    assert request and request.flag[0] == 1  # what a compiled search reads
    request.clear()
    assert not request


def test_a_search_with_a_stop_of_its_own_registers_it_for_its_duration() -> None:
    request, called = StopRequest(), []
    with request.calls(lambda: called.append("during")):
        assert called == []
        request.set()  # while the search runs: its own stop is called
        assert called == ["during"]
    request.set()  # after it: not any more
    assert called == ["during"]
    with request.calls(lambda: called.append("late")):  # a search that starts with the request set stops at once
        assert called == ["during", "late"]


def test_the_exact_solver_is_cancelled_by_the_request_and_its_fallback_answers() -> None:
    agent = make_agent("perfect:seed=1")
    position = Position.parse("9x8/Xd3")  # no exact solve in a minute here
    agent.prepare(position)  # compiled, off the clock below (by a throwaway agent: this one's schedule is new)
    threading.Timer(0.5, agent.request_stop).start()
    started = time.monotonic()
    move, analysis = agent.analyse(position, Budget(time=60))
    assert position.is_legal(move)
    assert analysis.note.startswith("stopped after ") and analysis.note.endswith(" s: master's move"), analysis.note
    assert time.monotonic() - started < 15  # not the 36 s of its solve's share (60 % of the move)
    assert (agent._failures, agent._due) == (0, None)  # a solve cut short is no solve that ran out of time


def test_a_search_asked_to_stop_does_its_least_uct_one_chunk() -> None:
    # the request stays set: a search that starts after it finishes at once too
    agent = UCTAgent(seed=1)
    agent.request_stop()
    move, analysis = agent.analyse(Position.parse("9x8/Xd3"), Budget(iterations=ENDLESS))
    assert analysis.iterations == 256  # the first chunk, as at a deadline
    assert Position.parse("9x8/Xd3").is_legal(move)


def test_a_uct_search_on_iterations_alone_is_cut_by_a_stop() -> None:
    # it ran as one kernel call, which nothing cut: now in chunks of about 10 ms, no slower
    agent = UCTAgent(seed=1)
    threading.Timer(0.3, agent.request_stop).start()
    began = time.monotonic()
    _, analysis = agent.analyse(Position.parse("9x8/Xd3"), Budget(iterations=ENDLESS))
    assert time.monotonic() - began < 15
    assert analysis.iterations is not None and 256 < analysis.iterations < ENDLESS


def test_uct_on_iterations_searches_in_chunks_the_tree_of_one_kernel_call() -> None:
    # seeded searches on iterations replay as before: the chunks change nothing
    position = Position.parse("7x6:dd")
    chunked = UCTAgent(seed=3, iterations=30000)
    tree = chunked.search(position)
    whole = UCTAgent(seed=3, iterations=30000)
    one = whole._place_root(whole._tree_for(30000, None), position)
    geo, state = position.kernel_arrays()
    ran = S.search(geo, state, one.nf, one.ni, one.nkey, one.emove, one.echild, one.meta, one.tt_keys,
                   one.tt_nodes, one.lgr1, one.lgr2, one.st, one.path, one.moves, whole._rng, 30000,
                   whole.config.c, whole.config.flags(), None)
    assert chunked.last_iterations == ran == 30000
    used = tree.nodes_used
    assert used == one.nodes_used
    assert np.array_equal(tree.nf[:used], one.nf[:used]) and np.array_equal(tree.ni[:used], one.ni[:used])


def test_minimax_sees_the_request_inside_its_kernel_and_keeps_the_last_completed_depth() -> None:
    position = Position.parse("9x8/Xd3")
    request = StopRequest()
    request.set()
    found = search(position, SearchTable(), depth=8, stop=request)
    assert found.depth == 1  # depth 1 always completes; depth 2 gave up at its first node
    assert found.nodes == search(position, SearchTable(), depth=1).nodes
    assert position.is_legal(found.move)


def test_minimax_without_a_request_searches_as_before() -> None:
    position = Position.parse("9x8/Xd3")
    found, before = (search(position, SearchTable(), depth=6, stop=stop) for stop in (StopRequest(), None))
    assert replace(found, seconds=0) == replace(before, seconds=0)


def test_master_stops_its_minimax_and_its_uct() -> None:
    agent = make_agent("master:seed=1,time=none,iterations=1000000000")
    assert agent.uct.stop_request is agent.stop_request is agent.minimax.stop_request
    agent.request_stop()
    began = time.monotonic()
    move, analysis = agent.analyse(Position.parse("9x8/Xd3"))
    assert time.monotonic() - began < 15
    assert Position.parse("9x8/Xd3").is_legal(move)
    assert analysis.iterations == 256


def test_perfect_stops_its_fallback_and_the_fallbacks_searches() -> None:
    # two levels down: perfect's master shared its own request with its searches before perfect shared its
    agent = make_agent("perfect")
    fallback = agent.fallback
    assert fallback.stop_request is agent.stop_request
    assert fallback.uct.stop_request is agent.stop_request is fallback.minimax.stop_request


def test_ntuple_puct_stops_after_its_chunk_and_alpha_beta_after_its_depth() -> None:
    position = Position.parse("7x6:dd")
    puct = make_agent("ntuple:search=puct,iterations=1000000,seed=1")
    puct.request_stop()
    _, analysis = puct.analyse(position)
    assert analysis.iterations == PUCT_CHUNK
    alphabeta = make_agent("ntuple:search=alphabeta,time=60,seed=1")
    alphabeta.request_stop()
    _, analysis = alphabeta.analyse(position)
    assert analysis.seconds is not None and analysis.seconds < 15  # the search's, after its kernels compiled
    assert analysis.note is not None and "to depth 1 " in analysis.note


def test_ntuple_alpha_beta_on_a_depth_alone_is_cut_by_a_stop_and_plays_its_learnt_values_move() -> None:
    # it saw the request between depths only, and on a depth alone (no time) searched that depth whole
    position = Position.parse("7x6:dd")
    greedy = make_agent("ntuple:search=alphabeta,depth=1,seed=1")
    deep = make_agent("ntuple:search=alphabeta,depth=12,seed=1")  # 280,000 afterstates
    deep.request_stop()  # seen at the 256th node of its first child
    move, analysis = deep.analyse(position)
    first, expected = greedy.analyse(position)
    assert move == first
    assert analysis.note is not None and "to depth 1 " in analysis.note
    assert [(m.move, m.value) for m in analysis.moves] == [(m.move, m.value) for m in expected.moves]


def test_ntuple_alpha_beta_without_a_request_searches_as_before() -> None:
    position = Position.parse("7x6:dd")
    agent = make_agent("ntuple:search=alphabeta,depth=8,seed=1")
    move, analysis = agent.analyse(position)
    assert analysis.note is not None and "to depth 8 " in analysis.note
    assert analysis.iterations is not None and analysis.iterations > 256 * 7  # past the first reading of the flag
    assert move == make_agent("ntuple:search=alphabeta,depth=8,seed=2").choose(position)


class OwnAgent(Agent):
    """An agent of one's own: no ``__init__`` of the base class, no stop."""

    def __init__(self) -> None:
        self.asked = 0

    def analyse(self, position: Position, budget: Budget | None = None) -> tuple[Move, Analysis]:
        self.asked += 1
        return position.legal_moves()[-1], Analysis()


@pytest.mark.parametrize("stopped", [False, True])
def test_an_agent_of_ones_own_has_a_request_and_may_ignore_it(stopped: bool) -> None:
    agent = OwnAgent()
    if stopped:
        agent.request_stop()
    assert bool(agent.stop_request) == stopped
    assert agent.choose(Position.parse("7x6")) == Move.parse("g") and agent.asked == 1
