"""The n-tuple learner: TD learning over n-tuple networks by self-play
(Thill, Koch and Konen, PPSN 2012), the trainer behind ``c4lab train ntuple``.

The network (tuples, cell states, afterstate values, the file) is described
in ``c4lab.agents.ntuple_net``; the kernel that plays and learns is
``c4lab.learning.ntuple_td``.  This module drives it: workers, schedule,
checkpoints, the learning curve.

Choices, and what they are worth
--------------------------------
Every figure below was measured on this project's 2-core machine, on the
classic board unless said otherwise, as the share of value-keeping moves of
the greedy network on 200 probe positions (plies 0-16 reached by random
moves, only positions where some move changes the result, labelled by the
solver: ``c4lab.learning.probes``).  For scale, on the 400-position set:
``heuristic`` 79 %, ``hard`` 76 %.

* **70 random-walk tuples of 8 cells, 4 cell states** (Thill's recipe; the
  4th state tells an empty cell that can be played now from one that
  cannot).  One table per player and tuple, with an entry for each state
  of its cells that a game can reach (``ntuple_net.segment_values``: 65,536
  entries in base 4, 5,166 on average this way on the classic board, as
  Thill's "under 8 % of the states can occur").
  More tuples (``--tuples``) pay where the board is larger and the games
  cheap to learn from: on 8x6/Xc3/Bf4, 15 minutes on two workers, 120
  tuples keep 91 % of its 100 probes and 93.5 % of 200 others, where 70
  keep 88 % and 92.0 %; on 7x7/Xd4 with a bonus cell, 15 minutes on one
  worker, 120 keep 94.0 % of 200 probes where 70 keep 92.0 %.  On the
  classic board 120 once did worse in 30 minutes (87.8 % against 89.2 % on
  400 probes, exploration held at 0.1 on a busy machine); with today's
  schedule on the idle machine, 30 minutes on two workers, 150 tuples
  (16.1 M games) keep 94.3 % of 1,200 probes greedy and 97.2 % with PUCT
  at 0.2 s (``look=0``), 70 tuples (27.5 M games) 90.4 and 93.9 %: 70 are
  full after about 13 M games; 200 tuples (12.1 M games) 92.8 and 96.4 %:
  too few games for their weights.  (One run each: a second run of 150
  tuples, ``--seed 2``, kept 91.1 and 95.8 %: the seed moves a 30-minute
  network by about three points.)  So the default is 70, 120 on boards with a bonus cell
  (whose five cell states spread what is learnt over more table entries)
  and 150 on the classic board (``ntuple_net.default_tuples``).  On a day
  the machine ran twice as fast, three 30-minute runs of 200 tuples (22 to
  31 M games) kept 98.56, 97.74 and 97.90 % of 2,000 probes with PUCT at
  0.2 s, 98.07 % on average against 97.8 % for 150 tuples: within the
  spread of one run (mostly a few opening positions, docs/ntuple.md), and
  200 did worse on the slower days, so 150 stayed.  With threat tables
  (``ntuple_net``'s "Threat tables"), which speed the learning, five runs
  of 200 tuples (18.4 to 21.3 M games) kept 98.02 to 98.56 % (98.37 % on
  average): since then 200 tuples and threat tables are the classic
  board's default.
* **Walks started where the tuples are scarce** (``ntuple_net.random_walk_tuples``):
  each walk starts at the cell, with its mirror image, furthest below its
  share of the tuples' cells, the share in proportion to the lines of four
  through it; the walk itself is random.  From uniformly random starts the
  seed left holes: ``--seed 2``'s 150 tuples passed 8 times through the
  first centre cell, whose share is 30 (``--seed 1``'s: 27 times), and its
  network was the weakest of three.  The 30-minute command on two workers, five sets
  of 400 probes (seeds 11 / 7 / 13 / 21 / 23), PUCT at 0.2 s and greedy,
  the mean of the last weights: ``--seed 2`` 97.9 and 95.1 % (random starts:
  96.2 and 90.9 %), ``--seed 3`` 97.1 and 93.9 % (97.2 and 93.5 %).  The
  weak seed caught up, the other stayed where it was.  With afterstates
  read instead of played (below; 22-24 M games instead of 18-19 M):
  ``--seed 1`` 98.0 and 94.2 %, ``--seed 3`` 97.5 and 94.4 %.
* **Afterstates, TD(0) between a player's own afterstates, tanh output,
  rewards +1/0/-1 at the end only, final adaptation** of the loser's last
  afterstate (as GBG's TDNTuple3Agt).  Terminal afterstates are never looked
  up: a winning move is worth exactly +1, so the greedy network never misses
  a win in one.
* **Step size** ``alpha / instances`` (140 on a mirror-symmetric board):
  ``alpha = 1.0`` constant learns steadily (1 M games: 85 %, then 83-88 %
  up to 3.5 M); ``alpha = 2.5``: 81.5 % at 1 M.  Falling geometrically
  from 1.0 to 0.1 over the run (``alpha_final``): 84.0 % after 2 M games
  against 81.5-83.3 % constant (400 probes); the shipped network's
  recipe, and the default (to a tenth of ``alpha``).  TCL-EXP (``tcl``: per-weight steps, Bagheri et al.): 87 % at
  1 M games, but twice the time a game, so no gain a minute: off.
  Learning from random moves too: 83.5 % at 1 M (off).
* **TD(0) by default; ``lam`` > 0: the lambda-return at the end of the
  game** (the forward view of TD(lambda): each side's afterstates of a
  game are kept, and when it ends each moves once toward
  ``(1 - lam) * V(next) + lam * G(next)``, cut at an exploratory move;
  ``ntuple_td.lambda_returns``).  It costs what TD(0) costs, one update
  an afterstate.  The eligibility trace it replaced (the backward view,
  each error also moving the side's last afterstates while lambda**k was
  at least 1 %, as GBG) made up to seven updates a move: the 30-minute
  command with ``lam`` 0.5 played 13.3 M games (7,385 a second) against
  24.4 M with TD(0), and kept 97.4 % with PUCT at 0.2 s and 94.1 %
  greedy (five sets of 400 probes) against 97.5 and 94.4 % (before, at 3 M
  games on one worker, no gain beyond the noise either).  The
  lambda-return with ``lam`` 0.5, the same command and seed: 21.4 M games
  (11,914 a second), 98.1 % with PUCT (98.8 / 97.5 / 98.2 / 97.8 /
  98.0 %) and 94.6 % greedy; ``--seed 2``: 19.1 M games, 97.5 % (97.5 /
  97.0 / 97.5 / 97.8 / 97.5 %) and 94.2 %.  97.8 % on the two, as TD(0)
  on its six runs of the command (97.5 to 98.2 %): no gain shown, so the
  default stays TD(0).
* **Exploration** epsilon-greedy, 0.1 at first, falling linearly to
  ``epsilon_final`` (0 by default) over the run (GBG's schedule), or held
  constant (Thill's published advice: a decaying epsilon makes a weaker
  second player).  With the random openings below still varying the
  games, falling to 0 learns more: 3 M games, one worker, 400 probes (both sides to move):
  84.2, 90.2, 90.8, 90.2 % at 0.75, 1.5, 2.25 and 3 M games, against
  87.0, 86.8, 89.0, 88.5 % with 0.1 held (alpha 1 to 0.1 in both).  No
  update after an exploratory move unless it ends the game (Thill).
* **Random openings** (``opening``, 16 by default): a game starts with 0
  to 16 uniformly random moves that nobody learns from, so the learner
  also meets the positions that play other than its own reaches (the
  probe positions are drawn the same way, but never trained on: other
  seeds, other positions).  3 M games, one worker, 400 probes: 87.0 %,
  86.8 %, 89.0 %, 88.5 % at 0.75, 1.5, 2.25 and 3 M games, against 84.5 %,
  83.5 %, 86.2 % from the empty board (the same settings otherwise).
* **Early exploration** (``early_epsilon``, off by default;
  ``early_plies`` 4): the chance of a random move is at least
  ``early_epsilon`` in a game's first moves.  Greedy play never picks an
  early reply it undervalues, so that reply's afterstate learns only
  through shared weights; an exploratory move's afterstate learns from its
  side's next one.  3 M games, one worker, 150 tuples, the five sets of
  400 probes, with 0.3 against without (seeds 21 / 22): PUCT at 5,000
  iterations 95.08 / 95.80 % against 94.24 / 95.60 % (its misses at ply 2:
  5 against 19 on seed 21, 13 against 5 on seed 22), greedy 92.30 /
  92.54 % against 92.24 / 92.80 %.  Half a point with the search on
  average, nothing greedy: within what one seed moves.  The 30-minute
  command with it (``--seed 5``): 97.52 % with PUCT at 0.2 s, 93.40 %
  greedy, against 97.6 and 93.6 % without; still wrong after 1.f and 1.b.
  So it is not the default.
* **Mirror images share weights** where the board is its own mirror image
  (classic, a forbidden cell in the middle column...): each tuple is read
  twice.  Elsewhere each tuple is read once.
* **Forbidden cells are in no tuple** (they never change), **ban pieces
  are a 5th state** on boards with a bonus cell, and a bonus move (piece
  then ban) is one afterstate, valued like any other.
* **Incremental features**: a move changes at most four cells, and only the
  indices of the tuples through them are updated.  One core now trains
  15,800-16,000 classic games a second with the 190 tuples of the shipped
  network (``c4lab bench``, 2026-11-29, after the dense tables and the
  afterstates read below; the published Java agent about 500).  Measured
  when it was made, with tables of 65,536 entries: about 6,500 games a
  second with 70 tuples, 3,500 with 190; the dense
  tables made it 1.6 times as fast (1,735-1,807 → 2,822-2,993 games a
  second with the shipped network, alternated on a day this machine ran at
  half its usual speed).  **An afterstate read, not played**: a plain drop
  changes two cells in a way known in advance (its cell from playable to
  the mover's stone, the next free cell above from not yet playable to
  playable), so each cell and side has the list of instances it moves and
  by how much (``ntuple_net.drops``), and an afterstate's value is the
  position's sum plus those changes, with no feature to set and take back
  (a bonus move still plays and undoes).  The same values; one core, the
  two trees alternated twice on a noisy day: the shipped network
  3,322-3,640 → 5,491-7,337 games a second, 6x5/Xc2 (70 tuples)
  19,162-21,573 → 36,439-37,488, 8x6/Xc3/Bf4 (120 tuples, bonus moves on
  the old path) 8,683-10,651 → 13,606-14,608.
* **The mean of the last weights** (``average``, 0.15 by default): the
  network kept is the mean of the weights over the last 15 % of the run,
  a snapshot every hundredth (``Snapshots``; checkpoint averaging).  TD's
  weights wander around what they learn; their mean wanders less.  The
  README's 30-minute command (``--seed 1``, 14.3 M games, one run, the
  means taken from the same run's snapshots), PUCT at 0.2 s on five sets
  of 400 probes (seeds 11 / 7 / 13 / 21 / 23): the last weights 98.8 /
  97.2 / 97.2 / 98.0 / 98.5 % (97.9 %), the mean of the last 15 % 98.8 /
  98.0 / 98.2 / 98.0 / 98.8 % (98.4 %), of the last 30 % 98.1 %, of the
  last half 97.6 %; greedy 94.1, 94.6, 94.3, 94.4 %.  A second run
  (``--seed 2``, 17.5 M games): PUCT 95.7 % with the last weights, 96.2 %
  with the mean of the last 15 %; greedy 91.4 and 90.9 %.  A third
  (``--seed 3``, 18.9 M games): PUCT 96.6 and 97.2 %, greedy 93.2 and
  93.5 %.
* **Two workers** run the kernel in two threads on the same weights, with
  no lock (the kernel runs without the GIL; a lost update costs a little
  learning, nothing else): in a 30-minute run of 70 tuples 15,250 games
  a second on the idle machine (9,266 on one busy with other work, 1.45
  times one worker there: the threads share the cache and the memory
  bus), 8,970 with 150 tuples, 6,720 with 200.  One worker is deterministic: the same seed gives the
  same network.
* **Merged copies** (``executor="processes"`` or ``"ray"``,
  ``c4lab.learning.ntuple_copies``): each worker plays rounds of 20,000
  games on its own copy and the mean of the changes goes into the network,
  so the workers may be processes or the nodes of a Ray cluster; the same
  seed gives the same network on both.  Two workers, 3 minutes: 86.2 %
  against 87.5 % for two threads on one table (the sum of the changes
  instead of their mean: 67.5 %), so threads are the default.

The learning curve
------------------
A twentieth of the run apart (``c4lab train ntuple --eval-every``) the
greedy network answers the probe set (the share of value-keeping moves)
and plays ``random`` (every point), ``normal`` (every fourth point) and
``hard`` (at the end) from short random openings, both sides.  A run
given in games pauses its workers at each point (``Trainer.run``'s
``pause_every``, ``ntuple_pauses``), so the points are at exactly those
games; a run given in seconds judges a copy while the workers train on.
The curve is written as CSV, PNG and an HTML page.
"""

from __future__ import annotations

import math
import random
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from c4lab.agents import Agent, make_agent
from c4lab.agents.ntuple import NTupleAgent
from c4lab.agents.ntuple_net import Network
from c4lab.arena.accuracy import ScoredPosition, measure
from c4lab.game import play_game
from c4lab.learning import ntuple_td as T
from c4lab.learning.ntuple_curve import CurvePoint, write_curve
from c4lab.learning.ntuple_pauses import Pauses
from c4lab.learning.settings import OptionOutOfRange, OptionWrongType
from c4lab.rules import Position, Variant
from c4lab.rules import kernels as K
from c4lab.rules.setup import one_board, starting_position

#: Games a worker plays between two looks at the clock.
CHUNK = 1000


class WorkerFailed(RuntimeError):
    """A worker of a run stopped on an error (a process of the copies that
    died, a Ray task that failed): the run ended there, its network as the
    other workers and the merged rounds left it."""


def _number(field: str, value: Any, optional: bool = False) -> None:
    """``OptionWrongType`` unless ``value`` is a real number (not a bool;
    None too where ``optional``): the ranges below compare it."""
    if optional and value is None:
        return
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        kind = "a number or None" if optional else "a number"
        raise OptionWrongType(field, f"{field} must be {kind}, not {value!r}")


@dataclass(frozen=True)
class Options:
    """The learning settings (stored in the network's header)."""

    alpha: float = 1.0
    #: alpha falls geometrically to this over the run; None: a tenth of
    #: alpha (the recipe of the shipped network); alpha itself: constant
    alpha_final: float | None = None
    epsilon: float = 0.1
    #: epsilon falls linearly to this over the run; epsilon itself (or None): constant
    epsilon_final: float | None = 0.0
    learn_from_random: bool = False
    tcl: float = 0.0  # beta of temporal coherence (TCL-EXP); 0: off
    opening: int = 16  # a game starts with 0..opening random moves nobody learns from
    #: the chance of a random move is at least early_epsilon in each game's
    #: first early_plies moves (its random opening's included); 0: off
    early_epsilon: float = 0.0
    early_plies: int = 4
    lam: float = 0.0  # lambda of the lambda-return each afterstate learns at the end of a game; 0: TD(0)
    #: the network kept is the mean of the weights over this last share of
    #: the run (snapshots a hundredth of the run apart); 0: the last weights
    average: float = 0.15

    def __post_init__(self) -> None:
        """``OptionOutOfRange`` (``OptionWrongType``) naming the first
        setting that no run could take."""
        for name in ("alpha", "epsilon", "tcl", "lam", "average"):
            _number(name, getattr(self, name))
        _number("alpha_final", self.alpha_final, optional=True)
        _number("epsilon_final", self.epsilon_final, optional=True)
        if isinstance(self.opening, bool) or not isinstance(self.opening, int):
            raise OptionWrongType("opening", f"opening must be a whole number of moves, not {self.opening!r}")
        _number("early_epsilon", self.early_epsilon)
        if isinstance(self.early_plies, bool) or not isinstance(self.early_plies, int):
            raise OptionWrongType("early_plies", f"early_plies must be a whole number of moves, not {self.early_plies!r}")
        if not isinstance(self.learn_from_random, bool):
            raise OptionWrongType("learn_from_random", f"learn_from_random must be True or False, "
                                                       f"not {self.learn_from_random!r}")
        if not 0 < self.alpha <= 100:
            raise OptionOutOfRange("alpha", f"alpha must be in (0, 100], not {self.alpha}")
        final = self.alpha / 10 if self.alpha_final is None else self.alpha_final
        object.__setattr__(self, "alpha_final", final)  # the header then says what the run used
        if not 0 < final <= 100:
            raise OptionOutOfRange("alpha_final", f"the final alpha must be in (0, 100], not {final}")
        if not 0 <= self.epsilon <= 1:
            raise OptionOutOfRange("epsilon", f"epsilon must be in [0, 1], not {self.epsilon}")
        if self.epsilon_final is not None and not 0 <= self.epsilon_final <= 1:
            raise OptionOutOfRange("epsilon_final", f"the final epsilon must be in [0, 1], not {self.epsilon_final}")
        if not 0 <= self.opening <= 64:
            raise OptionOutOfRange("opening", f"the random opening must be 0 to 64 moves, not {self.opening}")
        if not 0 <= self.early_epsilon <= 1:
            raise OptionOutOfRange("early_epsilon", f"the early epsilon must be in [0, 1], not {self.early_epsilon}")
        if not 0 <= self.early_plies <= 144:
            raise OptionOutOfRange("early_plies", f"the early plies must be 0 to 144 moves, not {self.early_plies}")
        if not 0 <= self.lam < 1:
            raise OptionOutOfRange("lam", f"lambda must be in [0, 1), not {self.lam}")
        if not 0 <= self.average < 1:
            raise OptionOutOfRange("average", f"the share of the run to average must be in [0, 1), not {self.average}")
        if not 0 <= self.tcl <= 100:  # a negative beta would enlarge the steps where they disagree
            raise OptionOutOfRange("tcl", f"the temporal coherence beta must be in [0, 100], not {self.tcl}")


def alpha_at(start: float, end: float, progress: float) -> float:
    """The step size of a schedule from ``start`` to ``end`` when
    ``progress`` (0 to 1) of it is done: geometric, ``end`` itself at 1."""
    share = min(max(progress, 0.0), 1.0)
    return float(end) if share >= 1.0 else float(start * (end / start) ** share)


def epsilon_at(start: float, end: float, progress: float) -> float:
    """The exploration of a schedule from ``start`` to ``end`` when
    ``progress`` (0 to 1) of it is done: linear (GBG's), ``end`` itself at 1."""
    share = min(max(progress, 0.0), 1.0)
    return float(end) if share >= 1.0 else float(start + (end - start) * share)


class Snapshots:
    """The running mean of a run's weights from ``start`` (a share of the
    run) on, a snapshot every hundredth of the run: checkpoint averaging
    (Polyak averaging in steps), which the shipped network's last step
    showed pays.  TD's weights wander around what they learn, by an amount
    the step size sets; their mean over the run's last part, where the
    step is small and exploration near 0, wanders less.  The workers take
    the snapshots between their chunks of games (so one worker's run of
    ``--games N`` stays deterministic) and do not see the mean: it
    replaces the weights when the run ends, Ctrl-C included."""

    STEP = 0.01

    def __init__(self, weights: np.ndarray, start: float) -> None:
        self.weights = weights
        self.next = start
        self.sum = np.zeros(weights.shape, dtype=np.float64)
        self.count = 0

    def take(self, progress: float) -> None:
        """Add the weights as they are when ``progress`` has reached the next
        hundredth (one snapshot however far it went past it)."""
        if progress >= self.next:
            self.sum += self.weights
            self.count += 1
            self.next = max(self.next, progress) + self.STEP

    def settle(self) -> None:
        """Replace the weights by the mean of the snapshots and the last weights."""
        if self.count:
            self.weights[...] = (self.sum + self.weights) / (self.count + 1)


@dataclass
class Trainer:
    """Self-play training of ``network`` with ``workers`` threads.

    ``run`` trains until ``games`` more games or ``seconds`` pass (or
    ``stop()``), calling ``on_tick`` about every ``tick`` seconds (the
    command saves its checkpoints and draws its curve there).
    """

    network: Network
    options: Options = field(default_factory=Options)
    workers: int = 1
    seed: int = 0
    executor: str = "threads"  # threads: one shared table; processes, ray: copies merged (ntuple_copies)
    address: str | None = None  # the Ray cluster's (None: a local Ray)
    played: int = 0  # games this run
    seconds: float = 0.0  # training seconds this run
    counters: np.ndarray = field(default_factory=lambda: np.zeros(T.N_COUNTERS))
    _stop: threading.Event = field(default_factory=threading.Event)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _error: BaseException | None = None  # what stopped the copies' loop (raised again by ``run``)

    def __post_init__(self) -> None:
        """``ValueError`` (``TypeError`` for a value of the wrong type)
        naming the field, before any worker starts."""
        if not isinstance(self.options, Options):
            raise TypeError(f"Trainer.options must be an Options, not {type(self.options).__name__} "
                            "(Options(alpha=...) holds the learning settings)")
        if isinstance(self.workers, bool) or not isinstance(self.workers, int):
            raise TypeError(f"Trainer.workers must be a whole number, not {self.workers!r}")
        if self.workers < 1:
            raise ValueError(f"Trainer.workers must be at least 1, not {self.workers}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int):
            raise TypeError(f"Trainer.seed must be a whole number, not {self.seed!r}")
        if self.executor not in ("threads", "processes", "ray"):
            raise ValueError(f"Trainer.executor: unknown executor {self.executor!r} (threads, processes or ray)")
        if self.executor != "threads" and self.options.tcl > 0:
            raise ValueError("temporal coherence (tcl) needs the threads executor: its sums are not merged")
        self._rngs = self._streams(self.network.options.get("rng"))
        self._progress: Callable[[], float] = lambda: 0.0  # the share of the run's schedule done (``run``'s)
        self._tcl = np.zeros((2, *self.network.weights.shape), dtype=np.float32) if self.options.tcl > 0 else T.NO_TCL

    def _streams(self, saved: Any) -> list[np.uint64]:
        """Each worker's random state: where the network's last run left
        its workers (``saved``, its header's ``rng``), so that a resumed run
        plays new games; a worker it did not have (more ``workers`` now)
        starts from a state drawn from the saved ones and its number, and a
        new network's from ``seed``."""
        kept = [np.uint64(int(x)) for x in saved] if isinstance(saved, list) else []
        streams = kept[: self.workers]
        for w in range(len(streams), self.workers):
            base = int(kept[w % len(kept)]) if kept else self.seed * 1009
            streams.append(K.seed_state(base + w * 0x9E3779B97F4A7C15))
        return streams

    def record(self) -> None:
        """Write this run's options, the workers' random states and the
        share of the run's schedule done (``done``: 1 at its end, less
        after Ctrl-C) into the network's header options: what a
        checkpoint, a Ctrl-C or the end saves, and what ``--resume`` goes
        on from."""
        self.network.options = {**self.network.options, **asdict(self.options),
                                "rng": [str(int(r)) for r in self._rngs],
                                "done": round(min(max(self._progress(), 0.0), 1.0), 6)}

    def stop(self) -> None:
        """Ask every worker to stop at the end of its current game (``run``
        then returns; Ctrl-C's handler calls it from another thread)."""
        self._stop.set()

    def snapshot(self) -> Network:
        """The network as it is now, its weights copied (``Network.frozen``)
        with the games counted so far: a point of the learning curve judges
        this copy while the workers go on training the network (the copy's
        games are right to within the chunks being played, ``CHUNK`` a
        worker)."""
        with self._lock:
            return self.network.frozen()

    def warm_up(self) -> None:
        """Compile (or load) the kernel on a throw-away copy, so the clock
        starts with the first real game."""
        net = self.network
        geo, st = Position(net.variant).kernel_arrays()
        T.train_games(geo, st, np.zeros_like(net.weights), *net.arrays()[1:], 1, K.seed_state(1), 0.1, 0.1,  # type: ignore[call-arg]  # numba's Dispatcher type
                      False, T.NO_TCL, 0.0, 0.0, 0, 0, 0.0, np.zeros(T.N_COUNTERS))

    def alpha_at(self, progress: float) -> float:
        """The step size when ``progress`` (0 to 1) of the run is done."""
        o = self.options
        assert o.alpha_final is not None  # Options resolves None to a tenth of alpha
        return alpha_at(o.alpha, o.alpha_final, progress)

    def epsilon_at(self, progress: float) -> float:
        """The chance of a random move when ``progress`` (0 to 1) of the run
        is done (GBG's schedule: linear)."""
        o = self.options
        return o.epsilon if o.epsilon_final is None else epsilon_at(o.epsilon, o.epsilon_final, progress)

    def _worker(self, w: int, budget: list[int], running: Callable[[], bool], progress: Callable[[], float],
                mean: Snapshots | None, pauses: Pauses, wake: threading.Event) -> None:
        net = self.network
        geo, st = Position(net.variant).kernel_arrays()
        o = self.options
        counters = np.zeros(T.N_COUNTERS)
        stop = self._stop
        while not stop.is_set() and running():
            with self._lock:
                while True:  # a chunk ends at the next pause at most (a point of a curve given in games)
                    n = min(CHUNK, budget[0], pauses.room(pauses.total - budget[0]))
                    if n > 0 or budget[0] <= 0 or stop.is_set():
                        break
                    pauses.wait()
                at = progress()  # the schedule where this chunk starts, before its games are taken
                budget[0] -= n
            if n <= 0:
                break
            counters[:] = 0
            self._rngs[w] = np.uint64(T.train_games(geo, st, *net.arrays(), n, self._rngs[w],  # type: ignore[call-arg]  # numba's Dispatcher type
                                                    self.alpha_at(at), self.epsilon_at(at),
                                                    o.learn_from_random, self._tcl, o.tcl, o.lam,
                                                    o.opening, o.early_plies, o.early_epsilon, counters))
            with self._lock:
                self.counters += counters
                self.played += n
                net.games += n
                if mean is not None:
                    mean.take(progress())
                pauses.played += n
                if pauses.due():
                    wake.set()

    def _rounds(self, copies: Any, budget: list[int], running: Callable[[], bool], progress: Callable[[], float],
                mean: Snapshots | None, pauses: Pauses, wake: threading.Event) -> None:
        """The trainer's loop with copies: a round of up to ``ROUND`` games a
        worker (ending at the next pause at most), the changes merged, until
        the budget or the time is spent."""
        from c4lab.learning import ntuple_copies as C  # lazy: processes and Ray only here

        net, o = self.network, self.options
        stop = self._stop
        while not stop.is_set() and running() and budget[0] > 0:
            with self._lock:
                room = min(budget[0], pauses.room(pauses.total - budget[0]))
                if room <= 0:
                    pauses.wait()
                    continue
            share = min(C.ROUND, -(-room // self.workers))
            at = progress()  # one schedule for every task of the round, read before its games are taken
            tasks = []
            for w in range(self.workers):
                n = min(share, room)
                room -= n
                budget[0] -= n
                if n > 0:
                    tasks.append(C.Round(net.variant.notation, tuple(net.arrays()[1:]), n, int(self._rngs[w]),
                                         self.alpha_at(at), self.epsilon_at(at),
                                         o.learn_from_random,
                                         o.opening, o.lam, o.early_plies, o.early_epsilon))
            changes = copies.round(net.weights, tasks)
            C.merge(net.weights, changes)
            with self._lock:
                for w, (task, change) in enumerate(zip(tasks, changes)):
                    self._rngs[w] = np.uint64(change.rng)
                    self.counters += change.counters
                    self.played += task.games
                    net.games += task.games
                if mean is not None:
                    mean.take(progress())
                pauses.played += sum(task.games for task in tasks)
                if pauses.due():
                    wake.set()

    def run(self, games: int | None = None, seconds: float | None = None,
            on_tick: Callable[[Trainer], None] | None = None, tick: float = 0.5,
            pause_every: int | None = None, on_pause: Callable[[Trainer], None] | None = None) -> None:
        """Train for ``games`` games or ``seconds`` seconds, whichever ends
        first; a falling step size (``alpha_final``) and exploration
        (``epsilon_final``) follow that plan.  ``ValueError`` (before any
        game) for a number of games below 1 or seconds not above 0, or
        neither given: the schedule is a share of them.

        ``pause_every`` N: after every N games of this run (not at its end)
        every worker stops, and ``on_pause`` is called in the calling
        thread with the network exactly N, 2N... games further (the curve
        of ``c4lab train ntuple --games``: ``ntuple_pauses``); the time
        paused is not counted in ``seconds``, nor the start of the copies'
        workers (``executor`` processes or ray: ``ntuple_copies.start``),
        which the schedule does not count either."""
        if games is not None and (isinstance(games, bool) or not isinstance(games, int)):
            raise TypeError(f"Trainer.run: games must be a whole number, not {games!r}")
        if games is not None and games < 1:
            raise ValueError(f"Trainer.run: games must be at least 1, not {games}")
        if seconds is not None and (isinstance(seconds, bool) or not isinstance(seconds, (int, float))):
            raise TypeError(f"Trainer.run: seconds must be a number, not {seconds!r}")
        if seconds is not None and not (math.isfinite(seconds) and seconds > 0):
            raise ValueError(f"Trainer.run: seconds must be a positive, finite number, not {seconds}")
        if games is None and seconds is None:  # it trained until stopped, its schedules never moving
            raise ValueError("Trainer.run: give games=N or seconds=S (or both: whichever ends first)")
        if pause_every is not None and (isinstance(pause_every, bool) or not isinstance(pause_every, int)
                                        or pause_every < 1):
            raise ValueError(f"Trainer.run: pause_every must be a whole number of games from 1, not {pause_every!r}")
        total = games if games is not None else 1 << 62
        budget = [total]
        pauses = Pauses(pause_every, total, self._lock)
        wake = threading.Event()  # a worker finished, or a pause has come
        began = time.monotonic()

        def elapsed() -> float:  # the run's training seconds: the pauses are not training
            return time.monotonic() - began - pauses.seconds

        def running() -> bool:
            return seconds is None or elapsed() < seconds

        def progress() -> float:
            if seconds is not None:
                return elapsed() / seconds
            return 1.0 - budget[0] / total

        copies = None
        self._error = None
        stop = self._stop
        self._progress = progress
        self.record()  # a checkpoint's header says how the run goes on, from the start
        # Snapshots for the mean are taken by the workers between their chunks (rounds).
        mean = Snapshots(self.network.weights, 1.0 - self.options.average) if self.options.average else None
        if self.executor == "threads":
            targets: list[tuple[Callable[..., None], tuple[Any, ...]]] = [
                (self._worker, (w, budget, running, progress, mean, pauses, wake)) for w in range(self.workers)]
        else:
            from c4lab.learning import ntuple_copies as C  # lazy: processes and Ray only here

            copies = C.make_copies(self.executor, self.workers, self.address)
            try:
                C.start(copies, self.network.variant.notation, tuple(self.network.arrays()[1:]), self.network.weights)
            except Exception as exc:  # a worker that cannot start: as one that fails later, none left behind
                copies.close()
                raise WorkerFailed(f"{type(exc).__name__}: {exc}") from exc
            except BaseException:
                copies.close()
                raise
            began = time.monotonic()  # the clock (and the schedule, which reads it) starts with the first games
            targets = [(self._rounds, (copies, budget, running, progress, mean, pauses, wake))]
        # Each thread says it has finished by an event of its own, set as its last act: a Thread.join that
        # Ctrl-C interrupted may return at once afterwards (CPython), and a worker would train on unseen.
        finished = [threading.Event() for _ in targets]

        def body(i: int, target: Callable[..., None], args: tuple[Any, ...]) -> None:
            try:
                target(*args)
            except BaseException as exc:  # noqa: BLE001  (raised again by ``run`` in the calling thread)
                self._error = exc
                stop.set()  # the other workers stop too
            finally:
                finished[i].set()
                wake.set()

        start_seconds = self.seconds
        for i, (target, args) in enumerate(targets):
            threading.Thread(target=body, args=(i, target, args), daemon=True).start()
        try:
            while not all(f.is_set() for f in finished):
                wake.wait(tick)
                wake.clear()  # what set it is seen below, whatever sets it next wakes the next wait
                self.seconds = start_seconds + elapsed()
                if pauses.due() and not stop.is_set():  # every worker waits: the network is at the pause's games
                    paused = time.monotonic()
                    try:
                        if on_pause is not None:
                            on_pause(self)
                    except BaseException:  # Ctrl-C while a point is judged: that pause is not training either
                        pauses.seconds += time.monotonic() - paused  # (the workers stay paused: the run stops)
                        raise
                    pauses.resume(paused)
                if on_tick is not None:
                    on_tick(self)
        finally:
            stop.set()
            for done in finished:  # every worker ends its chunk (a second at most) before anything is saved
                while True:
                    try:
                        if done.wait(0.1):
                            break
                    except KeyboardInterrupt:  # pressed again meanwhile: the first one is on its way
                        continue
            if copies is not None:
                copies.close()
            self._stop = threading.Event()  # the next run's (the workers of this one saw this one's set)
            self.seconds = start_seconds + elapsed()
            if mean is not None:
                mean.settle()
            self.record()
        if isinstance(self._error, Exception):
            raise WorkerFailed(f"{type(self._error).__name__}: {self._error}") from self._error
        if self._error is not None:  # KeyboardInterrupt, SystemExit: as they were
            raise self._error

    @property
    def games_per_second(self) -> float:
        """Self-play games a second of training time, over this trainer's runs."""
        return self.played / self.seconds if self.seconds else 0.0

    @property
    def mean_cells(self) -> float:
        """The cells a self-play game filled, on average (how long the games are)."""
        c = self.counters
        return float(c[T.C_CELLS] / c[T.C_GAMES]) if c[T.C_GAMES] else 0.0


# ---------------------------------------------------------------------------
# Judging the network
# ---------------------------------------------------------------------------


def accuracy(network: Network, probes: list[ScoredPosition]) -> float:
    """The share of ``probes`` where the greedy network's move keeps the value."""
    return measure(NTupleAgent(network, seed=0), probes).share


def score_against(network: Network, opponent: str, games: int, seed: int = 0, plies: int = 2,
                  agent: Agent | None = None) -> float:
    """The greedy network's (or ``agent``'s) score against ``opponent`` (an
    agent spec) over ``games`` games on the network's board in pairs (the
    same random opening of ``plies`` moves, each side once): wins 1, draws 1/2."""
    rng = random.Random(seed)
    agent = agent or NTupleAgent(network, seed=seed)
    spec = f"{opponent}:seed={seed}" if opponent == "random" else opponent
    other = make_agent(spec)
    total = 0.0
    for g in range(games):
        if g % 2 == 0:
            start = Position(network.variant)
            while start.ply < plies and not start.is_over:
                start = start.play(rng.choice(start.legal_moves()))
        as_a = g % 2 == 0
        record = play_game(agent, other, start) if as_a else play_game(other, agent, start)
        if record.result == "draw":
            total += 0.5
        elif (record.result == "A") == as_a:
            total += 1.0
    return total / games


def board_variant(board: str, bonus: bool, seed: int) -> Variant:
    """The board of ``--board`` (a variant, no moves), with a random bonus
    cell drawn from ``seed`` when ``bonus`` (``rules.setup.starting_position``'s
    draw, and its ``SecondBonusCellError`` where the board names one
    already).  A board that does not parse is its ``PositionError`` (a
    ``ValueError``); a position with moves a ``ValueError`` too."""
    position = one_board(board)
    if position.ply:
        raise ValueError(f"{board!r} is a position with moves: give a board (7x6, 9x8/Xd3)")
    return starting_position(position.variant.notation, bonus, random.Random(seed)).variant




def bench_training(board: str, seconds: float, seed: int = 1) -> dict[str, float]:
    """Self-play training games a second on one core (CPU time), from a
    network that has already learnt a little (20,000 games: a fresh one
    plays shorter games than a trained one, the shipped classic network is
    used where there is one)."""
    from c4lab.agents.ntuple import shipped_path  # lazy: only the benchmark reads the shipped file

    variant = Position.parse(board).variant
    shipped = shipped_path(board)
    if shipped is not None:
        network = Network.load(shipped)
        network.options = {}  # its own random states: the benchmark's games follow ``seed``
    else:
        network = Network.create(variant, seed=seed)
        Trainer(network, seed=seed).run(games=20_000)
    trainer = Trainer(network, Options(average=0), seed=seed)  # the games alone: no snapshots for a mean
    trainer.warm_up()
    runs = []
    for _ in range(3):
        games = 2_000
        while True:
            cpu0, wall0 = time.process_time(), time.perf_counter()
            trainer.played = 0
            trainer.run(games=games)
            cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
            if cpu >= seconds / 3 or games >= 1 << 30:
                break
            games = max(games * 2, int(games * seconds / 3 / max(cpu, 1e-3)))
        runs.append((games / cpu, cpu, wall, games))
    rate, cpu, wall, games = sorted(runs)[1]
    return {"games_per_s": rate, "cells_per_game": trainer.mean_cells, "cpu_s": cpu, "wall_s": wall,
            "games": games, "tuples": int(network.tuples.shape[0])}


__all__ = ["CurvePoint", "Options", "Snapshots", "Trainer", "accuracy", "alpha_at", "bench_training", "board_variant",
           "epsilon_at", "score_against", "write_curve"]
