"""state.db: schema versions, sessions and messages, full-text search, turn leases, locking."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time

import apsw
import pytest
from hermes_plugin_store_sqlite.database import Database
from hermes_plugin_store_sqlite.schema import MIGRATIONS

from hermes_kernel.store.errors import StoreBusyError, StoreError
from hermes_kernel.store.search import SearchMode
from hermes_kernel.store.state import StateStore


def test_a_new_store_is_wal_with_foreign_keys_at_the_latest_version(store):
    assert store.db.query_value("PRAGMA journal_mode") == "wal"
    assert store.db.query_value("PRAGMA foreign_keys") == 1
    assert store.db.version == len(MIGRATIONS)


def test_a_newer_schema_is_refused_with_a_clear_error(tmp_path):
    path = tmp_path / "state.db"
    connection = apsw.Connection(str(path))
    connection.execute("PRAGMA user_version = 99")
    connection.close()
    with pytest.raises(StoreError) as raised:
        Database(path)
    assert str(raised.value) == (
        f"{path} has schema version 99, newer than this Hermes understands "
        f"({len(MIGRATIONS)}); upgrade Hermes (hermes update), or point HERMES_HOME elsewhere"
    )


def test_an_older_schema_is_migrated_and_keeps_its_data(tmp_path):
    path = tmp_path / "state.db"
    StateStore(Database(path)).sessions.create("cli")  # at the current version
    upgraded = Database(path, [*MIGRATIONS, "ALTER TABLE sessions ADD COLUMN pinned INTEGER"])
    assert upgraded.version == len(MIGRATIONS) + 1
    assert upgraded.query_value("SELECT count(*) FROM sessions WHERE pinned IS NULL") == 1


def test_a_file_that_is_not_a_database_gets_one_line_saying_what_to_do(tmp_path):
    path = tmp_path / "state.db"
    path.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(StoreError, match=r"is not a SQLite database .*; move it aside"):
        StateStore(Database(path))


HOLD_LOCK = """
import sys, time, apsw
connection = apsw.Connection(sys.argv[1])
connection.set_busy_timeout(5000)
connection.execute("BEGIN IMMEDIATE")
connection.execute("INSERT INTO sessions (id, source, started_at) VALUES ('held', 'x', 0)")
print("locked", flush=True)
time.sleep(float(sys.argv[2]))
connection.execute("COMMIT")
"""


def hold_lock(path, seconds):
    holder = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(HOLD_LOCK), str(path), str(seconds)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout.readline().strip() == "locked"
    return holder


def test_a_write_waits_for_another_process_then_succeeds(store, tmp_path):
    holder = hold_lock(tmp_path / "state.db", 0.5)
    started = time.monotonic()
    session = store.sessions.create("cli")  # BEGIN IMMEDIATE waits on the busy timeout
    assert time.monotonic() - started >= 0.3
    holder.wait()
    assert store.sessions.get("held") is not None and store.sessions.get(session.id) is not None


def test_a_lock_held_too_long_is_a_clear_error_and_nothing_is_half_written(tmp_path):
    path = tmp_path / "state.db"
    StateStore(Database(path)).close()
    impatient = Database(path, busy_timeout_ms=50, write_attempts=2)
    holder = hold_lock(path, 1)
    with (
        pytest.raises(StoreBusyError, match="stayed locked by another process"),
        impatient.write() as cursor,
    ):
        cursor.execute("INSERT INTO sessions (id, source, started_at) VALUES ('mine', 'x', 0)")
    holder.wait()
    assert impatient.query_value("SELECT count(*) FROM sessions WHERE id = 'mine'") == 0


def test_word_snippets_bracket_the_terms_around_the_first_match():
    from hermes_kernel.store.search import word_snippet

    text = "x " * 100 + "the Docker build failed; docker said no" + " y" * 100
    snippet = word_snippet(text, ["docker"])
    assert snippet.startswith("…") and snippet.endswith("…")
    assert "[Docker] build failed; [docker] said" in snippet
    assert word_snippet("short", ["missing"]) == "short"


def test_auto_mode_picks_trigrams_for_cjk_and_code():
    from hermes_kernel.store.search import choose_mode

    assert choose_mode("deploy failed") is SearchMode.WORDS
    assert choose_mode("why did the deploy fail?") is SearchMode.WORDS
    assert choose_mode("friday's deploy") is SearchMode.WORDS
    assert choose_mode("東京") is SearchMode.TRIGRAMS
    assert choose_mode("os.path.join(") is SearchMode.TRIGRAMS


def test_a_full_disk_is_a_store_error_and_saves_nothing(store):
    session = store.sessions.create("cli")
    pages = store.db.query_value("PRAGMA page_count")
    store.db.query(f"PRAGMA max_page_count = {pages + 2}")
    with pytest.raises(StoreError, match=r"could not save: .*full"):
        store.messages.append(session.id, "user", "x" * 200_000)
    store.db.query("PRAGMA max_page_count = 1073741823")
    assert store.messages.of_session(session.id) == []
    assert store.sessions.get(session.id).message_count == 0


def integrity_check(store):
    for table in ("messages_words", "messages_trigrams"):
        with store.db.write() as cursor:  # raises apsw.CorruptError if index and table differ
            cursor.execute(f"INSERT INTO {table}({table}, rank) VALUES ('integrity-check', 1)")


def test_messages_are_indexed_in_batches_before_search(store):
    session = store.sessions.create("cli")
    for word in ["alpha", "beta", "gamma"]:
        store.messages.append(session.id, "user", f"{word} message")
    assert store.db.query_value("SELECT indexed_upto FROM fts_progress") == 0, (
        "not on the write path"
    )
    assert len(store.search("beta")) == 1, "search indexes what is pending first"
    assert store.db.index_pending() == 0
    integrity_check(store)


def test_a_reused_rowid_is_indexed_with_its_new_text(store):
    keep, drop = store.sessions.create("cli"), store.sessions.create("cli")
    store.messages.append(keep.id, "user", "kept words")
    store.messages.append(drop.id, "user", "dropped words")  # the largest rowid
    store.search("words")  # indexes both
    with store.db.write() as cursor:
        cursor.execute("DELETE FROM sessions WHERE id = ?", (drop.id,))
    reused = store.messages.append(keep.id, "user", "fresh text")  # SQLite reuses the rowid
    assert store.search("dropped") == []
    assert [h.message_id for h in store.search("fresh")] == [reused.id]
    integrity_check(store)


def test_a_version_1_database_is_migrated_and_its_index_kept(tmp_path):
    from hermes_plugin_store_sqlite.schema import V1

    path = tmp_path / "state.db"
    old = Database(path, (V1,))
    with old.write() as cursor:
        cursor.execute("INSERT INTO sessions (id, source, started_at) VALUES ('s', 'cli', 0)")
        cursor.execute(
            "INSERT INTO messages (session_id, seq, role, content, created_at) "
            "VALUES ('s', 1, 'user', 'written by version one', 0)"
        )
    old.close()
    store = StateStore(Database(path))
    assert store.db.version == len(MIGRATIONS)
    assert store.db.query_value("SELECT indexed_upto FROM fts_progress") == 1, (
        "v1 rows were indexed"
    )
    store.messages.append("s", "user", "written by version two")
    assert len(store.search("written version")) == 2
    integrity_check(store)


def test_a_write_that_must_not_wait_says_so_at_once(tmp_path):
    from hermes_kernel.store.errors import WouldBlock

    path = tmp_path / "state.db"
    store = StateStore(Database(path))
    session = store.sessions.create("cli")
    holder = hold_lock(path, 1)
    started = time.monotonic()
    with pytest.raises(WouldBlock):
        store.messages.append(session.id, "user", "now or never", wait=False)
    assert time.monotonic() - started < 0.5, "it did not wait for the busy timeout"
    holder.wait()
    store.messages.append(session.id, "user", "later", wait=False)
    assert [m.content for m in store.messages.of_session(session.id)] == ["later"]
    assert store.db.query_value("PRAGMA busy_timeout") > 0, "the timeout is restored"
