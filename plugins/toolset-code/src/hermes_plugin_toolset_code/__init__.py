"""execute_code: the model writes one Python script that calls the session's tools, so a
loop over files, pages or results costs one model round instead of one per step.

The script runs in a fresh interpreter in the session's terminal backend; every tool call
it makes passes through Hermes like the model's own (checks, approvals, deadlines,
redaction) and is recorded as a child of the ``execute_code`` call. Importing this is
cheap: nothing runs before the first call.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from hermes_sdk import ConfigSectionSpec, Finding, HealthContext, ToolsetSpec, ToolSpec, hookimpl

TOOLSET = "code"
_TIMEOUT = 3700.0  # above code.timeout_seconds (at most 3600) plus the set-up

_BASE_DESCRIPTION = (
    "Run a Python script that calls your tools, in one step: a loop over files, pages or "
    "search results costs one call instead of a model round per item. The script runs in "
    "a fresh Python 3 in the session's terminal (same working directory, no secrets in its "
    "environment). The tool functions are already defined (or `from hermes_tools import "
    "...`); each takes the tool's arguments as keyword arguments and returns the tool's "
    "result text, and each call is checked and approved as yours are. print() what you "
    "need: stdout is the result, and the end of stderr when the script fails."
)


def _execute(code: str, *, context: Any) -> str:
    from hermes_plugin_toolset_code.runner import execute
    from hermes_plugin_toolset_code.settings import settings_from

    return execute(code, context, settings_from(context.config))


def _describe(tools: Mapping[str, ToolSpec], config: Mapping[str, Any]) -> str:
    from hermes_plugin_toolset_code.description import description

    return description(_BASE_DESCRIPTION, tools, config)


@hookimpl
def hermes_toolsets() -> Iterator[ToolsetSpec]:
    yield ToolsetSpec(name=TOOLSET, description="execute_code: one script instead of many rounds")


@hookimpl
def hermes_tools() -> Iterator[ToolSpec]:
    yield ToolSpec(
        name="execute_code",
        description=_BASE_DESCRIPTION,
        handler=_execute,
        parameters={
            "type": "object",
            "properties": {
                "code": {
                    "type": "string",
                    "description": "The Python 3 script; print() what you want back.",
                }
            },
            "required": ["code"],
        },
        toolset=TOOLSET,
        takes_context=True,
        timeout_seconds=_TIMEOUT,
        describe=_describe,
    )


@hookimpl
def hermes_config_sections() -> Iterator[ConfigSectionSpec]:
    yield ConfigSectionSpec(
        name="code",
        description="execute_code",
        model="hermes_plugin_toolset_code.settings:CodeSettings",
    )


@hookimpl
def hermes_doctor_checks(context: HealthContext) -> Iterator[Finding]:
    from hermes_plugin_toolset_code.health import findings

    yield from findings(context)
