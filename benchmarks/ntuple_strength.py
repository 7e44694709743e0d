"""How good a learnt n-tuple network is: judged move by move by the exact
solver, and in games.

    python3 benchmarks/ntuple_strength.py [--weights FILE] [--probes 400]
        [--probe-seed 7] [--games 100] [--specs heuristic,hard] [--search 0.2] [--puct 1000]
        [--puct-time 0.2]
        [--perfect 20] [--perfect-games 100]

* **Value-keeping moves**: on the probe set of the network's board (plies
  0-16 reached by random moves, 10-20 on boards over 30 cells but the classic one, none over 48 (``probes.default_plan``), only positions where some move changes the
  result, every move scored by c4lab's solver; ``c4lab.learning.probes``),
  the share of moves that keep the value (and the plies of the misses), for the greedy network, the
  network with its test-time searches (alpha-beta for ``--search`` seconds,
  PUCT for ``--puct`` iterations and for ``--puct-time`` seconds), and
  each of ``--specs``
  (the issue's scale: ``random`` about 32 %, ``heuristic`` 82 %, ``hard``
  88 %).
* **Games**: the score (wins 1, draws 1/2) of the greedy network and of the
  searching one against ``random``, ``normal`` and ``hard``, in pairs of
  games from the same random 2-move opening (each side once).
* **Against varied perfect play** (``--perfect-games N``): N games from the
  empty board, the network moving first, against ``perfect:ties=random``
  (a perfect player that picks at random among the moves keeping the exact
  score, as the evaluator of Thill's and Konen's GBG): the share it wins.
* **Against perfect play** (``--perfect N``): N openings of 2 random moves
  that the side to move (A) wins with best play; the network plays A,
  ``perfect`` plays B (Thill's measure: only positions where a win is
  possible).  The share it wins.

Without ``--weights`` the network shipped for the classic board is used.
Prints a table; every figure is measured when it runs.  ``--specs`` takes
any spec ``c4lab arena`` does, an engine program's
(``engine:cmd=./my_engine``) too; an answer there that is no legal move,
or an agent that fails, is a probe missed, counted in its share and told
in the same row (how many, the first in full), not a traceback.  An
engine's program ends with its row, on Ctrl-C too.
"""

from __future__ import annotations

import argparse
import random
import time
from collections import Counter

import c4lab.engine.client  # noqa: F401  (registers 'engine:cmd=...': an engine program is judged as any agent)
from c4lab import precompiled
from c4lab.agents import AgentError, make_agent
from c4lab.agents.base import refuse_a_person
from c4lab.agents.ntuple import shipped_path
from c4lab.agents.ntuple_net import Network
from c4lab.arena.accuracy import ScoredPosition, Tally, measure
from c4lab.ctrl_c import run_stoppable
from c4lab.game import play_game
from c4lab.learning import probes as P
from c4lab.learning.ntuple import score_against
from c4lab.rules import Position
from c4lab.solver.api import Solver

precompiled.measure_this_cpu()  # speed is measured on the code compiled for this CPU, as after c4lab prepare


def against_perfect(spec: str, network: Network, count: int, seed: int) -> tuple[int, int]:
    """(wins, games) of ``spec`` as A against ``perfect`` from winning openings;
    no games where no 2-move opening is a win for A (small boards such as 5x4:
    the drawing went on for ever)."""
    rng = random.Random(seed)
    solver = Solver()
    agent, perfect = make_agent(spec), make_agent("perfect")
    empty = Position(network.variant)
    openings = sum(len(empty.play(move).legal_moves()) for move in empty.legal_moves())
    judged: dict[str, bool] = {}  # opening: A wins it
    wins = games = 0
    while games < count:
        if len(judged) == openings and not any(judged.values()):
            break
        start = empty
        for _ in range(2):
            start = start.play(rng.choice(start.legal_moves()))
        if start.notation not in judged:
            score = solver.solve(start, weak=True, timeout=60).score
            judged[start.notation] = score is not None and score > 0
        if not judged[start.notation]:
            continue
        record = play_game(agent, perfect, start)
        games += 1
        wins += record.result == "A"
    return wins, games


def against_varied_perfect(spec: str, network: Network, games: int) -> tuple[int, int]:
    """(wins, draws) of ``spec`` moving first from the empty board against
    ``perfect:ties=random`` (Thill's and GBG's measure: one game would do
    against a perfect player that always answers alike)."""
    wins = draws = 0
    agent = make_agent(spec)
    for game in range(games):
        record = play_game(agent, make_agent(f"perfect:ties=random,seed={game}"), Position(network.variant))
        wins += record.result == "A"
        draws += record.result == "draw"
    return wins, draws


def misses_by_ply(wrong: list[str]) -> str:
    """The plies of the probes an agent missed (``Tally.wrong``'s
    "position: move" entries), counted: ``1: 2, 4: 1`` (two misses at ply
    1, one at ply 4).  Where the misses sit tells a network's opening
    errors, which a few more plies of search do not mend, from its
    tactical ones."""
    counts = Counter(Position.parse(entry.rpartition(": ")[0]).ply for entry in wrong)
    return ", ".join(f"{ply}: {count}" for ply, count in sorted(counts.items()))


def judge_on_probes(spec: str, items: list[ScoredPosition]) -> tuple[Tally, list[str]]:
    """``spec``'s tally on the probes (``accuracy.measure``) and what went
    wrong where its answer was no legal move or the agent failed: such a
    probe is a miss (``?`` for its move), as a bad answer in a game is a
    lost game; the run goes on (was: a traceback that lost every row after
    it).  The agent is closed at the end (an engine's program), whatever
    ends the row."""
    agent = make_agent(spec)
    try:
        tally = measure(agent, items)
    finally:
        agent.close()
    return tally, [failure.partition(": ")[2] for failure in tally.failed]


def split_specs(text: str) -> list[str]:
    """The agents of ``--specs``: comma-separated, where a spec's own
    parameters are comma-separated too, so that a ``key=value`` piece (no
    ``:``) belongs to the spec before it: ``ntuple:time=0.2,threads=2,hard``
    is two agents (was: ``threads=2`` taken for a third, unknown one)."""
    specs: list[str] = []
    for piece in filter(None, (piece.strip() for piece in text.split(","))):
        if specs and "=" in piece and ":" not in piece.partition("=")[0]:
            specs[-1] += f",{piece}"
        else:
            specs.append(piece)
    return specs


def main() -> None:
    # The whole docstring: what each figure measures (was: its first line only).
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--weights", default=None,
                        help="the network's .npz file (default: the one shipped for the classic board)")
    parser.add_argument("--probes", type=int, default=400,
                        help="probe positions judged by the solver (default %(default)s; 0: none)")
    parser.add_argument("--probe-seed", type=int, default=7,
                        help="the probe set's seed (default %(default)s, the training curve's: another seed is a "
                             "fresh set)")
    parser.add_argument("--games", type=int, default=100,
                        help="games of each network against random, normal and hard (default %(default)s; 0: none)")
    parser.add_argument("--specs", default="heuristic,hard",
                        help="other agents judged on the probes, comma-separated with their parameters "
                             "(ntuple:time=0.2,threads=2,hard is two agents; default %(default)s)")
    parser.add_argument("--search", type=float, default=0.2,
                        help="seconds a move of the alpha-beta network (default %(default)s; 0: none)")
    parser.add_argument("--puct", type=int, default=1000,
                        help="iterations a move of the PUCT network (default %(default)s; 0: none)")
    parser.add_argument("--puct-time", type=float, default=0.2,
                        help="seconds a move of the timed PUCT network (default %(default)s; 0: none)")
    parser.add_argument("--perfect", type=int, default=20,
                        help="winning 2-move openings played against perfect (default %(default)s; 0: none)")
    parser.add_argument("--perfect-games", type=int, default=100,
                        help="games from the empty board against perfect with random ties (default %(default)s; "
                             "0: none)")
    args = parser.parse_args()
    # Bad options: one error line before any measuring (they were tracebacks
    # after minutes, or, for negative counts, "wins 0/-5 (-0%)").
    for option in ("probes", "games", "perfect", "perfect_games", "puct"):
        if getattr(args, option) < 0:
            parser.error(f"--{option.replace('_', '-')} must be 0 or more, got {getattr(args, option)}")
    for option in ("search", "puct_time"):
        if not 0 <= getattr(args, option) < float("inf"):
            parser.error(f"--{option.replace('_', '-')} must be 0 or more seconds, got {getattr(args, option)}")
    weights = args.weights or str(shipped_path("7x6"))
    try:
        network = Network.load(weights)
    except (OSError, ValueError) as exc:
        parser.error(f"--weights: {exc}")
    for spec in split_specs(args.specs):
        try:
            refuse_a_person(make_agent(spec), "ntuple_strength.py").close()  # human: a traceback at stdin's end
        except (ValueError, AgentError) as exc:  # AgentError: an engine's program that did not start
            parser.error(f"--specs: {exc}")
    greedy = f"ntuple:weights={weights},seed=1"
    search = f"ntuple:weights={weights},search=alphabeta,time={args.search:g},seed=1"
    puct = f"ntuple:weights={weights},search=puct,iterations={args.puct},seed=1"
    networks = [("greedy", greedy)]
    if args.search > 0:
        networks.append((f"alpha-beta {args.search:g} s", search))
    if args.puct > 0:
        networks.append((f"PUCT {args.puct}", puct))
    if args.puct_time > 0:
        networks.append((f"PUCT {args.puct_time:g} s", f"ntuple:weights={weights},search=puct,time={args.puct_time:g},seed=1"))
    print(f"network {weights}: {network.variant}, {network.games:,} games, "
          f"{network.tuples.shape[0]} tuples of {network.length}")
    most, plies = P.default_plan(network.variant)
    if not most:
        args.probes = 0  # beyond the solver's reach: judged by play only
    items = P.probe_set(network.variant, args.probes, seed=args.probe_seed, plies=plies) if args.probes else []
    if items:
        print(f"\nvalue-keeping moves on {len(items)} probe positions (plies {plies[0]}-{plies[1]}, seed "
              f"{args.probe_seed}, judged by the solver):")
    # Each network by its label, as in the games below (its spec names the weights' whole path).
    judged = [*networks, *((spec, spec) for spec in split_specs(args.specs))]
    width = max(len(label) for label, _ in judged)
    for label, spec in judged if items else []:
        began = time.perf_counter()
        tally, failures = judge_on_probes(spec, items)
        print(f"  {label:<{width}} {tally.share:6.1%}  ({time.perf_counter() - began:.0f} s)"
              + (f"; misses by ply: {misses_by_ply(tally.wrong)}" if tally.wrong else "")
              + (f"; {len(failures)} answered no legal move or failed, the first: {failures[0]}" if failures else ""))
    if args.games:
        print(f"\nscore in {args.games} games from random 2-move openings (wins 1, draws 1/2):")
    for label, spec in networks if args.games else []:
        agent = make_agent(spec)
        for opponent in ("random", "normal", "hard"):
            began = time.perf_counter()
            share = score_against(network, opponent, args.games, seed=3, agent=agent)
            print(f"  {label:<18} vs {opponent:<8} {share:6.1%}  ({time.perf_counter() - began:.0f} s)")
    if args.perfect_games:
        print(f"\nagainst perfect from the empty board, moving first, {args.perfect_games} games (perfect picks "
              "at random among the moves that keep the exact score, as GBG's evaluator):")
        for label, spec in networks:
            began = time.perf_counter()
            wins, draws = against_varied_perfect(spec, network, args.perfect_games)
            print(f"  {label:<18} wins {wins}/{args.perfect_games} ({wins / args.perfect_games:.0%}), "
                  f"draws {draws}  ({time.perf_counter() - began:.0f} s)")
    if args.perfect:
        print(f"\nagainst perfect, moving first from {args.perfect} winning 2-move openings:")
        for label, spec in networks:
            wins, games = against_perfect(spec, network, args.perfect, seed=5)
            if not games:
                print(f"  none: no 2-move opening of {network.variant} is a win for A")
                break
            print(f"  {label:<18} wins {wins}/{games} ({wins / games:.0%})")


if __name__ == "__main__":
    run_stoppable(main)  # Ctrl-C, SIGTERM, SIGHUP: one line, an engine's program closed (its row's finally)
