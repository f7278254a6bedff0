"""The test kit's PostgreSQL: a private server on loopback that a test gets an empty
database of, with what the shared store will stand on checked once here: psycopg 3
connects, ``pg_trgm`` finds substrings of code and of CJK text through its index (in the
cluster's C.UTF-8 locale), and words match across accents through ``unaccent``."""

from __future__ import annotations

import psycopg
from hermes_plugin_store_postgresql.testing import PostgresServer


def test_each_test_gets_an_empty_database_of_its_own(postgres: PostgresServer) -> None:
    first, second = postgres.create_database(), postgres.create_database()
    assert first != second and first.startswith(f"postgresql://hermes@127.0.0.1:{postgres.port}/")
    with psycopg.connect(first) as connection:
        tables = connection.execute(
            "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'"
        ).fetchone()
        assert tables == (0,)
        assert connection.execute("SHOW server_encoding").fetchone() == ("UTF8",)


def test_trigram_and_word_search_work_as_the_store_needs(postgres: PostgresServer) -> None:
    url = postgres.create_database()
    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute("CREATE EXTENSION pg_trgm")
        connection.execute("CREATE EXTENSION unaccent")
        connection.execute("CREATE TABLE notes (id bigint PRIMARY KEY, body text NOT NULL)")
        bodies = ["東京で会議があります", "run `tar -czf logs.tgz logs/`", "a café in Zürich"]
        rows = [(n, f"filler message number {n}") for n in range(3, 2000)]
        with connection.cursor() as cursor:
            cursor.executemany("INSERT INTO notes VALUES (%s, %s)", [*enumerate(bodies), *rows])
        connection.execute("CREATE INDEX notes_trgm ON notes USING gin (body gin_trgm_ops)")
        connection.execute("ANALYZE notes")
        connection.execute("SET enable_seqscan = off")
        for needle, expected in (("東京", 0), ("-czf logs", 1)):
            pattern = f"%{needle}%"
            found = connection.execute(
                "SELECT id FROM notes WHERE body ILIKE %s", (pattern,)
            ).fetchall()
            assert found == [(expected,)], needle
            plan = "\n".join(
                row[0]
                for row in connection.execute(
                    "EXPLAIN SELECT id FROM notes WHERE body ILIKE %s", (pattern,)
                )
            )
            assert "notes_trgm" in plan, plan
        words = connection.execute(
            "SELECT id FROM notes WHERE to_tsvector('simple', unaccent(body)) "
            "@@ plainto_tsquery('simple', unaccent(%s))",
            ("cafe zurich",),
        ).fetchall()
        assert words == [(2,)]
