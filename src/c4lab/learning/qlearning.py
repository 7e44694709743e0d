"""Tabular Q-learning by self-play: the trainer.

The table it learns, its keys and its file live in ``c4lab.agents.qtable``,
with the ``qlearning`` agent that reads it.

What is learnt
--------------
One table row per position met in training, one value per action: ``Q(s, a)``
is the expected reward, *for the side to move in s*, of playing ``a`` then
following the greedy policy (win 1, draw 0.5, loss 0 by default).  One table
serves both players: the side to move is part of the position.

The update (negamax Q-learning)
-------------------------------
Both sides are the same learner, moving in turn.  After a move that ends the
game the target is the mover's reward.  Otherwise the next position belongs
to the opponent, whose value ``v'`` is read from its row; what is good for one
side is bad for the other, so the target is that value seen from our side,
discounted toward the draw reward::

    v'     = (1 - slip) * max_a' Q(s', a') + slip * mean_a' Q(s', a')
    target = r_draw + discount * ((r_win + r_loss - v') - r_draw)
    Q(s, a) += alpha * (target - Q(s, a))

over the opponent's legal actions ``a'`` (with the default rewards, ``target
= 0.5 + discount * (0.5 - v')``).  With ``slip = 0`` this is plain negamax
Q-learning, which learns the game-theoretic values; on 4x4, a draw, every
drawing move is then worth 0.5 and the greedy agent picks among them blindly
(measured: it beats ``random`` in only about 60 % of the games, drawing the
rest).  ``slip`` (0.1 by default) is the chance that the opponent makes a
random move instead of its best one (an Expected-SARSA-style target for
that part): among equally safe moves the agent then prefers those that give
an imperfect opponent more ways to go wrong, and beats ``random`` in about
92 % of the 4x4 games while still never losing to ``minimax:depth=2``.
Discounting toward the draw rather than toward zero keeps a draw worth a draw
however long it takes, while a quick win beats a slow one and a slow loss
beats a quick one.  The discount applies once per ply.  Updates run at the
end of each episode, from the last move back to the first, so one game
carries its final reward all the way back to the opening (every target uses
the next position's values, not the move played there: exploratory moves do
not teach that they were good).

Exploration is epsilon-greedy: with probability epsilon a uniformly random
legal move, otherwise the best-valued one (ties broken at random).  Epsilon
falls linearly from ``epsilon_start`` (1.0) to ``epsilon_end`` (0.05) over the
first ``epsilon_decay`` (80 %) of the episodes, then stays there.

What a table can cover
----------------------
4x4 has 134,289 positions where the game goes on, 67,163 up to mirror
images: 200,000 episodes (about a second) meet more than 60,000 of them,
nearly all that matter, and the file is about a megabyte.  5x4 and 5x5 have
far more: a million episodes meet 1.1 million (5x4) and 3.3 million (5x5)
positions, still growing, so a table covers the openings and the lines
training plays, and the agent falls back to a win/block check elsewhere.
The classic 7x6 board has about 4.5 * 10^12 positions: no table can cover
it (use the search agents).
"""

from __future__ import annotations

import contextlib
import csv
import io
import math
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numba import njit, types
from numba.typed import Dict

import c4lab.jitcache  # noqa: F401  (numba's cache made safe for concurrent processes)
from c4lab.agents import make_agent
from c4lab.agents.qlearning import QLearningAgent
from c4lab.agents.qtable import QTable, action_index, check_board, check_rewards, position_keys
from c4lab.atomic import replacing
from c4lab.ctrl_c import Flag
from c4lab.game import play_game
from c4lab.learning.curve_page import curve_page
from c4lab.learning.ntuple_curve import bare
from c4lab.learning.settings import OptionOutOfRange
from c4lab.rules import Position
from c4lab.rules import kernels as K
from c4lab.rules.setup import one_board
from c4lab.rules.sides import result_clause

INITIAL_Q = 0.5  # an action never tried is worth a draw (with the default rewards)
_TIE = 1e-6  # values this close are equal when choosing the best action
_FIRST_CAPACITY = 1 << 14



@njit(inline="always")
def _uniform(x):
    """A float in [0, 1) from the top 53 bits of a 64-bit random number."""
    return np.float64(x >> np.uint64(11)) * (1.0 / 9007199254740992.0)


@njit(cache=True)
def _train_episodes(
    geo, start, index, keys, q, visits, n_states, epsilons, alpha, discount, rewards, symmetric, rng, slip
):
    """Play ``len(epsilons)`` self-play episodes from ``start`` and learn from them.

    ``index`` (a typed dict key -> row) is updated in place; ``keys``, ``q``
    and ``visits`` grow by doubling, so they are returned with the number of
    rows used, the random state and the number of moves played.
    """
    r_win, r_draw, r_loss = rewards[0], rewards[1], rewards[2]
    w = np.int64(K.board_width(geo))
    nact = 2 * w
    st = start.copy()
    codes = np.empty(K.MAX_LEGAL, dtype=np.uint8)
    acts = np.empty(K.MAX_LEGAL, dtype=np.int64)
    max_plies = np.int64(K.playable_cells(geo)) + 1
    hist_row = np.empty(max_plies, dtype=np.int64)
    hist_act = np.empty(max_plies, dtype=np.int64)
    hist_legal = np.zeros((max_plies, 2 * K.MAX_SIDE), dtype=np.bool_)
    moves = 0
    for e in range(epsilons.shape[0]):
        eps = epsilons[e]
        for i in range(start.shape[0]):  # st[:] = start, as a loop: see below
            st[i] = start[i]
        ply = 0
        while True:
            n = K.legal_codes(geo, st, codes)
            key, mirror = position_keys(geo, st)
            mirrored = symmetric and mirror < key
            if mirrored:
                key = mirror
            if key in index:
                row = index[key]
            else:
                if n_states == keys.shape[0]:
                    # The copies are loops: numba's slice assignment compiles its
                    # shape-mismatch error (a message built with ``str``) once per
                    # array type, 3.6 s of a first training run for these four.
                    grown_keys = np.empty(2 * keys.shape[0], dtype=np.uint64)
                    grown_q = np.empty((2 * keys.shape[0], nact), dtype=np.float32)
                    grown_visits = np.zeros(2 * keys.shape[0], dtype=np.uint32)
                    for r in range(n_states):
                        grown_keys[r] = keys[r]
                        grown_visits[r] = visits[r]
                        for a in range(nact):
                            grown_q[r, a] = q[r, a]
                    keys, q, visits = grown_keys, grown_q, grown_visits
                row = n_states
                n_states += 1
                index[key] = row
                keys[row] = key
                q[row, :] = INITIAL_Q
                visits[row] = 0
            visits[row] += 1
            legal = hist_legal[ply]
            legal[:] = False
            for i in range(n):
                acts[i] = action_index(codes[i], w, mirrored)
                legal[acts[i]] = True
            rng, x = K.next_random(rng)
            if _uniform(x) < eps:
                rng, x = K.next_random(rng)
                pick = np.int64(K.random_below(x, np.uint64(n)))
            else:
                best = -np.inf
                for i in range(n):
                    best = max(best, q[row, acts[i]])
                pick = 0
                ties = 0
                for i in range(n):
                    if q[row, acts[i]] >= best - _TIE:
                        ties += 1
                        rng, x = K.next_random(rng)
                        if K.random_below(x, np.uint64(ties)) == K.U0:
                            pick = i
            hist_row[ply] = row
            hist_act[ply] = acts[pick]
            ply += 1
            K.apply(geo, st, codes[pick])
            if K.result_of(st) != K.ONGOING:
                break
        moves += ply
        target = r_draw if K.result_of(st) == K.DRAW else r_win
        for i in range(ply - 1, -1, -1):
            row = hist_row[i]
            a = hist_act[i]
            q[row, a] += alpha * (target - q[row, a])
            best = -np.inf
            total = 0.0
            count = 0
            for j in range(nact):
                if hist_legal[i, j]:
                    total += q[row, j]
                    count += 1
                    best = max(best, q[row, j])
            value = (1.0 - slip) * best + slip * (total / count)
            target = r_draw + discount * ((r_win + r_loss - value) - r_draw)
    return keys, q, visits, n_states, rng, moves


# ---------------------------------------------------------------------------
# Training
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class TrainConfig:
    """Everything a training run depends on (saved in the table's header)."""

    board: str = "4x4"  # the start position (usually an empty board)
    episodes: int = 200_000
    alpha: float = 0.9  # learning rate
    discount: float = 0.95  # per ply, toward the draw reward
    epsilon_start: float = 1.0
    epsilon_end: float = 0.05
    epsilon_decay: float = 0.8  # fraction of the episodes over which epsilon falls linearly
    reward_win: float = 1.0
    reward_draw: float = 0.5
    reward_loss: float = 0.0
    slip: float = 0.1  # chance the opponent's value assumes a random move (0: plain max)
    symmetry: bool = True  # share rows between mirror images when the board allows
    seed: int = 0

    def __post_init__(self) -> None:
        """``OptionOutOfRange`` naming the first setting out of its range
        (``TrainConfig.alpha: the learning rate must be ...``; the command
        names its option instead)."""
        def out_of_range(field: str, said: str, interval: str) -> OptionOutOfRange:
            return OptionOutOfRange(field, f"{said} must be in {interval}, not {getattr(self, field)}", "TrainConfig")

        if self.episodes < 0:
            raise OptionOutOfRange("episodes", f"the episodes must be at least 0, not {self.episodes}", "TrainConfig")
        if not 0 < self.alpha <= 1:
            raise out_of_range("alpha", "the learning rate", "(0, 1]")
        for field, said in (("discount", "the discount"), ("epsilon_start", "the start of the exploration rate"),
                            ("epsilon_end", "the end of the exploration rate"),
                            ("epsilon_decay", "the share of the episodes over which it falls"),
                            ("slip", "the slip")):
            if not 0 <= getattr(self, field) <= 1:
                raise out_of_range(field, said, "[0, 1]")
        check_rewards(self.reward_win, self.reward_draw, self.reward_loss)

    def epsilons(self, first: int, count: int) -> np.ndarray:
        """The exploration rate of episodes ``first .. first + count - 1``."""
        span = self.epsilon_decay * self.episodes
        e = np.arange(first, first + count, dtype=np.float64)
        frac = np.minimum(e / span, 1.0) if span > 0 else np.ones_like(e)
        return self.epsilon_start + (self.epsilon_end - self.epsilon_start) * frac


def start_position(board: str) -> Position:
    """The position a run on ``board`` starts from: a ``ValueError`` that
    says why for a position that does not parse, is over (how, in the result
    words of every screen: "... is already over (A (white) wins: four in a
    row)"), or whose board is too large for a table (``c4lab train
    qlearning`` names ``--board`` with it before any work)."""
    start = one_board(board)
    if start.is_over:  # the rules end a game by four in a row or a full board: the reason the words take unsaid
        raise ValueError(f"the start position {start.notation} is already over ({result_clause(start.result, None)})")
    check_board(start.variant)
    return start


class QLearner:
    """A training run in progress: the table being learnt and the random state.

    ``run(n)`` plays the next ``n`` episodes; ``table()`` is a snapshot that
    an agent can play from or that can be saved.
    """

    def __init__(self, config: TrainConfig) -> None:
        self.config = config
        self.start = start_position(config.board)
        self.variant = self.start.variant
        self.symmetric = config.symmetry and self.variant.is_mirror_symmetric
        self._geo, start_state = self.start.kernel_arrays()
        self._start_state = start_state.copy()
        self._index = Dict.empty(key_type=types.uint64, value_type=types.int64)
        width = self.variant.width
        self._keys = np.empty(_FIRST_CAPACITY, dtype=np.uint64)
        self._q = np.empty((_FIRST_CAPACITY, 2 * width), dtype=np.float32)
        self._visits = np.zeros(_FIRST_CAPACITY, dtype=np.uint32)
        self._rewards = np.array([config.reward_win, config.reward_draw, config.reward_loss])
        self.states = 0
        self.episodes = 0
        self.moves = 0
        self.seconds = 0.0
        self._rng = K.seed_state(config.seed)

    @property
    def epsilon(self) -> float:
        """The exploration rate of the next episode."""
        return float(self.config.epsilons(self.episodes, 1)[0])

    def run(self, episodes: int) -> None:
        """Play and learn from the next ``episodes`` self-play games."""
        began = time.perf_counter()
        c = self.config
        keys, q, visits, states, rng, moves = _train_episodes(
            self._geo, self._start_state, self._index, self._keys, self._q, self._visits, self.states,
            self.config.epsilons(self.episodes, episodes), c.alpha, c.discount, self._rewards,
            self.symmetric, self._rng, c.slip,
        )
        self._keys, self._q, self._visits, self.states = keys, q, visits, int(states)
        self._rng = np.uint64(rng)
        self.episodes += episodes
        self.moves += int(moves)
        self.seconds += time.perf_counter() - began

    def table(self) -> QTable:
        """A snapshot of the table learnt so far, sorted by key."""
        n = self.states
        order = np.argsort(self._keys[:n], kind="stable")
        info = {
            "start": self.start.notation,
            "episodes": self.episodes,
            "moves": self.moves,
            "train_seconds": round(self.seconds, 3),
            "options": asdict(self.config),
        }
        c = self.config
        return QTable(
            self.variant, self._keys[:n][order], self._q[:n][order], self._visits[:n][order],
            self.symmetric, (c.reward_win, c.reward_draw, c.reward_loss), info,
        )


@dataclass(frozen=True)
class EvalPoint:
    """One point of the learning curve: the greedy agent against each opponent."""

    episodes: int
    seconds: float
    states: int
    epsilon: float
    results: dict[str, tuple[int, int, int]]  # opponent spec -> (wins, draws, losses)

    def win_rate(self, opponent: str) -> float:
        w, d, lo = self.results[opponent]
        return w / max(1, w + d + lo)

    def score_rate(self, opponent: str) -> float:
        w, d, lo = self.results[opponent]
        return (w + 0.5 * d) / max(1, w + d + lo)


def evaluate(table: QTable, opponent: str, games: int, seed: int = 0, start: Position | None = None
             ) -> tuple[int, int, int]:
    """``(wins, draws, losses)`` of the greedy table agent over ``games``
    games against ``opponent`` (an agent spec), playing A in the first half
    and B in the second.  ``random`` opponents get a seed from ``seed``."""
    start = start or Position.parse(str(table.info.get("start", table.variant.notation)))
    agent = QLearningAgent(table, seed=seed)
    spec = f"{opponent}:seed={seed}" if opponent == "random" else opponent
    other = make_agent(spec)
    wins = draws = losses = 0
    for g in range(games):
        as_a = g < (games + 1) // 2
        record = play_game(agent, other, start) if as_a else play_game(other, agent, start)
        result = record.result
        if result == "draw":
            draws += 1
        elif (result == "A") == as_a:
            wins += 1
        else:
            losses += 1
    return wins, draws, losses


DEFAULT_OPPONENTS = ("random", "minimax:depth=2")


def train(
    config: TrainConfig,
    *,
    eval_every: int | None = None,
    eval_games: int = 100,
    opponents: Sequence[str] = DEFAULT_OPPONENTS,
    chunk: int = 2000,
    on_progress: Callable[[QLearner], None] | None = None,
    on_eval: Callable[[EvalPoint], None] | None = None,
    stop: Callable[[], bool] | None = None,
) -> tuple[QTable, list[EvalPoint]]:
    """Train for ``config.episodes`` episodes; evaluate every ``eval_every``
    (and at the end) with ``eval_games`` games against each opponent.

    Returns the final table and the learning curve.  ``on_progress`` is
    called after every ``chunk`` episodes, ``on_eval`` after each evaluation.
    ``eval_every=0`` evaluates only at the end; ``eval_games=0`` never.
    ``stop`` is asked after every chunk: when it answers true, training ends
    there, without the final evaluation (the table's ``episodes`` says how
    many were played).
    """
    learner = QLearner(config)
    if eval_every is None:
        eval_every = max(1, config.episodes // 20)
    curve: list[EvalPoint] = []

    def evaluation() -> None:
        if eval_games <= 0:
            return
        table = learner.table()
        seed = config.seed + learner.episodes
        results = {o: evaluate(table, o, eval_games, seed, learner.start) for o in opponents}
        point = EvalPoint(learner.episodes, round(learner.seconds, 3), learner.states, learner.epsilon, results)
        curve.append(point)
        if on_eval:
            on_eval(point)

    next_eval = eval_every if eval_every > 0 else math.inf
    while learner.episodes < config.episodes:
        n = min(chunk, config.episodes - learner.episodes)
        if next_eval < math.inf:
            n = min(n, int(next_eval) - learner.episodes)
        learner.run(n)
        if on_progress:
            on_progress(learner)
        if stop is not None and stop():
            return learner.table(), curve
        if learner.episodes >= next_eval and learner.episodes < config.episodes:
            evaluation()
            next_eval += eval_every
    evaluation()
    return learner.table(), curve


class StopAsked(Flag):
    """Set by :func:`ctrl_c_stops` (from a signal's handler: no lock, see
    :class:`~c4lab.ctrl_c.Flag`); ``status``: the exit status of a run it
    stopped (130 for Ctrl-C, 128 + the signal's number for another)."""

    status = 130


@contextmanager
def ctrl_c_stops() -> Iterator[StopAsked]:
    """Within the block, Ctrl-C (SIGINT), a kill's SIGTERM or a closed
    terminal's SIGHUP sets the event it yields instead of ending the
    process, whatever SIGINT disposition the process inherited (a script's
    background job starts with SIGINT ignored): training then stops at the
    end of its chunk of episodes, with no update half applied, and the
    table is saved."""
    from c4lab.ctrl_c import STOP_SIGNALS, ctrl_c_calls, stop_status  # lazy: start-up time

    pressed = StopAsked()

    def stop(signum: int, frame: object) -> None:
        if not pressed.is_set():
            pressed.status = stop_status(signum)
        pressed.set()

    with ctrl_c_calls(stop, STOP_SIGNALS):
        yield pressed


# ---------------------------------------------------------------------------
# The learning curve and the command's driver
# ---------------------------------------------------------------------------


def write_curve(curve: list[EvalPoint], prefix: str | Path, title: str = "") -> tuple[Path, Path, Path]:
    """Write ``PREFIX.csv`` (one row per evaluation), ``PREFIX.png`` (win and
    score rates against each opponent over the episodes) and ``PREFIX.html``
    (the plot and the table of the evaluations, as the n-tuple learner's
    page: ``learning.curve_page``)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    prefix = bare(Path(prefix))
    csv_path = prefix.with_name(prefix.name + ".csv")
    png_path = prefix.with_name(prefix.name + ".png")
    html_path = prefix.with_name(prefix.name + ".html")
    opponents = list(curve[0].results) if curve else []
    with replacing(csv_path, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        header = ["episodes", "train_seconds", "states", "epsilon"]
        for o in opponents:
            header += [f"{o} wins", f"{o} draws", f"{o} losses", f"{o} win_rate", f"{o} score_rate"]
        writer.writerow(header)
        for p in curve:
            row: list[Any] = [p.episodes, p.seconds, p.states, round(p.epsilon, 4)]
            for o in opponents:
                row += [*p.results[o], round(p.win_rate(o), 4), round(p.score_rate(o), 4)]
            writer.writerow(row)
    fig, ax = plt.subplots(figsize=(8, 4.5), dpi=100)
    xs = [p.episodes for p in curve]
    for o in opponents:
        line = ax.plot(xs, [p.win_rate(o) for p in curve], marker="o", markersize=3, label=f"wins vs {o}")
        ax.plot(xs, [p.score_rate(o) for p in curve], linestyle="--", color=line[0].get_color(),
                label=f"score vs {o} (draw = 1/2)")
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel("training episodes")
    ax.set_ylabel("fraction of evaluation games")
    ax.grid(alpha=0.3)
    title = title or "Q-learning: greedy agent against fixed opponents"
    ax.set_title(title)
    ax2 = ax.twinx()
    ax2.plot(xs, [p.states for p in curve], color="grey", alpha=0.5, linewidth=1, label="positions in table")
    ax2.set_ylabel("positions in table", color="grey")
    handles = ax.get_legend_handles_labels()
    extra = ax2.get_legend_handles_labels()
    ax.legend(handles[0] + extra[0], handles[1] + extra[1], loc="lower right", fontsize=8)
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    plt.close(fig)
    png = buffer.getvalue()
    with replacing(png_path, "wb") as f:
        f.write(png)
    rows = [[f"{p.episodes:,}", f"{p.seconds:.1f}", f"{p.states:,}", f"{p.epsilon:.3f}",
             *(f"{p.results[o][0]} / {p.results[o][1]} / {p.results[o][2]}, {p.score_rate(o):.1%}" for o in opponents)]
            for p in curve]
    games = sum(curve[-1].results[opponents[0]]) if curve and opponents else 0
    note = (f"The greedy agent (the table's best move; in a position not in the table, a win, a block or a random move) against each "
            f"opponent, {games:,} games at each point, half of them moving first: wins / draws / losses, and the score "
            "(wins 1, draws 1/2). Epsilon: the share of exploring moves in training at that point.")
    with replacing(html_path, "w", encoding="utf-8") as f:
        f.write(curve_page(title, png, note, ["episodes", "seconds", "positions", "epsilon",
                                              *(f"vs {o}" for o in opponents)], rows))
    return csv_path, png_path, html_path


def progress_columns() -> tuple[Any, ...]:
    """The columns of the training's progress line: the board, the bar,
    episodes done of all, the time spent and left, then the speed, the
    table's size, the exploration and the last evaluation, which alone is
    cut short on a narrow terminal."""
    from rich.progress import (  # lazy: rich's progress bars only for a run
        BarColumn,
        MofNCompleteColumn,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    from c4lab.learning.progress_columns import Tail, whole  # lazy: as rich's

    return (
        TextColumn("[bold]{task.description}", table_column=whole()),
        BarColumn(bar_width=24, table_column=whole()),
        MofNCompleteColumn(table_column=whole()),
        TimeElapsedColumn(table_column=whole()),
        TimeRemainingColumn(table_column=whole()),
        Tail("{task.fields[speed]:,.0f} ep/s, {task.fields[states]:,} positions, "
             "eps {task.fields[eps]:.2f}{task.fields[last]}"),
    )


def run_with_progress(
    config: TrainConfig,
    out: str | Path,
    curve_prefix: str | Path,
    *,
    eval_every: int | None,
    eval_games: int,
    console: Any = None,
    show_progress: bool = True,
    interrupted: Flag | None = None,
    preparing: Callable[[], AbstractContextManager[Any]] = contextlib.nullcontext,
) -> tuple[QTable, list[EvalPoint], tuple[Path, ...]]:
    """``train`` with a rich progress bar (episodes, speed, positions, epsilon,
    the last evaluation), then save the table and the learning curve.  Once
    ``interrupted`` is set (:func:`ctrl_c_stops`), training stops at the end
    of its chunk and what it learnt so far is saved.  ``preparing``: a
    context around the kernels' first load (compiled on a first start), to
    say so."""
    from rich.progress import Progress  # lazy: the bar only for a run

    # Load (or compile) the kernels before the clock and the bar start: the learner's, and the evaluation's
    # opponents' (a first start compiles for half a minute, said, not a silent bar stuck at its first point).
    with preparing():  # the command's notice of it
        first = QLearner(TrainConfig(board=config.board, episodes=1, seed=config.seed))
        first.run(1)
        if eval_games > 0:
            for opponent in DEFAULT_OPPONENTS:
                evaluate(first.table(), opponent, 1, config.seed, first.start)
    last = ""
    with Progress(*progress_columns(), console=console, disable=not show_progress) as progress:
        task = progress.add_task(config.board, total=config.episodes, speed=0.0, states=0, eps=1.0, last="")

        def on_progress(learner: QLearner) -> None:
            speed = learner.episodes / learner.seconds if learner.seconds else 0.0
            progress.update(task, completed=learner.episodes, speed=speed, states=learner.states,
                            eps=learner.epsilon, last=last)

        def on_eval(point: EvalPoint) -> None:
            nonlocal last
            last = ", wins " + ", ".join(f"{point.win_rate(o):.1%} vs {o}" for o in point.results)
            progress.update(task, last=last)
            if not show_progress:  # no bar (a pipe, a log file): a line a point, as `train ntuple` writes
                progress.console.print(f"{point.seconds:6.1f} s  {point.episodes:,} episodes, {point.states:,} "
                                       f"positions{last}", markup=False, emoji=False, highlight=False, soft_wrap=True)

        # plain text: a start position is no markup, and "4x4:b: " no emoji code (rich drew "4x4🅱 ")
        progress.console.print(f"training {config.board}: {config.episodes:,} episodes (Ctrl-C stops and saves)",
                               markup=False, emoji=False, highlight=False)  # no colours in its numbers
        table, curve = train(config, eval_every=eval_every, eval_games=eval_games, on_progress=on_progress,
                             on_eval=on_eval, stop=interrupted.is_set if interrupted is not None else None)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    table.path = str(out)
    table.save(out)
    paths: tuple[Path, ...] = ()
    if curve:  # none with --eval-games 0: an empty plot and a CSV of its header alone said nothing
        Path(curve_prefix).parent.mkdir(parents=True, exist_ok=True)
        paths = write_curve(curve, curve_prefix, f"Q-learning on {config.board}, {table.info['episodes']:,} episodes")
    return table, curve, paths


def parse_rewards(text: str) -> tuple[float, float, float]:
    """``"1,0.5,0"`` -> ``(1.0, 0.5, 0.0)``: the rewards of a win, a draw and a loss."""
    parts = text.split(",")
    try:
        if len(parts) != 3:
            raise ValueError
        win, draw, loss = (float(p) for p in parts)
        if not all(math.isfinite(r) for r in (win, draw, loss)):
            raise ValueError
    except ValueError:
        raise ValueError(f"rewards must be three numbers WIN,DRAW,LOSS like 1,0.5,0, not {text!r}") from None
    return win, draw, loss


def default_table_path(board: str) -> Path:
    """``qlearning-4x4.npz`` for ``4x4``; ``/`` and ``:`` become ``_``."""
    return Path("qlearning-" + board.replace("/", "_").replace(":", "_") + ".npz")


def _counted(count: int, one: str, many: str) -> str:
    """``count`` and its noun, singular for one: "1 loss", not "1 losses"."""
    return f"{count} {one if count == 1 else many}"


def summary(table: QTable, curve: list[EvalPoint], paths: Sequence[Path]) -> str:
    """What ``c4lab train qlearning`` prints at the end."""
    info = table.info
    lines = [
        (
            f"{table.path}: {len(table):,} positions of {table.variant.notation}"
            f"{' (mirror images shared)' if table.symmetric else ''}, {info.get('episodes', 0):,} episodes "
            f"in {info.get('train_seconds', 0):.1f} s of training"
        ),
    ]
    if curve:
        last = curve[-1]
        if last.episodes != info.get("episodes", 0):  # stopped between two evaluations: say which one these are
            lines.append(f"  at the last evaluation, after {last.episodes:,} episodes:")
        for opponent, (w, d, lo) in last.results.items():
            lines.append(
                f"  against {opponent}: {_counted(w, 'win', 'wins')}, {_counted(d, 'draw', 'draws')}, "
                f"{_counted(lo, 'loss', 'losses')} "
                f"({last.win_rate(opponent):.1%} wins, score {last.score_rate(opponent):.1%})"
            )
    if paths:
        lines.append("learning curve: " + ", ".join(str(p) for p in paths))
    else:
        lines.append("no learning curve: no evaluation games were played (--eval-games 0, or stopped before the first "
                     "evaluation)")
    lines.append(f"play it: c4lab move {info.get('start', table.variant.notation)} --agent qlearning:table={table.path}")
    return "\n".join(lines)
