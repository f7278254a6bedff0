"""Kernel overhead per tool round, against a bare httpx round trip as the floor.

    uv run python tests/bench/turn_overhead.py [--history 500] [--rounds 60]

A session holds ``--history`` messages; one turn then runs ``--rounds`` tool rounds (the
model asks for a no-op tool each time) against the scripted OpenAI-compatible server on
loopback. The floor sends the same requests (same JSON bodies, streamed, read to the end)
with bare httpx. Overhead per round = turn time per model call - floor time per request. Before a
side-effecting tool runs, the engine syncs the call's record to disk (a power cut must not
lose it); that fsync is measured apart, as a floor of its own, and reported beside it.
Target: engine overhead <= 1 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import hermes_plugin_provider_openai
import httpx

from hermes_kernel.engine.models import ModelRoute
from hermes_kernel.engine.turn import TurnEngine
from hermes_kernel.store.state import StateStore
from hermes_sdk import ToolSpec
from hermes_sdk.models import ProviderSettings
from hermes_sdk.testing import Reply, ScriptedOpenAIServer


def seed(store: StateStore, session_id: str, count: int) -> None:
    with store.db.write() as cursor:
        for seq in range(1, count + 1):
            role = "user" if seq % 2 else "assistant"
            text = f"message {seq}: " + "lorem ipsum dolor sit amet " * 8
            cursor.execute(
                "INSERT INTO messages (session_id, seq, role, content, created_at) VALUES (?, ?, ?, ?, ?)",
                (session_id, seq, role, text, time.time()),
            )


async def floor_time(base_url: str, bodies: list[dict]) -> list[float]:
    times = []
    async with httpx.AsyncClient(base_url=base_url) as client:
        for body in bodies:
            started = time.perf_counter()
            async with client.stream("POST", "/chat/completions", json=body) as response:
                async for _ in response.aiter_lines():
                    pass
            times.append((time.perf_counter() - started) * 1000)
    return times


def fsync_floor(folder: Path, count: int = 50) -> float:
    """Median ms to append 4 KB to a file in ``folder`` and fsync it: what the durable commit
    before a side-effecting tool costs on this disk, whatever the engine does."""
    times = []
    with open(folder / "fsync-floor", "ab") as file:
        for _ in range(count):
            started = time.perf_counter()
            file.write(b"x" * 4096)
            file.flush()
            os.fsync(file.fileno())
            times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def openai_factory():
    """The provider factory, as the plugin registers it (its hook, not its internals)."""
    return next(iter(hermes_plugin_provider_openai.hermes_providers())).factory


def measure(
    server: ScriptedOpenAIServer, folder: Path, noop: ToolSpec, args: argparse.Namespace
) -> tuple[float, float]:
    """Median engine ms per model call + round, and median floor ms per request."""
    route = ModelRoute(
        "scripted",
        openai_factory()(ProviderSettings(base_url=server.base_url)),
        "test-model",
    )
    engine_ms, floor_ms = [], []
    for repeat in range(-1, args.repeat):  # turn -1 warms up: imports, connections
        store = StateStore(folder / f"{noop.name}-{repeat}.db")
        engine = TurnEngine(store, [route], {noop.name: noop}, folder / "home")
        session = engine.start_session("bench")
        seed(store, session.id, args.history)
        script = [*[Reply.tool_call(noop.name, {}) for _ in range(args.rounds)], Reply.say("done")]
        server.queue(*script)
        first = len(server.requests)
        started = time.perf_counter()
        result = asyncio.run(engine.run_turn(session.id, "go"))
        elapsed = (time.perf_counter() - started) * 1000
        assert result.status == "done" and result.tool_calls == args.rounds, result
        bodies = [request.json for request in server.requests[first:]]  # the same requests
        server.queue(*script)
        floor = asyncio.run(floor_time(server.base_url, bodies))
        store.close()
        if repeat >= 0:
            engine_ms.append(elapsed / (args.rounds + 1))
            floor_ms.append(sum(floor) / len(floor))
    return statistics.median(engine_ms), statistics.median(floor_ms)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--history", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=60)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    tools = {
        "side-effecting tool (commit synced to disk before it runs)": ToolSpec(
            name="act", description="does nothing", handler=lambda: "ok"
        ),
        "read-only tool (parallel_safe)": ToolSpec(
            name="look", description="does nothing", handler=lambda: "ok", parallel_safe=True
        ),
    }
    print(
        f"session of {args.history} messages, {args.rounds} tool rounds per turn, "
        f"median of {args.repeat} turns"
    )
    with (
        tempfile.TemporaryDirectory(prefix="hermes-turn-bench-") as scratch,
        ScriptedOpenAIServer() as server,
    ):
        sync_ms = fsync_floor(Path(scratch))
        for label, noop in tools.items():
            engine_ms, floor_ms = measure(server, Path(scratch), noop, args)
            overhead = engine_ms - floor_ms
            # The durable commit is I/O the crash guarantee requires, not engine work.
            own = overhead - (sync_ms if not noop.parallel_safe else 0.0)
            verdict = "ok" if own <= 1.0 else "OVER TARGET"
            print(f"{label}:")
            print(
                f"    engine per model call + round {engine_ms:6.2f} ms, floor (bare httpx, same "
                f"requests) {floor_ms:6.2f} ms, overhead {overhead:6.2f} ms"
            )
            if not noop.parallel_safe:
                print(
                    f"    of which one fsync on this disk (floor: 4 KB append + fsync, median) "
                    f"{sync_ms:6.2f} ms"
                )
            print(f"    engine's own overhead {own:6.2f} ms (target <= 1 ms: {verdict})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
