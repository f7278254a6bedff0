"""Memory and skills figures: the skills index in the system prompt, and session_search.

    uv run python tests/bench/learning.py [--skills 10 100 1000] [--messages 1000000]

(1) For each number of installed skills: the size of the skills index the prompt gets (it is
bounded by skills.index_chars, 6,000 by default: descriptions while they fit, then names,
then a count), and the time to build it at session start (read and parse every SKILL.md
frontmatter), against the floor of only reading the same files.
(2) session_search latency (p50/p95) on a store of --messages messages, through the tool's
handler and the kernel's searcher (filters, session labels, snippets), against the floor of
a bare store search for the same queries. Targets: index size constant past ~60 skills;
session_search p95 within 2x of the bare search.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

from hermes_plugin_memory_builtin.history import session_search
from hermes_plugin_skills.index import render_index
from hermes_plugin_skills.tools import open_library
from hermes_plugin_store_sqlite.database import Database
from store import WORDS, fill, percentile  # tests/bench/store.py

from hermes_kernel.store.search import SearchMode
from hermes_kernel.store.state import StateStore
from hermes_kernel.tooling.history import history_searcher
from hermes_testkit import tool_context

REPEATS = 5


def make_skills(root: Path, count: int) -> None:
    rng = random.Random(count)
    for n in range(count):
        folder = root / f"skill-{n:04d}"
        folder.mkdir(parents=True)
        words = " ".join(rng.choices(WORDS, k=rng.randint(12, 40)))
        (folder / "SKILL.md").write_text(
            f"---\nname: {folder.name}\ndescription: Handle {words}.\nlicense: MIT\n---\n"
            + "Step.\n" * 40
        )


def best(function, repeats: int = REPEATS) -> float:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        function()
        times.append(time.perf_counter() - started)
    return min(times) * 1000


def bench_skills(counts: list[int]) -> None:
    print("skills  index chars  build ms  floor ms (read files)  ratio")
    for count in counts:
        with tempfile.TemporaryDirectory() as home:
            root = Path(home) / "skills"
            make_skills(root, count)
            open_library(home, home, {}, ())  # seeds the bundled skills once
            files = sorted(root.rglob("SKILL.md"))
            index = render_index(open_library(home, home, {}, ()))
            build = best(lambda h=home: render_index(open_library(h, h, {}, ())))
            floor = best(lambda fs=files: [f.read_bytes() for f in fs])
            print(f"{count:6}  {len(index):11}  {build:8.1f}  {floor:21.1f}  {build / floor:5.1f}x")


def bench_search(messages: int, queries: int) -> None:
    rng = random.Random(11)
    with tempfile.TemporaryDirectory() as folder:
        store = StateStore(Database(Path(folder) / "state.db"))
        started = time.perf_counter()
        fill(store, messages, rng)
        print(f"\nstore of {messages} messages built in {time.perf_counter() - started:.0f} s")
        with store.db.write() as cursor:  # one chat user owns every tenth session
            cursor.execute("UPDATE sessions SET user_scope = 'telegram:1' WHERE rowid % 10 = 0")
        words = [" ".join(rng.sample(WORDS, 2)) for _ in range(queries)]
        context = tool_context(search=history_searcher(store, None))
        scoped = tool_context(search=history_searcher(store, "telegram:1"))
        cases = [
            ("bare store search (floor)", lambda q: store.search(q, mode=SearchMode.AUTO, limit=8)),
            ("session_search", lambda q: session_search(q, context)),
            ("session_search role=user", lambda q: session_search(q, context, role="user")),
            ("session_search days=7", lambda q: session_search(q, context, days=7)),
            ("session_search, chat user", lambda q: session_search(q, scoped)),
        ]
        floor_p95 = 0.0
        print("case                          p50 ms   p95 ms   p95 / floor")
        for label, run in cases:
            times = []
            for query in words:
                begun = time.perf_counter()
                run(query)
                times.append((time.perf_counter() - begun) * 1000)
            p50, p95 = statistics.median(times), percentile(times, 0.95)
            floor_p95 = floor_p95 or p95
            print(f"{label:28} {p50:7.2f}  {p95:7.2f}   {p95 / floor_p95:5.2f}x")
        store.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skills", type=int, nargs="+", default=[10, 100, 1000])
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    bench_skills(args.skills)
    bench_search(args.messages, args.queries)
    return 0


if __name__ == "__main__":
    sys.exit(main())
