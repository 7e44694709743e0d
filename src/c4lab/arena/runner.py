"""Running an experiment: schedule, execute, save, stop early, show progress.

``run_arena`` is what ``c4lab arena`` calls: it works out which pairs are
still to play (all of them, or the ones a previous run of the same file did
not finish), hands them to an executor, appends each finished pair to the
results file, and stops early when a sequential test has decided.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from c4lab.arena.executors import Executor, LocalExecutor
from c4lab.arena.games import Game
from c4lab.arena.results import ResultsError, ResultsWriter, differing, open_results, read_results
from c4lab.arena.schedule import ArenaConfig
from c4lab.arena.sprt import SPRT
from c4lab.arena.stats import pentanomial_counts
from c4lab.ctrl_c import ctrl_c_interrupts

#: ``progress(games done, games in all, running summary)``
ProgressHook = Callable[[int, int, str], None]


@dataclass(frozen=True)
class RunOutcome:
    """What a run did: every game of the experiment so far (previous runs
    included), how many this run played, and why it stopped early, if it did."""

    config: ArenaConfig
    games: tuple[Game, ...]
    played: int
    stopped: str | None = None
    #: The notes of agents that play another's moves (``ArenaConfig.checked_agents``), kept in the results file.
    stand_ins: tuple[str, ...] = ()


def running_summary(config: ArenaConfig, games: list[Game]) -> str:
    """A short line for the progress bar: the match score for two agents,
    between their names (``heuristic 9 - 1 normal``: a bare ``9 - 1`` left
    whose score came first to be guessed), the leader otherwise (none
    before a game: an empty line); and the
    games lost by a forfeit, if any (an
    engine that loses every game on time shows at once, not at the end)."""
    scores = {spec: 0.0 for spec in config.specs}
    forfeits = 0
    for game in games:
        scores[game.a] += game.score_of(game.a)
        scores[game.b] += game.score_of(game.b)
        forfeits += game.forfeit is not None
    if len(config.specs) == 2:
        first, second = config.specs
        line = f"{config.label(first)} {scores[first]:g} - {scores[second]:g} {config.label(second)}"
    elif not games:  # no leader yet: "leader random (0)", the first spec, read as one
        line = ""
    else:
        leader = max(scores, key=lambda s: scores[s])
        line = f"leader {config.label(leader)} ({scores[leader]:g})"
    return line + (f", {forfeits} forfeit{'s' if forfeits != 1 else ''}" if forfeits else "")


def sprt_state(sprt: SPRT, config: ArenaConfig, games: list[Game]) -> dict[str, object]:
    """Where the sequential test stands on the first spec's pairs: the test,
    the pairs it read, its LLR and bounds, and what it accepted (``None``
    while it goes on: a run whose games ran out before it decided)."""
    first = config.specs[0]
    by_pair: dict[int, list[float]] = {}
    for game in games:
        by_pair.setdefault(game.pair, []).append(game.score_of(first))
    pairs = [scores for scores in by_pair.values() if len(scores) == 2]
    counts = pentanomial_counts(pairs)
    return {"test": sprt.text(), "pairs": len(pairs), "llr": sprt.llr(counts), "lower": sprt.lower,
            "upper": sprt.upper, "accepted": sprt.decide(counts)}


def _hundredths(value: object) -> str:
    """``value`` to two decimals, with no minus on a zero (an LLR of -0.001 is 0.00, not -0.00)."""
    return f"{round(float(value), 2) + 0.0:.2f}"  # type: ignore[arg-type]


def sprt_line(sprt: SPRT, state: dict[str, object]) -> str:
    """``state`` (``sprt_state``) as a sentence: what the test accepted, or
    that it has not decided, with the LLR against its bounds."""
    llr = f"LLR {_hundredths(state['llr'])} (bounds {state['lower']:.2f}, {state['upper']:.2f})"
    decision = state["accepted"]
    pairs = f"{state['pairs']} pair{'' if state['pairs'] == 1 else 's'}"
    if decision is None:
        return f"SPRT {state['test']}: no decision after {pairs}, {llr}"
    which = f"elo1={sprt.elo1:g}" if decision == "H1" else f"elo0={sprt.elo0:g}"
    return f"SPRT accepted {decision} ({which}) after {pairs}, {llr}"


def sprt_verdict(sprt: SPRT, config: ArenaConfig, games: list[Game]) -> str | None:
    """The sequential test on the first spec's pairs: ``None`` while it
    goes on, else a sentence saying what it accepted."""
    state = sprt_state(sprt, config, games)
    return sprt_line(sprt, state) if state["accepted"] else None


def sprt_refusal(config: ArenaConfig) -> str | None:
    """Why a sequential test cannot decide ``config``'s match (it compares
    exactly two agents: the first spec's score against the second's), or
    None; ``c4lab arena`` refuses it before any game, as ``run_arena`` does."""
    count = len(config.specs)
    return None if count == 2 else f"a sequential test (SPRT) needs exactly two agents, not {count}"


def decided_already(
    config: ArenaConfig, out: Path, sprt: SPRT, names: Mapping[str, str] | None = None
) -> tuple[ArenaConfig, str | None]:
    """More games asked of a run in ``out`` whose sequential test has already
    decided: none of them would be played (the test stopped the run), so
    the run keeps the number of games its file holds, with a note that
    says why; otherwise ``config`` as it is and no note.  (Such a run
    rewrote its header with the larger number and played nothing, and the
    command that had made the file was then refused as another
    experiment.)"""
    try:
        previous = read_results(out) if out.is_file() else None
    except (ResultsError, OSError):  # open_results says what is wrong with it
        return config, None
    if (previous is None or previous.sprt != sprt.text() or previous.config.games >= config.games
            or differing(config, previous.config) != ["games"]):
        return config, None
    verdict = sprt_verdict(sprt, previous.config, list(previous.whole_pairs()))
    if verdict is None:
        return config, None
    games = f"{names['games']} {config.games}" if names and "games" in names else f"games={config.games}"
    return previous.config, (f"the sequential test had already decided this run ({verdict}): {games} plays no "
                             f"more games, and {out} keeps its {previous.config.games}")


def run_arena(
    config: ArenaConfig,
    out: str | Path,
    *,
    executor: Executor | None = None,
    sprt: SPRT | None = None,
    progress: ProgressHook | None = None,
    on_note: Callable[[str], None] | None = None,
    names: Mapping[str, str] | None = None,
    new_run_notes: Sequence[str] = (),
) -> RunOutcome:
    """Play what ``out`` does not hold yet of ``config``'s experiment;
    ``on_note`` is told, before any game (and once ``out`` is taken: not
    before a refusal of it), of each agent that plays
    another's moves on some board of the run (``ArenaConfig.check_agents``),
    of a schedule whose pairs repeat a few starts (``schedule_notes``), and
    of an empty ``out`` started anew (``open_results``).  Without it these
    are not said: the command line prints each (``c4lab arena``).  The notes
    call the settings as ``names`` does (``{"games": "--games"}``: the
    command's options), otherwise as ``ArenaConfig``'s fields.
    ``new_run_notes``: the caller's own notes, told after these where
    ``out`` held no game yet (not again on resuming the run)."""
    if sprt is not None and (refusal := sprt_refusal(config)):
        raise ValueError(refusal)
    kept = None
    if sprt is not None:
        config, kept = decided_already(config, Path(out), sprt, names)
    notes, engines, stand_ins = config.checked_agents(names)
    notes += config.schedule_notes(names)
    writer: ResultsWriter
    # the notes once ``out`` is taken: a file holding another experiment is refused without a word on a run
    # that will not be played
    writer, previous = open_results(out, config, sprt.text() if sprt else None, notes.append, engines=engines,
                                    stand_ins=stand_ins)
    done = previous.done_pairs() if previous else set()
    games = list(previous.whole_pairs()) if previous else []
    if not games:
        notes += new_run_notes
    if kept:
        notes.append(kept)
    if on_note is not None:
        for note in notes:
            on_note(note)
    tasks = [t for t in config.tasks() if t.key not in done]
    executor = executor or LocalExecutor()
    total = config.total_games
    played = 0
    stopped = sprt_verdict(sprt, config, games) if sprt else None
    if progress:
        progress(len(games), total, running_summary(config, games))
    with ctrl_c_interrupts():
        try:
            if stopped is None:
                for _task, records in executor.run(tasks):
                    writer.add(records)
                    games.extend(Game.from_dict(r) for r in records)
                    played += len(records)
                    if progress:
                        progress(len(games), total, running_summary(config, games))
                    if sprt is not None:
                        stopped = sprt_verdict(sprt, config, games)
                        if stopped:
                            break
        finally:
            executor.close()
            writer.close()
    return RunOutcome(config, tuple(games), played, stopped, tuple(stand_ins))
