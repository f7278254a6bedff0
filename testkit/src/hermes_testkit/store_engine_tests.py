"""``StoreEngineTests``: the conformance suite every store engine passes.

Subclass it in your engine plugin's tests and open your database::

    from hermes_testkit import StoreEngineTests

    class TestAcmeEngine(StoreEngineTests):
        def open_database(self, target):
            return AcmeDatabase(target)

        def make_target(self, tmp_path, request):  # an engine on a server: where it is
            return StoreTarget(tmp_path, "acme://127.0.0.1/test", None, 4)

The suite checks what the kernel asks of a :class:`~hermes_sdk.store_engine.Database`: the
kernel's tables made at open, transactions that commit or roll back whole, one-line
errors, a write that will not wait, full-text search (words with diacritics folded, CJK and
code substrings, scoped by the kernel's own clauses), local days, the catalog of tables,
ids after a copy, declared tables, and calls from an event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from hermes_sdk.storage import StoreError, StoreSchema
from hermes_sdk.store_engine import Cursor, Database, StoreTarget, WouldBlock
from hermes_sdk.tables import Column, ColumnType, Index, Table

__all__ = ["StoreEngineTests", "holding_write"]

NOTES = StoreSchema(
    name="notes",
    declared=(
        (
            Table(
                "notes_items",
                (
                    Column("id", ColumnType.ID),
                    Column("text", ColumnType.TEXT, required=True),
                    Column("at", ColumnType.REAL, required=True, default=0),
                ),
            ),
            Index("notes_items_by_time", "notes_items", ("at",)),
        ),
    ),
)


class StoreEngineTests:
    """Conformance suite for :class:`~hermes_sdk.store_engine.Database` implementations."""

    def open_database(self, target: StoreTarget) -> Database:
        raise NotImplementedError("subclasses open their database for target")

    def make_target(self, tmp_path: Path, request: pytest.FixtureRequest) -> StoreTarget:
        """Where this test's store is: by default in ``tmp_path`` as a home."""
        return StoreTarget(tmp_path, None, None, 4)

    @pytest.fixture
    def target(self, tmp_path: Path, request: pytest.FixtureRequest) -> StoreTarget:
        return self.make_target(tmp_path, request)

    @pytest.fixture
    def database(self, target: StoreTarget) -> Iterator[Database]:
        opened = self.open_database(target)
        yield opened
        opened.close()

    @staticmethod
    def _session(db: Database, session_id: str = "s1", started_at: float = 1.0) -> None:
        with db.write() as cursor:
            cursor.execute(
                "INSERT INTO sessions (id, source, started_at) VALUES (?, ?, ?)",
                (session_id, "test", started_at),
            )

    @staticmethod
    def _messages(db: Database, session_id: str, *texts: str, role: str = "user") -> None:
        with db.write() as cursor:
            start = cursor.execute(
                "SELECT coalesce(max(seq), 0) FROM messages WHERE session_id = ?", (session_id,)
            ).fetchall()[0][0]
            cursor.executemany(
                "INSERT INTO messages (session_id, seq, role, content, created_at) "
                "VALUES (?, ?, ?, ?, ?)",
                [(session_id, start + n, role, text, float(n)) for n, text in enumerate(texts, 1)],
            )

    # --- what it holds, and transactions -------------------------------------------------

    def test_the_kernels_tables_are_made_when_it_opens(self, database: Database) -> None:
        assert database.version >= 1
        assert database.tables("sessions") == ["sessions"]
        assert database.tables("plugin_schemas") == ["plugin_schemas"]
        columns = database.columns("messages")
        assert {"id", "session_id", "seq", "role", "content", "created_at"} <= set(columns)
        assert isinstance(database.where, str) and database.where
        assert isinstance(database.dialect, str) and database.dialect

    def test_opening_it_again_keeps_what_it_holds(self, target: StoreTarget) -> None:
        first = self.open_database(target)
        self._session(first)
        first.close()
        again = self.open_database(target)
        try:
            assert again.query("SELECT id FROM sessions") == [("s1",)]
        finally:
            again.close()

    def test_a_write_commits_whole_or_not_at_all(self, database: Database) -> None:
        self._session(database)
        with pytest.raises(RuntimeError), database.write() as cursor:
            cursor.execute(
                "INSERT INTO sessions (id, source, started_at) VALUES (?, ?, ?)", ("s2", "t", 2.0)
            )
            raise RuntimeError("changed its mind")
        assert database.query("SELECT id FROM sessions ORDER BY id") == [("s1",)]
        with database.write() as cursor:
            cursor.execute("UPDATE sessions SET title = ? WHERE id = ?", ("named", "s1"))
            assert cursor.changes() == 1
            seen = cursor.execute("SELECT title FROM sessions").fetchall()
        assert seen == [("named",)]  # a read inside the write sees it
        assert database.query_value("SELECT title FROM sessions WHERE id = ?", ("s1",)) == "named"
        assert database.query_value("SELECT title FROM sessions WHERE id = ?", ("none",)) is None

    def test_every_kind_of_write_commits_whole_or_not_at_all(self, database: Database) -> None:
        """Keyed and lockless writes too, whatever their first statement is (one with
        placeholders, one without, many rows at once): an engine may begin them lazily,
        never outside their transaction."""
        insert = "INSERT INTO sessions (id, source, started_at) VALUES (?, ?, ?)"
        firsts: dict[str, Callable[[Cursor, str], object]] = {
            "bound": lambda cursor, n: cursor.execute(insert, (f"{n}a", "t", 1.0)),
            "plain": lambda cursor, n: cursor.execute(
                f"INSERT INTO sessions (id, source, started_at) VALUES ('{n}a', 't', 1.0)"
            ),
            "many": lambda cursor, n: cursor.executemany(
                insert, [(f"{n}a", "t", 1.0), (f"{n}b", "t", 1.0)]
            ),
        }
        for kind, serialized, key in (("lockless", False, None), ("keyed", True, "k")):
            for name, first in firsts.items():
                label = f"{kind}-{name}"
                with (
                    pytest.raises(RuntimeError),
                    database.write(serialized=serialized, key=key) as cursor,
                ):
                    first(cursor, label)
                    cursor.execute(insert, (f"{label}z", "t", 1.0))
                    raise RuntimeError("changed its mind")
                with database.write(serialized=serialized, key=key) as cursor:
                    first(cursor, label)
                    cursor.execute(insert, (f"{label}z", "t", 1.0))
        kept = {row[0] for row in database.query("SELECT id FROM sessions")}
        expected = {
            f"{kind}-{name}{end}"
            for kind in ("lockless", "keyed")
            for name in firsts
            for end in ("a", "z", *(("b",) if name == "many" else ()))
        }
        assert kept == expected

    def test_a_write_that_breaks_a_rule_is_one_line(self, database: Database) -> None:
        with pytest.raises(StoreError) as refused, database.write() as cursor:
            cursor.execute("INSERT INTO sessions (id, source) VALUES (?, ?)", ("s1", "t"))
        assert "\n" not in str(refused.value)
        assert database.query("SELECT count(*) FROM sessions") == [(0,)]

    def test_a_write_asked_not_to_wait_does_not(self, target: StoreTarget) -> None:
        holder, other = self.open_database(target), self.open_database(target)
        holding, release = threading.Event(), threading.Event()

        def hold() -> None:
            with holder.write() as cursor:
                cursor.execute(
                    "INSERT INTO sessions (id, source, started_at) VALUES (?, ?, ?)",
                    ("held", "t", 1.0),
                )
                holding.set()
                release.wait(10)

        thread = threading.Thread(target=hold)
        thread.start()
        try:
            assert holding.wait(10)
            started = time.monotonic()
            with pytest.raises(WouldBlock), other.write(wait=False) as cursor:
                cursor.execute("SELECT 1")
            assert time.monotonic() - started < 1.0
        finally:
            release.set()
            thread.join(10)
            holder.close()
        try:
            assert other.query("SELECT id FROM sessions") == [("held",)]
        finally:
            other.close()

    def test_a_keyed_write_waits_for_its_key_and_for_writes_without_one(
        self, target: StoreTarget
    ) -> None:
        """``key=`` narrows what a write waits for, never past these: a write of the same
        key, and a write with no key (which sees nothing change under it), each wait for
        the other. An engine that serializes every write passes too."""
        holder, other = self.open_database(target), self.open_database(target)
        try:
            for held, tried in (("turn:a", "turn:a"), ("turn:a", None), (None, "turn:a")):
                with (
                    holding_write(holder, key=held),
                    pytest.raises(WouldBlock),
                    other.write(wait=False, key=tried) as cursor,
                ):
                    cursor.execute("SELECT 1")
            with other.write(key="turn:a") as cursor:  # nothing held: it goes at once
                cursor.execute(
                    "INSERT INTO sessions (id, source, started_at) VALUES (?, ?, ?)",
                    ("after", "t", 1.0),
                )
            assert other.query("SELECT id FROM sessions ORDER BY id") == [("after",)]
        finally:
            holder.close()
            other.close()

    # --- what the kernel's SQL cannot say alike ------------------------------------------

    def test_words_are_found_best_first_with_diacritics_folded(self, database: Database) -> None:
        self._session(database)
        self._messages(
            database,
            "s1",
            "the zebra crossing",
            "a café by the sea",
            "nothing here",
            "zebra zebra zebra",
        )
        database.index_pending()
        found = database.find_words(["zebra"], "", [], 10)
        assert {row[3] for row in found} == {1.0, 4.0}
        assert all(len(row) == 5 and row[1] == "s1" and row[2] == "user" for row in found)
        assert [row[4] for row in database.find_words(["cafe"], "", [], 10)] == [
            "a café by the sea"
        ]
        assert database.find_words(["zebra", "sea"], "", [], 10) == []  # every term, not any
        assert database.find_words(['"zebra'], "", [], 10) != []  # quotes are text, not syntax
        assert database.index_pending() == 0  # nothing new

    def test_substrings_are_found_newest_first_cjk_and_code(self, database: Database) -> None:
        self._session(database)
        self._messages(database, "s1", "東京タワーに行きたい", "call parse_config(x) now")
        self._messages(database, "s1", "again parse_config(y)", role="assistant")
        database.index_pending()
        assert [row[4] for row in database.find_substrings("東京", "", [], 10)] == [
            "東京タワーに行きたい"
        ]
        hits = database.find_substrings("parse_config(", "", [], 10)
        assert [row[4] for row in hits] == ["again parse_config(y)", "call parse_config(x) now"]
        assert len(database.find_substrings("PARSE_config(", "", [], 10)) == 2  # any case
        scoped = database.find_substrings("parse_config(", " AND m.role = ?", ["user"], 10)
        assert [row[4] for row in scoped] == ["call parse_config(x) now"]
        assert len(database.find_substrings("e", "", [], 1)) == 1  # short, and limited
        assert database.find_substrings("100%_", "", [], 10) == []  # wildcards are text

    def test_a_local_day_is_the_day_here(self, database: Database) -> None:
        moment = 1_700_000_000.0
        self._session(database, started_at=moment)
        day = database.query_value(f"SELECT {database.local_day('started_at')} FROM sessions")
        assert day == time.strftime("%Y-%m-%d", time.localtime(moment))

    def test_rows_copied_with_their_ids_leave_room_for_new_ones(self, database: Database) -> None:
        self._session(database)
        with database.write() as cursor:
            cursor.executemany(
                "INSERT INTO messages (id, session_id, seq, role, content, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                [(n, "s1", n, "user", f"m{n}", 0.0) for n in (5, 6, 7)],
            )
        database.copied("messages")
        self._messages(database, "s1", "after the copy")
        newest = database.query_value("SELECT max(id) FROM messages")
        assert newest > 7

    def test_declared_tables_are_made_in_its_sql(self, database: Database) -> None:
        scripts = database.migrations_of(NOTES)
        assert len(scripts) == 1
        with database.write() as cursor:
            cursor.execute(scripts[0])
        with database.write() as cursor:
            cursor.execute("INSERT INTO notes_items (text) VALUES (?), (?)", ("a", "b"))
        assert database.query("SELECT id, text, at FROM notes_items ORDER BY id") == [
            (1, "a", 0),
            (2, "b", 0),
        ]
        assert database.tables("notes_") == ["notes_items"]
        assert database.columns("notes_items") == ["id", "text", "at"]

    def test_calls_from_an_event_loop(self, database: Database) -> None:
        self._session(database)

        async def scenario() -> list[tuple[object, ...]]:
            rows = await database.run(database.query, "SELECT id FROM sessions")
            await database.synced()
            return rows

        assert asyncio.run(scenario()) == [("s1",)]


@contextlib.contextmanager
def holding_write(database: Database, key: str | None = None) -> Iterator[None]:
    """A write transaction (of ``key``, or none) held open in another thread while the
    block runs: what another write then waits for, or not (``write(wait=False)``)."""
    holding, release = threading.Event(), threading.Event()
    failed: list[BaseException] = []

    def hold() -> None:
        try:
            with database.write(key=key) as cursor:
                cursor.execute("SELECT 1")
                holding.set()
                release.wait(10)
        except BaseException as exc:  # noqa: BLE001 - reported by the caller
            failed.append(exc)
            holding.set()

    thread = threading.Thread(target=hold)
    thread.start()
    try:
        assert holding.wait(10) and not failed, failed
        yield
    finally:
        release.set()
        thread.join(10)
