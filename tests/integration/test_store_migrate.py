"""``hermes store migrate``: a home's state copied from state.db into PostgreSQL and back,
with the gateway's and the scheduler's tables (through its ``hermes_store_schemas``), ids and links kept, search
working on the new engine, and config.yaml pointed at it."""

from __future__ import annotations

import shutil

import psycopg
from hermes_plugin_cron.runs import RunLog
from hermes_plugin_gateway.schema import SCHEMA
from hermes_plugin_store_sqlite.database import Database

from hermes_kernel.runtime.home_store import open_home_store as open_state_store
from hermes_kernel.store.search import SearchMode
from hermes_kernel.store.sessions import Usage
from hermes_kernel.store.state import StateStore
from hermes_sdk.storage import open_store


def fill(home) -> dict[str, str]:
    store = StateStore(Database(home / "state.db"))
    try:
        parent = store.sessions.create("telegram", user_scope="telegram:42")
        child = store.sessions.create("research", parent_session_id=parent.id)
        store.messages.append(parent.id, "user", "東京タワーに行きたい and parse_config(x)")
        reply = store.messages.append(
            parent.id, "assistant", "The zebra answer", usage=Usage(input_tokens=7)
        )
        store.nested.begin(parent.id, reply.id, "c1", 0, "terminal", "{}")
        store.messages.append(child.id, "user", "child question")
    finally:
        store.close()
    with open_store(home, SCHEMA) as gateway, gateway.write() as cursor:
        cursor.execute(
            "INSERT INTO gateway_routes (key, session_id, updated_at) VALUES (?, ?, 1.5)",
            ("telegram:42", parent.id),
        )
        cursor.execute(
            "INSERT INTO gateway_paired (platform, user_id, user_name, approved_at) "
            "VALUES ('telegram', '42', 'Ann', 2.0)"
        )
    runs = RunLog.open(home)
    try:
        runs.claim_manual("job-1", "daily report", 1000.0)
    finally:
        runs.close()
    return {"parent": parent.id, "child": child.id}


def test_a_home_moves_into_postgresql_and_back(hermes, postgres):
    hermes.config("model: test-model\n")
    ids = fill(hermes.home)
    url = postgres.create_database()

    moved = hermes("store", "migrate", "--to", url)
    assert moved.code == 0, moved.err
    assert "messages: 3 rows" in moved.out and "gateway_paired: 1 rows" in moved.out
    assert f"store:\n  url: {url}" in (hermes.home / "config.yaml").read_text()
    assert hermes("store", "where").out.strip() == url

    store = open_state_store(hermes.home)
    try:
        assert store.db.dialect == "postgresql"
        assert store.sessions.get(ids["child"]).parent_session_id == ids["parent"]
        assert store.sessions.get(ids["parent"]).input_tokens == 7
        assert [h.session_id for h in store.search("zebra")] == [ids["parent"]]
        assert len(store.search("京タワ")) == 1 and len(store.search("parse_config(")) == 1
        assert len(store.nested.of_session(ids["parent"])) == 1
        after = store.messages.append(ids["child"], "assistant", "a new one")  # ids go on
        assert after.id == 4 and after.seq == 2
        assert store.search("zebra", mode=SearchMode.WORDS)[0].snippet == "The [zebra] answer"
    finally:
        store.close()
    with psycopg.connect(url) as connection:
        assert connection.execute("SELECT session_id FROM gateway_routes").fetchall() == [
            (ids["parent"],)
        ]
    runs = RunLog.open(hermes.home)  # the scheduler's records came too, and go on
    try:
        assert [run.job_name for run in runs.of_job("job-1")] == ["daily report"]
        assert runs.claim_manual("job-1", "daily report", 2000.0) == 2
    finally:
        runs.close()

    again = hermes("store", "migrate", "--to", url)
    assert again.code == 1 and "already keeps its state there" in again.err

    refused = hermes("store", "migrate", "--to", "sqlite")
    assert refused.code == 1 and "state.db exists" in refused.err and "move it aside" in refused.err
    shutil.move(hermes.home / "state.db", hermes.home / "state.db.before")
    back = hermes("store", "migrate", "--to", "sqlite")
    assert back.code == 0, back.err
    assert "messages: 4 rows" in back.out
    assert "store" not in (hermes.home / "config.yaml").read_text()
    store = open_state_store(hermes.home)
    try:
        assert store.db.dialect == "sqlite"
        assert [h.session_id for h in store.search("zebra")] == [ids["parent"]]
        assert store.messages.of_session(ids["child"])[-1].content == "a new one"
    finally:
        store.close()


def test_a_database_that_is_not_empty_is_refused_and_nothing_switches(hermes, postgres):
    hermes.config("model: test-model\n")
    fill(hermes.home)
    url = postgres.create_database()
    assert hermes("store", "migrate", "--to", url, "--no-switch").code == 0
    before = (hermes.home / "config.yaml").read_text()
    assert "store" not in before
    refused = hermes("store", "migrate", "--to", url)
    assert refused.code == 1 and "already holds state" in refused.err
    assert "drop" not in refused.err  # nothing was copied: its data must not be dropped
    assert (hermes.home / "config.yaml").read_text() == before


def test_a_url_that_cannot_be_reached_is_one_line(hermes):
    hermes.config("model: test-model\n")
    fill(hermes.home)
    result = hermes("store", "migrate", "--to", "postgresql://nobody@127.0.0.1:1/none")
    assert result.code == 1
    assert "cannot reach the state store at postgresql://nobody@127.0.0.1:1/none" in result.err
    assert len(result.err.strip().splitlines()) == 1
    bad = hermes("store", "migrate", "--to", "mysql://x")
    assert bad.code == 1 and bad.err.count("\n") == 1
    assert "hermes plugins install store-mysql" in bad.err  # no engine opens mysql:// here
    unknown = hermes("store", "migrate", "--to", "duckdb")
    assert unknown.code == 2 and "keeps the store in HERMES_HOME (sqlite)" in unknown.err


def test_the_first_move_logs_in_with_the_password_in_dotenv(hermes, postgres):
    hermes.config("model: test-model\n")
    fill(hermes.home)
    with postgres.password_role(postgres.create_database(), "teambot", "s3cret-pw") as url:
        refused = hermes("store", "migrate", "--to", url)  # no password given yet
        assert refused.code == 1 and "password" in refused.err
        hermes.dotenv("HERMES_STORE_PASSWORD=s3cret-pw\n")
        moved = hermes("store", "migrate", "--to", url)
        assert moved.code == 0, moved.err
        assert "s3cret-pw" not in moved.out + moved.err
        assert "s3cret-pw" not in (hermes.home / "config.yaml").read_text()
        store = open_state_store(hermes.home)  # the home opens it with the same password
        try:
            assert store.sessions.count() == 2
        finally:
            store.close()
    inline = hermes("store", "migrate", "--to", url.replace("teambot@", "teambot:s3cret-pw@"))
    assert inline.code == 2 and "HERMES_STORE_PASSWORD" in inline.err
    assert "s3cret-pw" not in inline.err
