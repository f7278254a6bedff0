"""The plugins' gates on one tool call (``hermes_tool_gate``): asked in order, each seeing
the arguments as the ones before left them; the strictest answer wins, and a gate that
fails in any way denies (see :mod:`hermes_sdk.gates`)."""

from __future__ import annotations

import copy
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from hermes_commons.text import one_line
from hermes_kernel.plugins.dispatch import HookFailure, Hooks
from hermes_sdk import ToolCall
from hermes_sdk.gates import Gate

__all__ = ["GATE_HOOK", "GateVerdict", "judge_tool_call"]

log = logging.getLogger("hermes.plugins")

GATE_HOOK = "hermes_tool_gate"
REASON_CHARS = 300
"""A gate's reason as the model and the user see it: one line, at most this long."""


@dataclass(frozen=True)
class GateVerdict:
    """What the gates decided: ``denied`` (the refusal, naming the gate) or else the
    ``arguments`` to run with, after the user is asked when ``asks`` has reasons."""

    arguments: Mapping[str, Any]
    denied: str | None = None
    asks: tuple[str, ...] = field(default_factory=tuple)
    asked_by: tuple[str, ...] = field(default_factory=tuple)
    """The plugins whose gates ask (a *session* answer covers their gates on this tool)."""


async def judge_tool_call(
    hooks: Hooks, call: ToolCall, unloaded: tuple[str, ...] = ()
) -> GateVerdict:
    """Every gate's answer on ``call``, the strictest winning; ``unloaded``: plugins that
    declare a gate but failed to load (each denies, as a gate that fails does)."""
    if unloaded:
        return _denied(unloaded[0], "it declares a gate but failed to load")
    off = hooks.switched_off(GATE_HOOK)
    if off:
        plugin, why = off[0]
        return _denied(plugin, f"its gate was switched off ({why}); fix or disable the plugin")
    arguments: Mapping[str, Any] = call.arguments
    asks: list[str] = []
    asked_by: list[str] = []
    for impl in hooks.implementations(GATE_HOOK):
        plugin = impl.plugin_name
        # A copy of its own: a gate that changes the arguments in place changes nothing;
        # only a rewrite it returns counts (and is checked against the schema).
        seen = replace(call, arguments=copy.deepcopy(dict(arguments)))
        answer = await hooks.aanswer(impl, GATE_HOOK, {"call": seen})
        if isinstance(answer, HookFailure):
            return _denied(plugin, f"its gate failed ({answer.reason})")
        if answer is None:
            continue
        if not isinstance(answer, Gate):
            return _denied(plugin, f"its gate answered {type(answer).__name__}, not a Gate")
        reason = one_line(answer.reason, REASON_CHARS) if answer.reason else ""
        if answer.action == "deny":
            return GateVerdict(arguments, denied=f"{reason or 'refused'} (plugin {plugin!r})")
        given: object = answer.arguments  # typed a mapping; a plugin may still give a list
        if given is not None:
            if not isinstance(given, Mapping):
                return _denied(plugin, "its gate gave arguments that are not a mapping")
            arguments = copy.deepcopy(dict(given))
        if answer.action == "ask":
            asks.append(f"{reason or 'a plugin asks first'} (plugin {plugin!r})")
            asked_by.append(plugin)
    return GateVerdict(arguments, asks=tuple(asks), asked_by=tuple(asked_by))


def _denied(plugin: str, why: str) -> GateVerdict:
    log.warning("plugin %r: %s: the tool call is refused", plugin, why)
    return GateVerdict(
        {}, denied=f"plugin {plugin!r}: {why}; nothing runs that a gate cannot judge"
    )
