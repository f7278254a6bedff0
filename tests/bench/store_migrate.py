"""``hermes store migrate`` speed: a state.db of N messages copied into PostgreSQL.

    uv run python tests/bench/store_migrate.py [--messages 100000]

The copy is the command's own (``transfer``: batches of 2,000 rows, one transaction each,
into the kernel's PostgreSQL schema with its search indexes kept up as rows arrive). The
floor, measured in the same run: the same sessions and messages sent with COPY, the fastest
way into PostgreSQL there is, into the same schema (its generated columns and search indexes
cost the same to both). The server is the test
kit's (Debian's PostgreSQL on loopback, fsync off).
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

import psycopg

sys.path.insert(0, str(Path(__file__).parent))

from hermes_plugin_store_postgresql.database import PostgresDatabase
from hermes_plugin_store_postgresql.testing import postgres_server
from hermes_plugin_store_sqlite.database import Database
from store import fill

from hermes_kernel.store.state import StateStore
from hermes_kernel.store.transfer import transfer


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=100_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="hermes-migrate-bench-") as scratch:
        source = StateStore(Database(Path(scratch) / "state.db"))
        fill(source, args.messages, random.Random(7))
        rows = source.db.query(
            "SELECT session_id, seq, role, content, created_at FROM messages ORDER BY id"
        )
        with postgres_server() as server:
            floor_db = PostgresDatabase(server.create_database("floor"))  # the same schema
            floor_db.close()
            sessions = source.db.query("SELECT id, source, started_at FROM sessions")
            with psycopg.connect(floor_db.url) as connection, connection.cursor() as cursor:
                started = time.perf_counter()
                with cursor.copy("COPY sessions (id, source, started_at) FROM STDIN") as copy:
                    for row in sessions:
                        copy.write_row(row)
                with cursor.copy(
                    "COPY messages (session_id, seq, role, content, created_at) FROM STDIN"
                ) as copy:
                    for row in rows:
                        copy.write_row(row)
                connection.commit()
                floor = time.perf_counter() - started
            target = PostgresDatabase(server.create_database("target"))
            try:
                started = time.perf_counter()
                copied = transfer(source.db, target, [])
                ours = time.perf_counter() - started
            finally:
                target.close()
        source.close()
    messages = next(c.rows for c in copied if c.table == "messages")
    total = sum(c.rows for c in copied)
    print(
        f"{messages:,} messages ({total:,} rows in all) copied in {ours:.1f} s: "
        f"{messages / ours:,.0f} messages/s; floor (COPY into the same schema) {floor:.1f} s, "
        f"{messages / floor:,.0f}/s; ratio {ours / floor:.1f}x"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
