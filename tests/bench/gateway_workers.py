"""Gateway workers' throughput: how many messages a second one gateway, and two workers on
one PostgreSQL store, answer when the model answers at once (CPU-bound on this machine),
and what each part costs, so the scaling of workers on hosts of their own can be computed.

    uv run python tests/bench/gateway_workers.py [--users 200] [--messages 10] [--runs 3]
        [--database-cores 2]

Real ``hermes gateway run`` processes serve the fake Bot API (loopback) and a scripted model
with no latency. Each user sends ``--messages`` DMs back to back: the next as soon as the
last is answered. Setups: SQLite (state.db, one gateway: the default home), PostgreSQL with
one worker, PostgreSQL with two. Printed per setup, the median run of ``--runs`` (by rate):

- messages a second (first message offered to last reply), and each run's;
- CPU per message of each part measured apart: the gateway workers (together), the
  database server (every backend), and this process (the fake Bot API, the scripted model
  and the simulated users);
- on PostgreSQL, from the server's own counters (``pg_stat_database``,
  ``pg_stat_statements``, loaded for the run): transactions and statements per message (a
  statement is a round trip), and the time spent taking write locks as a share of each
  worker's wall time (``lock wait``: the time inside ``pg_advisory_xact_lock`` calls, summed
  over the workers' connections, divided by workers x wall time).

Then the two-worker rate as a ratio to one worker's, and a paper model. With two workers,
one holds the platforms (it takes every message in and sends every reply) and the other
only runs turns: the other's CPU over the turns it ran (``gateway_inbox.worker``) is what a
turn costs a worker, and the holder's CPU less its own turns is what the platforms cost
it per message. From those and the database's CPU per message, the model gives messages a
second for 1, 2, 4 and 8 worker processes, each on a core of its own (a Python process
uses about one), against a database server of ``--database-cores``, and which part is the
limit: the worker holding the platforms, the workers, or the database.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path
from typing import Any

from gateway import (
    TimedTelegram,
    _Discard,
    cpu_seconds,
    server_cpu_seconds,
    start_gateway,
    user,
    wait_polling,
)
from hermes_plugin_store_postgresql.testing import postgres_server

from hermes_testkit import Reply, ScriptedOpenAIServer

STATISTICS = {"shared_preload_libraries": "pg_stat_statements", "pg_stat_statements.max": "1000"}


def _counters(postgres: Any, database: str) -> tuple[float, float, float]:
    """Transactions, statements, and milliseconds inside advisory-lock calls, so far."""
    row = postgres.psql(
        "SELECT (SELECT xact_commit + xact_rollback FROM pg_stat_database "
        f"WHERE datname = '{database}'), coalesce(sum(calls), 0), coalesce(sum(total_exec_time) "
        "FILTER (WHERE query LIKE '%advisory_xact_lock%'), 0) FROM pg_stat_statements s "
        f"JOIN pg_database d ON d.oid = s.dbid WHERE d.datname = '{database}'",
        database,
    )
    transactions, statements, lock_ms = (float(value) for value in row.split("|"))
    return transactions, statements, lock_ms


def _most_run(postgres: Any, database: str, limit: int, messages: int) -> None:
    """The statements run most, per message (what to cut next)."""
    rows = postgres.psql(
        "SELECT calls, round(total_exec_time::numeric, 1), left(regexp_replace(query, "
        "'\\s+', ' ', 'g'), 110) FROM pg_stat_statements s JOIN pg_database d "
        f"ON d.oid = s.dbid WHERE d.datname = '{database}' ORDER BY calls DESC LIMIT {limit}",
        database,
    )
    for line in rows.splitlines():
        calls, milliseconds, query = line.split("|", 2)
        print(f"    {int(calls) / messages:6.2f}/msg {float(milliseconds):9.1f} ms  {query}")


def _turns_by_pid(postgres: Any, database: str) -> dict[int, int]:
    """How many messages each worker process ran (a worker's name is ``host:pid:token``)."""
    rows = postgres.psql(
        "SELECT worker, count(*) FROM gateway_inbox WHERE worker IS NOT NULL GROUP BY worker",
        database,
    )
    split: dict[int, int] = {}
    for line in rows.splitlines():
        worker, count = line.rsplit("|", 1)
        pid = int(worker.split(":")[1])
        split[pid] = split.get(pid, 0) + int(count)
    return split


def _platform_holder(postgres: Any, database: str) -> int:
    holder = postgres.psql(
        "SELECT holder FROM leases_held WHERE name = 'gateway-platforms'", database
    )
    return int(holder.split(":")[1])


def _platform_and_turn_ms(
    processes: list[Any], spent: list[float], split: dict[int, int], holder: int, count: int
) -> dict[str, float]:
    """CPU per message of holding the platforms (taking messages in, sending replies) and
    of running a turn, from a run with a worker that holds no platform: its CPU over the
    turns it ran is a turn's cost; the holder's CPU less its own turns is the platforms'."""
    others = [(p.pid, cpu) for p, cpu in zip(processes, spent, strict=True) if p.pid != holder]
    ran = sum(split.get(pid, 0) for pid, _ in others)
    if not others or ran == 0:
        return {}
    turn = sum(cpu for _, cpu in others) / ran
    held = next(cpu for p, cpu in zip(processes, spent, strict=True) if p.pid == holder)
    platforms = (held - turn * split.get(holder, 0)) / count
    return {"turn_ms": turn * 1000, "platforms_ms": platforms * 1000}


def run(workers: int, postgres: Any, args: argparse.Namespace) -> dict[str, float]:
    with (
        tempfile.TemporaryDirectory() as tmp,
        TimedTelegram() as telegram,
        ScriptedOpenAIServer(default=Reply.say("ok")) as model,
    ):
        model.requests = _Discard()
        url = postgres.create_database() if postgres is not None else None
        database = url.rsplit("/", 1)[1] if url else ""
        if url:
            postgres.psql("CREATE EXTENSION IF NOT EXISTS pg_stat_statements", database)
        processes = []
        for number in range(workers):
            home = Path(tmp) / f"worker-{number}"
            home.mkdir()
            processes.append(start_gateway(home, telegram, model.base_url, args.users, url))
        try:
            wait_polling(telegram, processes[0], 0)
            time.sleep(3.0)  # every worker has said it is alive: they share from the start
            server = postgres if url else None
            if url:  # what start-up ran is not the messages'
                postgres.psql("SELECT pg_stat_statements_reset()", database)
            counted = _counters(postgres, database) if url else (0.0, 0.0, 0.0)
            cpu_each = [cpu_seconds(p.pid) for p in processes]
            cpu_server = server_cpu_seconds(server)
            cpu_here = time.process_time()
            results: list[float] = []

            async def everyone() -> None:
                await asyncio.gather(
                    *(
                        user(telegram, n, args.messages, (0.0, 0.0), results, 0.0, 1)
                        for n in range(args.users)
                    )
                )

            started = time.perf_counter()
            asyncio.run(everyone())
            elapsed = time.perf_counter() - started
            spent = [cpu_seconds(p.pid) - b for p, b in zip(processes, cpu_each, strict=True)]
            split = _turns_by_pid(postgres, database) if url else {}
            holder = _platform_holder(postgres, database) if url else processes[0].pid
            database_cpu = server_cpu_seconds(server) - cpu_server
            here = time.process_time() - cpu_here
            after = _counters(postgres, database) if url else (0.0, 0.0, 0.0)
            if url and args.statements:
                _most_run(postgres, database, args.statements, max(len(results), 1))
        finally:
            for process in processes:
                process.terminate()
            for process in processes:
                process.wait(60)
    count = max(len(results), 1)
    transactions, statements, lock_ms = (b - a for a, b in zip(counted, after, strict=True))
    costs = _platform_and_turn_ms(processes, spent, split, holder, count)
    return {
        **costs,
        "rate": len(results) / elapsed,
        "cpu_ms": sum(spent) / count * 1000,
        "database_ms": database_cpu / count * 1000,
        "fakes_ms": here / count * 1000,
        "transactions": transactions / count,
        "statements": statements / count,
        "lock_share": lock_ms / 1000 / (elapsed * workers),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--users", type=int, default=200)
    parser.add_argument("--messages", type=int, default=10)
    parser.add_argument("--runs", type=int, default=3, help="runs per setup; the median shown")
    parser.add_argument(
        "--setups", type=int, nargs="+", default=[1, 2, 3], help="which (1: sqlite, 2, 3)"
    )
    parser.add_argument(
        "--statements", type=int, default=0, help="list the N most run statements of each run"
    )
    parser.add_argument("--database-cores", type=int, default=2)
    args = parser.parse_args()
    print(f"{args.users} users x {args.messages} messages back to back; model latency 0")
    print(
        f"{'setup':<24} {'msg/s':>7} {'gateways':>9} {'database':>9} {'fakes':>7} "
        f"{'xact':>5} {'stmts':>6} {'lock wait':>9}  msg/s of each run"
    )
    with postgres_server(STATISTICS) as postgres:
        medians: dict[str, dict[str, float]] = {}
        setups = (
            ("sqlite, 1 gateway", 1, None),
            ("postgresql, 1 worker", 1, postgres),
            ("postgresql, 2 workers", 2, postgres),
        )
        for name, workers, server in (setups[n - 1] for n in args.setups):
            rows = sorted((run(workers, server, args) for _ in range(args.runs)), key=_rate)
            row = medians[name] = rows[len(rows) // 2]
            spread = " ".join(f"{r['rate']:.0f}" for r in rows)
            print(
                f"{name:<24} {row['rate']:>7.1f} {row['cpu_ms']:>7.1f}ms "
                f"{row['database_ms']:>7.1f}ms {row['fakes_ms']:>5.1f}ms "
                f"{row['transactions']:>5.1f} {row['statements']:>6.1f} "
                f"{row['lock_share']:>8.1%}  {spread}",
                flush=True,
            )
            if "turn_ms" in row:
                print(
                    f"{'':<24} a turn {row['turn_ms']:.1f} ms of a worker; the platforms "
                    f"{row['platforms_ms']:.1f} ms per message of the worker holding them"
                )
        _compare(medians)
        one = medians.get("postgresql, 1 worker")
        if one is not None:
            _paper_model(one, medians.get("postgresql, 2 workers"), args.database_cores)


def _compare(medians: dict[str, dict[str, float]]) -> None:
    sqlite = medians.get("sqlite, 1 gateway")
    one = medians.get("postgresql, 1 worker")
    two = medians.get("postgresql, 2 workers")
    if one and two:
        print(f"2 workers / 1 worker: {two['rate'] / one['rate']:.2f}x msg/s")
    if sqlite and one:
        whole = one["cpu_ms"] + one["database_ms"]
        print(
            f"postgresql 1 worker / sqlite: {one['rate'] / sqlite['rate']:.2f}x msg/s; "
            f"CPU per message (gateway + database) {whole:.1f} ms / {sqlite['cpu_ms']:.1f} ms "
            f"= {whole / sqlite['cpu_ms']:.2f}x"
        )


def _paper_model(one: dict[str, float], two: dict[str, float] | None, database_cores: int) -> None:
    """Messages a second for N worker processes, each on a core of its own (a Python
    process uses about one core), from the measured costs: the worker holding the platforms
    does the platforms' work for every message and its share of the turns; the others
    their shares; the database its part of every message."""
    database_limit = database_cores * 1000 / max(one["database_ms"], 1e-6)
    if two is None or "turn_ms" not in two:
        turn, platforms = one["cpu_ms"], 0.0
        print(f"paper model (one worker's cost, no split measured): {turn:.1f} ms/msg")
    else:
        turn, platforms = two["turn_ms"], max(two["platforms_ms"], 0.0)
        print(
            f"paper model: a turn {turn:.1f} ms of a worker, the platforms {platforms:.1f} ms "
            f"of the worker holding them, the database {one['database_ms']:.1f} ms of "
            f"{database_cores} cores (limit {database_limit:.0f} msg/s)"
        )
    for workers in (1, 2, 4, 8):
        holder = 1000 / (platforms + turn / workers)
        others = 1000 * workers / turn
        rate = min(holder, others, database_limit)
        bound = (
            "database"
            if rate == database_limit
            else "the platforms' worker"
            if rate == holder and platforms
            else "workers"
        )
        print(f"  {workers} workers: {rate:>6.0f} msg/s ({bound})")


def _rate(row: dict[str, float]) -> float:
    return row["rate"]


if __name__ == "__main__":
    main()
