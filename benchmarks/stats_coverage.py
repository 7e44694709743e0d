"""How true the arena's statistics are, by simulation: matches drawn from
known win/draw/loss chances, and how often each figure gets the truth.

    python3 benchmarks/stats_coverage.py [--reps 2000] [--sprt-reps 1000] [--narrow] [--seed 1] [--only SECTION ...]

The sections (``--only`` takes their names):

* ``intervals``: how often the games' 95% interval (``Trinomial``) holds
  the true Elo, for games drawn independently with the given win, draw
  and loss chances, at 50, 200 and 1000 games;
* ``pairs``: the same for paired games (one opening, sides swapped), the
  pairs' interval (``Pentanomial``) beside the games' one, at 25, 100 and
  500 pairs: in ``first`` the first mover wins a share of the pairs
  outright (the two games of a pair go opposite ways), in ``shared`` each
  opening favours one agent in both of its games (they go the same way);
* ``null``: how often equal agents are called unequal at the 5% level by
  the Wald p-value, the exact sign test and the LOS above 97.5%, game by
  game and, for paired games, pair by pair;
* ``sprt``: how often the SPRT (``SPRT.decide`` on the pairs, as the arena
  runs it) accepts the wrong hypothesis when the true Elo is ``elo0`` and
  when it is ``elo1`` (nominal: alpha = beta = 5%), and its average number
  of pairs (``--narrow`` adds ``elo0=0,elo1=20``: some ten minutes more);
* ``ratings``: the fitted ratings (``fit_ratings``) of round robins of
  agents with known ratings: the mean error (bias) and root mean square
  error of each agent's rating, and how often its 95% interval holds it.

Every figure is a share of ``--reps`` simulated matches (``--sprt-reps``
tests; ratings: a tenth of ``--reps`` tournaments), each section from its
own fixed seed, so a run prints the same figures every time; with 2000
matches a share near 95% is good to about ±1 point (two standard errors),
one near 5% to about ±1.  The measured figures are in
``docs/experiments.md``.  A default run takes a few minutes on one
core, most of it the SPRT's (3.5 minutes on a busy machine: its exact
likelihood ratio costs a root search a pair, where the normal
approximation it replaced took half as long).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np

from c4lab.arena import stats
from c4lab.arena.ratings import fit_ratings
from c4lab.arena.sprt import SPRT
from c4lab.ctrl_c import run_stoppable

#: A match's chances: (win, draw, loss) of the first agent in one game.
Chances = tuple[float, float, float]

#: The games' interval: chances (with and without draws, even and lopsided) and match lengths.
INTERVAL_CHANCES: tuple[Chances, ...] = (
    (0.45, 0.1, 0.45), (0.3, 0.4, 0.3), (0.1, 0.8, 0.1), (0.6, 0.1, 0.3), (0.8, 0.1, 0.1),
    (0.5, 0.0, 0.5), (0.7, 0.0, 0.3), (0.9, 0.0, 0.1),
)
GAMES = (50, 200, 1000)
PAIRS = (25, 100, 500)
#: Paired games: (name, kind, share or chances).  ``first``: with chance ``q`` the pair is split by the
#: first mover (1 point), else two independent games of ``chances``; ``shared``: each pair's opening
#: favours the first agent (both games ``a``) or the second (both ``b``), even odds.
PAIR_MODELS: tuple[tuple[str, str, float, Chances, Chances], ...] = (
    ("first q=0.5, even", "first", 0.5, (0.35, 0.3, 0.35), (0, 0, 0)),
    ("first q=0.5, stronger", "first", 0.5, (0.5, 0.3, 0.2), (0, 0, 0)),
    ("first q=0.8, stronger", "first", 0.8, (0.5, 0.3, 0.2), (0, 0, 0)),
    ("shared, even", "shared", 0.0, (0.7, 0.2, 0.1), (0.1, 0.2, 0.7)),
    ("shared, stronger", "shared", 0.0, (0.85, 0.1, 0.05), (0.3, 0.3, 0.4)),
)
#: The SPRT: (elo0, elo1) and pair distributions (name, draw share of a game, share of pairs split by the
#: first mover); the games' other chances are set so that the Elo is exactly elo0 or elo1.
SPRT_TESTS = ((0.0, 50.0), (0.0, 100.0), (0.0, 200.0), (-100.0, 0.0), (100.0, 200.0), (200.0, 300.0))
SPRT_MODELS = (("no draws", 0.0, 0.0), ("30% draws", 0.3, 0.0), ("80% draws", 0.8, 0.0),
               ("first q=0.6", 0.3, 0.6), ("first q=0.9", 0.0, 0.9))
#: ``--narrow``: a test of a small gap, as a change to an engine is tested (hundreds of pairs a test: slow).
NARROW_TEST = (0.0, 20.0)
#: The ratings: the true ratings of a round robin's agents, games per pairing, and draw shares.
RATING_FIELDS = ((-300.0, -100.0, 0.0, 100.0, 300.0), (-150.0, -50.0, 50.0, 150.0), (-600.0, 0.0, 600.0))
RATING_GAMES = (10, 40, 200)


def games_of(rng: np.random.Generator, chances: Chances, shape: tuple[int, ...]) -> np.ndarray:
    """Per-game scores (1, 0.5, 0) drawn with ``chances``."""
    u = rng.random(shape)
    return np.where(u < chances[0], 1.0, np.where(u < chances[0] + chances[1], 0.5, 0.0))


def score(chances: Chances) -> float:
    """The expected score of one game."""
    return chances[0] + chances[1] / 2


def paired(rng: np.random.Generator, model: tuple[str, str, float, Chances, Chances], pairs: int) -> np.ndarray:
    """``pairs`` pairs of per-game scores (shape ``(pairs, 2)``) of a ``PAIR_MODELS`` model."""
    _, kind, q, a, b = model
    if kind == "first":
        scores = games_of(rng, a, (pairs, 2))
        split = rng.random(pairs) < q
        scores[split, 0], scores[split, 1] = 1.0, 0.0
        return scores
    favoured = rng.random(pairs) < 0.5
    return np.where(favoured[:, None], games_of(rng, a, (pairs, 2)), games_of(rng, b, (pairs, 2)))


def paired_score(model: tuple[str, str, float, Chances, Chances]) -> float:
    """The expected score of one game of a ``PAIR_MODELS`` model."""
    _, kind, q, a, b = model
    return q * 0.5 + (1 - q) * score(a) if kind == "first" else (score(a) + score(b)) / 2


def holds(interval: tuple[float, float], truth: float) -> bool:
    return interval[0] <= truth <= interval[1]


def intervals(reps: int, seed: int) -> None:
    print("Games' 95% interval: how often it holds the true Elo (independent games)")
    for chances in INTERVAL_CHANCES:
        truth = stats.elo_from_score(score(chances)) + 0.0  # + 0.0: an even match is +0, not -0
        cells = []
        for n in GAMES:
            rng = np.random.default_rng(seed)
            counts = rng.multinomial(n, chances, size=reps)
            held = sum(holds(stats.Trinomial(*map(int, c)).elo_interval(), truth) for c in counts)
            cells.append(f"{n} games {100 * held / reps:5.1f}%")
        print(f"  W/D/L {chances!s:17} Elo {truth:+6.0f}:  " + "   ".join(cells), flush=True)


def pairs(reps: int, seed: int) -> None:
    print("Paired games' 95% intervals: how often each holds the true Elo (pairs' / games')")
    for model in PAIR_MODELS:
        truth = stats.elo_from_score(paired_score(model)) + 0.0
        cells = []
        for n in PAIRS:
            rng = np.random.default_rng(seed)
            by_pairs = by_games = 0
            for _ in range(reps):
                scores = paired(rng, model, n)
                by_pairs += holds(stats.Pentanomial.from_pairs(scores.tolist()).elo_interval(), truth)
                by_games += holds(stats.Trinomial.from_scores(scores.ravel().tolist()).elo_interval(), truth)
            cells.append(f"{n} pairs {100 * by_pairs / reps:5.1f}% / {100 * by_games / reps:5.1f}%")
        print(f"  {model[0]:22} Elo {truth:+6.0f}:  " + "   ".join(cells), flush=True)


def null(reps: int, seed: int) -> None:
    print("Equal agents called unequal at the 5% level (Wald p / sign test p / LOS > 97.5%)")
    for chances in ((0.5, 0.0, 0.5), (0.35, 0.3, 0.35), (0.1, 0.8, 0.1)):
        cells = []
        for n in (10, 50, 200, 1000):
            rng = np.random.default_rng(seed)
            counts = [stats.Trinomial(*map(int, c)) for c in rng.multinomial(n, chances, size=reps)]
            wald = sum(t.p_value < 0.05 for t in counts) / reps
            sign = sum(t.sign_p_value < 0.05 for t in counts) / reps
            los = sum(t.los > 0.975 for t in counts) / reps
            cells.append(f"{n} games {100 * wald:4.1f} / {100 * sign:4.1f} / {100 * los:4.1f}%")
        print(f"  W/D/L {chances!s:17}  " + "   ".join(cells), flush=True)
    print("  paired games (pairs' Wald p / pairs' sign test p / games' Wald p):")
    for model in (PAIR_MODELS[0], PAIR_MODELS[3]):
        cells = []
        for n in (10, 25, 100, 500):
            rng = np.random.default_rng(seed)
            wald = sign = games = 0
            for _ in range(reps):
                scores = paired(rng, model, n)
                pentanomial = stats.Pentanomial.from_pairs(scores.tolist())
                wald += pentanomial.p_value < 0.05
                sign += pentanomial.sign_p_value < 0.05
                games += stats.Trinomial.from_scores(scores.ravel().tolist()).p_value < 0.05
            cells.append(f"{n} pairs {100 * wald / reps:4.1f} / {100 * sign / reps:4.1f} / {100 * games / reps:4.1f}%")
        print(f"  {model[0]:22}  " + "   ".join(cells), flush=True)


def pair_chances(elo: float, draws: float, first: float) -> np.ndarray | None:
    """The chances of a pair's 0, ½, 1, 1½ and 2 points: two independent games
    with ``draws`` drawn and the rest set so that, with a share ``first`` of
    the pairs split by the first mover, the Elo is ``elo``; None where no
    such games exist (too lopsided for so many draws)."""
    other = (stats.score_from_elo(elo) - first / 2) / (1 - first)
    win = other - draws / 2
    loss = 1 - win - draws
    if min(win, loss) < 0:
        return None
    game = np.array([loss, draws, win])
    pair = (1 - first) * np.convolve(game, game)
    pair[2] += first
    return pair


def sprt(reps: int, seed: int, narrow: bool = False) -> None:
    print("SPRT on the pairs, alpha = beta = 5%: wrong verdicts with the true Elo at elo0 / at elo1, "
          "average pairs")
    for elo0, elo1 in ((NARROW_TEST,) if narrow else ()) + SPRT_TESTS:
        test = SPRT(elo0, elo1, 0.05, 0.05)
        for name, draws, first in SPRT_MODELS:
            cells = []
            for truth in (elo0, elo1):
                chances = pair_chances(truth, draws, first)
                if chances is None:
                    cells.append(f"{'-':>20}")
                    continue
                rng = np.random.default_rng(seed)
                wrong = played = 0
                for _ in range(reps):
                    counts = [0, 0, 0, 0, 0]
                    verdict = None
                    while verdict is None:
                        counts[int(rng.choice(5, p=chances))] += 1
                        verdict = test.decide(counts)
                    wrong += verdict != ("H0" if truth == elo0 else "H1")
                    played += sum(counts)
                cells.append(f"{100 * wrong / reps:5.1f}% {played / reps:7.1f} pairs")
            print(f"  elo0={elo0:<+5g} elo1={elo1:<+5g} {name:12}  " + "   ".join(cells), flush=True)


def ratings(reps: int, seed: int) -> None:
    print("Fitted ratings of round robins: bias and RMSE of each agent's rating (Elo), 95% interval coverage")
    for field in RATING_FIELDS:
        truth = np.array(field) - np.mean(field)
        names = [f"a{k}" for k in range(len(truth))]
        for games in RATING_GAMES:
            for draws in (0.0, 0.3):
                rng = np.random.default_rng(seed)
                errors, held = [], 0
                for _ in range(reps):
                    outcomes = []
                    for i in range(len(truth)):
                        for j in range(i + 1, len(truth)):
                            expected = stats.score_from_elo(truth[i] - truth[j])
                            drawn = min(draws, 2 * min(expected, 1 - expected))
                            won = expected - drawn / 2
                            for u in rng.random(games):
                                outcomes.append((names[i], names[j], "A" if u < won else "draw" if u < won + drawn else "B"))
                    fitted = {r.agent: r for r in fit_ratings(outcomes) or ()}
                    errors.append([fitted[n].elo - t for n, t in zip(names, truth, strict=True)])
                    held += sum(fitted[n].low <= t <= fitted[n].high for n, t in zip(names, truth, strict=True))
                error = np.array(errors)
                bias = " ".join(f"{x:+4.0f}" for x in error.mean(axis=0))
                rmse = " ".join(f"{x:3.0f}" for x in np.sqrt((error**2).mean(axis=0)))
                ratings = "/".join(f"{x:+g}" for x in field)
                print(f"  {ratings:21} {games:3} games a pairing, draws {draws:.1f}: bias {bias}  RMSE {rmse}  "
                      f"held {100 * held / error.size:5.1f}%", flush=True)


SECTIONS: dict[str, Callable[[int, int], None]] = {
    "intervals": intervals, "pairs": pairs, "null": null, "sprt": sprt, "ratings": ratings,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=2000, help="matches simulated for each figure")
    parser.add_argument("--sprt-reps", type=int, default=1000, help="tests simulated for each SPRT figure")
    parser.add_argument("--narrow", action="store_true", help="test the SPRT of elo0=0,elo1=20 too (slow)")
    parser.add_argument("--seed", type=int, default=1, help="the seed every section starts from")
    parser.add_argument("--only", nargs="+", choices=list(SECTIONS), help="run these sections only")
    args = parser.parse_args()
    if args.reps < 10 or args.sprt_reps < 1:
        parser.error("--reps is 10 or more and --sprt-reps 1 or more")
    for name in args.only or SECTIONS:
        started = time.perf_counter()
        reps = {"sprt": args.sprt_reps, "ratings": args.reps // 10}.get(name, args.reps)
        if name == "sprt":
            sprt(reps, args.seed, args.narrow)
        else:
            SECTIONS[name](reps, args.seed)
        print(f"  ({time.perf_counter() - started:.0f} s)\n", flush=True)


if __name__ == "__main__":
    run_stoppable(main)  # Ctrl-C, SIGTERM, SIGHUP: one line and the shell's status
