"""``delegation``: the ``delegate_task`` tool. Importing this is cheap: the work happens in
:mod:`hermes_plugin_delegation.delegate`, loaded on the first call."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from hermes_sdk import ConfigSectionSpec, SlashCommandSpec, ToolsetSpec, ToolSpec, hookimpl

DESCRIPTION = (
    "Hand one or more goals to subagents that work on them in parallel, each in a fresh "
    "session with no memory of this conversation. Give each task a goal complete in itself "
    "and the context it needs (file paths, what was decided); use it for independent pieces "
    "of work, not for one quick step. By default they work in the background: you get "
    "their handles at once and go on with the user, and a report of how each ended arrives "
    "as a message when all are done (background: false waits and returns each one's status "
    "and summary instead)."
)

PARAMETERS = {
    "type": "object",
    "properties": {
        "tasks": {
            "type": "array",
            "minItems": 1,
            "maxItems": 10,
            "items": {
                "type": "object",
                "properties": {
                    "goal": {"type": "string", "description": "What the subagent is to do."},
                    "context": {
                        "type": "string",
                        "description": "What it needs to know: paths, constraints, findings.",
                    },
                    "toolsets": {
                        "type": "array",
                        "items": {"type": "string"},
                        "description": "Only these toolsets (default: this agent's).",
                    },
                },
                "required": ["goal"],
            },
        },
        "background": {
            "type": "boolean",
            "description": "Work in the background and report later (the default where "
            "this conversation takes reports); false: wait for them here.",
        },
    },
    "required": ["tasks"],
}

HANDLE = {"type": "string", "description": "The subagent's handle (d1, d2 ...)."}


async def _list(context: Any) -> str:
    from hermes_plugin_delegation.family import listing

    runtime = context.runtime() if context.get_runtime is not None else None
    lines = await listing(runtime, context.session_id)
    return "\n".join(lines) if lines else "no background subagents in this conversation"


async def _steer(handle: str, note: str, context: Any) -> str:
    from hermes_plugin_delegation.family import steer

    return steer(context.session_id, handle.strip(), note)


async def _stop(handle: str, context: Any) -> str:
    from hermes_plugin_delegation.family import stop

    return stop(context.session_id, handle.strip())


async def _agents(args: str, context: Any) -> str:
    from hermes_plugin_delegation.family import listing, stop

    if context.session_id is None:
        return "no background subagents yet: this conversation has not started"
    verb, _, handle = args.strip().partition(" ")
    if verb == "stop" and handle.strip():
        return stop(context.session_id, handle.strip())
    if verb:
        return "usage: /agents, or /agents stop HANDLE"
    lines = await listing(None, context.session_id)
    return "\n".join(lines) if lines else "no background subagents in this conversation"


async def _delegate(**arguments: Any) -> Any:
    from hermes_plugin_delegation.delegate import delegate_task

    return await delegate_task(**arguments)


@hookimpl
def hermes_toolsets() -> Iterator[ToolsetSpec]:
    yield ToolsetSpec(name="delegation", description="Subagents for independent goals")


@hookimpl
def hermes_tools() -> Iterator[ToolSpec]:
    yield ToolSpec(
        name="delegate_task",
        toolset="delegation",
        description=DESCRIPTION,
        parameters=PARAMETERS,
        handler=_delegate,
        takes_context=True,
        timeout_seconds=24 * 3600,  # its children have their own limits (stale_after_seconds)
    )
    yield ToolSpec(
        name="delegate_list",
        toolset="delegation",
        description="List this conversation's background subagents: handle, state, time "
        "taken, goal, and for those that ended their summary or error.",
        parameters={"type": "object", "properties": {}},
        handler=_list,
        takes_context=True,
    )
    yield ToolSpec(
        name="delegate_steer",
        toolset="delegation",
        description="Tell a running background subagent something (a correction, a "
        "narrower goal, a finding): it reads the note before its next step.",
        parameters={
            "type": "object",
            "properties": {"handle": HANDLE, "note": {"type": "string", "minLength": 1}},
            "required": ["handle", "note"],
        },
        handler=_steer,
        takes_context=True,
    )
    yield ToolSpec(
        name="delegate_stop",
        toolset="delegation",
        description="Stop a background subagent now; its report says what it had done.",
        parameters={"type": "object", "properties": {"handle": HANDLE}, "required": ["handle"]},
        handler=_stop,
        takes_context=True,
    )


@hookimpl
def hermes_slash_commands() -> Iterator[SlashCommandSpec]:
    yield SlashCommandSpec(
        name="agents",
        description="This conversation's background subagents; /agents stop HANDLE stops one",
        handler=_agents,
        usage="/agents [stop HANDLE]",
        on_platforms=True,
    )


@hookimpl
def hermes_config_sections() -> Iterator[ConfigSectionSpec]:
    yield ConfigSectionSpec(
        name="delegation",
        description="Subagents",
        model="hermes_plugin_delegation.settings:DelegationConfig",
    )
