"""Gateway workers' throughput: how many messages a second one gateway, and two workers on
one PostgreSQL store, answer when the model answers at once (CPU-bound on this machine).

    uv run python tests/bench/gateway_workers.py [--users 200] [--messages 10] [--runs 3]

Real ``hermes gateway run`` processes serve the fake Bot API (loopback) and a scripted model
with no latency. Each user sends ``--messages`` DMs back to back: the next as soon as the
last is answered. Printed per setup: messages per second (first message offered to last
reply), the median run of ``--runs``; CPU per message of the gateways together, and with the
PostgreSQL server's processes added (what the database costs is part of the price); and the
two-worker rate as a ratio to the one-worker rate of the same run. Setups: SQLite (state.db,
one gateway: the default home), PostgreSQL with one worker, PostgreSQL with two.
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


def run(workers: int, postgres: Any, args: argparse.Namespace) -> dict[str, float]:
    with (
        tempfile.TemporaryDirectory() as tmp,
        TimedTelegram() as telegram,
        ScriptedOpenAIServer(default=Reply.say("ok")) as model,
    ):
        model.requests = _Discard()
        url = postgres.create_database() if postgres is not None else None
        processes = []
        for number in range(workers):
            home = Path(tmp) / f"worker-{number}"
            home.mkdir()
            processes.append(start_gateway(home, telegram, model.base_url, args.users, url))
        try:
            wait_polling(telegram, processes[0], 0)
            time.sleep(3.0)  # every worker has said it is alive: they share from the start
            server = postgres if url else None
            cpu_gateways = sum(cpu_seconds(p.pid) for p in processes)
            cpu_server = server_cpu_seconds(server)
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
            gateways = sum(cpu_seconds(p.pid) for p in processes) - cpu_gateways
            database = server_cpu_seconds(server) - cpu_server
        finally:
            for process in processes:
                process.terminate()
            for process in processes:
                process.wait(60)
    count = max(len(results), 1)
    return {
        "rate": len(results) / elapsed,
        "cpu_ms": gateways / count * 1000,
        "with_db_ms": (gateways + database) / count * 1000,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--users", type=int, default=200)
    parser.add_argument("--messages", type=int, default=10)
    parser.add_argument("--runs", type=int, default=3, help="runs per setup; the median shown")
    parser.add_argument(
        "--setups", type=int, nargs="+", default=[1, 2, 3], help="which (1: sqlite, 2, 3)"
    )
    args = parser.parse_args()
    print(f"{args.users} users x {args.messages} messages back to back; model latency 0")
    print(f"{'setup':<24} {'msg/s':>7} {'CPU/msg':>9} {'+database':>10}  msg/s of each run")
    with postgres_server() as postgres:
        rates: dict[str, float] = {}
        setups = (
            ("sqlite, 1 gateway", 1, None),
            ("postgresql, 1 worker", 1, postgres),
            ("postgresql, 2 workers", 2, postgres),
        )
        for name, workers, server in (setups[n - 1] for n in args.setups):
            rows = sorted((run(workers, server, args) for _ in range(args.runs)), key=_rate)
            row = rows[len(rows) // 2]
            rates[name] = row["rate"]
            spread = " ".join(f"{r['rate']:.0f}" for r in rows)
            print(
                f"{name:<24} {row['rate']:>7.1f} {row['cpu_ms']:>7.1f}ms "
                f"{row['with_db_ms']:>8.1f}ms  {spread}",
                flush=True,
            )
        if len(rates) == len(setups):
            two, one = rates["postgresql, 2 workers"], rates["postgresql, 1 worker"]
            print(f"2 workers / 1 worker: {two / one:.2f}x")
            print(f"postgresql 1 worker / sqlite: {one / rates['sqlite, 1 gateway']:.2f}x msg/s")


def _rate(row: dict[str, float]) -> float:
    return row["rate"]


if __name__ == "__main__":
    main()
