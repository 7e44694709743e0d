"""A damaged game database: truncated, full of garbage, another program's,
locked by another program or another server, on a full disk.

At start (``c4lab serve --db``, ``c4lab games --db``) each is refused with
one clear line that names the file and a non-zero exit status -- never a
traceback, never a server that starts empty over the games it could not
read (the file is left as it was).  On a write (a full disk, a lock held
too long), the client gets the protocol's error, the server goes on, and
the room stays as it was, in memory and on disk.  A second server on the
same file refuses to start.
"""

from __future__ import annotations

import logging
import os
import resource
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient

from c4lab.cli import main
from c4lab.server import rooms
from c4lab.server.app import create_app
from c4lab.server.run import free_port
from c4lab.server.storage import FORMAT, DamagedRow, GameRow, GameStore, StorageError, read_games
from testkit import as_a_user

SEATS = {"A": {"kind": "human", "name": "Ann", "spec": None, "token_hash": None, "absent_since": None},
         "B": {"kind": "human", "name": "Bob", "spec": None, "token_hash": None, "absent_since": None}}


@pytest.fixture
def good(tmp_path: Path) -> Path:
    """A database of 300 finished games (several pages), closed."""
    path = tmp_path / "good.sqlite"
    store = GameStore(path)
    for i in range(300):
        store.save(GameRow(f"game{i:04d}", "local", "7x6:dddd", 0, SEATS, status="over", result="draw", reason="full"))
    store.close()
    assert not Path(str(path) + "-wal").exists() or Path(str(path) + "-wal").stat().st_size == 0
    return path


def serve(db: Path, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """``c4lab serve --db db`` run until it ends (a refused start ends at once)."""
    return subprocess.run(
        [sys.executable, "-m", "c4lab", "serve", "--db", str(db), "--port", str(free_port())],
        capture_output=True, text=True, timeout=timeout, check=False,
    )


def refused(done: subprocess.CompletedProcess[str], db: Path, *words: str) -> str:
    """The one line of a refused start; checks the status and the words."""
    output = done.stdout + done.stderr
    assert done.returncode != 0, output
    assert "Traceback" not in output, output
    lines = [line for line in output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: "), output
    assert str(db) in lines[0], output
    for word in words:
        assert word in lines[0], output
    return lines[0]


def games(db: Path) -> Any:
    return CliRunner().invoke(main, ["games", "--db", str(db)])


def games_refused(db: Path, *words: str) -> None:
    result = games(db)
    assert result.exit_code == 2, result.output
    assert isinstance(result.exception, SystemExit), result.exception  # not an exception of ours
    assert "Traceback" not in result.output and str(db) in result.output, result.output
    for word in words:
        assert word in result.output, result.output


# ---------------------------------------------------------------------------
# At start
# ---------------------------------------------------------------------------


def damage_garbage(path: Path) -> None:
    path.write_bytes(os.urandom(64 * 1024))


def damage_truncated(path: Path) -> None:
    with path.open("r+b") as file:
        file.truncate(path.stat().st_size // 2)


def damage_empty(path: Path) -> None:
    path.write_bytes(b"")


def damage_overwritten(path: Path) -> None:
    """Pages in the middle overwritten with garbage; the header is intact."""
    with path.open("r+b") as file:
        file.seek(3 * 4096)
        file.write(os.urandom(4 * 4096))


def damage_other_program(path: Path) -> None:
    path.unlink()
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT)")
        db.execute("INSERT INTO notes (text) VALUES ('keep me')")
    db.close()


def damage_other_columns(path: Path) -> None:
    path.unlink()
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE games (id INTEGER PRIMARY KEY, winner TEXT)")
    db.close()


@pytest.mark.parametrize(
    ("damage", "words"),
    [
        (damage_garbage, ["not a SQLite database"]),
        (damage_truncated, ["damaged"]),
        (damage_empty, ["empty"]),
        (damage_overwritten, ["damaged"]),
        (damage_other_program, ["another program's", "notes"]),
        (damage_other_columns, ["columns"]),
    ],
    ids=["garbage", "truncated", "empty", "overwritten", "another program's", "other columns"],
)
def test_a_damaged_database_is_refused_at_start_and_left_as_it_was(good: Path, damage: Any, words: list[str]) -> None:
    damage(good)
    before = good.read_bytes()
    refused(serve(good), good, *words)
    games_refused(good, *words)
    assert good.read_bytes() == before  # never started empty over it, never "repaired"
    with pytest.raises(StorageError):
        GameStore(good)


@pytest.mark.parametrize("size", [1, 99])
def test_a_database_cut_shorter_than_its_header_is_refused_and_left_as_it_was(good: Path, size: int) -> None:
    """Cut to one byte, SQLite read the file as a new, empty database: the
    listing said "no games stored yet" (status 0) and a server wrote a new
    database over it."""
    good.write_bytes(good.read_bytes()[:size])
    before = good.read_bytes()
    line = refused(serve(good), good, f"is {size} byte", "shorter than the 100-byte header", "a truncated file?")
    assert CliRunner().invoke(main, ["games", "--db", str(good)]).output == line + "\n"
    assert games(good).exit_code == 2
    assert good.read_bytes() == before


def test_a_database_locked_by_another_program_is_refused_at_start(good: Path) -> None:
    other = sqlite3.connect(good, isolation_level=None)
    other.execute("PRAGMA locking_mode=EXCLUSIVE")
    other.execute("BEGIN EXCLUSIVE")
    other.execute("DELETE FROM games WHERE code = 'game0000'")  # holds the write lock: nobody may read
    try:
        started = time.monotonic()
        server = subprocess.Popen(
            [sys.executable, "-m", "c4lab", "serve", "--db", str(good), "--port", str(free_port())],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        listing = games(good)
        out, err = server.communicate(timeout=60)
        assert time.monotonic() - started < 30
    finally:
        other.execute("ROLLBACK")
        other.close()
    refused(subprocess.CompletedProcess(server.args, server.returncode, out, err), good, "locked by another program")
    assert listing.exit_code == 2 and "locked by another program" in listing.output, listing.output
    assert len(read_games(good)) == 300  # nothing lost


def test_a_full_disk_at_start_is_refused_and_leaves_no_empty_file(tmp_path: Path) -> None:
    db = tmp_path / "new.sqlite"

    def no_room() -> None:  # writes beyond 0 bytes fail, as on a full disk
        resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))

    done = subprocess.run(
        [sys.executable, "-m", "c4lab", "serve", "--db", str(db), "--port", str(free_port())],
        capture_output=True, text=True, timeout=60, check=False, preexec_fn=no_room,
    )
    refused(done, db, "disk")
    assert not db.exists()  # the next start (with room on the disk) makes it afresh


def test_a_second_server_on_the_same_file_refuses_to_start_and_the_first_goes_on(good: Path) -> None:
    port = free_port()
    first = subprocess.Popen(
        [sys.executable, "-m", "c4lab", "serve", "--db", str(good), "--port", str(port)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while True:
            try:
                httpx.get(url + "/api/games", timeout=1)
                break
            except httpx.TransportError:
                assert first.poll() is None and time.monotonic() < deadline, first.communicate()
                time.sleep(0.1)
        line = refused(serve(good), good, "in use by another c4lab server", f"process {first.pid}")
        assert "--db" in line
        assert len(read_games(good)) == 300  # a listing reads beside the running server
        code = httpx.post(url + "/api/rooms", json={"players": {"A": "human", "B": "human"}}).json()["code"]
        assert httpx.get(url + f"/api/rooms/{code}").status_code == 200
    finally:
        first.terminate()
        first.communicate(timeout=30)
    with sqlite3.connect(good) as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        assert db.execute("SELECT count(*) FROM games").fetchone() == (301,)
    db.close()


def test_a_listing_leaves_no_wal_or_shm_file_beside_a_database_it_reads(good: Path, tmp_path: Path) -> None:
    """Review: ``c4lab games`` left ``-wal`` (0 bytes) and ``-shm`` (32 KB)
    files beside a database no server had open: a read-only connection
    cannot remove what SQLite makes for its read.  The listing's connection
    may write (its statements may not: ``query_only``), so SQLite removes
    them as it closes, as a server's last connection does; beside a running
    server they are the server's, and the listing reads its latest game."""
    def beside() -> list[str]:
        return sorted(p.name for p in good.parent.iterdir())

    before, content = beside(), good.read_bytes()
    assert before == ["good.sqlite", "good.sqlite.lock"]
    result = games(good)
    assert result.exit_code == 0 and "game0299" in result.output, result.output
    assert len(read_games(good)) == 300
    assert beside() == before and good.read_bytes() == content  # nothing left, nothing written
    server = GameStore(good)
    try:
        server.save(GameRow("latest", "local", "7x6:dd", 0, SEATS))
        assert "latest" in {row.code for row in read_games(good)}  # what the server wrote: not a stale copy
        assert {"good.sqlite-wal", "good.sqlite-shm"} <= set(beside())  # the server's own, still in use
        server.save(GameRow("after", "local", "7x6:dd", 0, SEATS))
    finally:
        server.close()
    assert beside() == before and len(read_games(good)) == 302 and beside() == before
    # a server that died with games in its -wal file (copied while it ran): the listing reads them and leaves the
    # file as it was for the next server to take up (it writes nothing into the database)
    server = GameStore(good)
    try:
        server.save(GameRow("unsaved", "local", "7x6:dd", 0, SEATS))
        crashed = tmp_path / "crashed"
        crashed.mkdir()
        for name in ("good.sqlite", "good.sqlite-wal"):
            shutil.copyfile(good.parent / name, crashed / name)
    finally:
        server.close()
    wal = (crashed / "good.sqlite-wal").read_bytes()
    assert wal and "unsaved" in {row.code for row in read_games(crashed / "good.sqlite")}
    assert (crashed / "good.sqlite-wal").read_bytes() == wal


def test_two_stores_in_one_process_the_second_is_refused_until_the_first_closes(good: Path) -> None:
    first = GameStore(good)
    with pytest.raises(StorageError, match=f"in use by another c4lab server \\(process {os.getpid()}\\)"):
        GameStore(good)
    assert len(read_games(good)) == 300
    first.close()
    GameStore(good).close()


# ---------------------------------------------------------------------------
# On a write
# ---------------------------------------------------------------------------


class FailingWrites:
    """A store connection whose writes fail with ``error`` while ``failing``
    (SQLite's own exception, as a full disk raises it); reads go on."""

    def __init__(self, db: sqlite3.Connection, error: str = "database or disk is full") -> None:
        self.db = db
        self.error = error
        self.failing = False
        self.writes = 0

    def execute(self, query: str, parameters: Any = ()) -> Any:
        if query.lstrip().upper().startswith(("INSERT", "UPDATE", "DELETE")):
            if self.failing:
                raise sqlite3.OperationalError(self.error)
            self.writes += 1
        return self.db.execute(query, parameters)

    def close(self) -> None:
        self.db.close()


@pytest.fixture
def app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[TestClient, GameStore, FailingWrites]]:
    monkeypatch.setattr(rooms, "STORAGE_RETRY", 0.2)
    store = GameStore(tmp_path / "games.sqlite")
    disk = FailingWrites(store._db)
    store._db = disk  # type: ignore[assignment]
    try:
        with TestClient(create_app(store, hint_spec="random", agent_workers=1)) as client:
            yield client, store, disk
    finally:
        store.close()


def no_errors_logged(caplog: pytest.LogCaptureFixture) -> None:
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info], caplog.text
    for record in caplog.records:
        assert "\n" not in record.getMessage(), record.getMessage()


def snapshot(client: TestClient, store: GameStore, code: str) -> tuple[Any, Any]:
    manager = client.app.state.manager  # type: ignore[attr-defined]
    row = store.load(code)
    return manager.rooms[code].state(manager.forfeit_after), row and {**row.__dict__, "updated": None}


def test_a_move_undo_or_resignation_that_cannot_be_saved_changes_nothing(
    app: tuple[TestClient, GameStore, FailingWrites], caplog: pytest.LogCaptureFixture
) -> None:
    client, store, disk = app
    room = client.post("/api/rooms", json={"players": {"A": "human", "B": "human"}}).json()
    code = room["code"]
    with caplog.at_level(logging.WARNING), client.websocket_connect(f"/ws/{code}") as socket:
        socket.receive_json()
        socket.send_json({"type": "hello", "token": room["token"]})
        socket.receive_json()
        socket.send_json({"type": "move", "move": "d"})
        assert socket.receive_json()["room"]["position"] == "7x6:d"
        before = snapshot(client, store, code)
        disk.failing = True
        for message in ({"type": "move", "move": "c"}, {"type": "undo"}, {"type": "resign"}):
            socket.send_json(message)
            error = socket.receive_json()
            assert error["type"] == "error" and error["code"] == "storage-failed", error
            assert "full" in error["message"] and str(store.path) not in error["message"]
            assert snapshot(client, store, code) == before, message
        socket.send_json({"type": "ping"})
        assert socket.receive_json() == {"type": "pong"}  # the connection is still there
        disk.failing = False
        socket.send_json({"type": "move", "move": "c"})
        assert socket.receive_json()["room"]["position"] == "7x6:dc"
    row = store.load(code)
    assert row is not None and row.position == "7x6:dc"
    assert "was not saved" in caplog.text
    no_errors_logged(caplog)


def test_an_agent_move_that_cannot_be_saved_is_played_again_later(
    app: tuple[TestClient, GameStore, FailingWrites], caplog: pytest.LogCaptureFixture
) -> None:
    client, store, disk = app
    room = client.post("/api/rooms", json={"board": "5x4", "players": {"A": "human", "B": "random"}}).json()
    code = room["code"]
    with caplog.at_level(logging.WARNING), client.websocket_connect(f"/ws/{code}") as socket:
        socket.receive_json()
        socket.send_json({"type": "hello", "token": room["token"]})
        socket.receive_json()
        writes = disk.writes

        def fail_after_the_human_move(query: str, parameters: Any = ()) -> Any:
            disk.failing = disk.writes > writes  # the human's move is saved, the agent's is not
            return FailingWrites.execute(disk, query, parameters)

        disk.execute = fail_after_the_human_move  # type: ignore[method-assign]
        socket.send_json({"type": "move", "move": "a"})
        seen = []
        while True:
            message = socket.receive_json()
            seen.append(message)
            if message["type"] == "error":
                break
        assert message["code"] == "storage-failed"
        state = socket.receive_json()
        assert state["room"]["position"] == "5x4:a" and state["room"]["thinking"] is None
        row = store.load(code)
        assert row is not None and row.position == "5x4:a"
        disk.execute = FailingWrites.execute.__get__(disk)  # type: ignore[method-assign]
        disk.failing = False
        while True:  # the agent tries again after STORAGE_RETRY seconds
            message = socket.receive_json()
            if message["type"] == "state" and len(message["room"]["position"]) > len("5x4:a"):
                break
    row = store.load(code)
    assert row is not None and len(row.position) == len("5x4:ab")
    no_errors_logged(caplog)


def test_a_room_or_a_join_that_cannot_be_saved_is_a_503_and_nothing(
    app: tuple[TestClient, GameStore, FailingWrites], caplog: pytest.LogCaptureFixture
) -> None:
    client, store, disk = app
    online = client.post("/api/rooms", json={"mode": "online", "seat": "A", "name": "Ann"}).json()
    with caplog.at_level(logging.WARNING):
        disk.failing = True
        answer = client.post("/api/rooms", json={"players": {"A": "random", "B": "random"}})
        assert answer.status_code == 503 and "full" in answer.json()["detail"], answer.text
        answer = client.post(f"/api/rooms/{online['code']}/join", json={"name": "Bob"})
        assert answer.status_code == 503 and "full" in answer.json()["detail"], answer.text
        state = client.get(f"/api/rooms/{online['code']}").json()
        assert not state["seats"]["B"]["taken"] and state["status"] == "waiting"
        disk.failing = False
        assert client.post(f"/api/rooms/{online['code']}/join", json={"name": "Bob"}).status_code == 200
    assert [row.code for row in store.all()] == [online["code"]]  # the room refused was not stored
    no_errors_logged(caplog)


def test_a_real_full_disk_refuses_new_rooms_and_the_server_goes_on(tmp_path: Path) -> None:
    """SQLite's own limit (``max_page_count``) stands for a full disk."""
    store = GameStore(tmp_path / "games.sqlite")
    try:
        with TestClient(create_app(store, hint_spec="random", agent_workers=1)) as client:
            made = [client.post("/api/rooms", json={"name": "Ann"}).json()["code"]]
            pages = store._db.execute("PRAGMA page_count").fetchone()[0]
            store._db.execute(f"PRAGMA max_page_count = {pages}")
            statuses = []
            for _ in range(200):
                answer = client.post("/api/rooms", json={"name": "Ann" * 8, "players": {"A": "human", "B": "human"}})
                statuses.append(answer.status_code)
                if answer.status_code != 200:
                    break
                made.append(answer.json()["code"])
            assert statuses[-1] == 503, statuses
            assert "full" in answer.json()["detail"]
            assert client.get(f"/api/rooms/{made[0]}").status_code == 200  # the server goes on
            store._db.execute("PRAGMA max_page_count = 1073741823")
            made.append(client.post("/api/rooms", json={}).json()["code"])
            assert sorted(row.code for row in store.all()) == sorted(made)  # every room saved, no other
    finally:
        store.close()


def test_a_lock_held_by_another_program_fails_the_write_not_the_server(tmp_path: Path) -> None:
    store = GameStore(tmp_path / "games.sqlite", timeout=0.2)
    try:
        with TestClient(create_app(store, hint_spec="random", agent_workers=1)) as client:
            room = client.post("/api/rooms", json={"players": {"A": "human", "B": "human"}}).json()
            other = sqlite3.connect(store.path, isolation_level=None)
            other.execute("BEGIN IMMEDIATE")  # another program's write transaction
            try:
                with client.websocket_connect(f"/ws/{room['code']}") as socket:
                    socket.receive_json()
                    socket.send_json({"type": "hello", "token": room["token"]})
                    socket.receive_json()
                    socket.send_json({"type": "move", "move": "d"})
                    error = socket.receive_json()
                    assert error["code"] == "storage-failed", error
                    other.execute("ROLLBACK")
                    socket.send_json({"type": "move", "move": "d"})
                    assert socket.receive_json()["room"]["position"] == "7x6:d"
            finally:
                other.close()
    finally:
        store.close()


def test_a_damaged_row_is_a_clear_error_and_the_other_rooms_go_on(tmp_path: Path) -> None:
    db = tmp_path / "games.sqlite"
    store = GameStore(db)
    try:
        with TestClient(create_app(store, hint_spec="random", agent_workers=1)) as client:
            bad = client.post("/api/rooms", json={}).json()["code"]
            fine = client.post("/api/rooms", json={"players": {"A": "human", "B": "human"}}).json()["code"]
            client.app.state.manager.rooms.clear()  # type: ignore[attr-defined]  # as after a restart
            store._db.execute("UPDATE games SET position = 'not a position' WHERE code = ?", (bad,))
            answer = client.get(f"/api/rooms/{bad}")  # damaged for good: not "try again later"
            assert answer.status_code == 500 and "stored record is damaged" in answer.json()["detail"]
            assert client.get(f"/api/games/{bad}").status_code == 500
            with client.websocket_connect(f"/ws/{bad}") as socket:
                assert socket.receive_json()["code"] == "storage-failed"
            assert client.get(f"/api/rooms/{fine}").status_code == 200
            store._db.execute("UPDATE games SET seats = 'garbage' WHERE code = ?", (bad,))
            assert client.get(f"/api/rooms/{bad}").status_code == 500
            assert client.get("/api/games").status_code == 200
    finally:
        store.close()
    games_refused(db, "damaged", bad)


def test_a_copy_of_a_good_database_still_serves_its_games(good: Path, tmp_path: Path) -> None:
    """The checks at start refuse nothing whole: a copy (with its WAL) opens."""
    copy = tmp_path / "copy.sqlite"
    shutil.copy(good, copy)
    assert len(read_games(copy)) == 300
    GameStore(copy).close()


# ---------------------------------------------------------------------------
# A folder, a pipe or no folder where the database should be; a file or
# a folder this user cannot write; a newer c4lab's file
# ---------------------------------------------------------------------------


def c4lab(*args: str, user: bool = False) -> subprocess.CompletedProcess[str]:
    """``c4lab ARGS`` run until it ends; ``user``: with a user's permissions."""
    return subprocess.run(
        [*(as_a_user() if user else []), sys.executable, "-m", "c4lab", *args],
        capture_output=True, text=True, timeout=60, check=False,
    )


def files(folder: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(folder.iterdir())}


@pytest.mark.parametrize("read_only", ["file", "folder"])
def test_a_database_the_user_cannot_write_is_refused_by_a_server_and_listed_by_games(
    good: Path, read_only: str
) -> None:
    # SQLite opens a write-protected file read-only without a word: the server
    # started, said "games stored in", and failed every room and every move
    protected = good if read_only == "file" else good.parent
    before = files(good.parent)
    del before["good.sqlite.lock"]  # the lock file (left by the fixture's store): a server writes its id in it
    protected.chmod(0o444 if read_only == "file" else 0o555)
    try:
        line = refused(c4lab("serve", "--db", str(good), "--port", str(free_port()), user=True), good, "read-only")
        assert ("the file is read-only" if read_only == "file" else f"its folder {good.parent} is read-only") in line
        listing = c4lab("games", "--db", str(good), "--limit", "1000", user=True)  # a listing only reads
        after = files(good.parent)
    finally:
        protected.chmod(0o644 if read_only == "file" else 0o755)
    assert listing.returncode == 0 and listing.stderr == "", listing.stderr
    assert len(listing.stdout.splitlines()) == 300
    assert {name: after[name] for name in before} == before  # nothing written to what was there


def test_a_listing_writes_nothing_into_the_file(tmp_path: Path) -> None:
    """Another program's new SQLite file with no table yet: `c4lab games`
    lists no game and leaves it as it was (it added a games table and made
    it a WAL database); an old journal-mode c4lab file stays so too."""
    empty = tmp_path / "empty.sqlite"
    with sqlite3.connect(empty) as db:
        db.execute("CREATE TABLE made (x)")
        db.execute("DROP TABLE made")
    db.close()
    before = empty.read_bytes()
    listing = games(empty)
    assert listing.exit_code == 0 and listing.stdout == "", listing.output
    assert "no games stored in" in listing.stderr
    assert empty.read_bytes() == before
    with sqlite3.connect(empty) as db:
        assert db.execute("SELECT count(*) FROM sqlite_master").fetchone() == (0,)
        assert db.execute("PRAGMA journal_mode").fetchone() == ("delete",)
    db.close()


def test_a_server_writes_its_storage_format_in_the_file(tmp_path: Path) -> None:
    db = tmp_path / "games.sqlite"
    GameStore(db).close()
    with sqlite3.connect(db) as raw:
        assert raw.execute("PRAGMA user_version").fetchone() == (FORMAT,)
    raw.close()


def newer_format(path: Path) -> None:
    with sqlite3.connect(path) as db:
        db.execute(f"PRAGMA user_version = {FORMAT + 1}")
    db.close()


def newer_column(path: Path) -> None:
    with sqlite3.connect(path) as db:
        db.execute("ALTER TABLE games ADD COLUMN clock TEXT")
    db.close()


@pytest.mark.parametrize(("change", "words"), [
    (newer_format, ["written by a newer c4lab", f"storage format {FORMAT + 1}", "upgrade c4lab"]),
    (newer_column, ["written by a newer c4lab?", "(clock)", "Upgrade c4lab"]),
], ids=["a later format", "a column more"])
def test_a_database_of_a_newer_c4lab_is_refused_as_such_and_left_as_it_was(
    good: Path, change: Any, words: list[str]
) -> None:
    change(good)
    before = good.read_bytes()
    refused(serve(good), good, *words)
    games_refused(good, *words)
    assert good.read_bytes() == before  # its newer format not overwritten with ours


def test_a_folder_where_the_database_should_be_is_said_by_games_and_serve(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    default = tmp_path / ".c4lab" / "games.sqlite"
    default.mkdir(parents=True)
    monkeypatch.setattr("c4lab.server.storage.DEFAULT_DB", default)
    listing = CliRunner().invoke(main, ["games"])  # it said "no games stored yet"
    served = CliRunner().invoke(main, ["serve", "--port", str(free_port())])  # "unable to open database file"
    for result in (listing, served):
        assert result.exit_code == 2, result.output
        assert result.output == f"Error: {default} is a folder, not a game database file: give --db a file\n"
    assert list(default.iterdir()) == []


def test_a_home_where_the_database_folder_cannot_be_made_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    home.write_text("a file where the home folder should be")  # no folder can be made in it, even by root
    default = home / ".c4lab" / "games.sqlite"
    monkeypatch.setattr("c4lab.server.storage.DEFAULT_DB", default)
    for command in (["serve", "--port", str(free_port())], ["play", "--no-browser", "--port", str(free_port())]):
        result = CliRunner().invoke(main, command)  # a traceback (NotADirectoryError, PermissionError)
        assert result.exit_code == 2, result.output
        assert isinstance(result.exception, SystemExit), repr(result.exception)
        assert result.output.startswith(f"Error: cannot create the folder {home / '.c4lab'} for the game database "
                                        f"{default}: "), result.output
        assert result.output.endswith("(give --db a file in a folder you can write)\n"), result.output
    assert home.read_text() == "a file where the home folder should be"


@pytest.mark.parametrize("path", ["/dev/null", "pipe"])
def test_a_pipe_or_a_device_is_not_a_database(tmp_path: Path, path: str) -> None:
    db = Path(path) if path.startswith("/") else tmp_path / path
    if path == "pipe":
        os.mkfifo(db)  # SQLite reading it: "the disk refused to read or write it: is it full, or failing?"
    for done in (serve(db), c4lab("games", "--db", str(db))):
        refused(done, db, "is not a regular file")


# ---------------------------------------------------------------------------
# A damaged row in a listing
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(("damage", "words"), [
    ("seats = 'garbage'", "JSONDecodeError"),
    ("seats = '{\"A\": {\"kind\": \"human\"}, \"B\": {\"kind\": \"human\"}}'", "a seat has no name"),
    ("seats = '{\"A\": {\"name\": \"Ann\"}}'", "the seats are ['A'], not A and B"),
    ("updated = 'yesterday'", "its time updated is 'yesterday', not a number"),
    ("updated = 1e20", "OverflowError"),
    ("position = X'FF'", "its position is b'\\xff', not text"),
    ("result = X'00'", "its result is b'\\x00', not text"),
    ("start_ply = 'x'", "its start_ply is 'x', not an integer"),
    ("position = 'not a position'", "PositionError: invalid position 'not a position'"),
    ("position = '7x6:ddddddd'", "move 6 (the 7th) 'd' at character 10"),
    ("position = '7x6/Xd6:dddddd'", "'d' at character 13: column d is full"),
    ("seats = '{\"A\": {\"name\": \"Ann\"}, \"B\": {\"name\": \"Bob\"}}'", "seat A's kind is None"),
    ("seats = '{\"A\": {\"kind\": \"agent\", \"name\": \"x\"}, \"B\": {\"kind\": \"human\", \"name\": \"Bob\"}}'",
     "seat A is an agent with no spec"),
    ("seats = CAST(X'7B2241223AFF7D' AS TEXT)", "its seats holds bytes that are not UTF-8 text"),
    ("position = CAST(X'3778363AFF' AS TEXT)", "its position holds bytes that are not UTF-8 text"),
], ids=["not JSON", "no names", "one seat", "a time of words", "a time out of range", "a blob position",
        "a blob result", "a start of words", "a position of words", "an overfull column",
        "a column the forbidden cell fills", "seats of no kind", "an agent of no spec", "seats not UTF-8",
        "a position not UTF-8"])
def test_a_listing_names_each_damaged_game_and_lists_the_others(good: Path, damage: str, words: str) -> None:
    # the rows but the first two made tracebacks (KeyError, TypeError,
    # OverflowError); the first hid every other game behind its error.
    # Review: text that is not UTF-8 hid every game too ("cannot read the
    # games of ...: Could not decode to UTF-8 column", the row's bytes shown)
    # Review: a position (or seats) of text that opening the game refuses
    # (DamagedRow) was listed as a good game; now listed as damaged as the rest
    with sqlite3.connect(good) as db:
        db.execute(f"UPDATE games SET {damage} WHERE code = 'game0007'")
    db.close()
    for args in ([], ["--json"]):
        result = CliRunner().invoke(main, ["games", "--db", str(good), "--limit", "1000", *args])
        assert result.exit_code == 2 and isinstance(result.exception, SystemExit), result.output
        assert len(result.stdout.splitlines()) == 299 and "game0007" not in result.stdout
        assert result.stderr.startswith(f"Error: {good}: the row of game 'game0007' is damaged (")
        assert len(result.stderr.splitlines()) == 1 and words in result.stderr, result.stderr
    store = GameStore(good, exclusive=False)
    try:  # opening it says the same
        with pytest.raises(DamagedRow, match="game0007"):
            store.load("game0007")
    finally:
        store.close()


@pytest.mark.parametrize("damage", ["seats = '{\"A\": {}, \"B\": {}}'", "result = X'FF'", "position = X'00'",
                                    "position = '7x6:ddddddd'", "position = 'no board'",
                                    "position = CAST(X'3778363AFF' AS TEXT)"])
def test_a_damaged_public_game_is_left_out_of_the_public_games_not_the_others(
    tmp_path: Path, damage: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Review: a blob in a text column (SQLite keeps any value in any
    column) made the whole list a 500, and ``c4lab games --json`` a traceback.
    Review: a position of text that is none was listed, and opening it was
    the 500 of a damaged record; now it is left out, the log names it."""
    db = tmp_path / "games.sqlite"
    store = GameStore(db)
    try:
        for code in ("fine", "bad"):
            store.save(GameRow(code, "online", "7x6:dddd", 0, SEATS, public=True, status="over", result="draw",
                               reason="full", finished=time.time()))
        with sqlite3.connect(db) as by_hand:  # another program edits the file
            by_hand.execute(f"UPDATE games SET {damage} WHERE code = 'bad'")
        by_hand.close()
        with caplog.at_level(logging.WARNING), TestClient(
            create_app(store, hint_spec="random", agent_workers=1)
        ) as client:
            answer = client.get("/api/games")  # a 500: the whole list failed on the one row
            opened = client.get("/api/games/bad")
        assert answer.status_code == 200, answer.text
        assert [game["code"] for game in answer.json()] == ["fine"]
        assert opened.status_code == 500 and "damaged" in opened.json()["detail"]
        said = [r.getMessage() for r in caplog.records if "left out of the public games" in r.getMessage()]
        assert len(said) == 1 and "game 'bad' is damaged" in said[0], said
    finally:
        store.close()


def test_a_damaged_open_room_is_not_resumed_and_the_others_are(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Review: with the position checked when a row is read, one damaged
    open room would have kept every other from being resumed at start."""
    db = tmp_path / "games.sqlite"
    store = GameStore(db)
    taken = {side: {**seat, "token_hash": "x" * 64} for side, seat in SEATS.items()}
    try:
        for code in ("fine", "bad"):
            store.save(GameRow(code, "online", "7x6:dd", 0, taken, status="playing"))
        with sqlite3.connect(db) as by_hand:
            by_hand.execute("UPDATE games SET position = '7x6:dd?' WHERE code = 'bad'")
        by_hand.close()
        with caplog.at_level(logging.WARNING), TestClient(
            create_app(store, hint_spec="random", agent_workers=1)
        ) as client:
            assert set(client.app.state.manager.rooms) == {"fine"}  # type: ignore[attr-defined]
        said = [r.getMessage() for r in caplog.records if r.getMessage().startswith("not resumed")]
        assert len(said) == 1 and "game 'bad' is damaged" in said[0], said
    finally:
        store.close()


@pytest.mark.parametrize("how", ["removed", "replaced"])
def test_a_database_removed_while_the_server_runs_refuses_changes_and_the_server_goes_on(
    tmp_path: Path, how: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Review: with its file removed, the server went on saving rooms and
    moves (SQLite wrote them into the removed file), all lost at its stop
    without a word.  Now a change is refused (``storage-failed``, the room
    as it was) and logged with the file's name; what is in memory is still
    served."""
    db = tmp_path / "games.sqlite"
    store = GameStore(db)
    try:
        with TestClient(create_app(store, hint_spec="random", agent_workers=1)) as client:
            room = client.post("/api/rooms", json={"players": {"A": "human", "B": "human"}}).json()
            for leftover in ("", "-wal", "-shm"):
                Path(str(db) + leftover).unlink(missing_ok=True)
            if how == "replaced":
                GameStore(db, exclusive=False).close()  # another (empty) database put in its place
            with client.websocket_connect(f"/ws/{room['code']}") as socket:
                socket.receive_json()
                socket.send_json({"type": "hello", "token": room["token"]})
                socket.receive_json()
                socket.send_json({"type": "move", "move": "d"})
                assert socket.receive_json()["code"] == "storage-failed"
            answer = client.post("/api/rooms", json={})
            assert answer.status_code == 503
            assert client.get(f"/api/rooms/{room['code']}").json()["position"] == "7x6"  # still served, unchanged
    finally:
        store.close()
    said = [r.getMessage() for r in caplog.records if "removed or replaced while the server runs" in r.getMessage()]
    assert said and all(str(db) in line for line in said)


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT])
def test_a_server_stopped_by_a_signal_closes_its_database_first(good: Path, stop: signal.Signals) -> None:
    """``kill`` (SIGTERM) and Ctrl-C (SIGINT) each end the server with their
    usual status, its database closed: SQLite folds its ``-wal`` file back
    in and removes it, so the file alone holds every game (a copy or a
    backup of it misses none)."""
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "c4lab", "serve", "--db", str(good), "--port", str(port)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        assert server.stdout and server.stdout.readline().startswith("c4lab server at ")
        made = httpx.post(f"http://127.0.0.1:{port}/api/rooms", json={"mode": "online"}, timeout=30)
        assert made.status_code == 200, made.text
        assert Path(f"{good}-wal").exists()  # the new room is written to it
        server.send_signal(stop)
        _, err = server.communicate(timeout=60)
    finally:
        server.kill()
    assert server.returncode == (-signal.SIGTERM if stop == signal.SIGTERM else 130), err
    assert "Traceback" not in err, err
    assert not Path(f"{good}-wal").exists()
    assert made.json()["code"] in {row.code for row in read_games(good)}
