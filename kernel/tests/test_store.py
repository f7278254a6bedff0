"""state.db: schema versions, sessions and messages, full-text search, turn leases, locking."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time

import apsw
import pytest

from hermes_kernel.store.db import Database
from hermes_kernel.store.errors import LeaseHeldError, StoreBusyError, StoreError
from hermes_kernel.store.messages import Disposition
from hermes_kernel.store.schema import MIGRATIONS
from hermes_kernel.store.search import SearchMode
from hermes_kernel.store.sessions import REVIEW_SOURCE, Usage
from hermes_kernel.store.state import StateStore
from hermes_sdk.runtime import SessionNotFound


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
        f"({len(MIGRATIONS)}); upgrade hermes-kernel, or point HERMES_HOME elsewhere"
    )


def test_an_older_schema_is_migrated_and_keeps_its_data(tmp_path):
    path = tmp_path / "state.db"
    StateStore(path).sessions.create("cli")  # at the current version
    upgraded = Database(path, [*MIGRATIONS, "ALTER TABLE sessions ADD COLUMN pinned INTEGER"])
    assert upgraded.version == len(MIGRATIONS) + 1
    assert upgraded.query_value("SELECT count(*) FROM sessions WHERE pinned IS NULL") == 1


def test_a_file_that_is_not_a_database_gets_one_line_saying_what_to_do(tmp_path):
    path = tmp_path / "state.db"
    path.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(StoreError, match=r"is not a SQLite database .*; move it aside"):
        StateStore(path)


def test_sessions_record_their_totals(store):
    session = store.sessions.create(
        "cli", model="m", provider="p", system_prompt="be brief", cwd="/w"
    )
    store.messages.append(session.id, "user", "hi")
    store.messages.append(
        session.id,
        "assistant",
        "",
        tool_calls=[
            {"id": "c1", "name": "echo", "arguments": "{}"},
            {"id": "c2", "name": "echo", "arguments": "{}"},
        ],
    )
    store.sessions.add_usage(
        session.id,
        Usage(input_tokens=10, output_tokens=5, cache_read_tokens=3, estimated_cost_usd=0.25),
    )
    store.sessions.add_usage(session.id, Usage(input_tokens=1))
    store.sessions.end(session.id, "exit")
    saved = store.sessions.get(session.id)
    assert (saved.message_count, saved.tool_call_count) == (2, 2)
    assert (saved.input_tokens, saved.output_tokens, saved.cache_read_tokens) == (11, 5, 3)
    assert saved.estimated_cost_usd == 0.25 and saved.end_reason == "exit" and saved.ended_at
    assert saved.system_prompt == "be brief"
    assert [s.id for s in store.sessions.recent()] == [session.id]


def test_a_sessions_children_are_listed_whatever_their_source(store):
    parent = store.sessions.create("cli", model="m")
    handed = store.sessions.create("research", model="m", parent_session_id=parent.id)
    review = store.sessions.create("review", model="m", parent_session_id=parent.id)
    store.sessions.create("cli", model="m")  # not a child
    assert [c.id for c in store.sessions.children(parent.id)] == [handed.id, review.id]
    assert [c.id for c in store.sessions.children(parent.id, reviews=False)] == [handed.id]
    assert [c.id for c in store.sessions.children(parent.id, "review")] == [review.id]


def test_messages_keep_order_tool_calls_and_dispositions(store):
    session = store.sessions.create("cli")
    calls = [
        {"id": "c1", "type": "function", "function": {"name": "echo", "arguments": '{"x": 1}'}}
    ]
    store.messages.append(session.id, "user", "run it")
    store.messages.append(session.id, "assistant", "", tool_calls=calls, finish_reason="tool_calls")
    result = store.messages.append(
        session.id, "tool", "1", tool_call_id="c1", tool_name="echo", disposition=Disposition.OK
    )
    store.messages.set_disposition(result.id, Disposition.UNKNOWN)
    saved = store.messages.of_session(session.id)
    assert [(m.seq, m.role) for m in saved] == [(1, "user"), (2, "assistant"), (3, "tool")]
    assert saved[1].tool_calls == calls and saved[1].finish_reason == "tool_calls"
    assert (saved[2].tool_call_id, saved[2].disposition) == ("c1", "unknown")
    assert saved[2].updated_at is not None


def test_appending_to_an_unknown_session_is_refused(store):
    with pytest.raises(KeyError, match="no session 'nope'"):
        store.messages.append("nope", "user", "hi")
    with pytest.raises(KeyError):
        store.sessions.end("nope", "exit")


def test_prose_with_punctuation_finds_words(store):
    session = store.sessions.create("cli")
    store.messages.append(session.id, "user", "The deploy on Friday failed twice.")
    assert len(store.search("why did the deploy fail?")) == 0, "every word must occur"
    assert len(store.search("deploy failed?")) == 1
    assert len(store.search("Friday's deploy")) == 1 and len(store.search("friday deploy")) == 1


def test_word_search_ranks_and_folds_diacritics(store):
    session = store.sessions.create("cli")
    store.messages.append(session.id, "user", "Where is a good café near the station?")
    store.messages.append(
        session.id, "assistant", "The cafe by the river is good; the station cafe is loud."
    )
    store.messages.append(session.id, "user", "Thanks!")
    hits = store.search("cafe station")
    assert len(hits) == 2
    assert all("[" in hit.snippet for hit in hits)
    assert store.search("thanks", mode=SearchMode.WORDS)[0].role == "user"


def test_trigram_search_finds_cjk_code_and_substrings(store):
    session = store.sessions.create("cli")
    store.messages.append(session.id, "user", "東京タワーに行きたい")
    store.messages.append(session.id, "assistant", "call parse_config(path) from loader.py")
    store.messages.append(session.id, "assistant", "unbelievable")
    assert [h.snippet for h in store.search("京タワ")] == ["東[京タワ]ーに行きたい"]
    assert len(store.search("parse_config(")) == 1
    assert len(store.search("believ", mode=SearchMode.TRIGRAMS)) == 1
    assert len(store.search("京タ")) == 1, "two characters: a plain scan still finds it"


def test_no_query_text_can_break_the_search(store):
    session = store.sessions.create("cli")
    store.messages.append(session.id, "user", 'he said "AND" OR NEAR(x) *')
    for query in ['"', "AND", "NEAR(", "*", "a OR", '" OR 1=1 --', "   ", "(", "col:val"]:
        store.search(query)  # no exception
    assert len(store.search('"AND" OR')) == 1


def test_indexes_follow_updates_and_deletes(store):
    session = store.sessions.create("cli")
    message = store.messages.append(session.id, "user", "original words")
    with store.db.write() as cursor:
        cursor.execute(
            "UPDATE messages SET content = 'replacement text' WHERE id = ?", (message.id,)
        )
    assert store.search("original") == [] and len(store.search("replacement")) == 1
    assert store.search("placement", mode=SearchMode.WORDS) == []
    assert len(store.search("eplacemen")) == 1, "no word matches: substrings are searched"
    with store.db.write() as cursor:
        cursor.execute("DELETE FROM sessions WHERE id = ?", (session.id,))
    assert store.search("replacement") == [] and store.search("eplacemen") == []


def test_search_can_be_scoped_to_a_session(store):
    first, second = store.sessions.create("cli"), store.sessions.create("telegram")
    store.messages.append(first.id, "user", "shared topic")
    store.messages.append(second.id, "user", "shared topic")
    assert [h.session_id for h in store.search("topic", session_id=second.id)] == [second.id]


def test_turn_leases_exclude_a_second_live_holder(store):
    session = store.sessions.create("cli")
    store.leases.acquire(session.id, "me", ttl=30)
    store.leases.acquire(session.id, "me", ttl=30)  # re-entrant for the holder
    other = f"{os.uname().nodename}:1:x"  # pid 1 is alive
    with pytest.raises(
        LeaseHeldError, match=f"session {session.id} is busy: a turn is running in me"
    ):
        store.leases.acquire(session.id, other)
    store.leases.release(session.id, "me")
    store.leases.acquire(session.id, other)
    assert store.leases.holder(session.id) == other


def test_deleting_sessions_is_all_or_none(store):
    idle, busy = store.sessions.create("cli"), store.sessions.create("cli")
    store.messages.append(idle.id, "user", "forget this topic")
    store.leases.acquire(busy.id, "elsewhere:1:turn", ttl=30)  # a turn runs on it
    with pytest.raises(LeaseHeldError, match=f"session {busy.id} is busy"):
        store.sessions.delete([idle.id, busy.id])
    with pytest.raises(SessionNotFound):
        store.sessions.delete([idle.id, "no-such-session"])
    assert {s.id for s in store.sessions.recent()} == {idle.id, busy.id}  # nothing deleted
    store.leases.release(busy.id, "elsewhere:1:turn")
    assert store.sessions.delete([idle.id, busy.id, idle.id]) == 2
    assert store.sessions.recent() == [] and store.search("topic") == []


def test_recent_sessions_filter_by_person_and_leave_out_reviews(store):
    owner = store.sessions.create("cli")
    alice = store.sessions.create("telegram", user_scope="telegram:alice")
    review = store.sessions.create(REVIEW_SOURCE, parent_session_id=owner.id)
    assert {s.id for s in store.sessions.recent()} == {owner.id, alice.id, review.id}
    assert [s.id for s in store.sessions.recent(user_scope="telegram:alice")] == [alice.id]
    assert review.id not in {s.id for s in store.sessions.recent(reviews=False)}
    assert [s.id for s in store.sessions.recent(source="telegram", reviews=False)] == [alice.id]


def test_an_expired_lease_or_a_dead_holder_can_be_taken_over(store):
    session = store.sessions.create("cli")
    store.leases.acquire(session.id, "elsewhere:1:a", ttl=0.05)
    time.sleep(0.1)
    store.leases.acquire(session.id, "me")
    assert store.leases.renew(session.id, "elsewhere:1:a") is False, "the old holder lost it"
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    crashed = f"{os.uname().nodename}:{dead.pid}:b"
    other = store.sessions.create("cli")
    store.leases.acquire(other.id, crashed, ttl=600)
    store.leases.acquire(other.id, "me")  # no need to wait ten minutes for a dead process
    assert store.leases.holder(other.id) == "me"


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
    StateStore(path).close()
    impatient = Database(path, busy_timeout_ms=50, write_attempts=2)
    holder = hold_lock(path, 1)
    with (
        pytest.raises(StoreBusyError, match="stayed locked by another process"),
        impatient.write() as cursor,
    ):
        cursor.execute("INSERT INTO sessions (id, source, started_at) VALUES ('mine', 'x', 0)")
    holder.wait()
    assert impatient.query_value("SELECT count(*) FROM sessions WHERE id = 'mine'") == 0


def test_a_failing_write_rolls_back_everything_in_it(store):
    session = store.sessions.create("cli")
    with pytest.raises(RuntimeError), store.db.write() as cursor:
        cursor.execute("UPDATE sessions SET title = 'changed' WHERE id = ?", (session.id,))
        raise RuntimeError("crash between two statements")
    assert store.sessions.get(session.id).title is None


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
    from hermes_kernel.store.indexing import index_pending

    session = store.sessions.create("cli")
    for word in ["alpha", "beta", "gamma"]:
        store.messages.append(session.id, "user", f"{word} message")
    assert store.db.query_value("SELECT indexed_upto FROM fts_progress") == 0, (
        "not on the write path"
    )
    assert len(store.search("beta")) == 1, "search indexes what is pending first"
    assert index_pending(store.db) == 0
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
    from hermes_kernel.store.schema import V1

    path = tmp_path / "state.db"
    old = Database(path, (V1,))
    with old.write() as cursor:
        cursor.execute("INSERT INTO sessions (id, source, started_at) VALUES ('s', 'cli', 0)")
        cursor.execute(
            "INSERT INTO messages (session_id, seq, role, content, created_at) "
            "VALUES ('s', 1, 'user', 'written by version one', 0)"
        )
    old.close()
    store = StateStore(path)
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
    store = StateStore(path)
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
