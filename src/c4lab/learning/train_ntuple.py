"""``c4lab train ntuple``: options checked, a network trained with a
progress bar, checkpoints, the curve, and Ctrl-C that saves.

Every check runs before anything is written, so a bad option or file
leaves every existing file as it was.
"""

from __future__ import annotations

import contextlib
import math
import secrets
import sys
from collections.abc import Callable
from contextlib import AbstractContextManager, suppress
from dataclasses import fields
from pathlib import Path
from typing import Any

from c4lab.agents.base import warm_up
from c4lab.agents.ntuple import shipped_folder
from c4lab.agents.ntuple_net import Network
from c4lab.arrayfile import check_npz_name, check_writable
from c4lab.cores import usable_cores
from c4lab.learning import ntuple as N
from c4lab.learning import probes as P
from c4lab.learning.ntuple_curve import CurvePoint, bare, check_curve, curve_paths, write_csv
from c4lab.rules import Position, Variant
from c4lab.rules.errors import SecondBonusCellError

#: The most tuples a network may have (``--tuples``, and with ``--add-tuples``).
MAX_TUPLES = 1000

#: The most workers a run takes (``--workers``): each keeps a random state in the header.
MAX_WORKERS = 1024

#: Games of each curve point against random, normal; hard at the end.
MATCH_GAMES = {"random": 20, "normal": 10}
FINAL_GAMES = {"random": 40, "normal": 20, "hard": 20}
#: How many games each score of the curve is of, for its page.
GAMES_NOTE = (f"; at each point {MATCH_GAMES['random']} games against random, at every fourth also "
              f"{MATCH_GAMES['normal']} against normal, and at the last (the network saved, judged again: the curve "
              "may step there) " + ", ".join(f"{g} against {o}" for o, g in FINAL_GAMES.items()))



#: The command's option for each learning setting of ``Options``.
OPTION_OF = {"alpha": "--alpha", "alpha_final": "--alpha-final", "epsilon": "--epsilon",
             "epsilon_final": "--epsilon-final", "opening": "--opening", "lam": "--lambda", "average": "--average",
             "early_epsilon": "--early-epsilon", "early_plies": "--early-plies"}


class OptionRefused(ValueError):
    """An option's value ``run`` refuses, alone at fault: ``option`` names
    it, ``message`` says why.  ``c4lab train ntuple`` words it as click words
    an option it refuses (``Invalid value for '--games': ...``, with
    ``cli.options.bad_option``), as every command does; a refusal of two
    options together, or of a file, is a plain ``ValueError``."""

    def __init__(self, option: str, message: str) -> None:
        self.option = option
        self.message = message
        super().__init__(f"{option}: {message}")

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.option, self.message))  # the default would pass the message alone


def _board(board: str, bonus: bool, seed: int) -> Variant:
    """``N.board_variant``, its refusal of the board naming ``--board``
    (a second bonus cell is the rules' own error, naming both options)."""
    try:
        return N.board_variant(board, bonus, seed)
    except SecondBonusCellError:
        raise
    except ValueError as exc:
        raise OptionRefused("--board", str(exc)) from None


def _say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def _summary(accuracy: float | None, scores: dict[str, float]) -> str:
    """A curve point in a few words, for the progress bar and the log."""
    parts = ([f"accuracy {accuracy:.1%}"] if accuracy is not None else []) + [
        f"{s:.1%} vs {o}" for o, s in scores.items()]  # a share of games: halves shown, not rounded to even
    return ", ".join(parts)


def _games(count: int) -> str:
    return f"{count:,} game{'' if count == 1 else 's'}"


def bar_columns() -> tuple[Any, ...]:
    """The columns of the progress line: the board, the bar, the time
    spent, then the games, games a second and the curve's last point,
    which alone is cut short on a narrow terminal."""
    from rich.progress import BarColumn, TextColumn, TimeElapsedColumn  # lazy: the bar only for a run

    from c4lab.learning.progress_columns import Tail, whole  # lazy: as rich's

    return (TextColumn("[bold]{task.description}", table_column=whole()), BarColumn(bar_width=24, table_column=whole()),
            TimeElapsedColumn(table_column=whole()),
            Tail("{task.fields[games]:,} games, {task.fields[speed]:,.0f}/s{task.fields[last]}"))


def schedule(last: dict[str, Any], alpha: float | None, alpha_final: float | None, epsilon: float | None,
             epsilon_final: float | None) -> tuple[float, float | None, float, float | None]:
    """The run's step size and exploration, start and end, from what was
    given (None: not given).  A network trained on (``last``: the options
    of its last run, from its header) goes on where it stopped when
    neither value of a pair is given: a run stopped early (Ctrl-C: its
    header's ``done`` below 1) goes on with the rest of its schedule, from
    where it stopped to its final value, over the new run; a run that
    ended goes on at its final step size (exploration), held -- not back
    at the start of a schedule, whose large steps would undo much of what
    the network has learnt.  Otherwise what is left out is ``Options``'
    default (the step size falling to a tenth, exploration to 0)."""
    done = float(last.get("done", 1.0))
    if alpha is None and alpha_final is None and last.get("alpha") is not None:
        alpha_final = float(last.get("alpha_final") or last["alpha"])
        alpha = N.alpha_at(float(last["alpha"]), alpha_final, done)
    if epsilon is None and epsilon_final is None and last.get("epsilon") is not None:
        end = last.get("epsilon_final")
        epsilon_final = float(end if end is not None else last["epsilon"])
        epsilon = N.epsilon_at(float(last["epsilon"]), epsilon_final, done)
    return (N.Options.alpha if alpha is None else alpha, alpha_final,
            N.Options.epsilon if epsilon is None else epsilon,
            N.Options.epsilon_final if epsilon_final is None else epsilon_final)


def carried(last: dict[str, Any], name: str, given: Any) -> Any:
    """An option of the run that keeps its value from run to run (the
    random openings, the lambda-return, the averaged share): as given, else
    as the network's last run had it (``last``: its header's options), else
    ``Options``' default."""
    if given is not None:
        return given
    if last.get(name) is not None:
        return last[name]
    return getattr(N.Options, name)


def run(*, board: str | None, bonus: bool, minutes: float | None, games: int | None, workers: int,
        executor: str = "threads", ray_address: str | None = None, seed: int, seed_given: bool = False,
        out: Path | None, resume: Path | None, alpha: float | None = None, alpha_final: float | None = None,
        epsilon: float | None = None, epsilon_final: float | None = None, tuples: int | None, length: int | None,
        opening: int | None = None, lam: float | None = None, average: float | None = None,
        early_epsilon: float | None = None, early_plies: int | None = None, add_tuples: int = 0,
        threats: bool | None = None, probes: int | None, eval_every: float | None, checkpoint_minutes: float,
        curve: Path | None,
        preparing: Callable[[], AbstractContextManager[Any]] = contextlib.nullcontext) -> None:
    """The command (see ``c4lab train ntuple --help``); ``ValueError`` for
    anything wrong before training starts.  A step size or exploration
    left out (None) is ``Options``' default, or with ``resume`` where the
    network's last run ended (:func:`schedule`); so are ``opening``,
    ``lam``, ``average``, ``early_epsilon`` and ``early_plies``
    (:func:`carried`).  ``seed_given``: ``--seed``
    was typed (with ``resume`` and no ``add_tuples`` it changes nothing,
    and a note says so)."""
    if minutes is not None and not (math.isfinite(minutes) and minutes > 0):
        raise OptionRefused("--minutes", f"the minutes must be a positive, finite number, not {minutes:g}")
    if games is not None and games < 1:
        raise OptionRefused("--games", f"the games must be at least 1, not {games}")
    if minutes is not None and games is not None:
        raise ValueError("give --minutes or --games, not both")
    if not 1 <= workers <= MAX_WORKERS:
        raise OptionRefused("--workers", f"the workers must be from 1 to {MAX_WORKERS} (one per core is best), "
                                         f"not {workers}")
    if games is None and minutes is None:
        games = 200_000
    if add_tuples and resume is None:
        raise ValueError("--add-tuples grows a trained network: give it with --resume FILE")
    if resume is not None:
        network = Network.load(resume)
        try:  # what the run goes on with where no option is given: refused with the file's name, not as if typed
            N.Options(**{k: v for k, v in network.options.items() if k in {f.name for f in fields(N.Options)}})
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{resume}: its header's training options are damaged ({exc})") from None
        if tuples is not None:
            raise ValueError(f"--tuples shapes a new network; the one in {resume} keeps its "
                             f"{network.tuples.shape[0]} tuples (grow it with --add-tuples N)")
        if length is not None:
            raise ValueError(f"--length shapes a new network; the one in {resume} keeps its tuples of "
                             f"{network.length} cells")
        if threats is not None and threats != network.threats:
            raise ValueError(f"--threats and --no-threats shape a new network; the one in {resume} "
                             f"{'has' if network.threats else 'has no'} threat tables")
        if bonus:
            raise ValueError(f"--bonus draws the bonus cell of a new network; the one in {resume} keeps its "
                             f"board, {network.variant}")
        if board is not None and _board(board, bonus, seed) != network.variant:
            raise ValueError(f"{resume} is a network for the board {network.variant}, not {board}")
        if add_tuples:
            if network.tuples.shape[0] + add_tuples > MAX_TUPLES:
                raise ValueError(f"--add-tuples {add_tuples} would give the network in {resume} "
                                 f"{network.tuples.shape[0] + add_tuples} tuples, more than {MAX_TUPLES}")
            network = network.grown(add_tuples, seed)
    else:
        variant = _board(board or "7x6", bonus, seed)
        network = Network.create(variant, tuples, length or 8, seed, threats)
    out = out or resume or Path(f"ntuple-{network.variant.notation.replace('/', '_')}.npz")
    if out.resolve().parent == shipped_folder().resolve():
        raise ValueError(f"{out} is a network shipped with c4lab: it is never overwritten (every ntuple agent "
                         "plays it); give --out FILE for the network trained on")
    if out.exists() and (resume is None or out.resolve() != resume.resolve()):
        if out.suffix != ".npz":  # a curve's .csv, say: nothing --resume could go on with
            raise ValueError(f"{out} exists and is not a network file (.npz): choose another --out")
        raise ValueError(f"{out} exists: continue it with --resume {out}, or choose another --out")
    if resume is None or out.resolve() != resume.resolve():
        check_npz_name(out, "a network file", "--resume and weights=FILE")
    try:  # --out's folder is checked as the option is read; the default's (--resume's, this one's) here
        check_writable(out)
    except ValueError as exc:
        raise ValueError(f"the network cannot be written to {out}: {exc} (give --out FILE)") from None
    if not network.options.get("run"):  # a new network, or one trained before runs were named: named now
        network.options["run"] = secrets.token_hex(6)
    run_id = str(network.options["run"])
    last = network.options if resume is not None else {}
    alpha, alpha_final, epsilon, epsilon_final = schedule(last, alpha, alpha_final, epsilon, epsilon_final)
    try:
        options = N.Options(alpha=alpha, alpha_final=alpha_final, epsilon=epsilon, epsilon_final=epsilon_final,
                            opening=carried(last, "opening", opening), lam=carried(last, "lam", lam),
                            average=carried(last, "average", average),
                            early_epsilon=carried(last, "early_epsilon", early_epsilon),
                            early_plies=carried(last, "early_plies", early_plies))
    except N.OptionOutOfRange as exc:  # the option the user typed, not the field it fills
        raise OptionRefused(OPTION_OF[exc.field], exc.message) from None
    if executor == "ray":
        from c4lab.arena.executors import ray_available  # lazy: only with Ray

        ray_available()  # before anything is labelled or trained
    if ray_address is not None:
        if executor != "ray":
            raise ValueError("--ray-address needs --executor ray")
        from c4lab.arena.executors import check_ray_address  # lazy: only with a Ray address

        check_ray_address(ray_address)  # before anything is labelled or trained
    variant = network.variant
    default, plies = P.default_plan(variant)
    count = probes if probes is not None else default
    prefix = curve or out.with_name(out.stem + "-curve")
    if out.resolve() in {p.resolve() for p in curve_paths(prefix)}:  # the curve would be written over the network
        raise ValueError(f"--out {out} is a file of the curve {bare(prefix)} (.csv, .png, .html): give the network "
                         "and the curve other names")
    # the points it goes on from, measured on as many probe positions as this run's
    earlier = check_curve(prefix, network.games if resume is not None else None, count, variant.notation, run_id)
    own = resume.with_name(resume.stem + "-curve") if resume is not None else None
    if (own is not None and curve is None and not earlier and not curve_paths(prefix)[0].exists()
            and own.resolve() != prefix.resolve() and curve_paths(own)[0].exists()):
        # resumed into another --out: the network's curve goes on in the new one, its points copied (it stays)
        earlier = check_curve(own, network.games, count, variant.notation, run_id)
        if earlier:
            _say(f"the curve goes on from {curve_paths(own)[0]}'s {len(earlier)} points in {curve_paths(prefix)[0]}")
    trainer = N.Trainer(network, options, workers, seed, executor, ray_address)
    if resume is not None and seed_given and not add_tuples:
        _say(f"note: --seed {seed} changes nothing here: a resumed run's games go on from the random states its "
             "network saved (--seed draws the tuples --add-tuples adds)")

    from c4lab.ctrl_c import ctrl_c_interrupts  # lazy: start-up time

    probe_set = []
    if count:
        stored = P.probe_path(variant, count, plies=plies)
        damaged = None
        if stored.exists():
            try:
                P.load(stored, variant)
            except P.ProbeError as exc:
                damaged = exc
        if stored.exists() and damaged is None:
            _say(f"probe positions: {count} of {variant} at plies {plies[0]}-{plies[1]}, labelled before ({stored})")
        else:
            if damaged is not None:
                _say(f"{damaged}: labelling the probe positions again")
            _say(f"labelling {count} probe positions of {variant} at plies {plies[0]}-{plies[1]} with the solver "
                 f"(once, before the training's clock starts: seconds to minutes; kept in {P.PROBE_DIR}; --probes 0 "
                 "trains without them)...")
        shown = sys.stderr.isatty()

        def show(text: str) -> None:
            print(f"\r\033[K{text}", end="", file=sys.stderr, flush=True)

        def log(text: str) -> None:  # no terminal (a log file, a pipe): a line every tenth of the set
            done = int(text.rsplit(": ", 1)[1].split("/")[0])
            if done % max(1, count // 10) == 0:
                print(text, file=sys.stderr, flush=True)

        with ctrl_c_interrupts():  # Ctrl-C stops the labelling (minutes on some boards), nothing written
            probe_set = P.probe_set(variant, count, plies=plies, progress=show if shown else log,
                                    threads=min(workers, usable_cores()),  # the cores the run was given
                                    warn=lambda text: _say(f"\r\033[K{text}" if shown else text))
        if shown:
            print("\r\033[K", end="", file=sys.stderr, flush=True)
    _say(f"training {variant}: {network.tuples.shape[0]} tuples of {network.length} cells"
         f"{' and threat tables' if network.threats else ''}, {network.states} "
         f"cell states, {'mirrored' if network.mirror else 'not mirrored'}, {network.games:,} games so far; "
         f"{workers} worker{'s' if workers > 1 else ''}")
    # where the run's files go, before minutes of training: the checkpoints are there to be found meanwhile
    _say(f"network: {out} (every {checkpoint_minutes:g} min and at the end); curve: "
         + ", ".join(str(p) for p in curve_paths(prefix)) + " (the CSV with each checkpoint)")

    seconds = minutes * 60 if minutes is not None else None
    # A point of the curve every --eval-every seconds, else every twentieth of the run (in games for --games, where
    # the training pauses at each point: the points are at exactly that many games, however long one takes).
    every = eval_every or (seconds / 20 if seconds else -(-(games or 0) // 20))
    by_games = eval_every is None and seconds is None
    points: list[CurvePoint] = list(earlier)
    # A resumed run's seconds go on from its network's (its header's ``seconds``, saved with it: a run stopped
    # between two points of its curve trained on after the last one), or from its curve's last point if later;
    # so with a new curve too (--out or --curve elsewhere), whose first point is the network's games and seconds.
    since = float(network.options.get("seconds", 0.0)) if resume is not None else 0.0
    if earlier:
        since = max(earlier[-1].seconds, since)
    state: dict[str, Any] = {"next_eval": every, "next_save": checkpoint_minutes * 60, "evals": 0, "last": ""}

    def evaluate(final: bool = False) -> None:
        judged, seconds = trainer.snapshot(), since + trainer.seconds  # the workers train on meanwhile
        acc = N.accuracy(judged, probe_set) if probe_set else None
        plan = FINAL_GAMES if final else (MATCH_GAMES if state["evals"] % 4 == 0 else {"random": 20})
        # the games drawn from the point's games, not from its index: the same network scores the same against
        # random in two runs of one seed, however many points the machine's speed placed before it
        scores = {o: N.score_against(judged, o, g, seed=judged.games) for o, g in plan.items()}
        state["evals"] += 1
        if points and points[-1].games == judged.games:
            if not final:  # a resumed run starts where its curve ended: that point stays (with hard)
                state["last"] = _summary(acc, scores)
                return
            points.pop()  # the run ended on a point: one row for it, the final one (with hard)
        points.append(CurvePoint(judged.games, seconds, acc, scores, count, variant.notation, run_id))
        state["last"] = _summary(acc, scores)

    interrupted = False
    # Ctrl-C while the kernel is loaded (compiled: minutes on an empty numba cache) and the first point judged,
    # before any game: the run stops at once and writes nothing, also where SIGINT came ignored (it was lost)
    with ctrl_c_interrupts():
        from rich.console import Console
        from rich.progress import Progress

        columns = bar_columns()
        with preparing():  # a first start compiles for a minute: said (the command's notice), not silent
            trainer.warm_up()
            evaluate()
            for opponent in (o for o in FINAL_GAMES if o not in MATCH_GAMES):  # the last point's (hard): now, said
                warm_up(opponent, Position(variant))
    with Progress(*columns, console=Console(stderr=True, emoji=False), disable=not sys.stderr.isatty()) as bar:
        task = bar.add_task(str(variant), total=games or seconds, games=network.games, speed=0.0, last="")

        def tick(t: N.Trainer) -> None:
            # the last point's figures with its games: the bar's count runs on, the figures are the point's
            bar.update(task, completed=t.played if games else t.seconds, games=network.games,
                       speed=t.games_per_second,
                       last=f"; at {points[-1].games:,}: {state['last']}" if state["last"] and points else "")
            if t.seconds >= state["next_save"]:
                t.record()  # the header says how to go on: the options, where each worker's games are
                network.options["seconds"] = round(since + t.seconds, 1)  # and the curve's clock
                try:
                    network.save(out)
                    write_csv(points, prefix, tuple(FINAL_GAMES))  # the curve so far (written whole again at the end)
                except OSError as exc:
                    _say(f"the checkpoint could not be written ({exc}); training goes on")
                state["next_save"] += checkpoint_minutes * 60
            if not by_games and t.seconds >= state["next_eval"]:
                point(t)
                state["next_eval"] = t.seconds + every

        def point(t: N.Trainer) -> None:
            """A point of the curve, shown (a run given in games pauses for it: ``Trainer.run``'s ``on_pause``)."""
            evaluate()
            if not sys.stderr.isatty():  # no bar to show it (a log file, a pipe): one line a point
                print(f"{t.seconds:6.0f} s  {_games(points[-1].games)}, {t.games_per_second:,.0f}/s, "
                      f"{state['last']}", file=sys.stderr, flush=True)  # the point's games, as in the CSV

        from c4lab.ctrl_c import (  # lazy: start-up time
            STOP_SIGNALS,
            ctrl_c_calls,
            exit_status,
            stop_words,
            stops_ignored_from_now,
            stops_interrupt,
        )

        failed: BaseException | None = None
        status = 130
        try:
            # Ctrl-C, even where SIGINT came ignored (a background job of a script), and a kill's SIGTERM or a
            # closed terminal's SIGHUP: each saves the network and the curve, as Ctrl-C does
            with stops_interrupt():
                trainer.run(games=games, seconds=seconds, on_tick=tick, pause_every=int(every) if by_games else None,
                            on_pause=point)
        except KeyboardInterrupt as stop:
            interrupted, status = True, exit_status(stop)
            stops_ignored_from_now()  # more presses (signals) while saving and exiting change nothing
        except Exception as exc:  # noqa: BLE001  a worker, or a point of the curve judged, failed: what was
            failed = exc  # learnt is kept, then one line

    def save() -> None:
        """The network written to ``out``, with the curve's clock; a write that fails is one line and status 1."""
        network.options["seconds"] = round(since + trainer.seconds, 1)
        try:
            network.save(out)
        except OSError as exc:
            _say(f"the network could not be written to {out} ({exc}): what this run learnt is lost")
            sys.exit(1)

    if failed is not None:
        save()
        with suppress(OSError):  # the curve so far, as at a checkpoint
            write_csv(points, prefix, tuple(FINAL_GAMES))
        what = (f"a worker failed ({failed})" if isinstance(failed, N.WorkerFailed)
                else f"a point of the curve could not be judged ({type(failed).__name__}: {failed})")
        _say(f"training stopped: {what}; the network so far ({network.games:,} games) is saved in {out}")
        sys.exit(1)
    # What was learnt is saved whatever happens next: a second Ctrl-C (the
    # save takes seconds) is ignored while a file is written; the final
    # evaluation (games against hard) may be cut short by one.
    def keep() -> Any:
        return ctrl_c_calls(lambda signum, frame: None, STOP_SIGNALS)

    if interrupted:
        _say(f"{stop_words(status)}: saving the network and the curve...")
    with keep():
        save()
    if not interrupted:
        try:
            with stops_interrupt():
                evaluate(final=True)
        except KeyboardInterrupt as stop:
            interrupted, status = True, exit_status(stop)
            stops_ignored_from_now()
            _say("interrupted: the final evaluation is skipped; saving the curve...")
    with keep():
        try:
            paths = N.write_curve(points, prefix, f"n-tuple TD learning on {variant}", tuple(FINAL_GAMES),
                                  games_note=GAMES_NOTE)
        except OSError as exc:  # the network is saved: one line, and the status says something failed
            _say(f"the curve could not be written ({exc}); the network is saved in {out}")
            sys.exit(1)
    judged = ""  # the last point, unless Ctrl-C skipped it, is judged again on the network saved
    if not interrupted:
        judged = (f" (the network saved, the mean of its weights over the run's last {options.average:.0%}, judged "
                  "again)" if options.average else " (judged again, with more games)")
    print(f"{out}: {_games(network.games)} in all ({trainer.played:,} now, {trainer.seconds:.0f} s, "
          f"{trainer.games_per_second:,.0f} games/s, {trainer.mean_cells:.1f} cells a game); "
          f"last point: {_games(points[-1].games)}, {state['last']}{judged}")
    print("curve: " + ", ".join(str(p) for p in paths))
    print(f"play it: c4lab move {network.variant.notation} --agent ntuple:weights={out}")  # its board, --bonus's cell too
    if interrupted:
        _say(f"{stop_words(status)}: the network and the curve are saved")
        sys.exit(status)
