"""Search on the shared store: the kernel's own search (``StateStore.search``) over the
kernel's own PostgreSQL schema, at the sizes and with the very messages and queries of
``store.py`` (which measures SQLite), so the two sets of figures sit side by side.

    uv run python tests/bench/search_postgres.py [--sizes 100000 1000000] [--queries 200]

The server is the test kit's (Debian's PostgreSQL, a private cluster on loopback, fsync
off: loading is not what is measured). Messages are loaded with COPY and the two search
indexes built after each load, as the migration defines them. Each query goes through the
store as a user's does: a pooled connection, the SQL, the snippet. Target, as for SQLite:
p95 <= 20 ms at 1M messages.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

import psycopg

sys.path.insert(0, str(Path(__file__).parent))

from hermes_plugin_store_postgresql import search
from hermes_plugin_store_postgresql.database import PostgresDatabase
from hermes_plugin_store_postgresql.testing import postgres_server
from store import CJK, CODE, VOCABULARY, WORDS, percentile, synthetic_text

from hermes_kernel.store.search import SearchMode
from hermes_kernel.store.state import StateStore

PER_SESSION = 200
INDEXES = (
    "CREATE INDEX messages_words ON messages USING gin (words)",
    "CREATE INDEX messages_trigrams ON messages USING gin (folded gin_trgm_ops)",
)


def fill(url: str, start: int, count: int, rng: random.Random) -> None:
    now = time.time()
    with psycopg.connect(url) as connection, connection.cursor() as cursor:
        with cursor.copy("COPY sessions (id, source, started_at) FROM STDIN") as copy:
            for number in range(start // PER_SESSION, (start + count) // PER_SESSION):
                copy.write_row((f"s{number}", "cli", now))
        with cursor.copy(
            "COPY messages (session_id, seq, role, content, created_at) FROM STDIN"
        ) as copy:
            for number in range(start, start + count):
                seq = number % PER_SESSION + 1
                role = "user" if seq % 2 else "assistant"
                copy.write_row((f"s{number // PER_SESSION}", seq, role, synthetic_text(rng), now))


def latency(store: StateStore, mode: SearchMode, queries: list[str]) -> tuple[float, float]:
    times = []
    for query in queries:
        started = time.perf_counter()
        store.search(query, mode=mode)
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times), percentile(times, 0.95)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument(
        "--rank-windows",
        type=int,
        nargs="+",
        default=[search.RANK_WINDOW],
        help="word search: how many of the newest matches are ranked (the store's constant "
        "by default; smaller windows read fewer rows for common words)",
    )
    args = parser.parse_args()
    rng = random.Random(42)  # the same queries as store.py
    word_queries = [
        " ".join(rng.sample(rng.choice([WORDS, VOCABULARY[:500], VOCABULARY]), 2))
        for _ in range(args.queries)
    ]
    substring_queries = [
        rng.choice([*CODE, *CJK, *(w[1:-1] for w in WORDS if len(w) > 5)])
        for _ in range(args.queries)
    ]
    with postgres_server() as server:
        url = server.create_database("search_bench")
        store = StateStore(PostgresDatabase(url))
        have = 0
        try:
            for asked in sorted(args.sizes):
                size = (asked // PER_SESSION) * PER_SESSION
                started = time.perf_counter()
                store.db.query("DROP INDEX IF EXISTS messages_words, messages_trigrams")
                fill(url, have, size - have, rng)
                loaded = time.perf_counter() - started
                started = time.perf_counter()
                for statement in INDEXES:
                    store.db.query(statement)
                store.db.query("ANALYZE messages")
                indexed = time.perf_counter() - started
                have = size
                megabytes = store.db.query_value(
                    "SELECT pg_total_relation_size('messages') / 1048576"
                )
                print(
                    f"{size:>9,} messages: loaded in {loaded:.0f} s, indexed in {indexed:.0f} s, "
                    f"table and indexes {megabytes} MiB"
                )
                runs = [
                    (f"words (newest {window:,} ranked)", SearchMode.WORDS, word_queries, window)
                    for window in args.rank_windows
                ]
                runs.append(("trigrams", SearchMode.TRIGRAMS, substring_queries, 0))
                for name, mode, queries, window in runs:
                    search.RANK_WINDOW = window or search.RANK_WINDOW
                    p50, p95 = latency(store, mode, queries)
                    verdict = "ok" if p95 <= 20 else "OVER TARGET"
                    print(
                        f"    search {name:<28} p50 {p50:7.2f} ms  p95 {p95:7.2f} ms  "
                        f"(p95 target <= 20 ms: {verdict})"
                    )
        finally:
            store.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
