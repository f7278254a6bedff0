"""State store figures: message append throughput and full-text search latency.

    uv run python tests/bench/store.py [--sizes 100000 1000000] [--queries 200]

Prints (1) appends per second through ``Messages.append`` (one transaction per message, as
the turn engine writes; full-text indexing happens later, in batches) with a bare apsw INSERT into a table without indexes as the floor,
and (2) search latency p50/p95 for word and trigram queries over synthetic sessions of each
size. Target: trigram and word p95 <= 20 ms at 1M messages.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

import apsw
from hermes_plugin_store_sqlite.database import Database

from hermes_kernel.store.search import SearchMode
from hermes_kernel.store.state import StateStore

WORDS = [
    "agent",
    "backup",
    "build",
    "cache",
    "config",
    "container",
    "deploy",
    "docker",
    "error",
    "file",
    "function",
    "install",
    "kernel",
    "memory",
    "message",
    "model",
    "network",
    "plugin",
    "provider",
    "python",
    "query",
    "release",
    "restart",
    "schedule",
    "search",
    "server",
    "session",
    "shell",
    "skill",
    "token",
    "tool",
    "update",
    "user",
    "version",
    "volume",
    "weather",
    "window",
    "workflow",
    "yaml",
    "timeout",
    "gateway",
    "telegram",
    "cron",
    "lease",
    "index",
    "trigger",
]
CODE = [
    "parse_config(path)",
    "os.environ['HOME']",
    "self._lock.acquire()",
    "x => x + 1",
    "SELECT * FROM t",
    "git rebase -i HEAD~3",
    "docker run --rm -it",
    "def main() -> int:",
]
CJK = ["東京タワー", "天気予報", "数据库连接", "会議の予定", "서버 재시작", "検索エンジン"]


def _vocabulary(rng: random.Random, size: int = 5_000) -> list[str]:
    # Pseudo-words, so the word index sees a realistic spread of rare and common terms.
    syllables = ["ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "ze", "an", "or", "el", "is"]
    return ["".join(rng.choices(syllables, k=rng.randint(2, 4))) for _ in range(size)]


VOCABULARY = _vocabulary(random.Random(7))


def synthetic_text(rng: random.Random) -> str:
    # Zipf-like: common words often, the long tail rarely.
    parts = rng.choices(WORDS, k=rng.randint(3, 10))
    parts += [
        VOCABULARY[int(rng.paretovariate(1.1)) % len(VOCABULARY)] for _ in range(rng.randint(5, 30))
    ]
    rng.shuffle(parts)
    if rng.random() < 0.2:
        parts.insert(rng.randrange(len(parts)), rng.choice(CODE))
    if rng.random() < 0.1:
        parts.insert(rng.randrange(len(parts)), rng.choice(CJK))
    return " ".join(parts)


def fill(store: StateStore, count: int, rng: random.Random) -> None:
    """Add ``count`` messages in sessions of 200, in large transactions (setup, not measured)."""
    done = 0
    while done < count:
        session = store.sessions.create("bench")
        batch = [
            (session.id, seq, "user" if seq % 2 else "assistant", synthetic_text(rng), time.time())
            for seq in range(1, min(200, count - done) + 1)
        ]
        with store.db.write() as cursor:
            cursor.executemany(
                "INSERT INTO messages (session_id, seq, role, content, created_at) VALUES (?, ?, ?, ?, ?)",
                batch,
            )
        store.db.index_pending()  # as the engine does when a turn ends
        done += len(batch)


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def search_latency(store: StateStore, mode: SearchMode, queries: list[str]) -> tuple[float, float]:
    times = []
    for query in queries:
        started = time.perf_counter()
        store.search(query, mode=mode, limit=20)
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times), percentile(times, 0.95)


def append_throughput(folder: Path, count: int) -> tuple[float, float]:
    store = StateStore(Database(folder / "append.db"))
    session = store.sessions.create("bench")
    rng = random.Random(1)
    texts = [synthetic_text(rng) for _ in range(count)]
    started = time.perf_counter()
    for text in texts:
        store.messages.append(session.id, "user", text)
    ours = count / (time.perf_counter() - started)
    store.close()
    floor_db = apsw.Connection(str(folder / "floor.db"))
    floor_db.execute("PRAGMA journal_mode=WAL")
    floor_db.execute("PRAGMA synchronous=NORMAL")
    floor_db.execute("CREATE TABLE m (id INTEGER PRIMARY KEY, content TEXT)")
    started = time.perf_counter()
    for text in texts:
        floor_db.execute("BEGIN IMMEDIATE")
        floor_db.execute("INSERT INTO m (content) VALUES (?)", (text,))
        floor_db.execute("COMMIT")
    floor = count / (time.perf_counter() - started)
    return ours, floor


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--appends", type=int, default=5_000)
    args = parser.parse_args()
    rng = random.Random(42)
    word_queries = [
        " ".join(rng.sample(rng.choice([WORDS, VOCABULARY[:500], VOCABULARY]), 2))
        for _ in range(args.queries)
    ]
    trigram_queries = [
        rng.choice([*CODE, *CJK, *(w[1:-1] for w in WORDS if len(w) > 5)])
        for _ in range(args.queries)
    ]
    with tempfile.TemporaryDirectory(prefix="hermes-store-bench-") as scratch:
        folder = Path(scratch)
        ours, floor = append_throughput(folder, args.appends)
        print(
            f"append, one transaction per message: {ours:,.0f}/s "
            f"(floor, bare insert without indexes: {floor:,.0f}/s; ratio {floor / ours:.2f}x)"
        )
        store = StateStore(Database(folder / "state.db"))
        have = 0
        for size in sorted(args.sizes):
            started = time.perf_counter()
            fill(store, size - have, rng)
            have = size
            print(
                f"{size:>9,} messages: filled in {time.perf_counter() - started:.0f} s, "
                f"state.db {(folder / 'state.db').stat().st_size / 2**20:,.0f} MiB"
            )
            for name, mode, queries in [
                ("words", SearchMode.WORDS, word_queries),
                ("trigrams", SearchMode.TRIGRAMS, trigram_queries),
            ]:
                p50, p95 = search_latency(store, mode, queries)
                verdict = "ok" if p95 <= 20 else "OVER TARGET"
                print(
                    f"    search {name:<8} p50 {p50:7.2f} ms  p95 {p95:7.2f} ms  (p95 target <= 20 ms: {verdict})"
                )
        store.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
