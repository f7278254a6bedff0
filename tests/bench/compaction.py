"""Time a compaction adds, beside the model's own latency, for sessions of 200, 2,000 and
20,000 messages, and the request before and after it.

    uv run python tests/bench/compaction.py [--sizes 200 2000 20000] [--repeat 3]

Each session is seeded with user messages, replies and side-effecting tool rounds, then
compacted with the default context engine (hermes-plugin-context-summary) by the scripted
OpenAI-compatible server, which answers at once. The summary call's round trip is timed
apart and subtracted: what is left is the kernel's and the engine's work (reading the view,
choosing the split, writing the summary request, listing the side effects, rebuilding the
system prompt, one commit). The floor is what every turn already pays at that size: reading
the session's messages and building the view from them.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import hermes_plugin_provider_openai
from hermes_plugin_context_summary.engine import SummaryEngine
from hermes_plugin_store_sqlite.database import Database

from hermes_kernel.engine.compaction import Compactor, CompressionSettings, summary_message
from hermes_kernel.engine.models import ModelRoute
from hermes_kernel.engine.summaries import SummaryModel
from hermes_kernel.engine.transcript import to_chat
from hermes_kernel.engine.turn import TurnEngine
from hermes_kernel.engine.window import request_tokens
from hermes_kernel.store.state import StateStore
from hermes_sdk.context import ContextEngineContext
from hermes_sdk.models import ModelRequest, ModelResponse, ProviderSettings
from hermes_testkit import Reply, ScriptedOpenAIServer

TEXT = "lorem ipsum dolor sit amet, consectetur adipiscing elit " * 6


def seed(store: StateStore, session_id: str, count: int) -> None:
    """``count`` messages: a user message, then a tool round (a call and its result) every
    third exchange, then a reply."""
    with store.db.write() as cursor:
        seq = 0

        def add(role: str, content: str, **extra: Any) -> None:
            nonlocal seq
            seq += 1
            cursor.execute(
                "INSERT INTO messages (session_id, seq, role, content, tool_calls, "
                "tool_call_id, tool_name, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    session_id,
                    seq,
                    role,
                    content,
                    extra.get("tool_calls"),
                    extra.get("tool_call_id"),
                    extra.get("tool_name"),
                    time.time(),
                ),
            )

        exchange = 0
        while seq < count:
            add("user", f"request {exchange}: {TEXT}")
            if exchange % 3 == 0 and seq + 3 <= count:
                calls = [{"id": "c1", "name": "terminal", "arguments": '{"command": "make"}'}]
                add("assistant", "", tool_calls=json.dumps(calls))
                add(
                    "tool",
                    f"built target {exchange}\n{TEXT}",
                    tool_call_id="c1",
                    tool_name="terminal",
                )
            if seq < count:
                add("assistant", f"reply {exchange}: {TEXT}")
            exchange += 1


class Timed:
    """The route's provider, with the time spent in its calls added up."""

    def __init__(self, provider: Any) -> None:
        self.provider = provider
        self.seconds = 0.0

    async def complete(self, request: ModelRequest, on_text: Any = None) -> ModelResponse:
        started = time.perf_counter()
        try:
            return await self.provider.complete(request, on_text)
        finally:
            self.seconds += time.perf_counter() - started

    async def aclose(self) -> None:
        await self.provider.aclose()


def view_floor(store: StateStore, session_id: str) -> float:
    started = time.perf_counter()
    [to_chat(message) for message in store.messages.of_session(session_id)]
    return time.perf_counter() - started


async def compact_once(
    folder: Path, size: int, provider: Timed, repeat: int
) -> tuple[float, float, int, int, int, int]:
    """ms added, ms of the floor, tokens and bytes of the request before and after."""
    store = StateStore(Database(folder / f"{size}-{repeat}.db"))
    route = ModelRoute("scripted", provider, "test-model")  # type: ignore[arg-type]
    engine_plugin = SummaryEngine(ContextEngineContext(home=str(folder)))
    compactor = Compactor(
        CompressionSettings(),
        SummaryModel(lambda: None, lambda _model, _usage: None),
        lambda: (engine_plugin, None),
        read_only=lambda _name: False,
    )
    engine = TurnEngine(store, [route], {}, folder / "home", compactor=compactor)
    session = engine.start_session("bench")
    seed(store, session.id, size)
    floor = view_floor(store, session.id)
    before = [to_chat(m) for m in store.messages.of_session(session.id)]
    provider.seconds = 0.0
    started = time.perf_counter()
    why_not = await engine.compact_session(session.id)
    elapsed = time.perf_counter() - started
    assert why_not is None, why_not
    record = store.compactions.latest(session.id)
    assert record is not None
    after = store.messages.of_session(session.id, after_seq=record.boundary_seq)
    view_after = [summary_message(record), *(to_chat(m) for m in after)]
    sizes = (
        request_tokens(before, []),
        len(json.dumps([m.content for m in before])),
        request_tokens(view_after, []),
        len(json.dumps([m.content for m in view_after])),
    )
    store.close()
    return ((elapsed - provider.seconds) * 1000, floor * 1000, *sizes)


async def run(sizes: list[int], repeats: int) -> None:
    with ScriptedOpenAIServer() as server:
        server.respond = lambda _body: Reply.say("SUMMARY: " + TEXT)
        # The provider factory, as the plugin registers it (its hook, not its internals).
        factory = next(iter(hermes_plugin_provider_openai.hermes_providers())).factory
        provider = Timed(factory(ProviderSettings(base_url=server.base_url)))
        with tempfile.TemporaryDirectory() as folder:
            await compact_once(Path(folder), 50, provider, -1)  # warm up: imports, connection
            print(
                f"{'messages':>9} {'added ms':>9} {'floor ms':>9} {'ratio':>6} "
                f"{'tokens before':>14} {'after':>7} {'bytes before':>13} {'after':>8}"
            )
            for size in sizes:
                runs = [await compact_once(Path(folder), size, provider, r) for r in range(repeats)]
                added = statistics.median(r[0] for r in runs)
                floor = statistics.median(r[1] for r in runs)
                _, _, tokens_before, bytes_before, tokens_after, bytes_after = runs[0]
                print(
                    f"{size:>9,} {added:>9.1f} {floor:>9.1f} {added / floor:>6.2f} "
                    f"{tokens_before:>14,} {tokens_after:>7,} {bytes_before:>13,} "
                    f"{bytes_after:>8,}"
                )
        await provider.aclose()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[200, 2000, 20000])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    asyncio.run(run(args.sizes, args.repeat))
    return 0


if __name__ == "__main__":
    sys.exit(main())
