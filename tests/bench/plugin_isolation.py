"""What run-time isolation costs: an isolated plugin's tool call, and hook deadlines.

    uv run python tests/bench/plugin_isolation.py [--calls 2000] [--rounds 60] [--repeat 7]

1. The same tool (``echo``, a plain function) of the same plugin, called through the
   kernel's tool runner, with the plugin loaded in process and listed in ``plugins.isolated``
   (its host process, typed RPC over pipes). Target: the isolated call costs under 1 ms more.
2. A turn of ``--rounds`` tool rounds against the scripted model server (in a process of its
   own, as in turn_overhead.py), with a plugin whose four per-call hooks do nothing: hooks
   called the way they are now (each in a worker thread, awaited under its deadline) and,
   as the floor, called inline on the event loop (as they were before deadlines). Target:
   the difference is not measurable against the run-to-run spread of the floor itself.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

from hermes_plugin_store_sqlite.database import Database
from turn_overhead import ModelServer, openai_factory

from hermes_kernel.engine.control import TurnControl
from hermes_kernel.engine.models import ModelRoute
from hermes_kernel.engine.tools import ToolRunner
from hermes_kernel.engine.turn import NoObserver, TurnEngine
from hermes_kernel.plugins.dispatch import Hooks, _invoke
from hermes_kernel.plugins.host import PluginHost
from hermes_kernel.plugins.policy import PluginPolicy
from hermes_kernel.plugins.records import PluginRecord
from hermes_kernel.store.state import StateStore
from hermes_sdk import Kind
from hermes_sdk.models import ProviderSettings, ToolCallRequest

PLUGIN = """
from hermes_sdk import ToolSpec, hookimpl


def echo(text):
    return text


@hookimpl
def hermes_tools():
    yield ToolSpec(
        name="echo",
        handler=echo,
        parameters={"type": "object", "properties": {"text": {"type": "string"}}},
    )
    yield ToolSpec(name="act", handler=lambda: "ok")


@hookimpl
def hermes_pre_llm_call(call):
    pass


@hookimpl
def hermes_post_llm_call(call, result):
    pass


@hookimpl
def hermes_pre_tool_call(call):
    pass


@hookimpl
def hermes_post_tool_call(call, result):
    pass
"""

HOOKS = ("pre_llm_call", "post_llm_call", "pre_tool_call", "post_tool_call")


def plugin_record(folder: Path) -> PluginRecord:
    (folder / "bench_isolation_plugin.py").write_text(textwrap.dedent(PLUGIN))
    sys.path.insert(0, str(folder))
    # The host process imports it too: it inherits the environment.
    os.environ["PYTHONPATH"] = os.pathsep.join(
        filter(None, [str(folder), os.environ.get("PYTHONPATH")])
    )
    return PluginRecord(
        name="bench",
        target="bench_isolation_plugin",
        distribution="bench",
        version="1",
        declares=frozenset(
            {(Kind.TOOL, "echo"), (Kind.TOOL, "act"), *((Kind.HOOK, f"hermes_{h}") for h in HOOKS)}
        ),
        has_manifest=True,
    )


def host_of(record: PluginRecord, isolated: bool) -> PluginHost:
    host = PluginHost([record], PluginPolicy(), isolated=[record.name] if isolated else [])
    outcome = host.load(record.name)
    assert outcome.ok, outcome.error
    return host


async def tool_calls(runner: ToolRunner, count: int) -> list[float]:
    control = TurnControl()
    times = []
    for number in range(count):
        call = ToolCallRequest(id=f"c{number}", name="echo", arguments='{"text": "hi"}')
        started = time.perf_counter()
        outcome = await runner.run_one(call, control)
        times.append((time.perf_counter() - started) * 1e6)
        assert outcome.content == "hi", outcome.content
    return times


def tool_overhead(record: PluginRecord, folder: Path, calls: int) -> None:
    runners = {}
    for isolated in (False, True):
        host = host_of(record, isolated)
        runners[isolated] = (host, ToolRunner({s.name: s for s in host.tools()}, folder))
    medians: dict[bool, list[float]] = {False: [], True: []}
    for _ in range(5):  # alternating blocks, so drift hits both alike
        for isolated, (_, runner) in runners.items():
            medians[isolated].append(statistics.median(asyncio.run(tool_calls(runner, calls))))
    inside = statistics.median(medians[False])
    outside = statistics.median(medians[True])
    extra = outside - inside
    verdict = "ok" if extra < 1000 else "OVER TARGET"
    print(f"tool call through the tool runner, median of {calls} calls x 5 blocks:")
    print(f"    plugin in process {inside:8.0f} us")
    print(f"    plugin isolated   {outside:8.0f} us  (host process, RPC over pipes)")
    print(f"    isolation costs   {extra:+8.0f} us per call (target < 1000 us: {verdict})")
    runners[True][0].stop_isolated()


class InlineHooks(Hooks):
    """The floor: each hook called on the event loop itself, as before deadlines."""

    async def acall(self, hook: str, kwargs: dict[str, Any]) -> list[tuple[str, Any]]:
        return [
            (impl.plugin_name, _invoke(impl, hook, kwargs, None))
            for impl in self.implementations(hook)
        ]


class HostObserver(NoObserver):
    def __init__(self, host: PluginHost) -> None:
        self.host = host

    async def pre_llm_call(self, call):  # type: ignore[no-untyped-def, override]
        await self.host.pre_llm_call(call)

    async def post_llm_call(self, call, result):  # type: ignore[no-untyped-def, override]
        await self.host.post_llm_call(call, result)

    async def pre_tool_call(self, call):  # type: ignore[no-untyped-def, override]
        await self.host.pre_tool_call(call)

    async def post_tool_call(self, call, result):  # type: ignore[no-untyped-def, override]
        await self.host.post_tool_call(call, result)

    def observes(self, hook: str) -> bool:
        return self.host.implements(f"hermes_{hook}")


def turn_ms(server: ModelServer, host: PluginHost, folder: Path, rounds: int, tag: str) -> float:
    route = ModelRoute(
        "scripted", openai_factory()(ProviderSettings(base_url=server.base_url)), "test-model"
    )
    store = StateStore(Database(folder / f"{tag}.db"))
    tools = {spec.name: spec for spec in host.tools()}
    engine = TurnEngine(store, [route], tools, folder / "home", observer=HostObserver(host))
    session = engine.start_session("bench")
    server.queue_rounds("act", rounds)
    started = time.perf_counter()
    result = asyncio.run(engine.run_turn(session.id, "go"))
    elapsed = (time.perf_counter() - started) * 1000
    assert result.status == "done" and result.tool_calls == rounds, result
    store.close()
    return elapsed / (rounds + 1)


def hook_overhead(record: PluginRecord, folder: Path, rounds: int, repeat: int) -> None:
    guarded = host_of(record, isolated=False)
    inline = host_of(record, isolated=False)
    inline.hooks = InlineHooks(inline.manager)
    server = ModelServer(in_process=False)
    times: dict[str, list[float]] = {"guarded": [], "inline": []}
    try:
        for number in range(-1, repeat):  # the first pair warms up
            for name, host in (("inline", inline), ("guarded", guarded)):
                ms = turn_ms(server, host, folder, rounds, f"{name}-{number}")
                if number >= 0:
                    times[name].append(ms)
    finally:
        server.close()
    floor = statistics.median(times["inline"])
    now = statistics.median(times["guarded"])
    spread = max(times["inline"]) - min(times["inline"])
    difference = now - floor
    verdict = "not measurable" if abs(difference) <= spread else "MEASURABLE"
    print(
        f"turn of {rounds} tool rounds, 4 no-op hooks per round (each model call + round, "
        f"median of {repeat} turns):"
    )
    print(f"    hooks inline on the loop (floor) {floor:6.2f} ms")
    print(f"    hooks in workers, with deadlines {now:6.2f} ms")
    print(
        f"    difference {difference:+.3f} ms against the floor's own run-to-run spread "
        f"{spread:.3f} ms ({verdict})"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=60)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="hermes-isolation-bench-") as scratch:
        folder = Path(scratch)
        record = plugin_record(folder)
        tool_overhead(record, folder, args.calls)
        hook_overhead(record, folder, args.rounds, args.repeat)
    return 0


if __name__ == "__main__":
    sys.exit(main())
