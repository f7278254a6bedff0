"""Kernel overhead per tool round, against a bare httpx round trip as the floor.

    uv run python tests/bench/turn_overhead.py [--history 500] [--rounds 60]

A session holds ``--history`` messages; one turn then runs ``--rounds`` tool rounds (the
model asks for a no-op tool each time) against the scripted OpenAI-compatible server on
loopback. The floor sends the same requests (same JSON bodies, streamed, read to the end)
with bare httpx. Overhead per round = turn time per model call - floor time per request.
Target: <= 1 ms.
"""

from __future__ import annotations

import argparse
import asyncio
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--history", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=60)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    engine_ms, floor_ms = [], []
    with (
        tempfile.TemporaryDirectory(prefix="hermes-turn-bench-") as scratch,
        ScriptedOpenAIServer() as server,
    ):
        folder = Path(scratch)
        factory = hermes_plugin_provider_openai._build
        route = ModelRoute(
            "scripted", factory(ProviderSettings(base_url=server.base_url)), "test-model"
        )
        noop = ToolSpec(name="noop", description="does nothing", handler=lambda: "ok")
        for repeat in range(-1, args.repeat):  # turn -1 warms up: imports, connections
            store = StateStore(folder / f"state{repeat}.db")
            engine = TurnEngine(store, [route], {"noop": noop}, folder / "home")
            session = engine.start_session("bench")
            seed(store, session.id, args.history)
            server.queue(
                *[Reply.tool_call("noop", {}) for _ in range(args.rounds)], Reply.say("done")
            )
            first = len(server.requests)
            started = time.perf_counter()
            result = asyncio.run(engine.run_turn(session.id, "go"))
            elapsed = (time.perf_counter() - started) * 1000
            assert result.status == "done" and result.tool_calls == args.rounds, result
            calls = args.rounds + 1
            engine_ms.append(elapsed / calls)
            bodies = [request.json for request in server.requests[first:]]  # the same requests
            server.queue(
                *[Reply.tool_call("noop", {}) for _ in range(args.rounds)], Reply.say("done")
            )
            floor = asyncio.run(floor_time(server.base_url, bodies))
            floor_ms.append(sum(floor) / len(floor))
            store.close()
    engine_median, floor_median = statistics.median(engine_ms), statistics.median(floor_ms)
    overhead = engine_median - floor_median
    print(
        f"session of {args.history} messages, {args.rounds} tool rounds per turn, {args.repeat} turns"
    )
    print(f"engine, per model call + tool round: {engine_median:7.2f} ms (median over turns)")
    print(f"floor, bare httpx same requests:     {floor_median:7.2f} ms")
    verdict = "ok" if overhead <= 1.0 else "OVER TARGET"
    print(f"kernel overhead per round:           {overhead:7.2f} ms  (target <= 1 ms: {verdict})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
