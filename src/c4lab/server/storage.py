"""Games on disk: one SQLite table, one row per room.

A row is written in the same step as the change it records (a move, a seat
taken, the end of the game), inside a transaction, so a crash loses nothing
that a client was told about.  The store is used from the server's event
loop only (every call is short), through one connection in WAL mode.
"""

from __future__ import annotations

import datetime
import json
import sqlite3
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SCHEMA = """
CREATE TABLE IF NOT EXISTS games (
    code      TEXT PRIMARY KEY,
    mode      TEXT NOT NULL,
    position  TEXT NOT NULL,
    start_ply INTEGER NOT NULL,
    seats     TEXT NOT NULL,
    public    INTEGER NOT NULL,
    status    TEXT NOT NULL,
    result    TEXT,
    reason    TEXT,
    created   REAL NOT NULL,
    updated   REAL NOT NULL,
    finished  REAL
);
CREATE INDEX IF NOT EXISTS games_public ON games (public, status, finished);
"""


#: A local game untouched this long (seconds) is listed as abandoned.
LEFT_OPEN = 3600.0


@dataclass
class GameRow:
    """One stored game (see ``docs/protocol.md``)."""

    code: str
    mode: str
    position: str
    start_ply: int
    seats: dict[str, dict[str, Any]]
    public: bool = False
    status: str = "playing"
    result: str | None = None
    reason: str | None = None
    created: float = field(default_factory=time.time)
    updated: float = field(default_factory=time.time)
    finished: float | None = None

    def names(self) -> dict[str, str]:
        """The players' names by side ("-" for an empty seat)."""
        return {side: seat["name"] or "-" for side, seat in self.seats.items()}

    def shown_status(self, now: float | None = None) -> str:
        """The status a listing shows: a local game still being played but
        untouched for :data:`LEFT_OPEN` seconds was left open -- "abandoned"
        (its page can still take it up again); so is an online room that
        ended abandoned, or that every player left :data:`LEFT_OPEN` seconds
        ago (a running server ends it sooner: this is for a stopped one)."""
        now = time.time() if now is None else now
        if self.mode == "local" and self.status == "playing" and now - self.updated > LEFT_OPEN:
            return "abandoned"
        if self.status == "over" and self.reason == "abandoned":
            return "abandoned"  # an online room both players left (or whose host left before a guest came)
        if self.mode == "online" and self.status in ("waiting", "playing"):
            # a server that is not running cannot end it: gone for an hour is abandoned
            taken = [seat for seat in self.seats.values() if seat.get("token_hash")]
            left = [float(seat["absent_since"]) for seat in taken if seat.get("absent_since")]
            if taken and len(left) == len(taken) and now - max(left) > LEFT_OPEN:
                return "abandoned"
        return self.status

    def listing(self) -> dict[str, Any]:
        """The ``c4lab games --json`` record."""
        return {
            "code": self.code, "mode": self.mode, "position": self.position, "status": self.shown_status(),
            "result": self.result, "reason": self.reason, "names": self.names(), "updated": self.updated,
        }

    def listing_line(self) -> str:
        """One line of ``c4lab games``: when, code, mode, players, outcome, position."""
        names = self.names()
        when = datetime.datetime.fromtimestamp(self.updated).strftime("%Y-%m-%d %H:%M")
        outcome = self.result and (f"{self.result} ({self.reason})" if self.result != "draw" else "draw")
        return (f"{when}  {self.code}  {self.mode:<6} {names['A']} vs {names['B']}: "
                f"{outcome or self.shown_status()}  {self.position}")


class StorageError(RuntimeError):
    """The database file is not a c4lab game store (or is damaged)."""


class GameStore:
    """The ``games`` table of a SQLite file (``":memory:"`` for tests)."""

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        try:
            self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.executescript(SCHEMA)
        except sqlite3.DatabaseError as exc:
            raise StorageError(f"{self.path} is not a usable c4lab game database: {exc}") from None

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def save(self, row: GameRow) -> None:
        """Insert or replace ``row`` (one transaction)."""
        row.updated = time.time()
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO games VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    row.code, row.mode, row.position, row.start_ply, json.dumps(row.seats),
                    int(row.public), row.status, row.result, row.reason,
                    row.created, row.updated, row.finished,
                ),
            )

    def load(self, code: str) -> GameRow | None:
        with self._lock:
            found = self._db.execute("SELECT * FROM games WHERE code = ?", (code,)).fetchone()
        return None if found is None else _row(found)

    def finished_public(self, limit: int = 100) -> list[GameRow]:
        """Finished games whose host marked them public, newest first."""
        with self._lock:
            rows = self._db.execute(
                "SELECT * FROM games WHERE public = 1 AND status = 'over' ORDER BY finished DESC LIMIT ?",
                (limit,),
            ).fetchall()
        return [_row(r) for r in rows]

    def open_rooms(self, mode: str) -> list[GameRow]:
        """The rooms of ``mode`` still open: waiting for a player or being played."""
        with self._lock:
            rows = self._db.execute(
                "SELECT * FROM games WHERE mode = ? AND status IN ('waiting', 'playing')", (mode,)
            ).fetchall()
        return [_row(r) for r in rows]

    def all(self, limit: int | None = None) -> list[GameRow]:
        """Every stored game, newest first (the ``c4lab games`` listing)."""
        query = "SELECT * FROM games ORDER BY updated DESC"
        with self._lock:
            rows = self._db.execute(query + (" LIMIT ?" if limit else ""), (limit,) if limit else ()).fetchall()
        return [_row(r) for r in rows]


def read_games(path: str | Path, limit: int | None = None) -> list[GameRow]:
    """The games stored in ``path``, newest first, creating nothing: a
    missing file is a :class:`StorageError`."""
    if not Path(path).is_file():
        raise StorageError(f"no game database at {path} (`c4lab play` and `c4lab serve` make one)")
    store = GameStore(path)
    try:
        return store.all(limit)
    finally:
        store.close()


def _row(values: tuple[Any, ...]) -> GameRow:
    (code, mode, position, start_ply, seats, public, status, result, reason, created, updated, finished) = values
    return GameRow(
        code, mode, position, start_ply, json.loads(seats), bool(public), status, result, reason,
        created, updated, finished,
    )
