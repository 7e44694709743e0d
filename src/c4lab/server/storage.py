"""Games on disk: one SQLite table, one row per room.

A row is written in the same step as the change it records (a move, a seat
taken, the end of the game), inside a transaction, so a crash loses nothing
that a client was told about.  The store is used from the server's event
loop only (every call is short), through one connection in WAL mode.

Durability: each write is its own transaction, committed before the server
tells anyone (``rooms``).  In WAL mode with ``synchronous=NORMAL`` a commit
is a write to the ``-wal`` file, which the operating system holds until it
flushes it; SQLite syncs the WAL to the disk only when it checkpoints it
into the database.  So a committed move survives the server's process
being killed (SIGKILL, a crash of Python: the kernel still has the data,
and the next open replays the WAL), but not the machine losing power or
the kernel crashing before the flush (the last moves, a second or so, are
lost then; the database stays whole).

What a move writes: the store remembers the values it last wrote or read
for each recent row (``REMEMBERED`` rows), and a save of a row it
remembers updates only the columns that changed -- a move is the position
and the time, not a whole row again (an ``INSERT OR REPLACE`` deletes the
row and inserts it, updating every index: four times the work).  This
assumes the store is the only writer of its file, which the lock below
makes sure of for servers (``c4lab games`` only reads).

A file that cannot serve is refused when it is opened, with a
:class:`StorageError` of one line: an empty (truncated to nothing) file, one
cut shorter than SQLite's header, a file that is not SQLite, a damaged one (``PRAGMA quick_check``), another
program's database, one locked by another program, a full disk.  A server's
store also holds an exclusive lock on a file beside the database
(``games.sqlite.lock``) for as long as it is open, so a second server on the
same file refuses to start rather than serve the same rooms twice.  A write
that fails later (a full disk, a lock held too long) is a ``StorageError``
too: the room server turns it into an error for the client and keeps the
room as it was.
"""

from __future__ import annotations

import datetime
import json
import os
import sqlite3
import threading
import time
import urllib.parse
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

try:  # the lock beside the database: POSIX only (elsewhere two servers are not kept apart)
    import fcntl
except ImportError:  # pragma: no cover
    fcntl = None  # type: ignore[assignment]

#: Where ``c4lab play`` (in the browser), ``serve`` and ``games`` keep and read
#: the games when no ``--db`` is given.
DEFAULT_DB = Path.home() / ".c4lab" / "games.sqlite"

#: The bytes of the header an SQLite database file starts with (it writes
#: whole pages, so a file that has any is at least this long).
SQLITE_HEADER = 100

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


#: The stored mode of an analysis board: a local room (``Room.analysis``)
#: that a listing tells from a game.
ANALYSIS = "analysis"
#: A local game untouched this long (seconds) is listed as abandoned.
LEFT_OPEN = 3600.0
#: Seconds a statement waits for a lock another program holds before it fails.
BUSY_TIMEOUT = 5.0
#: Rows whose last written (or read) values a store remembers, the most
#: recently saved ones: a save of one of them writes only what changed.
REMEMBERED = 20_000
#: The storage format a server writes in the file (SQLite's ``user_version``;
#: 0 in the files of c4lab before it was written): a file of a later
#: format, a newer c4lab's, is refused rather than misread or changed.
FORMAT = 1
#: The columns of the ``games`` table, in order.
COLUMNS = (
    "code", "mode", "position", "start_ply", "seats", "public", "status", "result", "reason",
    "created", "updated", "finished",
)


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
        if self.mode == ANALYSIS:
            return "open"  # a position studied, not a game: never won, lost or abandoned
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
        """One line of ``c4lab games``: when, code, mode, players, outcome,
        position; an analysis board: when, code, and the position it shows."""
        names = self.names()
        when = datetime.datetime.fromtimestamp(self.updated).strftime("%Y-%m-%d %H:%M")
        if self.mode == ANALYSIS:
            return f"{when}  {self.code}  analysis board  {self.position}"
        # lazy: `c4lab games` with nothing stored loads no rules
        from c4lab.rules.sides import result_words, side_with_name

        outcome = self.result and result_words(self.result, self.reason,
                                               winner=lambda side: f"{side_with_name(side, names[side])},")
        return (f"{when}  {self.code}  {self.mode:<6} {names['A']} vs {names['B']}  "
                f"{outcome or self.shown_status()}  {self.position}")


class StorageError(RuntimeError):
    """The game database cannot be used: not a c4lab game store, damaged,
    locked by another program or server, or a write that failed (a full
    disk).  Its message is one line that names the file."""


class DamagedRow(StorageError):
    """One stored game's row cannot be read (a value of another type, a
    position that is none): it will not heal by itself, unlike a database
    held by another program for a moment."""


class StoreInUse(StorageError):
    """Another c4lab server holds the database: its process id and, once it
    listens, its address and whether it is a person's own game (``c4lab
    play`` or ``analyse``) rather than ``c4lab serve`` (``GameStore.served_at``)."""

    def __init__(self, message: str, pid: str = "", url: str = "", personal: bool = False) -> None:
        super().__init__(message)
        self.pid = pid
        self.url = url
        self.personal = personal


def explain(exc: sqlite3.Error) -> str:
    """SQLite's complaint in words a server's operator can act on."""
    text = str(exc)
    low = text.lower()
    if "file is not a database" in low:
        return "it is not a SQLite database (garbage, or another kind of file)"
    if "malformed" in low or "corrupt" in low:
        return f"it is damaged, truncated or overwritten ({text})"
    if "locked" in low or "busy" in low:
        return f"it is locked by another program ({text})"
    if "full" in low:
        return f"the disk (or the database's size limit) is full ({text})"
    if "i/o error" in low:
        return f"the disk refused to read or write it ({text}): is it full, or failing?"
    if "readonly" in low or "read-only" in low:
        return f"it cannot be written ({text})"
    return text


def _refusal(path: str, exc: sqlite3.Error) -> str:
    """Why ``path`` cannot be opened, in one line."""
    why = explain(exc)
    if why.startswith("it cannot be written"):  # the file may be perfectly good: say what is read-only
        folder = Path(path).parent
        if Path(path).exists() and not os.access(path, os.W_OK):
            what = "the file is read-only"
        elif not os.access(folder, os.W_OK):
            what = f"its folder {folder} is read-only (SQLite writes its -wal and -shm files beside the database)"
        else:
            what = "it is read-only"
        return f"cannot write the game database {path}: {what} ({exc}); give --db a file you can write"
    if why.startswith(("the disk", "it is locked")):
        return f"cannot open the game database {path}: {why}"
    return f"{path} is not a usable c4lab game database: {why}"


class GameStore:
    """The ``games`` table of a SQLite file (``":memory:"`` for tests).

    ``exclusive`` (a server's store) takes the lock file beside the
    database, so that no second server opens it; a listing passes False.
    ``timeout``: seconds a statement waits for another program's lock.
    ``readonly`` (a listing): the file is only read, never written or
    created; a server's store writes its format in it when it opens it, so
    a file it could not write is refused then.
    """

    def __init__(
        self, path: str | Path, *, exclusive: bool = True, timeout: float = BUSY_TIMEOUT, readonly: bool = False,
    ) -> None:
        self.path = str(path)
        self.readonly = readonly
        self._tables = True  # False: a read-only store of an SQLite file without tables (no games)
        self._lock = threading.Lock()
        #: code -> the values of the columns after ``code`` as last written or read (``REMEMBERED`` rows).
        self._saved: OrderedDict[str, tuple[Any, ...]] = OrderedDict()
        self._holder: int | None = None  # the lock file's descriptor
        self._file: tuple[int, int] | None = None  # a server's file (device, inode): see ``_still_there``
        existed = False
        if self.path != ":memory:":
            file = Path(self.path)
            if file.is_dir():
                raise StorageError(f"{self.path} is a folder, not a game database file: give --db a file")
            if file.exists() and not file.is_file():  # a pipe or a device: SQLite would wait on it, or fail later
                raise StorageError(f"{self.path} is not a regular file, so not a game database: give --db a file")
            try:
                if not readonly:
                    file.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StorageError(
                    f"cannot create the folder {file.parent} for the game database {self.path}: "
                    f"{exc.strerror or exc} (give --db a file in a folder you can write)"
                ) from None
            existed = file.exists()
            size = file.stat().st_size if existed and file.is_file() else None
            if size == 0 and not Path(self.path + "-wal").exists():
                raise StorageError(
                    f"{self.path} is empty (0 bytes): not a c4lab game database -- a truncated file? "
                    "Move it away to start a new database there"
                )
            if size is not None and 0 < size < SQLITE_HEADER:  # SQLite read one byte as an empty database: a
                # listing said "no games stored yet", and a server wrote a new database over it
                raise StorageError(
                    f"{self.path} is {size} byte{'s' if size > 1 else ''}, shorter than the {SQLITE_HEADER}-byte "
                    "header every SQLite database starts with: not a c4lab game database -- a truncated file? "
                    "Move it away to start a new database there"
                )
            if exclusive:
                self._holder = _hold(self.path + ".lock", self.path)
        if readonly:
            self._db = self._open_readonly(timeout)
            return
        try:
            self._db = sqlite3.connect(self.path, timeout=timeout, check_same_thread=False, isolation_level=None)
        except sqlite3.Error as exc:
            self._release()
            raise StorageError(_refusal(self.path, exc)) from None
        _add_functions(self._db)
        try:
            if existed:
                self._check()
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.executescript(SCHEMA)
            # a write, always: a file SQLite opened read-only (its permissions) is refused now, not at the first move
            self._db.execute(f"PRAGMA user_version = {FORMAT}")
            if self.path != ":memory:":  # the file written: a save checks it is still the one at the path
                self._file = _identity(self.path)
        except (sqlite3.Error, StorageError) as exc:
            self._db.close()
            if not existed and self.path != ":memory:":  # a file we began (a full disk): leave no empty one behind
                for leftover in ("", "-wal", "-shm"):
                    Path(self.path + leftover).unlink(missing_ok=True)
            self._release()
            if isinstance(exc, StorageError):
                raise
            raise StorageError(_refusal(self.path, exc)) from None

    def _open_readonly(self, timeout: float) -> sqlite3.Connection:
        """The connection of a listing, which reads only, checked as a
        server checks it.  Its statements may write nothing (``query_only``:
        not even the journal mode or the table).  With no ``-wal`` file
        beside the database (no connection has it open: the file holds every
        game) in a folder and a file this process can write, it is opened
        ``mode=rw`` all the same, so that SQLite removes the ``-wal`` and
        ``-shm`` files it makes for the read when it closes last, as a
        server's connection does (a ``mode=ro`` one cannot: it left them
        beside the file); beside a running server they are the server's.
        Otherwise ``mode=ro``, which writes nothing, not even into a
        ``-wal`` file a stopped server left (its games are read).  A
        database in a folder this process cannot write (read-only media,
        another user's folder) and without a ``-wal`` file is opened
        ``immutable`` (SQLite cannot make the ``-shm`` file it reads a WAL
        database with; with no ``-wal`` file there is nothing in it to read)."""
        address = "file:" + urllib.parse.quote(os.path.abspath(self.path))
        wal = Path(self.path + "-wal")
        writable = os.access(Path(self.path).parent, os.W_OK)
        tidy = writable and os.access(self.path, os.W_OK) and not wal.exists() and not Path(self.path + "-journal").exists()
        immutable = not writable and not (wal.exists() and wal.stat().st_size)
        queries = (("?mode=rw",) if tidy else ()) + ("?mode=ro",) + (("?mode=ro&immutable=1",) if immutable else ())
        failure: sqlite3.Error | None = None
        for query in queries:
            try:
                self._db = sqlite3.connect(address + query, uri=True, timeout=timeout, check_same_thread=False,
                                           isolation_level=None)
            except sqlite3.Error as exc:
                failure = exc
                continue
            _add_functions(self._db)
            try:
                self._db.execute("PRAGMA query_only = 1")
                self._check()
                return self._db
            except sqlite3.Error as exc:
                failure = exc
                self._db.close()
                if query == "?mode=rw" and explain(exc).startswith("it is locked"):  # so read-only too: one wait
                    break
            except StorageError:
                self._db.close()
                raise
        assert failure is not None
        raise StorageError(_refusal(self.path, failure)) from None

    def _check(self) -> None:
        """An existing file: whole (``quick_check``), and either empty or a
        c4lab game store of a format this c4lab knows (never a ``games``
        table added to another program's database)."""
        version = self._db.execute("PRAGMA user_version").fetchone()[0]
        problems = [r[0] for r in self._db.execute("PRAGMA quick_check").fetchall()]
        if problems != ["ok"]:
            first = " ".join(str(problems[0]).split())
            more = f" (and {len(problems) - 1} more problems)" if len(problems) > 1 else ""
            raise StorageError(f"{self.path} is not a usable c4lab game database: it is damaged: {first}{more}")
        tables = sorted(r[0] for r in self._db.execute("SELECT name FROM sqlite_master WHERE type = 'table'"))
        if tables and "games" not in tables:
            raise StorageError(
                f"{self.path} is not a usable c4lab game database: it is another program's "
                f"(tables: {', '.join(tables[:5])}{', ...' if len(tables) > 5 else ''})"
            )
        if tables and version > FORMAT:
            raise StorageError(
                f"{self.path} was written by a newer c4lab (storage format {version}; this c4lab reads "
                f"{FORMAT} and earlier): upgrade c4lab, or give this one another --db"
            )
        self._tables = bool(tables)
        if tables:
            columns = tuple(r[1] for r in self._db.execute("PRAGMA table_info(games)"))
            if len(columns) > len(COLUMNS) and columns[:len(COLUMNS)] == COLUMNS:
                raise StorageError(
                    f"{self.path} is not a usable c4lab game database: its games table has columns this c4lab "
                    f"does not know ({', '.join(columns[len(COLUMNS):])}): written by a newer c4lab? Upgrade "
                    "c4lab, or give this one another --db"
                )
            if columns != COLUMNS:
                raise StorageError(
                    f"{self.path} is not a usable c4lab game database: its games table has the columns "
                    f"{', '.join(columns)}, not {', '.join(COLUMNS)}"
                )

    def served_at(self, url: str, personal: bool) -> None:
        """Record in the lock file, beside the process id, the address the
        server listens at and whether it is a person's own game: a second
        ``c4lab play`` or ``analyse`` over the same database opens that one
        instead of failing (``StoreInUse``).  Only a courtesy: a failed write
        changes nothing."""
        if self._holder is not None:
            _stamp(self._holder, f"{url}\n{'personal' if personal else 'server'}\n")

    def _release(self) -> None:
        if self._holder is not None:
            os.close(self._holder)  # closing the descriptor drops the lock
            self._holder = None

    def close(self) -> None:
        with self._lock:
            self._db.close()
            self._release()

    def _run(self, doing: str, query: str, parameters: tuple[Any, ...] = ()) -> list[Any]:
        """One statement (its own transaction); a failure is a StorageError."""
        try:
            with self._lock:
                return self._db.execute(query, parameters).fetchall()
        except sqlite3.Error as exc:
            raise StorageError(f"cannot {doing} {self.path}: {explain(exc)}") from None

    def _still_there(self, doing: str) -> None:
        """A StorageError if the database file was removed (or replaced)
        since the server opened it: SQLite would go on writing into the
        removed file, and every game saved from then on would be lost when
        the server stops, without a word."""
        if self._file is None:
            return
        there: tuple[int, int] | None
        try:
            there = _identity(self.path)
        except OSError as exc:
            there = None if isinstance(exc, FileNotFoundError) else self._file  # an unreadable folder: let SQLite say
        if there != self._file:
            raise StorageError(
                f"cannot {doing} {self.path}: the file was removed or replaced while the server runs, so nothing "
                "more can be saved in it (SQLite would write into the removed file): restart the server"
            )

    def save(self, row: GameRow) -> None:
        """Write ``row`` (one transaction): the columns that changed since
        the store last wrote or read it (a move: the position and the time),
        or the whole row; ``StorageError`` if the write fails (nothing is
        written then)."""
        updated = time.time()
        values = (
            row.code, row.mode, row.position, row.start_ply, json.dumps(row.seats),
            int(row.public), row.status, row.result, row.reason, row.created, updated, row.finished,
        )
        self._still_there("save a game to")
        try:
            with self._lock:
                before = self._saved.get(row.code)
                written = 0
                if before is not None:
                    changed = [i for i in range(1, len(COLUMNS)) if values[i] != before[i] or COLUMNS[i] == "updated"]
                    assignments = ", ".join(f"{COLUMNS[i]} = ?" for i in changed)
                    written = self._db.execute(
                        f"UPDATE games SET {assignments} WHERE code = ?", (*(values[i] for i in changed), row.code)
                    ).rowcount
                if not written:  # a row it does not remember (or that is not there)
                    self._db.execute("INSERT OR REPLACE INTO games VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", values)
                self._remember(values)
        except sqlite3.Error as exc:
            raise StorageError(f"cannot save a game to {self.path}: {explain(exc)}") from None
        row.updated = updated

    def _remember(self, values: tuple[Any, ...]) -> None:
        """Keep a row's values as now on disk (the most recent ``REMEMBERED`` rows)."""
        self._saved[values[0]] = values
        self._saved.move_to_end(values[0])
        while len(self._saved) > REMEMBERED:
            self._saved.popitem(last=False)

    def delete(self, code: str) -> None:
        """Remove the row of ``code`` (a rematch whose room could not be saved)."""
        self._still_there("delete a game from")
        self._run("delete a game from", "DELETE FROM games WHERE code = ?", (code,))
        with self._lock:
            self._saved.pop(code, None)

    def load(self, code: str) -> GameRow | None:
        found = self._run("read a game from", "SELECT * FROM games WHERE code = ?", (code,))
        if not found:
            return None
        row = self._row(found[0])
        with self._lock:
            self._remember(tuple(found[0]))
        return row

    def finished_public(self, limit: int = 100, damaged: list[str] | None = None) -> list[GameRow]:
        """Finished games whose host marked them public, newest first; a
        damaged row as in ``all``.  A room that ended abandoned with no move
        played in it (its host left before a guest came, or both players
        left before the first move) is no game, and is not one of them."""
        rows = self._run(
            "read the games of",
            "SELECT * FROM games WHERE public = 1 AND status = 'over'"
            " AND (reason IS NOT 'abandoned' OR c4lab_plies(CAST(position AS BLOB)) IS NOT start_ply)"
            " ORDER BY finished DESC LIMIT ?",
            (limit,),
        )
        return self._rows(rows, damaged)

    def open_rooms(self, mode: str, damaged: list[str] | None = None) -> list[GameRow]:
        """The rooms of ``mode`` still open: waiting for a player or being
        played; a damaged row as in ``all``."""
        rows = self._run(
            "read the open rooms of",
            "SELECT * FROM games WHERE mode = ? AND status IN ('waiting', 'playing')", (mode,),
        )
        return self._rows(rows, damaged)

    def all(self, limit: int | None = None, damaged: list[str] | None = None, unplayed: bool = True) -> list[GameRow]:
        """Every stored game, newest first (the ``c4lab games`` listing);
        without ``unplayed``, not the rooms that ended abandoned with no
        move played in them (``finished_public``'s rule: no game).
        A damaged row is a StorageError, or with ``damaged`` given, left
        out and said there (one line each: the file, the game, what is wrong)."""
        if not self._tables:  # a listing of an SQLite file with no table yet
            return []
        played = ("" if unplayed else " WHERE NOT (status = 'over' AND reason = 'abandoned'"
                                      " AND c4lab_plies(CAST(position AS BLOB)) IS start_ply)")
        query = f"SELECT * FROM games{played} ORDER BY updated DESC"
        rows = self._run("read the games of", query + (" LIMIT ?" if limit else ""), (limit,) if limit else ())
        return self._rows(rows, damaged)

    def _rows(self, rows: list[Any], damaged: list[str] | None) -> list[GameRow]:
        """The GameRows of ``rows``; a damaged one a StorageError, or with
        ``damaged`` given, left out and its error added there."""
        found = []
        for values in rows:
            try:
                found.append(self._row(values))
            except StorageError as exc:
                if damaged is None:
                    raise
                damaged.append(str(exc))
        return found

    def _row(self, values: tuple[Any, ...]) -> GameRow:
        try:
            return _row(values)
        except (ValueError, TypeError, KeyError, AttributeError, OverflowError, OSError) as exc:
            raise DamagedRow(
                f"{self.path}: the row of game {values[0]!r} is damaged ({type(exc).__name__}: {exc})"
            ) from None


def _plies(position: object) -> int | None:
    """How many moves the stored ``position`` has (those of a pasted start
    too); None for a position that is none (the row is then damaged, and
    said so by whoever reads it).  The queries give it the column's bytes
    (``CAST(position AS BLOB)``): SQLite hands a function its text decoded
    strictly, and bytes that are not UTF-8 failed the whole query."""
    from c4lab.rules.notation import parse_position  # lazy: `c4lab games` lists rows without the rules engine

    if isinstance(position, bytes):
        try:
            position = position.decode("utf-8")
        except UnicodeDecodeError:
            return None
    try:
        return len(parse_position(position).moves) if isinstance(position, str) else None
    except ValueError:
        return None


def _text(raw: bytes) -> str:
    """A TEXT value as read: its bytes that are not UTF-8 kept as surrogate
    escapes, for ``_row`` to call the row damaged.  Python's strict decoding
    failed the whole query on one such row ("Could not decode to UTF-8
    column 'seats' with text ..."): every game went unlisted, and the
    message showed the row's bytes."""
    return raw.decode("utf-8", "surrogateescape")


def _not_utf8(value: object) -> bool:
    """Whether ``value`` (read through ``_text``) held bytes that are not UTF-8."""
    return isinstance(value, str) and any("\udc80" <= char <= "\udcff" for char in value)


def _add_functions(db: sqlite3.Connection) -> None:
    """The SQL functions the store's queries use: ``c4lab_plies(position)``
    (see ``_plies``); and text read as ``_text`` reads it."""
    db.text_factory = _text
    db.create_function("c4lab_plies", 1, _plies, deterministic=True)


def _identity(path: str) -> tuple[int, int]:
    """The file at ``path``: its device and inode (an OSError if there is none)."""
    found = os.stat(path)
    return found.st_dev, found.st_ino


def _hold(lock_path: str, path: str) -> int:
    """Take the exclusive lock beside the database (a descriptor of the lock
    file, which records our process id); a StorageError naming the process
    that holds it if another one does.  The system drops the lock when the
    process ends, however it ends: no stale lock after a crash."""
    if fcntl is None:  # pragma: no cover
        return os.open(os.devnull, os.O_RDONLY)
    try:
        holder = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise StorageError(f"cannot create the lock file {lock_path} beside {path}: {exc.strerror or exc}") from None
    try:
        fcntl.flock(holder, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        try:
            lines = os.read(holder, 1024).decode("ascii", "replace").split()
        except OSError:
            lines = []
        os.close(holder)
        other = lines[0] if lines and lines[0].isdigit() else ""
        url = lines[1] if len(lines) > 1 and lines[1].startswith("http://") else ""
        who = f" (process {other})" if other else ""
        raise StoreInUse(
            f"{path} is in use by another c4lab server{who}: stop it, or give this one another --db",
            other, url, personal=len(lines) > 2 and lines[2] == "personal",
        ) from None
    _stamp(holder)  # who holds it, for the message of the next one
    return holder


def _stamp(holder: int, more: str = "") -> None:
    """Write in the lock file this process's id, then ``more`` (the lines
    ``_hold`` reads back for the next server: the address, the kind).  Only
    a courtesy: a failed write (a full disk) changes nothing."""
    try:
        os.ftruncate(holder, 0)
        os.pwrite(holder, f"{os.getpid()}\n{more}".encode(), 0)
    except OSError:
        pass


def read_games(path: str | Path, limit: int | None = None, damaged: list[str] | None = None,
               unplayed: bool = True) -> list[GameRow]:
    """The games stored in ``path``, newest first, creating nothing: a
    missing file is a :class:`StorageError`.  It reads beside a running
    server (no lock file is taken).  ``damaged``, ``unplayed``: see ``GameStore.all``."""
    if not Path(path).exists():
        raise StorageError(f"no game database at {path} (`c4lab play` in the browser and `c4lab serve` make one; "
                           "the terminal game does not)")
    store = GameStore(path, exclusive=False, readonly=True)
    try:
        return store.all(limit, damaged, unplayed)
    finally:
        store.close()


def _row(values: tuple[Any, ...]) -> GameRow:
    """The row's values as a GameRow; a ValueError or TypeError if they are
    not what a store writes (what a listing and a room read must be there)."""
    (code, mode, position, start_ply, seats, public, status, result, reason, created, updated, finished) = values
    # SQLite keeps any value in any column (a blob in a TEXT one): a value of another type is a damaged row, not
    # one that fails later, in the JSON of a listing or a page (a traceback, a 500 for the whole list)
    texts = (("code", code), ("mode", mode), ("position", position), ("status", status), ("result", result),
             ("reason", reason))
    for name, value in (*texts, ("seats", seats)):
        if not isinstance(value, str) and not (value is None and name in ("result", "reason")):
            raise TypeError(f"its {name} is {repr(value)[:40]}, not text")
        if _not_utf8(value):
            raise ValueError(f"its {name} holds bytes that are not UTF-8 text")
    for name, value in (("start_ply", start_ply), ("public", public)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"its {name} is {repr(value)[:40]}, not an integer")
    stored = json.loads(seats)
    if not isinstance(stored, dict) or not all(isinstance(seat, dict) for seat in stored.values()):
        raise ValueError("the seats are not an object of seats")
    if sorted(stored) != ["A", "B"]:
        raise ValueError(f"the seats are {sorted(stored)}, not A and B")
    if not all(isinstance(seat.get("name", 0), (str, type(None))) for seat in stored.values()):
        raise ValueError("a seat has no name")
    for side, seat in sorted(stored.items()):  # what opening the room reads (``Room.from_row``)
        if seat.get("kind") not in ("human", "agent"):
            raise ValueError(f"seat {side}'s kind is {repr(seat.get('kind'))[:40]}, not human or agent")
        if seat["kind"] == "agent" and not isinstance(seat.get("spec"), str):
            raise ValueError(f"seat {side} is an agent with no spec")
        if seat["kind"] == "human" and not isinstance(seat.get("token_hash", 0), (str, type(None))):
            raise ValueError(f"seat {side} has no token hash")
    for name, when in (("created", created), ("updated", updated), ("finished", finished)):
        if when is not None or name != "finished":
            if isinstance(when, bool) or not isinstance(when, (int, float)):
                raise TypeError(f"its time {name} is {when!r}, not a number")
            datetime.datetime.fromtimestamp(when)  # a time out of range: an OverflowError, an OSError or a ValueError
    # a position that is none (hand-edited, another program's): listed, it would only fail when opened
    from c4lab.rules.position import Position  # lazy: the rules engine (numba) only once a row is read

    Position.parse(position)  # a PositionError or a VariantError (ValueErrors) that says what and where
    return GameRow(
        code, mode, position, start_ply, stored, bool(public), status, result, reason,
        created, updated, finished,
    )
