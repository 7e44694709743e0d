"""What an arena run found: tables, plots and a self-contained HTML page.

``summarise`` turns the saved games into a ``Summary`` (numbers only);
``render_text`` prints it as tables (rich); ``write_report`` draws the plots
(matplotlib, PNG) and an HTML page that embeds them, so the page can be
mailed or archived on its own.
"""

from __future__ import annotations

import base64
import html
import io
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from c4lab import atomic
from c4lab.arena import standings, stats
from c4lab.arena.games import Game
from c4lab.arena.ratings import Rating, fit_ratings
from c4lab.arena.schedule import ArenaConfig, agent_labels


@dataclass(frozen=True)
class Pairing:
    """One pairing, from the first spec's side: its games (W/D/L, Elo with
    its interval, LOS, p-values of "equal": Wald's and the exact sign
    test's) and its pairs (pentanomial)."""

    first: str
    second: str
    games: stats.Trinomial
    pairs: stats.Pentanomial


@dataclass(frozen=True)
class Summary:
    """Everything the tables and plots show.  ``table`` is the ranking and
    the cross table (``standings.rank``); the rest is what only the arena
    knows: forfeits, move times, board sizes."""

    config: ArenaConfig
    games: int
    table: standings.Table
    pairings: tuple[Pairing, ...]
    by_size: dict[str, dict[str, tuple[float, int]]]  # spec -> "WxH" -> (score, games)
    forfeits: tuple[dict[str, Any], ...] = ()
    forfeit_counts: dict[str, int] = field(default_factory=dict)  # spec -> games it lost by forfeit
    #: spec -> (mean, max) s of the moves it played; an agent that played none (every game lost before
    #: its first move was made, as by an engine too slow for the limit) has no entry: "-" and null, not 0 s.
    move_times: dict[str, tuple[float, float]] = field(default_factory=dict)
    #: Ratings fitted to all the games at once (``ratings.fit_ratings``); None if the agents do not all meet.
    ratings: tuple[Rating, ...] | None = None
    #: spec -> answers whose seconds ``move_times`` leaves out: each lost its game, unplayed (``Game.unplayed``).
    moves_left_out: dict[str, int] = field(default_factory=dict)
    #: The games that differ: a game another of its pairing repeats move for move, with the same agent
    #: playing A, is counted once (``repeat_note``); None: as many as ``games``.
    distinct_games: int | None = None
    #: Each agent that played another's moves on some of the run's boards (``Results.stand_ins``): said
    #: under the ranking, so that a ranking of ``ntuple`` that is one of ``heuristic`` is not read as ntuple's.
    stand_ins: tuple[str, ...] = ()

    def label(self, spec: str) -> str:
        """``spec``'s name in the tables and plots (``ArenaConfig.label``)."""
        return self.config.label(spec)

    def to_dict(self) -> dict[str, Any]:
        """The summary as plain JSON values (a number that is not finite,
        as an Elo of a clean sweep, as ``null``)."""

        def number(x: float) -> float | None:
            return x + 0.0 if math.isfinite(x) else None  # + 0.0: an even score's -0.0 is written 0.0

        def bound(wins: int, draws: int, losses: int) -> dict[str, Any] | None:
            """Where ``elo`` is null for a score of 1 or 0: no finite estimate,
            and the bound the exact interval gives (see ``NO_ESTIMATE``)."""
            found = stats.elo_bound(wins, draws, losses)
            if found is None:
                return None
            kind, value = found
            return {kind: round(value, 1), "note": NO_ESTIMATE}

        def interval(ends: tuple[float, float]) -> list[float | None] | None:
            """None where the text says n/a (see NOTE); an end at infinity
            (the interval reaches a score of 0 or 1) is null, not a number."""
            if not _has_interval(*ends):
                return None
            return [e if math.isfinite(e) else None for e in ends]

        def timed(spec: str, which: int) -> float | None:
            """Its mean (0) or longest (1) move in seconds; None for an agent that played no move."""
            seconds = self.move_times.get(spec)
            return None if seconds is None else round(seconds[which], 5)

        return {
            "config": self.config.to_dict(),  # the settings the figures come from: seed, board, limit, ...
            "games": self.games,
            "stand_ins": list(self.stand_ins),  # agents that played another's moves, in the arena's words
            # the games that differ move for move (the rest repeat one, and count as new games in every figure)
            "distinct_games": self.games if self.distinct_games is None else self.distinct_games,
            "standings": [
                {
                    "spec": s.agent, "name": self.label(s.agent), "games": s.games, "score": s.score, "wins": s.wins, "draws": s.draws,
                    "losses": s.losses, "forfeits": self.forfeit_counts.get(s.agent, 0), "elo": number(s.elo),
                    "elo_bound": bound(s.wins, s.draws, s.losses), "elo_ci": interval((s.elo_low, s.elo_high)),
                    "mean_move_s": timed(s.agent, 0),
                    "max_move_s": timed(s.agent, 1),
                    "moves_left_out": self.moves_left_out.get(s.agent, 0),
                }
                for s in self.table.standings
            ],
            "pairings": [
                {
                    "first": p.first, "second": p.second, "games": p.games.games, "wins": p.games.wins,
                    "draws": p.games.draws, "losses": p.games.losses, "score": p.games.score,
                    "pentanomial": list(p.pairs.counts), "elo": number(p.games.elo),
                    "elo_bound": bound(p.games.wins, p.games.draws, p.games.losses), "elo_ci": interval(p.games.elo_interval()), "pentanomial_elo_ci": interval(p.pairs.elo_interval()),
                    "los": number(p.games.los) if _has_test(p.games) else None,
                    "p_value": None if not _has_test(p.games) or p.games.variance == 0 else number(p.games.p_value),
                    "sign_p_value": number(p.games.sign_p_value) if _has_test(p.games) else None,
                    "pentanomial_los": number(p.pairs.los) if _has_pair_test(p.pairs) else None,
                    "pentanomial_p_value": number(p.pairs.p_value) if _has_pair_test(p.pairs) else None,
                    "pentanomial_sign_p_value": number(p.pairs.sign_p_value) if p.pairs.pairs else None,
                }
                for p in self.pairings
            ],
            "cross": {
                r: {c.column: {"score": c.score, "games": c.games} for c in self.table.cells if c.row == r}
                for r in self.table.agents
            },
            "by_size": {s: {b: {"score": v[0], "games": v[1]} for b, v in row.items()} for s, row in self.by_size.items()},
            "forfeits": list(self.forfeits),
            "ratings": None if self.ratings is None else [
                {"spec": r.agent, "elo": round(r.elo, 2), "elo_ci": [round(r.low, 2), round(r.high, 2)]}
                for r in self.ratings
            ],
            # the virtual draws a pairing the fit took: 0, or 1 where the games alone fit no finite ratings
            "ratings_prior_draws": None if not self.ratings else self.ratings[0].prior,
        }


#: Under the ranking, when an agent goes by its ``name=``: which spec each name stands for.
NAMES_NOTE = "Named by their name=: {names}"


def names_note(summary: Summary) -> str | None:
    """``NAMES_NOTE`` with each name and its spec, or ``None`` when every
    agent is shown by its spec."""
    labels = agent_labels(summary.config.specs)
    return NAMES_NOTE.format(names="; ".join(f"{name} = {spec}" for spec, name in labels.items())) if labels else None


def summarise(config: ArenaConfig, games: Sequence[Game], stand_ins: Sequence[str] = ()) -> Summary:
    """The numbers behind the report, from the saved games; ``stand_ins``:
    the notes of agents that played another's moves (``Results.stand_ins``)."""
    by_size: dict[str, dict[str, list[float]]] = {s: {} for s in config.specs}
    forfeit_counts = dict.fromkeys(config.specs, 0)
    times: dict[str, list[float]] = {s: [] for s in config.specs}
    left_out = dict.fromkeys(config.specs, 0)
    forfeits = []
    for game in games:
        size = f"{game.width}x{game.height}"
        for spec, side in ((game.a, "A"), (game.b, "B")):
            cell = by_size[spec].setdefault(size, [0.0, 0])
            cell[0] += game.score_of(spec)
            cell[1] += 1
            times[spec].extend(game.played_times(side))  # thinking: a hung engine's wait is no move of its
            left_out[spec] += game.unplayed == side
        if game.forfeit:
            loser, winner = (game.a, game.b) if game.forfeit.side == "A" else (game.b, game.a)
            forfeit_counts[loser] += 1
            forfeits.append({
                "pairing": game.pairing, "pair": game.pair, "game": game.game, "agent": loser, "against": winner,
                "position": game.position, "reason": game.forfeit.reason, "detail": game.forfeit.detail,
            })
    pairings = []
    for index, (first, second) in enumerate(config.pairings()):
        by_pair: dict[int, list[float]] = {}
        for g in games:
            if g.pairing == index:
                by_pair.setdefault(g.pair, []).append(g.score_of(first))
        scores = [s for pair in by_pair.values() for s in pair]
        pairings.append(Pairing(
            first, second, stats.Trinomial.from_scores(scores),
            stats.Pentanomial.from_pairs(p for p in by_pair.values() if len(p) == 2),
        ))
    return Summary(
        config,
        len(games),
        standings.rank((g.a, g.b, g.result) for g in games),
        tuple(pairings),
        {s: {b: (v[0], int(v[1])) for b, v in sorted(row.items(), key=_size_order)} for s, row in by_size.items()},
        tuple(forfeits),
        forfeit_counts,
        {s: (sum(t) / len(t), max(t)) for s, t in times.items() if t},
        fit_ratings((g.a, g.b, g.result) for g in games),
        left_out,
        len({(g.pairing, g.a, g.position) for g in games}),
        tuple(stand_ins),
    )


def _size_order(item: tuple[str, Any]) -> tuple[int, int, int]:
    w, h = (int(x) for x in item[0].split("x"))
    return (w * h, w, h)


#: What a score of 1 (or 0) says instead of an Elo figure.
NO_ESTIMATE = (
    "a perfect score (or none) has no finite Elo estimate: the bound is the end of the score's "
    "exact (Clopper-Pearson) 95% interval"
)


def _elo(x: float) -> str:
    """An Elo figure, signed; ``0`` (not ``-0`` or ``+0``) when it rounds to zero."""
    if math.isnan(x):
        return "-"
    if math.isinf(x):
        return "+inf" if x > 0 else "-inf"
    rounded = round(x)
    return f"{rounded:+d}" if rounded else "0"


def _estimate(x: float, wins: int, draws: int, losses: int) -> str:
    """An Elo estimate; for a score of 1 or 0 (no finite one) the bound
    the exact interval gives: ``>=+140``, ``<=-140`` (``NO_ESTIMATE``)."""
    found = stats.elo_bound(wins, draws, losses) if math.isinf(x) else None
    if found is None:
        return _elo(x)
    kind, value = found
    return (">=" if kind == "at_least" else "<=") + _elo(value)


#: Shown for an interval or p-value that the sample cannot give: its games
#: (or, for the pentanomial interval, its pairs) all ended alike -- a sweep,
#: all draws, one pair -- so the normal approximation has zero variance and
#: would print a point as if it were certain; or it had so few games that the
#: interval spans every score, from -inf to +inf, and says nothing.
NOT_AVAILABLE = "n/a"
NOTE = (
    f"{NOT_AVAILABLE}: every game (or pair) ended alike, or too few were played: "
    "the normal approximation gives no interval or p-value there."
)


def _has_interval(low: float, high: float) -> bool:
    """Whether (low, high) is an interval worth showing (see ``NOT_AVAILABLE``):
    not a point, not -inf to +inf, not the ``nan`` of no games at all."""
    return low != high and not (math.isinf(low) and math.isinf(high)) and not (math.isnan(low) or math.isnan(high))


def _has_test(games: stats.Trinomial) -> bool:
    """Whether a pairing has a LOS and a p-value of "equal" to show: not
    without games (``stats`` gives 0.5 and 1 there, "no evidence", which a
    table would read as a result)."""
    return games.games > 0


def _has_pair_test(pairs: stats.Pentanomial) -> bool:
    """Whether the pairs give a LOS and a p-value to show: some pairs, not
    all alike (the normal approximation's zero variance, ``NOT_AVAILABLE``)."""
    return pairs.pairs > 0 and pairs.variance > 0


def _interval(low: float, high: float) -> str:
    if not _has_interval(low, high):
        return NOT_AVAILABLE
    return f"[{_elo(low)}, {_elo(high)}]"


def _p(x: float) -> str:
    """A p-value; below double precision's resolution near 1 it is shown as a bound."""
    return f"{x:.3g}" if x >= 1e-15 or math.isnan(x) else "<1e-15"


def _percent(x: float) -> str:
    return "-" if math.isnan(x) else f"{100 * x:.1f}%"


STANDING_COLUMNS = ("#", "agent", "games", "score", "%", "W", "D", "L", "forfeits", "Elo vs field", "95% CI",
                    "mean s/move")
#: The two intervals of a pairing say what they are from: the games' (each game taken as independent: too narrow
#: where an opening favours one agent in both its games) and the pairs' (what a paired match should be read by).
#: They were "95% CI" and "CI (pairs)", the first read as the pairing's interval, the second without a level.
#: The likelihood of superiority likewise: the games' and the pairs' (the pairs' was in the JSON only).
PAIRING_COLUMNS = ("first", "second", "games", "W-D-L", "pairs 0/½/1/1½/2", "Elo diff", "95% CI (games)",
                   "95% CI (pairs)", "LOS (games)", "LOS (pairs)", "p (equal)", "p (sign)", "p (pairs)")
#: Fewer decisive games than this in a pairing, and the report says which p-value to read (``SMALL_NOTE``).
SMALL_SAMPLE = 30
#: Under the pairings, when one of them has few decisive games: the Wald p-value is too sure there.
SMALL_NOTE = (
    "p (equal) and p (pairs) use the normal approximation, too sure with fewer than {small} decisive games (9 wins "
    "and a draw give p (equal) < 1e-15): read p (sign) there, the exact two-sided sign test on the wins and losses, "
    "the draws left out (0.0039 for the 10 games of that example)"
)
#: "against" names the opponent; "pairing", "pair" and "game" are the game's numbers in the results file
#: (``FORFEIT_WHERE``), "position" the game up to the forfeit, which ``c4lab show`` and ``analyse`` read.
FORFEIT_COLUMNS = ("agent", "against", "pairing", "pair", "game", "position", "reason", "detail")
RATING_COLUMNS = ("#", "agent", "Elo (fitted)", "95% CI")
#: Under the fitted ratings: what they are (``ratings``).
RATING_NOTE = (
    "Fitted ratings: the logistic Elo model fitted to every game at once (maximum likelihood, as BayesElo "
    "and Ordo do; the mean rating is 0), so two agents' difference is their Elo "
    "difference even where they never met; the intervals are each agent's against the field's mean."
)
#: After ``RATING_NOTE`` where the fit took its prior (``Rating.prior``): the games alone had no finite maximum.
PRIOR_NOTE = (
    "Some agents won or lost every game against the rest, which no finite ratings fit: one virtual draw was "
    "added to each pairing (40-0 read as 40.5-0.5, 763 Elo apart), so these ratings are pulled towards 0."
)


def rating_note(summary: Summary) -> str:
    """``RATING_NOTE``, and ``PRIOR_NOTE`` after it where the fit needed its prior."""
    ratings = summary.ratings or ()
    return RATING_NOTE + (f" {PRIOR_NOTE}" if ratings and ratings[0].prior else "")
#: Under the ranking, when some answer's seconds are not in "mean s/move".
LEFT_OUT_NOTE = (
    "mean s/move is over the moves played: an answer that lost its game on time or as an illegal move is left "
    "out ({count} here), since a hung engine's is the wait until --limit + --margin, not thinking (the forfeits "
    "below say how long; --json has the count as moves_left_out)"
)


#: Under the ranking, when some agent of the run has played no game yet (a run stopped early): the ranking,
#: the pairings' figures and the fitted ratings come from games, so it was missing from them without a word.
UNPLAYED_NOTE = "Not ranked, no game played yet (the run stopped before their games): {agents}"


def unplayed_note(summary: Summary) -> str | None:
    """``UNPLAYED_NOTE`` naming the run's agents that played no game, or ``None``."""
    played = {agent for pairing in summary.pairings if pairing.games.games for agent in (pairing.first, pairing.second)}
    missing = [spec for spec in summary.config.specs if spec not in played]
    return UNPLAYED_NOTE.format(agents=", ".join(map(summary.label, missing))) if missing else None


#: Under the pairings, when some games repeat others move for move: the warning the run gave before its games
#: (``ArenaConfig.schedule_notes``) was lost with the run's output, and the report, the file that travels, said
#: nothing (10-0 from 2 different games read as p 0.002 and Elo >= +140).
REPEAT_NOTE = (
    "Only {distinct} of the {games} games differ: the others repeat one of them move for move (the same start, "
    "and agents that play alike from it), and every figure above counts each repeat as a new game"
)


def repeat_note(summary: Summary) -> str | None:
    """``REPEAT_NOTE`` with its counts, or ``None`` when no game repeats another."""
    distinct = summary.distinct_games
    if distinct is None or distinct >= summary.games:
        return None
    return REPEAT_NOTE.format(distinct=distinct, games=summary.games)


def left_out_note(summary: Summary) -> str | None:
    """``LEFT_OUT_NOTE`` with its count, or ``None`` when every answer timed was played."""
    count = sum(summary.moves_left_out.values())
    return LEFT_OUT_NOTE.format(count=count) if count else None


#: Under the forfeits: what they are in the statistics.
FORFEIT_NOTE = "A game lost by forfeit is a loss in every figure above (W/D/L, score, Elo, intervals, LOS, p, SPRT)."
#: Under the forfeits: where to find each game.  The numbers were shown bare: counted from 0 or 1, in the
#: run or in the pairing, and no position to look at.
FORFEIT_WHERE = (
    "pairing, pair and game are the game's own in the results file (its \"pairing\", \"pair\" and \"game\", "
    "each from 0: pairing 0 is the first row of the pairings, game 0 of a pair the one whose A is the pairing's "
    "first agent); position is the game up to the forfeit: c4lab show POSITION prints it, c4lab analyse "
    "POSITION opens it on the board."
)


def _seconds(times: tuple[float, float] | None) -> str:
    """The "mean s/move" cell: ``-`` for an agent that played no move (an
    engine that forfeited every game at its first answer thought 0.000 s a
    move by the old table, the opposite of what happened)."""
    return "-" if times is None else f"{times[0]:.3f}"


def standing_rows(summary: Summary) -> list[list[str]]:
    """The ranking as text cells (``STANDING_COLUMNS``), best first."""
    return [
        [
            str(rank), summary.label(s.agent), str(s.games), f"{s.score:g}", f"{100 * s.fraction:.1f}", str(s.wins), str(s.draws),
            str(s.losses), str(summary.forfeit_counts.get(s.agent, 0)), _estimate(s.elo, s.wins, s.draws, s.losses), _interval(s.elo_low, s.elo_high),
            _seconds(summary.move_times.get(s.agent)),
        ]
        for rank, s in enumerate(summary.table.standings, 1)
    ]


def pairing_rows(summary: Summary) -> list[list[str]]:
    """The pairings as text cells (``PAIRING_COLUMNS``)."""
    return [
        [
            summary.label(p.first), summary.label(p.second), str(p.games.games), f"{p.games.wins}-{p.games.draws}-{p.games.losses}",
            "/".join(map(str, p.pairs.counts)), _estimate(p.games.elo, p.games.wins, p.games.draws, p.games.losses), _interval(*p.games.elo_interval()),
            _interval(*p.pairs.elo_interval()), _percent(p.games.los) if _has_test(p.games) else NOT_AVAILABLE,
            _percent(p.pairs.los) if _has_pair_test(p.pairs) else NOT_AVAILABLE,
            NOT_AVAILABLE if not _has_test(p.games) or p.games.variance == 0 else _p(p.games.p_value),
            _p(p.games.sign_p_value) if _has_test(p.games) else NOT_AVAILABLE,
            _p(p.pairs.p_value) if _has_pair_test(p.pairs) else NOT_AVAILABLE,
        ]
        for p in summary.pairings
    ]


def rating_rows(summary: Summary) -> list[list[str]]:
    """The fitted ratings as text cells (``RATING_COLUMNS``), best first;
    none where there are none (agents that do not all meet)."""
    return [[str(k), summary.label(r.agent), _elo(r.elo), f"[{_elo(r.low)}, {_elo(r.high)}]"]
            for k, r in enumerate(summary.ratings or (), 1)]


def _rated(summary: Summary) -> bool:
    """Whether the report shows fitted ratings: three agents or more (two
    agents' difference is the pairing's Elo), all met."""
    return summary.ratings is not None and len(summary.ratings) > 2


def forfeit_rows(summary: Summary) -> list[list[str]]:
    """The games lost by forfeit as text cells (``FORFEIT_COLUMNS``), by
    pairing, then pair and game: in the order games end (pair by pair,
    every pairing's) one engine's forfeits were strewn through the table."""
    return [[summary.label(f["agent"]), summary.label(f["against"]), str(f["pairing"]), str(f["pair"]), str(f["game"]),
             f["position"], f["reason"], f["detail"]]
            for f in sorted(summary.forfeits, key=lambda f: (f["pairing"], f["pair"], f["game"]))]


def cross_rows(summary: Summary) -> list[list[str]]:
    """The cross table: a header row of agents, then each agent's score/games
    against each column (ranking order)."""
    order = summary.table.agents
    rows = [["", *map(summary.label, order)]]
    for r in order:
        cells = []
        for c in order:
            cell = summary.table.cell(r, c) if r != c else None
            cells.append("" if cell is None else f"{cell.score:g}/{cell.games}" if cell.games else "-")
        rows.append([summary.label(r), *cells])
    return rows


def _has_gaps(summary: Summary) -> bool:
    """Whether a table shows ``NOT_AVAILABLE`` (and needs ``NOTE``)."""
    return any(NOT_AVAILABLE in row for row in (*standing_rows(summary), *pairing_rows(summary)))


def _has_small_sample(summary: Summary) -> bool:
    """Whether some pairing with games has fewer than ``SMALL_SAMPLE`` decisive
    ones and shows a p (equal) or p (pairs) (and the pairings need
    ``SMALL_NOTE``; where both say n/a, a sweep's, it said nothing of them)."""
    equal, pairs = PAIRING_COLUMNS.index("p (equal)"), PAIRING_COLUMNS.index("p (pairs)")
    return any(p.games.games and p.games.wins + p.games.losses < SMALL_SAMPLE
               and (row[equal] != NOT_AVAILABLE or row[pairs] != NOT_AVAILABLE)
               for p, row in zip(summary.pairings, pairing_rows(summary), strict=True))


def _has_bounds(summary: Summary) -> bool:
    """Whether a table shows a bound instead of an Elo estimate (and needs ``NO_ESTIMATE``)."""
    return any(cell.startswith((">=", "<=")) for row in (*standing_rows(summary), *pairing_rows(summary))
               for cell in row)


#: A text report's width: its notes' lines, and its tables' at least.
NARROWEST = 140
#: The widest a text report's table grows before a long spec or figure folds onto more lines.
WIDEST = 200


def render_text(summary: Summary, width: int | None = None) -> str:
    """The ranking, the pairings, the cross table and the forfeits, as
    plain-text tables: each as wide as it needs (up to ``WIDEST``; a
    file's, a pipe's), or within ``width`` columns (a terminal's: a table
    wider than the screen had each row broken across two lines mid-cell):
    one wider than that is cut into parts that fit, each with the columns
    that name its rows, where a cut fits (else a long cell folds inside its
    column)."""
    from rich.console import Console
    from rich.measure import Measurement
    from rich.table import Table
    from rich.text import Text  # lazy, as rich above: only where a report is printed

    buffer = io.StringIO()
    narrowest = NARROWEST if width is None else width
    console = Console(file=buffer, width=narrowest, force_terminal=False, color_system=None, emoji=False)

    def table(title: str, columns: Sequence[str], rows: list[list[str]], left: Sequence[str]) -> None:
        def made(title: str, chosen: Sequence[int]) -> Table:
            # Text, not markup: a spec or a forfeit's detail (an engine's stderr) may hold "[/b]".
            shown = Table(title=title)
            for i in chosen:  # a long spec folds onto more lines: cut short, two agents could read alike
                shown.add_column(Text(columns[i]), justify="left" if columns[i] in left else "right", overflow="fold")
            for row in rows:
                shown.add_row(*(Text(row[i]) for i in chosen))
            return shown

        def needs(shown: Table) -> int:
            return Measurement.get(console, console.options.update_width(WIDEST), shown).maximum

        whole = made(title, range(len(columns)))
        if width is None:
            # As wide as the table needs up to WIDEST (the pairings' thirteen columns need about 160 for two
            # short specs), so that no figure or spec folds; the notes keep NARROWEST.
            console.width = max(NARROWEST, needs(whole))
            console.print(whole)
            console.width = narrowest
            return
        # A terminal: a table wider than it is cut into parts that fit, each with the columns that name
        # the row (through the last left-aligned one: "#, agent", "first, second"), so that no figure folds.
        keys = list(range(max(columns.index(name) for name in left) + 1))
        parts: list[list[int]] = []
        for i in range(len(keys), len(columns)):
            if parts and needs(made(title, keys + parts[-1] + [i])) <= width:
                parts[-1].append(i)
            else:
                parts.append([i])
        if needs(whole) <= width or len(parts) < 2 or any(needs(made(title, keys + part)) > width for part in parts):
            console.print(whole)  # it fits, or no cut would: within the width, a long cell folds
            return
        for n, part in enumerate(parts, 1):
            console.print(made(f"{title}, {n} of {len(parts)}", keys + part))

    table(f"Ranking ({summary.games} game{'' if summary.games == 1 else 's'})", STANDING_COLUMNS, standing_rows(summary), ("agent",))
    for note in summary.stand_ins:
        console.print(f"Note: {note}.", markup=False)
    if names := names_note(summary):
        console.print(f"{names}.", markup=False)
    if left_out_note(summary):
        console.print(f"{left_out_note(summary)}.")
    if unplayed_note(summary):
        console.print(f"{unplayed_note(summary)}.", markup=False)
    table("Pairings (first agent's view)", PAIRING_COLUMNS, pairing_rows(summary), ("first", "second"))
    if repeated := repeat_note(summary):
        console.print(f"{repeated}.", markup=False)
    if _has_gaps(summary):
        console.print(NOTE)
    if _has_small_sample(summary):
        console.print(SMALL_NOTE.format(small=SMALL_SAMPLE) + ".")
    if _has_bounds(summary):
        console.print(f">= / <=: {NO_ESTIMATE}.")
    if _rated(summary):
        table("Fitted ratings", RATING_COLUMNS, rating_rows(summary), ("agent",))
        console.print(rating_note(summary))
    if len(summary.table.agents) > 2:
        header, *rows = cross_rows(summary)
        table("Cross table (row's score against column)", header, rows, ("",))
    if summary.forfeits:
        table("Games lost by forfeit", FORFEIT_COLUMNS, forfeit_rows(summary), FORFEIT_COLUMNS)
        console.print(FORFEIT_NOTE)
        console.print(FORFEIT_WHERE)
    return buffer.getvalue().rstrip("\n")


# -- plots and the HTML page ------------------------------------------------


def _figure_png(fig: Any) -> bytes:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=110, bbox_inches="tight")
    return buffer.getvalue()


def cross_cell_percent(fraction: float) -> str:
    """A score fraction as a cell of the cross-table plot: a whole per cent
    where it is one, else to a tenth, so that a pairing's two cells add up
    to 100 % (11.5 and 8.5 of 20 were drawn 57 % and 42 %)."""
    tenths = round(1000 * fraction)
    return f"{tenths // 10}%" if tenths % 10 == 0 else f"{tenths / 10:.1f}%"


def plot_cross_table(summary: Summary) -> bytes:
    """Heat map of the row agent's score fraction against the column agent."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    order = summary.table.agents
    n = len(order)
    grid = [[math.nan if r == c else summary.table.cell(r, c).fraction for c in order] for r in order]
    fig, ax = plt.subplots(figsize=(1.6 + 1.1 * n, 1.2 + 0.9 * n))
    image = ax.imshow(grid, cmap="RdYlGn", vmin=0, vmax=1)
    names = [summary.label(agent) for agent in order]
    ax.set_xticks(range(n), names, rotation=30, ha="right")
    ax.set_yticks(range(n), names)
    for i in range(n):
        for j in range(n):
            if not math.isnan(grid[i][j]):
                ax.text(j, i, cross_cell_percent(grid[i][j]), ha="center", va="center", fontsize=9)
    ax.set_title("Score of the row against the column")
    fig.colorbar(image, ax=ax, fraction=0.046)
    data = _figure_png(fig)
    plt.close(fig)
    return data


@dataclass(frozen=True)
class EloPoint:
    """One agent's row of the Elo plot: its figure against the field and
    the ends of its 95% interval (an infinite end: no end on that side,
    drawn as an arrow).  ``bound`` is ``">="`` or ``"<="`` where the agent
    won or lost every game: it has no finite figure, and ``elo`` is the
    bound the exact interval of its score gives (the ranking's ``>=+234``)."""

    agent: str
    elo: float
    low: float
    high: float
    bound: str | None = None


def elo_points(summary: Summary) -> list[EloPoint]:
    """The rows of the Elo plot, in the ranking's order: every agent that
    played.  One that won or lost every game is drawn at its bound, open
    on the far side; it was left out, so a gauntlet whose opponents all
    lost every game (broken engines, say) drew an empty plot."""
    points = []
    for s in summary.table.standings:
        if math.isfinite(s.elo):
            points.append(EloPoint(s.agent, s.elo, s.elo_low, s.elo_high))
            continue
        found = stats.elo_bound(s.wins, s.draws, s.losses)
        if found is None:  # no game yet (a run cut short): nothing to draw
            continue
        kind, value = found
        if kind == "at_least":
            points.append(EloPoint(s.agent, value, value, math.inf, ">="))
        else:
            points.append(EloPoint(s.agent, value, -math.inf, value, "<="))
    return points


def plot_elo(summary: Summary) -> bytes:
    """Each agent's Elo against the field, with its 95% interval (a sweep's
    bound, hollow, with an arrow on its open side: ``elo_points``)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    standings = summary.table.standings
    points = elo_points(summary)
    fig, ax = plt.subplots(figsize=(7, 1 + 0.5 * max(1, len(standings))))
    for bounded in (False, True):
        rows = [(row, p) for row, p in enumerate(points) if (p.bound is not None) == bounded]
        if not rows:
            continue
        lows = [p.elo - p.low if math.isfinite(p.low) else 0 for _, p in rows]
        highs = [p.high - p.elo if math.isfinite(p.high) else 0 for _, p in rows]
        ax.errorbar([p.elo for _, p in rows], [row for row, _ in rows], xerr=[lows, highs], fmt="o", capsize=4,
                    color="C0", markerfacecolor="white" if bounded else "C0")
    # An interval open on one side (a sweep of one pairing bounds the Elo on one side only): an arrow to
    # the plot's edge, not a bar that would read as a finite end at the point.
    left, right = ax.get_xlim()
    reach = 0.15 * ((right - left) or 100.0)
    opened = False
    for row, p in enumerate(points):
        for end, edge in ((p.high, right + reach), (p.low, left - reach)):
            if math.isinf(end):
                opened = True
                ax.annotate("", xy=(edge, row), xytext=(p.elo, row),
                            arrowprops={"arrowstyle": "-|>", "color": "C0", "linewidth": 1.2})
    if opened:
        ax.set_xlim(left - reach, right + reach)
    ax.set_yticks(range(len(points)), [summary.label(p.agent) + (f" ({p.bound}{_elo(p.elo)})" if p.bound else "") for p in points])
    ax.invert_yaxis()
    ax.axvline(0, color="grey", linewidth=0.8)
    ax.set_xlabel("Elo against the rest of the field (95% interval"
                  + ("; an arrow: no end on that side" if opened else "")
                  + ("; hollow: a bound, all won or all lost" if any(p.bound for p in points)
                     else "") + ")")
    unplayed = [summary.label(s.agent) for s in standings if s.games == 0]
    ax.set_title("Elo" + (f" (not shown, no game yet: {', '.join(unplayed)})" if unplayed else ""))
    data = _figure_png(fig)
    plt.close(fig)
    return data


def board_sizes(summary: Summary) -> dict[str, int]:
    """The board sizes of the games (``"9x8"``), fewest cells first, each
    with its number of games (every game counts for both its agents in
    ``by_size``): the plot's labels give it, as a bar of 1.0 from 2 games
    read as one from 200."""
    sizes = sorted({b for row in summary.by_size.values() for b in row}, key=lambda b: _size_order((b, None)))
    return {b: sum(row[b][1] for row in summary.by_size.values() if b in row) // 2 for b in sizes}


def plot_by_size(summary: Summary) -> bytes:
    """Each agent's score fraction by board size (cells, smallest first), as
    grouped bars: sizes are categories, so no line joins them, and agents
    with equal scores stand side by side instead of hiding each other."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sizes = board_sizes(summary)
    names = list(sizes)
    specs = list(summary.by_size)
    fig, ax = plt.subplots(figsize=(max(6.0, 0.25 * len(sizes) * max(len(specs), 2) + 3), 4))
    width = 0.8 / max(len(specs), 1)
    for k, spec in enumerate(specs):
        row = summary.by_size[spec]
        xs = [i for i, b in enumerate(names) if b in row]
        ys = [row[names[i]][0] / row[names[i]][1] for i in xs]
        centres = [x - 0.4 + (k + 0.5) * width for x in xs]
        bars = ax.bar(centres, ys, width=width, label=summary.label(spec))
        ax.plot(centres, ys, "o", color=bars.patches[0].get_facecolor() if bars.patches else None,
                markersize=4, clip_on=False)  # a score of 0 is a dot on the axis, not an empty place
    ax.set_xticks(range(len(sizes)), [f"{b} ({n})" for b, n in sizes.items()], rotation=45)
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("score")
    ax.set_xlabel("board (W x H, fewest cells first; its games in brackets)")
    ax.set_title("Score by board size")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    data = _figure_png(fig)
    plt.close(fig)
    return data


def write_report(
    summary: Summary, folder: str | Path, stopped: str | None = None, sprt: str | None = None
) -> list[Path]:
    """Write ``cross-table.png``, ``elo.png``, ``by-size.png`` and
    ``report.html`` (which embeds the three) into ``folder``; ``stopped``:
    why the run ended before its last game (the SPRT's verdict), said on
    the page; ``sprt``: where the run's test stands when it did not stop
    it (no decision yet, its LLR and bounds).  The four are written whole,
    all of them or none (``atomic.write_all``)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    images = {
        "cross-table.png": plot_cross_table(summary),
        "elo.png": plot_elo(summary),
        "by-size.png": plot_by_size(summary),
    }
    files = {folder / name: data for name, data in images.items()}
    files[folder / "report.html"] = _html(summary, images, stopped, sprt).encode("utf-8")
    atomic.write_all(files)  # all four or none: a full disk left a page cut short beside the plots of another run
    return list(files)


def describe_setting(config: ArenaConfig) -> str:
    """The experiment's settings in one line, as the report page opens
    with them.  A run from an openings file names how many starts it has
    rather than a board and random opening moves: it plays neither (the
    header keeps ``plies`` at its default all the same), and a page that
    said "board classic, 2 random opening moves" misreported the run."""
    starts = (
        f"{len(config.openings)} start position{'s' if len(config.openings) != 1 else ''}"
        " from an openings file, used in turn"
        if config.openings
        else f"board {config.board}{' with bonus' if config.bonus else ''}, {config.plies} random opening"
        f" move{'s' if config.plies != 1 else ''}"
    )
    return (
        f"{starts}, {config.games} games per pairing ({'gauntlet' if config.gauntlet else 'round robin'}),"
        f" seed {config.seed}, limit {config.limit:g} s + {config.margin:g} s per move"
    )


#: Under each plot on the page (and its ``alt`` text): what it shows.  The page named its plots by their
#: file names only, and "Elo" alone did not say which of the report's two Elo figures it draws.
FIGURE_CAPTIONS = {
    "cross-table.png": "Cross table: the share of the points each row's agent took from each column's "
                       "(blank: they did not meet).",
    "elo.png": "Elo vs field: each agent's performance over all its games with its 95% interval, as in the "
               "ranking (not the fitted ratings); an agent that won or lost every game has no finite figure "
               "and is drawn hollow at the bound the ranking gives (>=, <=), with an arrow on its open side.",
    "by-size.png": "Score by board size: each agent's share of the points on each board size, "
                   "fewest cells first.",
}


def _html(summary: Summary, images: dict[str, bytes], stopped: str | None = None, sprt: str | None = None) -> str:
    esc = html.escape
    config = summary.config

    def table(columns: Sequence[str], rows: list[list[str]]) -> str:
        head = "".join(f"<th>{esc(c)}</th>" for c in columns)
        body = "".join("<tr>" + "".join(f"<td>{esc(cell)}</td>" for cell in row) + "</tr>" for row in rows)
        return f"<table><tr>{head}</tr>{body}</table>"

    figures = "".join(
        f'<figure><img alt="{esc(FIGURE_CAPTIONS.get(name, name))}" '
        f'src="data:image/png;base64,{base64.b64encode(data).decode()}">'
        f"<figcaption>{esc(FIGURE_CAPTIONS.get(name, name))}</figcaption></figure>"
        for name, data in images.items()
    )
    setting = esc(describe_setting(config)) + (
        f"; stopped early: {esc(stopped)}" if stopped else f"; {esc(sprt)}" if sprt else ""
    )
    if not stopped and summary.games < config.total_games:  # the page travels without the note the command printed
        setting += (f"; <strong>unfinished</strong>: {summary.games} of its {config.total_games} games played"
                    " (the same c4lab arena command resumes it)")
    def sentence(note: str | None) -> str:  # a note, where there is one, as a paragraph
        return f"<p>{esc(note)}.</p>" if note else ""

    header, *rows = cross_rows(summary)
    cross = f"<h2>Cross table</h2>\n{table(header, rows)}" if len(summary.table.agents) > 2 else ""
    fitted = (f"<h2>Fitted ratings</h2>\n{table(RATING_COLUMNS, rating_rows(summary))}\n<p>{esc(rating_note(summary))}</p>"
              if _rated(summary) else "")
    lost = (f"<h2>Forfeits</h2>\n{table(FORFEIT_COLUMNS, forfeit_rows(summary))}\n<p>{esc(FORFEIT_NOTE)}</p>"
            f"\n<p>{esc(FORFEIT_WHERE)}</p>" if summary.forfeits else "")
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>c4lab arena report</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 2em; color: #222; }}
table {{ border-collapse: collapse; margin: 1em 0; }}
th, td {{ border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: right; }}
td:nth-child(2), td:first-child {{ text-align: left; }}
figure {{ display: inline-block; margin: 1em; max-width: 46em; vertical-align: top; }} img {{ max-width: 100%; }}
figcaption {{ font-size: 0.9em; color: #444; }}
</style></head><body>
<h1>c4lab arena report</h1>
<p>{summary.games} games: {setting}.</p>
<h2>Ranking</h2>
{table(STANDING_COLUMNS, standing_rows(summary))}
{"".join(sentence(f"Note: {note}") for note in summary.stand_ins)}
{sentence(names_note(summary))}
{sentence(left_out_note(summary))}
{sentence(unplayed_note(summary))}
<h2>Pairings</h2>
{table(PAIRING_COLUMNS, pairing_rows(summary))}
{sentence(repeat_note(summary))}
{f"<p>{esc(NOTE)}</p>" if _has_gaps(summary) else ""}
{f"<p>{esc(SMALL_NOTE.format(small=SMALL_SAMPLE))}.</p>" if _has_small_sample(summary) else ""}
{f"<p>&gt;= / &lt;=: {esc(NO_ESTIMATE)}.</p>" if _has_bounds(summary) else ""}
{fitted}
{cross}
{lost}
<h2>Plots</h2>
{figures}
</body></html>
"""
