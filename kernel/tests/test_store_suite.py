"""The store conformance suite: what the state store promises, on every engine it runs on
(SQLite in HERMES_HOME, and a shared PostgreSQL: Debian's server, started by the test kit on
loopback). What only one engine has (WAL checkpoints, SQLite's file locks) is tested in
test_store.py and test_store_postgres.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hermes_plugin_store_sqlite.database import Database

from hermes_kernel.store.compactions import Action, CompactionRecord
from hermes_kernel.store.errors import LeaseHeldError
from hermes_kernel.store.messages import Disposition
from hermes_kernel.store.plugin_store import PluginStore, migrate_schema
from hermes_kernel.store.search import SearchMode
from hermes_kernel.store.sessions import REVIEW_SOURCE, Usage
from hermes_kernel.store.state import StateStore
from hermes_kernel.store.usage import tool_usage_by_day, usage_by_day
from hermes_sdk.runtime import SessionNotFound
from hermes_sdk.storage import StoreSchema
from hermes_sdk.tables import AddColumn, Column, ColumnType, Index, Table

ENGINES = ["sqlite", "postgresql"]


def open_backend(engine: str, request: pytest.FixtureRequest, tmp_path: Path):
    if engine == "sqlite":
        return Database(tmp_path / "state.db")
    from hermes_plugin_store_postgresql.database import PostgresDatabase

    return PostgresDatabase(request.getfixturevalue("postgres").create_database())


@pytest.fixture(params=ENGINES)
def engine(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def store(engine: str, request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[StateStore]:
    state = StateStore(open_backend(engine, request, tmp_path))
    yield state
    state.close()


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


def test_a_failing_write_rolls_back_everything_in_it(store):
    session = store.sessions.create("cli")
    with pytest.raises(RuntimeError), store.db.write() as cursor:
        cursor.execute("UPDATE sessions SET title = 'changed' WHERE id = ?", (session.id,))
        raise RuntimeError("crash between two statements")
    assert store.sessions.get(session.id).title is None


def test_a_store_opened_again_keeps_everything_at_the_same_version(engine, request, tmp_path):
    first = StateStore(open_backend(engine, request, tmp_path))
    session = first.sessions.create("cli")
    first.sessions.set_title(session.id, "kept")
    version = first.db.version
    where = first.db.where
    first.close()
    if engine == "sqlite":
        again = StateStore(Database(tmp_path / "state.db"))
    else:
        from hermes_plugin_store_postgresql.database import PostgresDatabase

        again = StateStore(PostgresDatabase(where))
    try:
        assert again.db.version == version >= 1
        assert again.sessions.get(session.id).title == "kept"
    finally:
        again.close()


def test_session_lookups_openings_and_labels(store):
    first = store.sessions.create("cli")
    second = store.sessions.create("telegram")
    store.sessions.set_title(second.id, "Named")
    store.messages.append(first.id, "user", "x" * 200)
    store.messages.append(first.id, "user", "second question")
    assert store.sessions.find(first.id[:-2]).id == first.id
    assert store.sessions.find("20%") is None and store.sessions.find("_") is None
    assert store.sessions.openings([first.id, second.id], width=10) == {first.id: "x" * 10}
    assert store.sessions.labels([first.id, second.id]) == {
        first.id: "x" * 80,
        second.id: "Named",
    }
    assert store.sessions.count() == 2


def test_undo_takes_messages_and_their_counts_back(store):
    session = store.sessions.create("cli")
    store.messages.append(session.id, "user", "one")
    calls = [{"id": "c1", "type": "function", "function": {"name": "x", "arguments": "{}"}}]
    store.messages.append(session.id, "assistant", "", tool_calls=calls)
    assert store.messages.delete_from(session.id, 1) == 2
    saved = store.sessions.get(session.id)
    assert (saved.message_count, saved.tool_call_count) == (0, 0)
    assert store.messages.append(session.id, "user", "again").seq == 1


def test_usage_is_summed_by_day_and_model(store):
    session = store.sessions.create("cli", model="m1", provider="p")
    reply = store.messages.append(
        session.id, "assistant", "hi", usage=Usage(input_tokens=10, output_tokens=2)
    )
    store.messages.append(
        session.id, "tool", "ok", tool_name="echo", tool_call_id="c", disposition=Disposition.OK
    )
    store.messages.append(
        session.id, "tool", "no", tool_name="echo", tool_call_id="d", disposition=Disposition.ERROR
    )
    store.sessions.add_usage(session.id, Usage(input_tokens=5, estimated_cost_usd=0.5))
    today = time.strftime("%Y-%m-%d")
    rows = usage_by_day(store.db, 0.0)
    assert [(r["day"], r["model_calls"], r["input_tokens"], r["unpriced_calls"]) for r in rows] == [
        (today, 2, 15, 0)
    ]
    assert isinstance(rows[0]["input_tokens"], int) and rows[0]["cost_usd"] == 0.5
    assert tool_usage_by_day(store.db, 0.0) == [
        {"day": today, "tool": "echo", "calls": 2, "failed": 1}
    ]
    assert reply.id > 0


def test_compactions_and_nested_calls_are_kept_in_order(store):
    session = store.sessions.create("cli")
    reply = store.messages.append(session.id, "assistant", "running")
    first = store.nested.begin(session.id, reply.id, "call-1", 0, "terminal", '{"cmd": "ls"}')
    second = store.nested.begin(session.id, reply.id, "call-1", 1, "read_file", "{}")
    store.nested.finish(first, "a b", "ok", 0.25)
    assert second > first
    calls = store.nested.of_session(session.id)
    assert [(c.tool_name, c.disposition) for c in calls] == [
        ("terminal", "ok"),
        ("read_file", None),
    ]
    record = CompactionRecord(
        session.id, 1, "the summary", "auto", "builtin", True, 1, 900, 100,
        actions=(Action("terminal", "{}", "done"),),
    )  # fmt: skip
    store.compactions.commit(record, "new prompt", [Usage(input_tokens=3)])
    latest = store.compactions.latest(session.id)
    assert latest.summary == "the summary" and latest.by_model is True
    assert latest.actions == (Action("terminal", "{}", "done"),)
    assert store.sessions.get(session.id).input_tokens == 3


def test_a_plugins_schema_is_migrated_once_and_its_store_works(store):
    schema = StoreSchema(
        name="notes",
        migrations=("CREATE TABLE notes_items (id INTEGER PRIMARY KEY, text TEXT NOT NULL)",),
        postgresql=(
            "CREATE TABLE notes_items (id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, "
            "text TEXT NOT NULL)",
        ),
    )
    migrate_schema(store.db, schema)
    migrate_schema(store.db, schema)  # nothing to do the second time
    notes = PluginStore(store.db, owned=False)
    with notes.write() as cursor:
        cursor.execute("INSERT INTO notes_items (text) VALUES (?), (?)", ("50% done", "what?"))
        assert cursor.changes() == 2
    assert notes.query("SELECT text FROM notes_items WHERE text LIKE ? ORDER BY id", ("%?",)) == [
        ("what?",)
    ]
    assert notes.dialect == store.db.dialect


DECLARED = StoreSchema(
    name="tasks",
    declared=(
        (
            Table(
                "tasks_lists",
                (Column("id", ColumnType.ID), Column("title", ColumnType.TEXT, required=True)),
                unique=(("title",),),
            ),
            Table(
                "tasks_items",
                (
                    Column("id", ColumnType.ID),
                    Column(
                        "list_id",
                        ColumnType.INTEGER,
                        required=True,
                        references="tasks_lists(id)",
                        on_delete="CASCADE",
                    ),
                    Column(
                        "state", ColumnType.TEXT, required=True, check="state IN ('open', 'done')"
                    ),
                    Column("due_at", ColumnType.REAL),
                    Column("kind", ColumnType.TEXT, required=True, default="'chore'"),
                ),
            ),
            Index("tasks_items_open", "tasks_items", ("list_id",), where="state = 'open'"),
            Table(
                "tasks_marks",
                (Column("name", ColumnType.TEXT), Column("at", ColumnType.REAL, required=True)),
                primary_key=("name", "at"),
            ),
        ),
        (AddColumn("tasks_items", Column("weight", ColumnType.INTEGER, required=True, default=1)),),
    ),
)


def test_tables_declared_once_are_made_alike_by_every_engine(store):
    from hermes_sdk.storage import StoreError

    migrate_schema(store.db, DECLARED)
    migrate_schema(store.db, DECLARED)  # nothing to do the second time
    tasks = PluginStore(store.db, owned=False)
    with tasks.write() as cursor:
        cursor.execute("INSERT INTO tasks_lists (title) VALUES (?)", ("home",))
        list_id = cursor.execute("SELECT id FROM tasks_lists").fetchall()[0][0]
        cursor.execute(
            "INSERT INTO tasks_items (list_id, state, due_at) VALUES (?, ?, ?), (?, ?, ?)",
            (list_id, "open", 1.5, list_id, "done", None),
        )
    assert tasks.query("SELECT state, due_at, kind, weight FROM tasks_items ORDER BY id") == [
        ("open", 1.5, "chore", 1),
        ("done", None, "chore", 1),
    ]
    for statement, bindings in (
        ("INSERT INTO tasks_items (list_id, state) VALUES (?, ?)", (list_id, "lost")),  # check
        ("INSERT INTO tasks_lists (title) VALUES (?)", ("home",)),  # unique
        ("INSERT INTO tasks_items (list_id, state) VALUES (?, ?)", (999, "open")),  # reference
        ("INSERT INTO tasks_marks (name, at) VALUES (?, ?), (?, ?)", ("a", 1.0, "a", 1.0)),  # key
    ):
        with pytest.raises(StoreError), tasks.write() as cursor:
            cursor.execute(statement, bindings)
    with tasks.write() as cursor:
        cursor.execute("DELETE FROM tasks_lists")
    assert tasks.query("SELECT count(*) FROM tasks_items") == [(0,)]  # cascaded
    assert store.db.query_value("SELECT version FROM plugin_schemas WHERE name = 'tasks'") == 2
    assert store.db.columns("tasks_items")[-1] == "weight"


def test_a_schema_is_declared_or_written_never_both():
    with pytest.raises(ValueError, match="not both"):
        StoreSchema(name="x", migrations=("SELECT 1",), declared=DECLARED.declared)
    with pytest.raises(ValueError, match="not neither"):
        StoreSchema(name="x")
    late = AddColumn("t", Column("c", ColumnType.TEXT, required=True))
    with pytest.raises(ValueError, match=r"t\.c: a required column added later needs a default"):
        StoreSchema(name="x", declared=((late,),))
    with pytest.raises(ValueError, match="unknown column type 'blob'"):
        StoreSchema(name="x", declared=((Table("x_t", (Column("c", "blob"),)),),))


def test_concurrent_writers_never_share_a_seq_or_a_lease(engine, request, tmp_path):
    """Two connections (two workers) append to one session and race for its lease."""
    stores = [StateStore(open_backend(engine, request, tmp_path))]
    if engine == "sqlite":
        stores.append(StateStore(Database(tmp_path / "state.db")))
    else:
        from hermes_plugin_store_postgresql.database import PostgresDatabase

        stores.append(StateStore(PostgresDatabase(stores[0].db.where)))
    session = stores[0].sessions.create("telegram")
    won: list[str] = []
    errors: list[BaseException] = []

    def work(store: StateStore, name: str) -> None:
        try:
            for n in range(40):
                store.messages.append(session.id, "user", f"{name} {n}")
            try:
                store.leases.acquire(session.id, f"{name}:1:x", ttl=30)
                won.append(name)
            except LeaseHeldError:
                pass
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [
        threading.Thread(target=work, args=(store, f"worker{n}")) for n, store in enumerate(stores)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    try:
        assert errors == []
        seqs = [m.seq for m in stores[0].messages.of_session(session.id)]
        assert seqs == list(range(1, 81))
        assert len(won) == 1 and stores[1].leases.holder(session.id) == f"{won[0]}:1:x"
        assert stores[0].sessions.get(session.id).message_count == 80
    finally:
        for store in stores:
            store.close()


def test_usage_by_model_and_a_familys_spend(store):
    parent = store.sessions.create("cli", model="m1", provider="p")
    child = store.sessions.create("research", model="m2", provider="p", parent_session_id=parent.id)
    store.sessions.add_usage(parent.id, Usage(input_tokens=10, estimated_cost_usd=0.5))
    store.sessions.add_usage(parent.id, Usage(input_tokens=4, estimated_cost_usd=None))
    store.sessions.add_usage(child.id, Usage(output_tokens=6, estimated_cost_usd=0.25))
    assert store.sessions.usage_by_model(parent.id) == [("?", "?", 2, 14, 0, 0.5, 1)]
    spend = store.sessions.family_spend(child.id)
    assert (spend.tokens, spend.cost_usd, spend.unpriced_calls) == (20, 0.75, 1)


def test_text_with_a_nul_character_is_kept_not_refused(store):
    session = store.sessions.create("cli")
    store.messages.append(session.id, "tool", "before\x00after", tool_name="t", tool_call_id="c")
    (saved,) = store.messages.of_session(session.id)
    kept = "\ufffd" if store.db.dialect == "postgresql" else "\x00"  # its text has no NUL
    assert saved.content == f"before{kept}after"
    assert len(store.search("before")) == 1


def test_attachments_and_reasoning_details_round_trip(store):
    session = store.sessions.create("cli")
    files = [{"kind": "image", "name": "cat.jpg", "text": "a cat"}]
    details = [{"type": "thinking", "signature": "s"}]
    store.messages.append(
        session.id, "assistant", "see", attachments=files, reasoning_details=details
    )
    (saved,) = store.messages.of_session(session.id)
    assert json.loads(json.dumps(saved.attachments)) == files
    assert saved.reasoning_details == details
