"""The learning curve of ``c4lab train ntuple``: its points, and its three
files, ``PREFIX.csv`` (the data, which a resumed run reads back and goes
on from), ``PREFIX.png`` and ``PREFIX.html`` (drawn from the CSV's points).

The CSV is written whole to a temporary file and renamed at each
checkpoint and at the end, so a run killed at any moment leaves the curve
of its last checkpoint; a run never overwrites another run's curve (the
command refuses it before training: :func:`check_curve`).
"""

from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass, field
from pathlib import Path

from c4lab import atomic
from c4lab.agents.ntuple_net import RUN_ID
from c4lab.atomic import replacing
from c4lab.learning.curve_page import curve_page

SUFFIXES = (".csv", ".png", ".html")
_FIXED = ["games", "seconds", "accuracy"]
#: The column that says how many probe positions the accuracy was measured on
#: (0: none); a curve written before it had none, and is read as before.
_PROBES = "probes"
#: The column that names the board of the network measured (``7x6``,
#: ``6x5/Xc2``), after ``probes``; a curve written before it had none.
_BOARD = "board"
#: The column that names the run of the network measured (its header's
#: ``run``), after ``board``; a curve written before it had none.
_RUN = "run"
_SCORE = "score vs "


@dataclass
class CurvePoint:
    """One evaluation of the learning curve."""

    games: int
    seconds: float
    accuracy: float | None  # share of value-keeping moves on the probe set
    scores: dict[str, float] = field(default_factory=dict)  # opponent -> score (draw = 1/2)
    probes: int | None = None  # the size of the probe set the accuracy was measured on, --probes (None: not said)
    board: str | None = None  # the board of the network measured, its notation (None: not said)
    run: str | None = None  # the run of the network measured, its header's ``run`` (None: not said)


def bare(prefix: Path) -> Path:
    """A curve's prefix without the suffix of one of its files (``--curve
    c.csv`` means ``c.csv``, ``c.png``..., not ``c.csv.csv``)."""
    return prefix.with_suffix("") if prefix.suffix.lower() in SUFFIXES else prefix


def curve_paths(prefix: Path) -> tuple[Path, Path, Path]:
    """The CSV, PNG and HTML files of the curve ``prefix``."""
    prefix = bare(prefix)
    return tuple(prefix.with_name(prefix.name + suffix) for suffix in SUFFIXES)  # type: ignore[return-value]


def write_csv(points: list[CurvePoint], prefix: Path, opponents: tuple[str, ...] = ()) -> Path:
    """``PREFIX.csv``: a row a point, written to a temporary file and
    renamed (a run stopped at any moment leaves the whole file of the last
    write); its path.  ``opponents``: score columns written even before a
    point has them (the columns stay the same from checkpoint to end)."""
    names = sorted({o for p in points for o in p.scores} | set(opponents), key=_by_strength)  # random first, as the page
    path = curve_paths(prefix)[0]
    with replacing(path, "w", newline="", encoding="utf-8") as f:  # a full disk, Ctrl-C: the last whole file
        writer = csv.writer(f)
        writer.writerow([*_FIXED, _PROBES, _BOARD, _RUN, *(_SCORE + o for o in names)])
        for p in points:
            writer.writerow([p.games, round(p.seconds, 1), "" if p.accuracy is None else round(p.accuracy, 4),
                             "" if p.probes is None else p.probes, p.board or "", p.run or "",
                             *("" if o not in p.scores else round(p.scores[o], 4) for o in names)])
    return path


def read_curve(path: Path) -> list[CurvePoint]:
    """The points of a curve's CSV (:func:`write_csv`); ``ValueError`` that
    names the file, the line and the column where it is not one: a value
    out of its range too (an accuracy or a score outside 0..1, a negative
    count or time), which a resumed run carried on and drew, with a page
    that showed 250.0 %; a file whose last line has no end, cut short in
    the middle of a number ("0.9" of "0.9531" read as 0.9)."""

    def number(text: str, line: int, column: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not math.isfinite(value):
            raise ValueError(f"{path}:{line}: {column} is not a number: {text!r} (not a learning curve of "
                             "`c4lab train ntuple`)")
        return value

    def whole(text: str, line: int, column: str) -> int:
        """A count (games, probe positions): a whole number, 0 or more."""
        value = number(text, line, column)
        if value < 0 or value != int(value):
            raise ValueError(f"{path}:{line}: {column} must be a whole number, 0 or more, not {text!r}")
        return int(value)

    def share(text: str, line: int, column: str) -> float:
        """An accuracy or a score: a share from 0 to 1 (the CSV writes 0.9, not 90 %)."""
        value = number(text, line, column)
        if not 0 <= value <= 1:
            raise ValueError(f"{path}:{line}: {column} must be a share from 0 to 1, not {text!r}")
        return value

    try:
        data = path.read_bytes()
    except OSError as exc:  # its reason alone: "[Errno 21] Is a directory: '...'" named the file a second time
        raise ValueError(f"cannot read the learning curve {path}: {exc.strerror or exc}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:  # the line, not the byte's offset in a chunk the reader had decoded
        line = data.count(b"\n", 0, exc.start) + 1
        raise ValueError(f"{path}:{line}: not UTF-8 text (byte {data[exc.start]:#04x}): not a learning curve of "
                         "`c4lab train ntuple`") from None
    if text and not text.endswith("\n"):  # write_csv ends every row: "0.9" may be what is left of "0.9531"
        last = text.count("\n") + 1
        raise ValueError(f"{path}:{last}: the file ends in the middle of a line (cut short: "
                         "`c4lab train ntuple` ends every line of a curve)")
    try:
        rows = list(csv.reader(io.StringIO(text, newline="")))
    except csv.Error as exc:
        raise ValueError(f"{path}: cannot read it as a learning curve: {exc}") from None
    # the first score column: after probes, board and run, where the curve has them (older ones do not)
    first = 3
    for column in (_PROBES, _BOARD, _RUN):
        if rows and rows[0][first:first + 1] == [column]:
            first += 1
        else:
            break
    if not rows or rows[0][:3] != _FIXED or not all(c.startswith(_SCORE) for c in rows[0][first:]):
        raise ValueError(f"{path}:1: not the header of a learning curve of `c4lab train ntuple` "
                         f"({', '.join(_FIXED)}, {_PROBES}, {_BOARD}, {_RUN}, then 'score vs ...' columns)")
    header = rows[0]
    nameless = next((n for n, c in enumerate(header) if n >= first and not c[len(_SCORE):].strip()), None)
    if nameless is not None:  # 'score vs ': its scores would go on into the curve, drawn against no one
        raise ValueError(f"{path}:1: column {nameless + 1}, {header[nameless]!r}, names no opponent "
                         "(not a learning curve of `c4lab train ntuple`)")
    twice = next((c for n, c in enumerate(header) if c in header[:n]), None)
    if twice is not None:  # one opponent's scores in two columns: the later would replace the earlier unseen
        raise ValueError(f"{path}:1: the column {twice!r} is there twice (not a learning curve of `c4lab train ntuple`)")
    points: list[CurvePoint] = []
    for line, row in enumerate(rows[1:], start=2):
        if len(row) != len(header):
            raise ValueError(f"{path}:{line}: {len(row)} fields where the header has {len(header)}")
        games = whole(row[0], line, "games")
        if points and games < points[-1].games:
            raise ValueError(f"{path}:{line}: games {row[0]} is less than the line before's "
                             f"{points[-1].games} (a curve's points come in the order they were measured)")
        seconds = number(row[1], line, "seconds")
        if seconds < 0:
            raise ValueError(f"{path}:{line}: seconds must be 0 or more, not {row[1]!r}")
        accuracy = share(row[2], line, "accuracy") if row[2] != "" else None
        probes = whole(row[3], line, _PROBES) if first >= 4 and row[3] != "" else None
        board = row[4] if first >= 5 and row[4] != "" else None
        run = row[5] if first == 6 and row[5] != "" else None
        if run is not None and not RUN_ID.fullmatch(run):
            raise ValueError(f"{path}:{line}: {_RUN} must be a run's name (8 to 32 hexadecimal digits), not {run!r}")
        scores = {c[len(_SCORE):]: share(v, line, c) for c, v in zip(header[first:], row[first:]) if v != ""}
        points.append(CurvePoint(games, seconds, accuracy, scores, probes, board, run))
    return points


def check_curve(prefix: Path, games: int | None, probes: int | None = None,
                board: str | None = None, run: str | None = None) -> list[CurvePoint]:
    """Before a run: the points it goes on from.  A new run (``games``
    None) finds none of the curve's files, else ``ValueError`` (a run never
    overwrites another's curve); a run that resumes a network of ``games``
    games on ``board`` (its notation) goes on from its CSV where there is
    one (read by :func:`read_curve`), whose last point must be of a network
    of that board and of that ``run`` (where the curve and the network say:
    older ones do not), not past
    the network, nor measured on another number of probe positions than
    this run's ``probes`` (one curve, one measure; 0 on either side
    measures nothing, and mixes nothing), and otherwise finds none of the
    three files either."""
    paths = curve_paths(prefix)
    there = [p for p in paths if p.exists()]
    if games is not None and paths[0].exists():
        try:
            points = read_curve(paths[0])
        except ValueError as exc:  # what to do next, as the other refusals say
            raise ValueError(f"{exc}; mend the file, or give another --curve (a curve that starts at this "
                             "network)") from None
        drawn = points[-1].board if points else None
        if board and drawn and drawn != board:  # a network of another board: its curve is another run's
            raise ValueError(f"{paths[0]} is the curve of a network for the board {drawn}, not {board}: choose "
                             "another --curve")
        drawn_run = points[-1].run if points else None
        if run and drawn_run and drawn_run != run:  # another network's, though of the same board and fewer games
            raise ValueError(f"{paths[0]} is the curve of another network (run {drawn_run}; this one's is run "
                             f"{run}): choose another --curve")
        if points and points[-1].games > games:
            raise ValueError(f"{paths[0]} is the curve of another run (its last point is at {points[-1].games:,} "
                             f"games, the network has {games:,}): choose another --curve")
        measured = points[-1].probes if points else None
        if probes and measured and measured != probes:  # 0: no accuracy measured, nothing mixed
            raise ValueError(f"{paths[0]} measured the accuracy on {measured} probe positions, this run on {probes}: "
                             f"give --probes {measured} to go on with the same measure, or another --curve")
        return points
    if there:
        hint = " (or --resume the network it belongs to)" if games is None else ""
        raise ValueError(f"{there[0]} exists: choose another --curve{hint}; a run never overwrites a curve")
    return []


def write_curve(points: list[CurvePoint], prefix: Path, title: str, columns: tuple[str, ...] = (),
                games_note: str = "") -> list[Path]:
    """``PREFIX.csv``, ``PREFIX.png`` and ``PREFIX.html`` (the page embeds
    the plot); their paths.  ``columns``: the CSV's score columns even where
    no point has them (:func:`write_csv`'s ``opponents``); ``games_note``:
    how many games each score is of, for the page."""
    import matplotlib  # lazy: plotting is only for the curve

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    opponents = sorted({o for p in points for o in p.scores}, key=_by_strength)  # random, normal, hard...
    csv_path = write_csv(points, prefix, columns)
    fig, ax = plt.subplots(figsize=(8, 4.5), dpi=100)
    xs = [p.games for p in points if p.accuracy is not None]
    if xs:  # a board without probe positions has no such line, nor its legend
        ax.plot(xs, [p.accuracy for p in points if p.accuracy is not None], marker="o", markersize=3,
                label="value-keeping moves (probe set, solver)")
    for o in opponents:
        pts = [(p.games, p.scores[o]) for p in points if o in p.scores]
        ax.plot([x for x, _ in pts], [y for _, y in pts], marker="s", markersize=3 if len(pts) > 1 else 8,
                linestyle="--", label=f"score vs {o}", fillstyle="full" if len(pts) > 1 else "none")
    ax.set_ylim(-0.02, 1.02)
    ax.xaxis.set_major_formatter(_games_tick)
    ax.set_xlabel("training games")
    ax.set_ylabel("share")
    ax.grid(alpha=0.3)
    ax.set_title(title)
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=110, bbox_inches="tight")
    plt.close(fig)
    png = buffer.getvalue()
    _, png_path, html_path = curve_paths(prefix)
    atomic.write_bytes(png_path, png)
    rows = [[f"{p.games:,}", f"{p.seconds:.0f}", "" if p.accuracy is None else f"{p.accuracy:.1%}",
             *("" if o not in p.scores else f"{p.scores[o]:.1%}" for o in opponents)] for p in points]
    probes = next((p.probes for p in reversed(points) if p.accuracy is not None and p.probes), None)
    accuracy_note = ""  # none without probes (--probes 0): no accuracy to explain
    if xs:
        which = f"the {probes:,} probe positions" if probes else "the probe positions"
        accuracy_note = (f"Accuracy: the share of {which} (random plies, only positions where some move changes "
                         "the result, every move scored by the exact solver) where the greedy network keeps the value"
                         + (f"; one position is {100 / probes:.2g} points of it" if probes else "") + ". ")
    note = f"{accuracy_note}Scores: wins 1, draws 1/2, from short random openings, each side once{games_note}."
    page = curve_page(title, png, note, ["games", "seconds", "accuracy", *opponents], rows)
    atomic.write_text(html_path, page)
    return [csv_path, png_path, html_path]


#: The opponents of a curve in the order of their strength (the page's columns, the plot's legend).
_STRENGTH = ("random", "normal", "hard", "impossible", "master")


def _by_strength(name: str) -> tuple[int, str]:
    """The sort key of an opponent: the levels weakest first, then any other by name."""
    return (_STRENGTH.index(name), "") if name in _STRENGTH else (len(_STRENGTH), name)


def _games_tick(x: float, _: object = None) -> str:
    """A tick of the games axis, in one style: 800 k, 1 M, 1.5 M (it mixed
    "800,000" with "1 M")."""
    if abs(x) >= 1e6:
        return f"{x / 1e6:g} M"
    return f"{x / 1e3:g} k" if abs(x) >= 1e3 else f"{x:g}"


__all__ = ["CurvePoint", "check_curve", "curve_paths", "read_curve", "write_csv", "write_curve"]
