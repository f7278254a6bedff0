"""What only the PostgreSQL store has: its URL and password, a database that is not ours,
connections the server drops, the placeholders, and a write lock across processes."""

from __future__ import annotations

import concurrent.futures
import subprocess
import sys
import textwrap
import time

import psycopg
import pytest
from hermes_plugin_store_postgresql.database import PostgresDatabase, to_pyformat

from hermes_commons.redact import url_without_password as redacted
from hermes_kernel.config.errors import ConfigError
from hermes_kernel.config.settings import Flags, load_settings
from hermes_kernel.store.errors import StoreError
from hermes_kernel.store.state import StateStore
from hermes_testkit.store_engine_tests import holding_write


def test_placeholders_outside_quotes_and_comments_only():
    assert to_pyformat("SELECT ? WHERE a LIKE '%?' -- what?\nAND b = ?") == (
        "SELECT %s WHERE a LIKE '%%?' -- what?\nAND b = %s"
    )
    assert to_pyformat('SELECT "odd?name", 5 % ?') == 'SELECT "odd?name", 5 %% %s'
    assert to_pyformat("/* it's ? */ SELECT ?") == "/* it's ? */ SELECT %s"
    assert to_pyformat("SELECT E'a\\'?', 'b''?', ?") == "SELECT E'a\\'?', 'b''?', %s"
    assert to_pyformat("DO $body$ SELECT '?' $body$; SELECT ?, $1") == (
        "DO $body$ SELECT '?' $body$; SELECT %s, $1"
    )


def test_a_password_never_shows_in_the_url_it_prints():
    assert redacted("postgresql://u:s3cret@h:5/d?sslmode=require") == (
        "postgresql://u:***@h:5/d?sslmode=require"
    )
    assert redacted("postgresql://u@h/d?password=s3cret&x=1") == (
        "postgresql://u@h/d?password=***&x=1"
    )
    assert redacted("postgresql://u@h/d") == "postgresql://u@h/d"
    assert "s3cret" not in redacted("postgresql://u:s3cret@h:notaport/d")


def test_a_url_with_a_password_or_without_a_scheme_is_refused_in_config(tmp_path):
    for url, said in (
        ("postgresql://u:pw@h/d", "put it in .env as HERMES_STORE_PASSWORD"),
        ("postgresql://u@h/d?password=pw", "put it in .env as HERMES_STORE_PASSWORD"),
        ("u@h/d", "must be a URL such as SCHEME://USER@HOST/DATABASE"),
    ):
        (tmp_path / "config.yaml").write_text(f"store:\n  url: {url}\n")
        with pytest.raises(ConfigError, match=said) as refused:
            load_settings(Flags(home=tmp_path), {})
        assert "pw" not in str(refused.value).replace("password", "")


def test_a_database_with_another_applications_tables_is_refused_and_left_alone(postgres):
    url = postgres.create_database()
    with psycopg.connect(url) as connection:
        connection.execute("CREATE TABLE invoices (id int)")
    with pytest.raises(StoreError, match="holds tables that are not Hermes's") as refused:
        PostgresDatabase(url)
    assert len(str(refused.value).splitlines()) == 1
    with psycopg.connect(url) as connection:
        tables = connection.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'public'"
        ).fetchall()
    assert tables == [("invoices",)]


def test_a_password_that_is_wrong_is_one_line_without_the_password(postgres):
    with postgres.password_role(postgres.create_database(), "guarded", "right-one") as url:
        with pytest.raises(StoreError) as refused:
            PostgresDatabase(url, password="wrong-one")
        message = str(refused.value)
        assert "password authentication failed" in message and "wrong-one" not in message
        assert len(message.splitlines()) == 1
        StateStore(PostgresDatabase(url, password="right-one")).close()


def test_the_urls_own_connection_settings_are_kept(postgres):
    url = postgres.create_database() + "?application_name=team-bot&options=-c%20work_mem%3D8MB"
    db = PostgresDatabase(url)
    try:
        assert db.query("SELECT current_setting('application_name')") == [("team-bot",)]
        assert db.query_value("SELECT current_setting('work_mem')") == "8MB"
        assert db.query_value("SELECT current_setting('lock_timeout')") == "30s"
    finally:
        db.close()


def _holding_a_connection(store: StateStore) -> None:
    with store.db.write(serialized=False) as cursor:
        cursor.execute("SELECT pg_sleep(0.2)")


def _connections(url: str) -> int:
    with psycopg.connect(url) as admin:
        row = admin.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'hermes'"
        ).fetchone()
    return int(row[0]) if row else 0


def _drop_every_connection(url: str) -> None:
    with psycopg.connect(url) as admin:
        admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE application_name = 'hermes' AND pid <> pg_backend_pid()"
        )
    time.sleep(0.2)


def test_connections_the_server_drops_are_replaced(postgres):
    """Connections are not checked as they leave the pool: a dropped one is found on its
    first use, and the read, or the write that had done nothing yet, goes on a fresh one."""
    store = StateStore(PostgresDatabase(postgres.create_database(), pool_size=3))
    try:
        session = store.sessions.create("cli")
        with concurrent.futures.ThreadPoolExecutor(3) as threads:  # connections to drop
            list(threads.map(lambda _: _holding_a_connection(store), range(3)))
        assert _connections(store.db.where) >= 2
        _drop_every_connection(store.db.where)
        store.messages.append(session.id, "user", "after the restart")  # locks, then rows
        _drop_every_connection(store.db.where)
        store.sessions.create("cli")  # no lock: its BEGIN goes with its INSERT
        _drop_every_connection(store.db.where)
        assert store.sessions.get(session.id).message_count == 1
    finally:
        store.close()


def test_writes_of_other_keys_go_side_by_side(postgres):
    """Two sessions' writes (their keys) never wait for each other; a write without a key
    still waits for both."""
    from hermes_kernel.store.errors import WouldBlock
    from hermes_kernel.store.leases import session_key

    url = postgres.create_database()
    first, second = PostgresDatabase(url), PostgresDatabase(url)
    try:
        with holding_write(first, key=session_key("a")):
            with second.write(wait=False, key=session_key("b")) as cursor:
                cursor.execute("INSERT INTO sessions (id, source, started_at) VALUES ('b', 'x', 0)")
            with pytest.raises(WouldBlock), second.write(wait=False) as cursor:
                cursor.execute("SELECT 1")
        assert second.query("SELECT id FROM sessions ORDER BY id") == [("b",)]
    finally:
        first.close()
        second.close()


HOLD = """
import sys, time
from hermes_plugin_store_postgresql.database import PostgresDatabase
db = PostgresDatabase(sys.argv[1])
with db.write() as cursor:
    cursor.execute("INSERT INTO sessions (id, source, started_at) VALUES ('held', 'x', 0)")
    print("holding", flush=True)
    time.sleep(1.5)
db.close()
"""


def test_a_write_in_another_process_is_waited_for_and_a_no_wait_write_is_refused(postgres):
    from hermes_kernel.store.errors import WouldBlock

    url = postgres.create_database()
    store = StateStore(PostgresDatabase(url))
    holder = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(HOLD), url], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "holding"
        with pytest.raises(WouldBlock), store.db.write(wait=False) as cursor:
            cursor.execute("SELECT 1")
        with store.db.write(serialized=False) as cursor:  # takes no lock: does not wait
            unseen = cursor.execute("SELECT count(*) FROM sessions WHERE id = 'held'").fetchall()
        assert unseen == [(0,)]  # the other process has not committed yet
        started = time.monotonic()
        with store.db.write() as cursor:  # waits for the other process's commit
            seen = cursor.execute("SELECT count(*) FROM sessions WHERE id = 'held'").fetchall()
        assert seen == [(1,)] and time.monotonic() - started > 0.5
    finally:
        holder.wait(20)
        store.close()
