"""The plugins' gates on tool calls (``hermes_tool_gate``): the strictest answer wins, each
gate sees the arguments the ones before it rewrote, and a gate that fails in any way (it
raises, hangs, answers something else, or is switched off for hanging) denies."""

from __future__ import annotations

import asyncio
from typing import Any

from hermes_kernel.plugins.gates import GateVerdict
from hermes_kernel.plugins.host import PluginHost
from hermes_kernel.plugins.policy import PluginPolicy
from hermes_sdk import ToolCall

GATE = """
import time
from hermes_sdk import hookimpl
from hermes_sdk.gates import Gate

SEEN = []

@hookimpl{marker}
def hermes_tool_gate(call):
    SEEN.append(dict(call.arguments))
    {body}
"""
CALL = ToolCall(session_id="s", call_id="c1", tool="write_file", arguments={"path": "a.txt"})


def gates(make_plugin: Any, *bodies: str, timeout: float = 2.0) -> PluginHost:
    """A host with one gate per body, asked in the order given."""
    records = [
        make_plugin(
            f"gate-{n}",
            GATE.format(marker="(tryfirst=True)" if n == 0 else "", body=body),
            declares=["hook.hermes_tool_gate"],
        )
        for n, body in enumerate(bodies)
    ]
    host = PluginHost(records, PluginPolicy(), hook_timeout=timeout)
    host.load_observers()
    return host


def judge(host: PluginHost, call: ToolCall = CALL) -> GateVerdict:
    return asyncio.run(host.tool_gate(call))


def test_without_gates_the_call_runs_as_asked(make_plugin: Any) -> None:
    verdict = judge(PluginHost([], PluginPolicy()))
    assert verdict == GateVerdict(CALL.arguments)
    assert judge(gates(make_plugin, "return None")).arguments == CALL.arguments


def test_deny_wins_over_ask_and_allow_and_names_its_plugin(make_plugin: Any) -> None:
    host = gates(
        make_plugin,
        "return Gate.ask('check the path first')",
        "return Gate.deny('writing here is off')",
        "return Gate.allow()",
    )
    verdict = judge(host)
    assert verdict.denied == "writing here is off (plugin 'gate-1')"


def test_asks_are_gathered_and_rewrites_chain(make_plugin: Any) -> None:
    host = gates(
        make_plugin,
        "return Gate.allow({**call.arguments, 'path': 'safe/' + call.arguments['path']})",
        "return Gate.ask('it writes a file', {**call.arguments, 'mode': 'append'})",
    )
    verdict = judge(host)
    assert verdict.denied is None
    assert verdict.arguments == {"path": "safe/a.txt", "mode": "append"}
    assert verdict.asks == ("it writes a file (plugin 'gate-1')",)


def test_a_gate_that_raises_or_answers_nonsense_denies(make_plugin: Any) -> None:
    raising = judge(gates(make_plugin, "raise RuntimeError('guard bug')"))
    assert raising.denied is not None
    assert "plugin 'gate-0': its gate failed (RuntimeError: guard bug)" in raising.denied
    assert "nothing runs that a gate cannot judge" in raising.denied
    nonsense = judge(gates(make_plugin, "return {'action': 'approve'}"))
    assert nonsense.denied is not None and "answered dict, not a Gate" in nonsense.denied
    listed = judge(gates(make_plugin, "return Gate('allow', '', ['not', 'a', 'mapping'])"))
    assert listed.denied is not None and "not a mapping" in listed.denied


def test_a_gate_that_hangs_denies_and_keeps_denying_once_switched_off(make_plugin: Any) -> None:
    host = gates(make_plugin, "time.sleep(1.5)", timeout=0.2)
    for _ in range(3):  # the host switches a plugin off after three missed deadlines
        verdict = judge(host)
        assert verdict.denied is not None and "no answer within 0.2 s" in verdict.denied
    assert "gate-0" in host.hooks.disabled
    off = judge(host)
    assert off.denied is not None and "its gate was switched off" in off.denied


def test_a_gate_that_changes_the_arguments_in_place_changes_nothing(make_plugin: Any) -> None:
    """Only a rewrite a gate returns counts (and is checked against the schema)."""
    nested = ToolCall(
        session_id="s", call_id="c2", tool="deploy", arguments={"opts": {"path": "site/"}}
    )
    host = gates(make_plugin, "call.arguments['opts']['path'] = '/etc/passwd'\n    return None")
    verdict = judge(host, nested)
    assert verdict.arguments == {"opts": {"path": "site/"}}
    assert nested.arguments == {"opts": {"path": "site/"}}


def test_a_gate_plugin_that_failed_to_load_denies_every_call(make_plugin: Any) -> None:
    broken = make_plugin(
        "broken-guard",
        "raise ImportError('no module named guardlib')",
        declares=["hook.hermes_tool_gate"],
    )
    host = PluginHost([broken], PluginPolicy())
    host.load_observers()
    verdict = judge(host)
    assert verdict.denied is not None
    assert "plugin 'broken-guard': it declares a gate but failed to load" in verdict.denied


def test_a_gate_that_cannot_be_asked_refuses_and_a_stop_meanwhile_skips(tmp_path: Any) -> None:
    """The runner's side: an error while gating refuses the call; a stop that came while
    the gates (or the user) were asked means the call never starts."""
    from hermes_kernel.engine.control import TurnControl
    from hermes_kernel.engine.tools import ToolRunner
    from hermes_kernel.store.messages import Disposition
    from hermes_sdk import ToolSpec
    from hermes_sdk.models import ToolCallRequest

    ran: list[str] = []
    spec = ToolSpec(name="note", description="note", handler=lambda text="": ran.append(text))
    runner = ToolRunner({"note": spec}, tmp_path)
    call = ToolCallRequest(id="c1", name="note", arguments='{"text": "hi"}')

    async def broken(_call: Any, _arguments: Any) -> Any:
        raise RuntimeError("the approver went away")

    async def stopping(_call: Any, arguments: Any) -> Any:
        control.stop()
        return arguments

    async def scenario() -> tuple[Any, Any]:
        runner.gate = broken
        refused = await runner.run_one(call, control)
        runner.gate = stopping
        return refused, await runner.run_one(call, control)

    control = TurnControl()
    refused, skipped = asyncio.run(scenario())
    assert refused.disposition is Disposition.ERROR
    assert refused.content.startswith("refused: the gates could not judge this call")
    assert "RuntimeError: the approver went away" in refused.content
    assert skipped.disposition is Disposition.SKIPPED and ran == []
