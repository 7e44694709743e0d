"""``c4lab train qlearning`` and ``c4lab train ntuple``: the learners'
training runs (their options; the runs themselves are in
``c4lab.learning``)."""

from __future__ import annotations

import sys
from typing import Any

import click

from c4lab.cli.group import main
from c4lab.cli.options import (
    INT64,
    NTRAIN,
    QTRAIN,
    BadInput,
    Finite,
    HomeDefault,
    Int64,
    bad_option,
    bonus_refused,
    default_from,
    field_default,
    given,
    named_file,
    ray_address,
    writable_output,
)
from c4lab.learning.settings import OptionOutOfRange  # light: the error alone

# lazy imports: every command imports the parts it uses, so that ``c4lab
# --help`` and the light commands never load numba or the rules engine.


#: The most probe positions a curve is judged on: each is labelled once by
#: the solver (10,000 on the classic board: a few minutes), and more would
#: spend the run's time judging rather than learning.
MAX_PROBES = 10_000

#: ``train qlearning``'s options by the ``TrainConfig`` field each fills (a refusal names the option typed).
QTRAIN_OPTION_OF = {"episodes": "--episodes", "alpha": "--alpha", "discount": "--discount",
                    "epsilon_start": "--epsilon", "epsilon_end": "--epsilon-end", "epsilon_decay": "--epsilon-decay",
                    "slip": "--slip"}


def _rewards_default() -> str:
    """``--rewards``' default: TrainConfig's rewards, written as the option takes them."""
    win, draw, loss = (field_default(*QTRAIN, name) for name in ("reward_win", "reward_draw", "reward_loss"))
    return ",".join(f"{value:g}" for value in (win, draw, loss))


@main.group()
def train() -> None:
    """Train learning agents by self-play: n-tuple networks (any board) or
    tabular Q-learning (small boards)."""


@train.command("qlearning")
@click.option("--board", **default_from(*QTRAIN, "board"), callback=given("board"), help="Start position to train from: 4x4, 5x4, 4x4/Xb2...")
@click.option("--episodes", type=Int64(min=1), **default_from(*QTRAIN, "episodes"), help="Self-play games.")
@click.option("--alpha", "--learning-rate", "alpha", type=float, **default_from(*QTRAIN, "alpha"),
              help="Learning rate, in (0, 1].")
@click.option("--discount", type=float, **default_from(*QTRAIN, "discount"),
              help="Discount per ply (toward the draw reward), in [0, 1].")
@click.option("--epsilon", "epsilon_start", type=float, **default_from(*QTRAIN, "epsilon_start"),
              help="Exploration rate at the start (epsilon-greedy).")
@click.option("--epsilon-end", type=float, **default_from(*QTRAIN, "epsilon_end"),
              help="Exploration rate at the end.")
@click.option("--epsilon-decay", type=float, **default_from(*QTRAIN, "epsilon_decay"),
              help="Fraction of the episodes over which epsilon falls linearly to --epsilon-end.")
@click.option("--slip", type=float, **default_from(*QTRAIN, "slip"),
              help="Chance the opponent's value assumes a random move (0: plain max, minimax values).")
@click.option("--rewards", cls=HomeDefault, home=_rewards_default,
              help="Rewards for a win, a draw and a loss.")
@click.option("--no-symmetry", is_flag=True, help="Do not share positions with their mirror images.")
@click.option("--eval-every", type=Int64(min=0), default=None,
              help="Evaluate every N episodes (default: episodes/20; 0: only at the end).")
@click.option("--eval-games", type=Int64(min=0), default=100, show_default=True,
              help="Games per evaluation against random and minimax:depth=2 (half as A, half as B).")
@click.option("--out", type=click.Path(dir_okay=False), callback=writable_output, default=None, help="Table file (default: qlearning-BOARD.npz).")
@click.option("--curve", type=click.Path(dir_okay=False), callback=writable_output, default=None,
              help="Learning curve: writes CURVE.csv, CURVE.png and CURVE.html (default: the table's name + '-curve').")
@click.option("--seed", type=INT64, **default_from(*QTRAIN, "seed"),
              help="The self-play games and the evaluations follow from it.")
def train_qlearning(board: str, episodes: int, alpha: float, discount: float, epsilon_start: float,
                    epsilon_end: float, epsilon_decay: float, slip: float, rewards: str, no_symmetry: bool,
                    eval_every: int | None, eval_games: int, out: str | None, curve: str | None, seed: int) -> None:
    """Learn a Q-table by self-play and save it for the agent qlearning:table=FILE.

    A table covers small boards only: 4x4 (the default 200,000 episodes,
    about a second, visit 92% of its positions; a million, 98.5%), 5x4 and
    5x5 partially; 7x6 is far beyond it.
    """
    from pathlib import Path

    from c4lab.arrayfile import check_npz_name
    from c4lab.learning import qlearning
    from c4lab.ui.preparing import preparing_on_stderr
    from c4lab.ui.status import stderr_console

    try:
        qlearning.start_position(board)
    except ValueError as exc:
        raise bad_option(str(exc), "--board") from None
    try:
        r_win, r_draw, r_loss = qlearning.parse_rewards(rewards)
    except ValueError as exc:
        raise bad_option(str(exc), "--rewards") from None
    try:  # TrainConfig holds the ranges of its settings: out of one, a usage error (status 2)
        config = qlearning.TrainConfig(
            board=board, episodes=episodes, alpha=alpha, discount=discount, epsilon_start=epsilon_start,
            epsilon_end=epsilon_end, epsilon_decay=epsilon_decay, reward_win=r_win, reward_draw=r_draw,
            reward_loss=r_loss, slip=slip, symmetry=not no_symmetry, seed=seed,
        )
    except OptionOutOfRange as exc:  # the option typed, not the field it fills
        raise bad_option(exc.message, QTRAIN_OPTION_OF.get(exc.field)) from None
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    table_path = Path(out) if out else qlearning.default_table_path(config.board)
    if table_path.exists():
        raise BadInput(f"{table_path} exists: choose another --out, or remove it first (a run never overwrites "
                       "a table)")
    try:
        check_npz_name(table_path, "a table file", "table=FILE")
    except ValueError as exc:
        raise BadInput(str(exc)) from None
    prefix = curve or str(table_path.with_suffix("")) + "-curve"
    for suffix in (".csv", ".png", ".html"):  # the curve's files: another run's are never overwritten either
        if Path(prefix + suffix).exists():
            raise BadInput(f"{prefix}{suffix} exists: choose another --curve, or remove it first (a run never "
                           "overwrites a curve)")
    try:
        with qlearning.ctrl_c_stops() as interrupted:
            table, points, paths = qlearning.run_with_progress(
                config, table_path, prefix, eval_every=eval_every, eval_games=eval_games,
                console=stderr_console(), show_progress=sys.stderr.isatty(), interrupted=interrupted,
                preparing=lambda: preparing_on_stderr(logged=True, hint=False))
        if interrupted.is_set():
            from c4lab.ctrl_c import stops_ignored_from_now  # lazy: start-up time

            stops_ignored_from_now()  # saved; more presses (signals) on the way out change nothing
    except ValueError as exc:
        raise BadInput(str(exc)) from None
    click.echo(qlearning.summary(table, points, paths))
    if interrupted.is_set():
        from c4lab.ctrl_c import stop_words  # lazy: start-up time

        saved = "the table" + (" and the curve are" if paths else " is")  # no curve when no evaluation was played
        click.echo(f"{stop_words(interrupted.status)}: {saved} saved ({table.info['episodes']:,} of {episodes:,} "
                   "episodes)", err=True)
        sys.exit(interrupted.status)


@train.command("ntuple")
@click.option("--board", default=None, callback=given("board"), help="The board: 7x6 (default), 6x5/Xc2, 7x7/Xd4/Bc5...  "
              "(with --resume: the network's own board).")
@click.option("--bonus", is_flag=True, help="Add a random bonus cell (drawn from --seed) to the board.")
@click.option("--minutes", type=float, default=None, help="Train for this long (wall clock; the probes' labelling, once per board, and the final evaluation come on top).")
@click.option("--games", type=INT64, default=None,
              help="Train for this many self-play games (default: 200,000 unless --minutes).")
@click.option("--workers", type=INT64, default=1, show_default=True,
              help="Self-play workers (one per core; with --executor ray, Ray tasks at once).")
@click.option("--executor", type=click.Choice(["threads", "processes", "ray"]), default="threads", show_default=True,
              help="threads: the workers share one table in this process; processes or ray: each plays rounds "
                   "on a copy, and the changes are merged.")
@click.option("--ray-address", default=None, callback=ray_address,
              help="With --executor ray: the cluster's HOST:PORT, or auto (default: start a local Ray).")
@click.option("--seed", type=INT64, default=0, show_default=True,
              help="Tuples, bonus cell and games follow from it (with --resume: only the tuples --add-tuples adds; "
                   "the games go on from where the network's last run left them).")
@click.option("--out", type=click.Path(dir_okay=False), callback=writable_output, default=None,
              help="Network file (default: ntuple-BOARD.npz); never overwritten unless it is --resume's file.")
@click.option("--resume", type=click.Path(dir_okay=False), callback=named_file, default=None,
              help="Continue training this network file (written back to --out, default: the same file); "
                   "given none of --alpha and --alpha-final (--epsilon and --epsilon-final) it goes on at its last "
                   "run's final step size (exploration), or, for a run stopped early, with the rest of its schedule.")
@click.option("--alpha", type=float, **default_from(*NTRAIN, "alpha"),
              help="Step size (divided by the number of tuple readings).")
@click.option("--alpha-final", type=float, **default_from(*NTRAIN, "alpha_final"),
              help="The step size falls geometrically to this over the run (default: a tenth of --alpha; "
                   "--alpha's value: constant).")
@click.option("--epsilon", type=float, **default_from(*NTRAIN, "epsilon"),
              help="Exploration: the chance of a random move.")
@click.option("--epsilon-final", type=float, **default_from(*NTRAIN, "epsilon_final"),
              help="The chance of a random move falls linearly to this over the run (--epsilon's value: "
                   "constant).")
@click.option("--opening", type=INT64, **default_from(*NTRAIN, "opening"),
              help="Each game starts with 0 to this many random moves that nobody learns from (0: from the "
                   "empty board).")
@click.option("--early-epsilon", type=float, **default_from(*NTRAIN, "early_epsilon"),
              help="The chance of a random move is at least this in each game's first --early-plies moves (its "
                   "random opening's included), so that more of the early replies greedy play never picks are "
                   "valued (0: off).")
@click.option("--early-plies", type=INT64, **default_from(*NTRAIN, "early_plies"),
              help="The moves of each game that --early-epsilon applies to.")
@click.option("--lambda", "lam", type=float, **default_from(*NTRAIN, "lam"),
              help="TD(lambda): at the end of each game every afterstate moves toward its lambda-return "
                   "(0: TD(0), each toward the next one's value at once).")
@click.option("--average", type=float, **default_from(*NTRAIN, "average"),
              help="Keep the mean of the weights over this last share of the run (snapshots a hundredth of "
                   "the run apart; 0: the last weights).")
@click.option("--tuples", type=Int64(1, 1000), default=None,  # train_ntuple.MAX_TUPLES
              help="Number of n-tuples (default: 70; 120 on boards with a bonus cell; 200 on the classic 7x6).")
@click.option("--add-tuples", type=Int64(min=0), default=0,
              help="With --resume: grow the network by this many tuples (random walks drawn from --seed) whose "
                   "weights start at zero, so it plays as before and has more room to learn.")
@click.option("--length", type=Int64(2, 8), default=8, show_default=True, help="Cells per tuple.")
@click.option("--threats/--no-threats", default=None,
              help="Threat tables beside the tuples: for each column, a weight for the cells above its landing "
                   "row where either side would complete four, so the network sees which rows (odd or even) "
                   "the threats are on (default: on the classic 7x6 only).")
@click.option("--probes", type=Int64(0, MAX_PROBES), default=None,
              help="Probe positions for the accuracy curve (default: 200 on boards of up to 42 playable cells, "
                   "100 up to 48, else 0; from the empty board up to 30 cells and on the classic board, "
                   "from ply 10 on the others).")
@click.option("--eval-every", type=Finite(min=0, min_open=True), default=None,
              help="Seconds of training between two points of the curve (default: a twentieth of the run, for "
                   "--games at exactly every twentieth of the games, the training paused at each point; a point "
                   "by the clock waits for the workers' chunk of games, about half a second, so a run of seconds "
                   "has fewer).")
@click.option("--checkpoint", type=Finite(min=0, min_open=True), default=5.0, show_default=True,
              help="Minutes between two checkpoints of the network file.")
@click.option("--curve", type=click.Path(dir_okay=False), callback=writable_output, default=None,
              help="Learning curve: CURVE.csv, CURVE.png, CURVE.html (default: the network's name + '-curve').")
def train_ntuple(board: str | None, bonus: bool, minutes: float | None, games: int | None, workers: int,
                 executor: str, ray_address: str | None, seed: int, out: str | None, resume: str | None,
                 alpha: float | None, alpha_final: float | None, epsilon: float | None, epsilon_final: float | None,
                 opening: int | None, early_epsilon: float | None, early_plies: int | None, lam: float | None,
                 average: float | None, tuples: int | None, add_tuples: int, length: int, threats: bool | None,
                 probes: int | None, eval_every: float | None, checkpoint: float, curve: str | None) -> None:
    """Learn an n-tuple network by self-play (TD learning) for the agent
    ntuple:weights=FILE.

    Every point of the curve: the share of value-keeping moves of the
    greedy network on probe positions scored by the exact solver, and its
    score against random and normal (and hard at the end).  Ctrl-C saves
    the network and the curve, then stops.  A bad option or file: one line,
    exit status 2, and no file written.
    """
    from pathlib import Path

    from c4lab.learning import train_ntuple
    from c4lab.rules.errors import SecondBonusCellError
    from c4lab.ui.preparing import preparing_on_stderr

    def _path(value: str | None) -> Path | None:  # the options' callbacks expanded a ~ already (named_file)
        return Path(value) if value else None

    # Left to its default, a step size or exploration is the learner's (or, with --resume, where the network
    # stopped), and so are the openings, lambda and the averaged share (with --resume, its last run's); a
    # length given with --resume is refused (the network keeps its tuples).
    ctx = click.get_current_context()
    given: dict[str, Any] = {
        name: None if ctx.get_parameter_source(name) is click.core.ParameterSource.DEFAULT else value
        for name, value in (("alpha", alpha), ("alpha_final", alpha_final), ("epsilon", epsilon),
                            ("epsilon_final", epsilon_final), ("opening", opening), ("early_epsilon", early_epsilon),
                            ("early_plies", early_plies), ("lam", lam),
                            ("average", average), ("length", length))}
    seed_given = ctx.get_parameter_source("seed") is not click.core.ParameterSource.DEFAULT
    try:
        train_ntuple.run(
            board=board, bonus=bonus, minutes=minutes, games=games, workers=workers, executor=executor,
            ray_address=ray_address, seed=seed, seed_given=seed_given, out=_path(out), resume=_path(resume),
            tuples=tuples, add_tuples=add_tuples, threats=threats, probes=probes, eval_every=eval_every,
            checkpoint_minutes=checkpoint, curve=_path(curve), preparing=lambda: preparing_on_stderr(logged=True, hint=False),
            **given,
        )
    except SecondBonusCellError as exc:  # --bonus with a board that names its own bonus cell
        raise bonus_refused(exc) from None
    except train_ntuple.OptionRefused as exc:  # one option at fault: named as click names one
        raise bad_option(exc.message, exc.option) from None
    except ValueError as exc:  # one line, whatever was wrong (options together, a file)
        click.echo(f"Error: {exc}", err=True)
        sys.exit(2)
