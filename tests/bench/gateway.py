"""The gateway under many users: N simulated Telegram users chatting at once.

    uv run python tests/bench/gateway.py [--users 100 500 1000] [--messages 3]
        [--latency 0.3] [--think 5 15] [--runs 3] [--seed 1]

A real ``hermes gateway run`` process serves the fake Bot API (loopback) and the scripted
model, which answers every request after ``--latency`` seconds. Each user sends
``--messages`` DMs, one at a time: it waits for the reply, thinks for a random time in
``--think`` seconds, then sends the next. For each message, latency = the reply's arrival
at the fake Bot API - the moment the message was offered to getUpdates; added latency =
latency - the model's latency. The floor, measured in the same run, is the same path done
by bare httpx with no kernel: a getUpdates long poll that returns the message, one model
call, one sendMessage.

Arrival times come from ``--seed``, so every run (and every commit) replays the same
schedule; each N is run ``--runs`` times and the median run (by p99) is printed, with the
p99 of every run beside it to show the spread on a shared 2-core machine, and in brackets
the slowest 4 KB disk sync a probe saw during that run (a disk stall shows in the tail).

Printed per N: added latency p50/p99 (and as a ratio to the floor), messages per second,
the gateway's CPU time per message, its peak RSS, and RSS per active session (growth from
the idle gateway to the end, divided by N). Target at 1,000 sessions on 2 cores: p99 added
<= 50 ms.

``--store postgresql`` keeps the home's store in the test kit's PostgreSQL (Debian's server
on loopback, a fresh database per run) instead of state.db; CPU per message then adds the
database server's processes to the gateway's, so the two stores compare whole.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx
from hermes_plugin_platform_telegram.testing.telegram_server import DEFAULT_TOKEN, FakeTelegram

from hermes_testkit import Reply, ScriptedOpenAIServer

USER_BASE = 10_000


class TimedTelegram(FakeTelegram):
    """The fake Bot API, noting when each chat's reply arrives."""

    def __init__(self) -> None:
        super().__init__()
        self.waiters: dict[int, tuple[asyncio.AbstractEventLoop, asyncio.Future[float]]] = {}
        self.offered: dict[int, float] = {}
        self.guard = threading.Lock()

    def _api_sendMessage(self, params: dict[str, Any]) -> Any:
        result = super()._api_sendMessage(params)
        arrived = time.perf_counter()
        with self.guard:
            waiter = self.waiters.pop(int(params["chat_id"]), None)
        if waiter is not None:
            loop, future = waiter
            loop.call_soon_threadsafe(lambda: future.done() or future.set_result(arrived))
        return result


def rss_kib(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field):
            return int(line.split()[1])
    return 0


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


async def floor(telegram: TimedTelegram, model_url: str, latency: float, rounds: int = 30) -> float:
    """Median added latency of the bare path: poll, one model call, one send."""
    added = []
    base = f"{telegram.api_url}/bot{DEFAULT_TOKEN}"
    async with httpx.AsyncClient(timeout=30) as client:
        offset = 0
        for number in range(rounds):
            telegram.user_says(1, f"floor {number}")
            started = time.perf_counter()
            updates = (
                await client.post(f"{base}/getUpdates", json={"offset": offset, "timeout": 5})
            ).json()
            offset = updates["result"][-1]["update_id"] + 1
            body = {
                "model": "test-model",
                "stream": True,
                "messages": [{"role": "user", "content": "x"}],
            }
            async with client.stream(
                "POST", f"{model_url}/chat/completions", json=body
            ) as response:
                async for _ in response.aiter_lines():
                    pass
            await client.post(f"{base}/sendMessage", json={"chat_id": 1, "text": "ok"})
            added.append(time.perf_counter() - started - latency)
        await client.post(f"{base}/getUpdates", json={"offset": offset, "timeout": 0})
    return statistics.median(added)


async def user(
    telegram: TimedTelegram,
    number: int,
    messages: int,
    think: tuple[float, float],
    results: list[float],
    latency: float,
    seed: int,
) -> None:
    loop = asyncio.get_running_loop()
    user_id = USER_BASE + number
    schedule = random.Random(seed * 1_000_003 + number)  # the same arrivals in every run
    await asyncio.sleep(schedule.uniform(0, think[1]))  # users do not all start at once
    for turn in range(messages):
        future: asyncio.Future[float] = loop.create_future()
        with telegram.guard:
            telegram.waiters[user_id] = (loop, future)
        offered = time.perf_counter()
        await asyncio.to_thread(telegram.user_says, user_id, f"message {turn} from {number}")
        arrived = await asyncio.wait_for(future, timeout=300)
        results.append(arrived - offered - latency)
        if turn + 1 < messages:
            await asyncio.sleep(schedule.uniform(*think))


def start_gateway(
    home: Path, telegram: TimedTelegram, model_url: str, users: int, store_url: str | None = None
) -> subprocess.Popen[bytes]:
    allowed = ", ".join(str(USER_BASE + n) for n in range(users))
    store = f"store:\n  url: {store_url}\n" if store_url else ""
    (home / "config.yaml").write_text(
        f"{store}model:\n  base_url: {model_url}\n  default: test-model\n"
        f"gateway:\n  max_concurrent_turns: {users}\n"
        "platforms:\n  telegram:\n"
        f"    api_url: {telegram.api_url}\n    poll_timeout_seconds: 5\n"
        f"    allowed_users: [{allowed}]\n"
    )
    (home / ".env").write_text(f"TELEGRAM_BOT_TOKEN={DEFAULT_TOKEN}\n")
    env = {**os.environ, "HERMES_HOME": str(home)}
    log = (home / "gateway.log").open("wb")
    return subprocess.Popen(
        [sys.executable, "-m", "hermes_kernel.cli.main", "gateway", "run"],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )


def wait_polling(
    telegram: TimedTelegram, process: subprocess.Popen[bytes], calls_before: int
) -> None:
    """Until the gateway polls (the floor's own getUpdates calls came before it started)."""
    deadline = time.monotonic() + 60
    while not any(m == "getUpdates" for m, _ in list(telegram.calls)[calls_before:]):
        if process.poll() is not None or time.monotonic() > deadline:
            raise SystemExit("the gateway did not start; see its gateway.log")
        time.sleep(0.05)
    time.sleep(1.0)  # let start-up settle before the idle RSS is read


def run_load(users: int, args: argparse.Namespace) -> dict[str, float]:
    with (
        tempfile.TemporaryDirectory() as tmp,
        TimedTelegram() as telegram,
        ScriptedOpenAIServer(default=Reply.say("ok", delay_seconds=args.latency)) as model,
    ):
        model.requests = _Discard()  # do not keep thousands of request bodies
        home = Path(tmp)
        floor_added = asyncio.run(floor(telegram, model.base_url, args.latency))
        calls_before = len(telegram.calls)
        store_url = args.postgres.create_database() if args.postgres else None
        process = start_gateway(home, telegram, model.base_url, users, store_url)
        try:
            wait_polling(telegram, process, calls_before)
            idle = rss_kib(process.pid, "VmRSS:")
            cpu_before = cpu_seconds(process.pid) + server_cpu_seconds(args.postgres)
            results: list[float] = []
            started = time.perf_counter()

            async def everyone() -> None:
                await asyncio.gather(
                    *(
                        user(
                            telegram,
                            n,
                            args.messages,
                            tuple(args.think),
                            results,
                            args.latency,
                            args.seed,
                        )
                        for n in range(users)
                    )
                )

            with DiskProbe(home) as disk:
                asyncio.run(everyone())
            elapsed = time.perf_counter() - started
            end = rss_kib(process.pid, "VmRSS:")
            peak = rss_kib(process.pid, "VmHWM:")
            cpu = cpu_seconds(process.pid) + server_cpu_seconds(args.postgres) - cpu_before
        finally:
            process.terminate()
            process.wait(60)
    return {
        "users": users,
        "messages": len(results),
        "p50_ms": percentile(results, 0.5) * 1000,
        "p99_ms": percentile(results, 0.99) * 1000,
        "floor_ms": floor_added * 1000,
        "rate": len(results) / elapsed,
        "cpu_ms": cpu / max(len(results), 1) * 1000,
        "peak_mib": peak / 1024,
        "per_session_kib": (end - idle) / users,
        "disk_worst_ms": disk.worst_ms,
    }


def server_cpu_seconds(server: Any) -> float:
    """CPU time of the kit's PostgreSQL (0 without one): the postmaster, its live children
    (every backend; each is a session of its own, so not found by process group), and what
    its ended children used (the postmaster waited for them)."""
    if server is None:
        return 0.0
    import psutil

    postmaster = next(
        process
        for process in psutil.process_iter(["name", "cmdline"])
        if process.info["name"] == "postgres"
        and str(server.port) in (process.info["cmdline"] or [])
    )
    times = postmaster.cpu_times()
    total = times.user + times.system + times.children_user + times.children_system
    for child in postmaster.children():
        try:
            times = child.cpu_times()
        except psutil.NoSuchProcess:
            continue  # ended meanwhile: the postmaster's children times hold it now
        total += times.user + times.system
    return total


class DiskProbe:
    """Appends 4 KB and syncs it every 100 ms beside the gateway's state.db, noting the
    slowest sync: a disk that stalls on its own (this VM's does, now and then, for hundreds
    of milliseconds) shows up in the tail of a run that meets it, since replies are recorded
    before they are sent."""

    def __init__(self, folder: Path) -> None:
        self.path = folder / "disk-probe"
        self.worst_ms = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._probe, daemon=True)

    def __enter__(self) -> DiskProbe:
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _probe(self) -> None:
        with open(self.path, "ab") as file:
            while not self._stop.wait(0.1):
                started = time.perf_counter()
                file.write(b"x" * 4096)
                file.flush()
                os.fsync(file.fileno())
                self.worst_ms = max(self.worst_ms, (time.perf_counter() - started) * 1000)


class _Discard(list):  # type: ignore[type-arg] # a list that keeps nothing
    def append(self, item: Any) -> None:
        pass


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--users", type=int, nargs="+", default=[100, 500, 1000])
    parser.add_argument("--messages", type=int, default=3)
    parser.add_argument("--latency", type=float, default=0.3, help="model latency, seconds")
    parser.add_argument("--think", type=float, nargs=2, default=[5.0, 15.0])
    parser.add_argument("--runs", type=int, default=3, help="runs per N; the median is shown")
    parser.add_argument("--seed", type=int, default=1, help="seeds every user's schedule")
    parser.add_argument(
        "--store",
        choices=["sqlite", "postgresql"],
        default="sqlite",
        help="the home's store: state.db, or the test kit's PostgreSQL",
    )
    args = parser.parse_args()
    print(
        f"model latency {args.latency * 1000:.0f} ms; {args.messages} messages per user; think {args.think[0]:.0f}-{args.think[1]:.0f} s"
    )
    print(
        f"{'users':>6} {'msgs':>6} {'added p50':>10} {'added p99':>10} {'floor':>8} {'p99/floor':>9} {'msg/s':>7} {'CPU/msg':>8} {'peak RSS':>9} {'RSS/session':>12}  p99 of each run (slowest disk sync meanwhile)"
    )
    with contextlib.ExitStack() as stack:
        args.postgres = None
        if args.store == "postgresql":
            from hermes_plugin_store_postgresql.testing import postgres_server

            args.postgres = stack.enter_context(postgres_server())
        report(args)


def report(args: argparse.Namespace) -> None:
    for users in args.users:
        rows = sorted((run_load(users, args) for _ in range(args.runs)), key=lambda r: r["p99_ms"])
        row = rows[len(rows) // 2]
        spread = " ".join(f"{r['p99_ms']:.0f} ({r['disk_worst_ms']:.0f})" for r in rows)
        print(
            f"{row['users']:>6} {row['messages']:>6} {row['p50_ms']:>8.1f}ms {row['p99_ms']:>8.1f}ms "
            f"{row['floor_ms']:>6.1f}ms {row['p99_ms'] / max(row['floor_ms'], 0.1):>8.1f}x "
            f"{row['rate']:>7.1f} {row['cpu_ms']:>6.1f}ms {row['peak_mib']:>7.0f}MiB "
            f"{row['per_session_kib']:>9.0f}KiB  {spread} ms",
            flush=True,
        )


if __name__ == "__main__":
    main()
