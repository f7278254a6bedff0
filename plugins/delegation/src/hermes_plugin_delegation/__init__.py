"""``delegation``: the ``delegate_task`` tool. Importing this is cheap: the work happens in
:mod:`hermes_plugin_delegation.delegate`, loaded on the first call."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from hermes_sdk import ConfigSectionSpec, ToolsetSpec, ToolSpec, hookimpl

DESCRIPTION = (
    "Hand one or more goals to subagents that work on them in parallel, each in a fresh "
    "session with no memory of this conversation, and get back each one's status and "
    "summary. Give each task a goal complete in itself and the context it needs (file paths, "
    "what was decided); use it for independent pieces of work, not for one quick step."
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
        }
    },
    "required": ["tasks"],
}


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


@hookimpl
def hermes_config_sections() -> Iterator[ConfigSectionSpec]:
    yield ConfigSectionSpec(
        name="delegation",
        description="Subagents",
        model="hermes_plugin_delegation.settings:DelegationConfig",
    )
