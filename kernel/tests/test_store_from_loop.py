"""Database.run: store work done on the event loop when nothing makes it wait, in a worker
thread when something would (our own busy worker, another process's write lock), and a
durable commit synced without holding the connection."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest
from hermes_plugin_store_sqlite.database import Database
from hermes_plugin_store_sqlite.group_sync import GroupSync

from hermes_kernel.store.errors import StoreError
from hermes_kernel.store.state import StateStore


def add_note(db: Database, text: str, durable: bool = False) -> str:
    """One write transaction; returns the thread it ran in."""
    with db.write(durable=durable) as cursor:
        cursor.execute("CREATE TABLE IF NOT EXISTS notes (text TEXT)")
        cursor.execute("INSERT INTO notes VALUES (?)", (text,))
    return threading.current_thread().name


def notes(db: Database) -> list[str]:
    return [row[0] for row in db.query("SELECT text FROM notes ORDER BY rowid")]


def test_a_free_database_is_used_right_on_the_loop(store):
    async def main():
        return await store.db.run(add_note, store.db, "one"), threading.current_thread().name

    ran_in, loop_thread = asyncio.run(main())
    assert ran_in == loop_thread
    assert notes(store.db) == ["one"]


def hold_connection(db: Database) -> tuple[threading.Thread, threading.Event]:
    """A worker thread inside a write transaction until the returned event is set."""
    held, release = threading.Event(), threading.Event()

    def hold() -> None:
        with db.write():
            held.set()
            release.wait(5)

    holder = threading.Thread(target=hold)
    holder.start()
    held.wait(5)
    return holder, release


def test_a_worker_holding_the_connection_sends_the_call_to_a_thread(store):
    async def main():
        holder, release = hold_connection(store.db)
        asyncio.get_running_loop().call_later(0.2, release.set)

        def note_after_the_worker() -> tuple[str, bool]:
            return add_note(store.db, "after the worker"), release.is_set()

        ran_in, worker_was_done = await store.db.run(note_after_the_worker)
        holder.join()
        return ran_in, threading.current_thread().name, worker_was_done

    ran_in, loop_thread, worker_was_done = asyncio.run(main())
    assert ran_in != loop_thread  # the loop did not sit on the lock for 200 ms
    assert worker_was_done  # the write waited its turn in the thread
    assert notes(store.db) == ["after the worker"]


def test_another_process_writing_sends_the_call_to_a_thread_that_waits_its_turn(tmp_path):
    path = tmp_path / "state.db"
    ours, theirs = StateStore(Database(path)), Database(path)
    try:
        add_note(ours.db, "before")
        lock = theirs.write()
        lock.__enter__()  # the other connection holds BEGIN IMMEDIATE

        async def main():
            loop = asyncio.get_running_loop()
            loop.call_later(0.2, lambda: lock.__exit__(None, None, None))
            return await ours.db.run(add_note, ours.db, "after"), threading.current_thread().name

        ran_in, loop_thread = asyncio.run(main())
        assert ran_in != loop_thread
        assert notes(ours.db) == ["before", "after"]
    finally:
        theirs.close()
        ours.close()


def test_a_durable_commit_on_the_loop_is_synced_in_the_sync_thread(store, monkeypatch):
    synced_in: list[str] = []
    real_sync = Database.sync

    def recording_sync(self: Database) -> None:
        synced_in.append(threading.current_thread().name)
        real_sync(self)

    monkeypatch.setattr(Database, "sync", recording_sync)

    async def main():
        ran_in = await store.db.run(add_note, store.db, "kept", True)
        return ran_in, threading.current_thread().name

    ran_in, loop_thread = asyncio.run(main())
    assert ran_in == loop_thread  # the commit itself was made inline
    assert len(synced_in) == 1 and synced_in[0] != loop_thread
    add_note(store.db, "plain")  # a plain commit owes no sync
    add_note(store.db, "from a thread", durable=True)  # synced by the caller, at once
    assert len(synced_in) == 2 and synced_in[1] == loop_thread


def test_commits_waiting_together_share_one_sync_and_its_failure():
    """Callers that arrive while a sync runs are covered by the next one, together; one
    that arrived before a sync started never gets an earlier sync's result."""
    started: list[float] = []
    fail = threading.Event()

    def slow_sync() -> None:
        started.append(time.monotonic())
        time.sleep(0.1)
        if fail.is_set():
            raise StoreError("state.db: could not save (sync failed: disk gone)")

    syncs = GroupSync(slow_sync)

    async def main() -> tuple[list[float], list[float]]:
        first = asyncio.ensure_future(syncs.wait())
        await asyncio.sleep(0.03)  # the first sync is running: these four wait for the next
        asked = time.monotonic()
        await asyncio.gather(*(syncs.wait() for _ in range(4)))
        await first
        return [asked], list(started)

    (asked,), began = asyncio.run(main())
    assert len(began) == 2  # five callers, two syncs
    assert began[1] >= asked  # the later callers' sync started after they asked

    fail.set()

    async def failing() -> list[BaseException | None]:
        return await asyncio.gather(*(syncs.wait() for _ in range(3)), return_exceptions=True)

    outcomes = asyncio.run(failing())
    assert [str(outcome) for outcome in outcomes] == [
        "state.db: could not save (sync failed: disk gone)"
    ] * 3


def test_sync_without_a_wal_file_is_a_no_op_and_a_failed_sync_is_one_line(tmp_path):
    db = Database(tmp_path / "state.db")
    try:
        wal = tmp_path / "state.db-wal"
        wal.unlink(missing_ok=True)
        db.sync()  # everything is in the database file already
        wal.mkdir()  # cannot be opened for writing: the sync fails
        with pytest.raises(StoreError, match="could not save"):
            db.sync()
    finally:
        wal.rmdir()
        db.close()


def test_the_loop_is_free_of_no_wait_mode_while_a_call_waits_in_a_thread(store):
    """A call that went to a thread must not leave the loop thread in no-wait mode: other
    coroutines' store calls would then fail instead of waiting."""

    async def main():
        holder, release = hold_connection(store.db)
        waiting = asyncio.ensure_future(store.db.run(add_note, store.db, "queued"))
        await asyncio.sleep(0.05)  # it is in its thread now, waiting for the lock
        release.set()
        holder.join()
        add_note(store.db, "direct")  # would raise WouldBlock in no-wait mode
        await waiting

    asyncio.run(main())
    assert sorted(notes(store.db)) == ["direct", "queued"]


def test_checkpoints_run_in_the_background_and_keep_the_log_short(store):
    store.db.checkpoint_pages = 1_000  # a tenth of the default: a quicker test
    session = store.sessions.create("cli", model="m", provider="p", system_prompt="")
    for number in range(4_000):  # about 3 pages of log per message: several checkpoints
        store.messages.append(session.id, "user", f"message {number} " + "x" * 600)
        if number % 50 == 0:
            # A pause, as real traffic has: long enough for a running checkpoint to finish
            # (on a busy machine a fixed sleep was not, and the log grew).
            with store.db._checkpointing:
                pass
    page_size = store.db.query_value("PRAGMA page_size")
    wal = store.db.path.parent / "state.db-wal"
    # Restarted, not grown: never restarted, the log would hold all 12,000 pages. The file
    # keeps its largest size, and on a loaded machine one restart may be missed (a reader's
    # snapshot holds the copy back; the next checkpoint catches up), so a few thousand.
    assert wal.stat().st_size < 5 * 1_000 * page_size
    assert store.db.query_value("SELECT count(*) FROM messages") == 4_000


def test_a_checkpoint_starts_the_log_over_in_its_own_thread(store):
    # Starting the log over syncs its new header: done by the next commit, an event loop's
    # commit would wait for that sync (hundreds of ms on a disk that stalls).
    store.db.checkpoint_pages = 200
    session = store.sessions.create("cli", model="m", provider="p", system_prompt="")
    wal = store.db.path.parent / "state.db-wal"
    number = 0
    while not store.db._checkpointing.locked():
        # Read before the commit that starts the checkpoint: read after it, on a loaded
        # machine the checkpoint may already have started the log over.
        before = wal.read_bytes()[:32] if wal.exists() else b""
        store.messages.append(session.id, "user", f"message {number} " + "x" * 600)
        number += 1
        assert number < 5_000, "no checkpoint started"
    with store.db._checkpointing:  # wait for it to end; this thread commits nothing meanwhile
        pass
    after = wal.read_bytes()[:32]
    assert after[12:16] != before[12:16]  # a new checkpoint sequence: the log started over
    store.messages.append(session.id, "user", "after")
    assert store.db.query_value("SELECT count(*) FROM messages") == number + 1
