"""A :class:`~hermes_sdk.tooling.ToolContext` for testing a tool against a real backend, and
:func:`call_with_tools` for a tool that calls other tools."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from hermes_sdk.provided import ProvidedSpecs
from hermes_sdk.specs import Kind, Spec, ToolSpec
from hermes_sdk.terminal import TerminalBackend
from hermes_sdk.tool_calls import ArgumentsRejected, call_tool, check_arguments
from hermes_sdk.tooling import (
    HistoryHit,
    HistoryQuery,
    NestedResult,
    ToolCaller,
    ToolContext,
    ToolFailed,
    call_tools_with,
)

__all__ = ["call_with_tools", "direct_caller", "tool_context"]


def tool_context(
    backend: TerminalBackend | None = None,
    *,
    session_id: str = "test-session",
    home: str = "",
    cwd: str = "",
    answers: Callable[[str, Sequence[str]], str | None] | None = None,
    source: str = "cli",
    user_scope: str | None = None,
    config: Mapping[str, Any] | None = None,
    provided: Mapping[Kind, Sequence[Spec]] | None = None,
    skill_dirs: Sequence[str] = (),
    search: Callable[[HistoryQuery], list[HistoryHit]] | None = None,
    complete: Callable[[str, str], str] | None = None,
) -> ToolContext:
    """A context whose ``backend()`` is ``backend`` (no kernel checks in front of it), whose
    ``ask_user`` returns what ``answers`` says (default: nobody answers), and whose history
    search and model are what you pass (default: unsupported). ``provided`` stands for what
    other plugins provide (``{Kind.SKILL_SOURCE: [SkillSourceSpec(...)]}``); ``skill_dirs``
    is deprecated and fills only the deprecated field of that name."""
    return ToolContext(
        session_id=session_id,
        home=home,
        cwd=backend.cwd if backend is not None else cwd,
        get_backend=(lambda: backend) if backend is not None else None,
        ask=answers or (lambda question, choices: None),
        source=source,
        user_scope=user_scope,
        config=config or {},
        provided=ProvidedSpecs(provided or {}),
        skill_dirs=tuple(skill_dirs),
        search=search,
        complete=complete,
    )


def direct_caller(
    tools: Iterable[ToolSpec], context: ToolContext, loop: asyncio.AbstractEventLoop
) -> ToolCaller:
    """A :class:`ToolCaller` that runs ``tools`` straight away, on ``loop``: their schemas
    are checked and failures become error results, but nothing is recorded, approved or
    redacted (that is the kernel's; test it through the agent)."""
    offered = {spec.name: spec for spec in tools}

    async def run(name: str, arguments: Mapping[str, Any]) -> NestedResult:
        spec = offered.get(name)
        if spec is None:
            return NestedResult(name, f"error: unknown tool {name!r}", "error")
        try:
            check_arguments(spec, arguments)
            value = await call_tool(spec, arguments, context)
        except ArgumentsRejected as exc:
            return NestedResult(name, f"error: the arguments do not fit ({exc})", "error")
        except ToolFailed as exc:
            return NestedResult(name, f"error: {exc}", "error")
        except Exception as exc:  # noqa: BLE001 - a tool's failure is a result
            return NestedResult(name, f"error: {type(exc).__name__}: {exc}", "error")
        if value is None:
            text = "(no output)"  # as the kernel words it
        else:
            text = value if isinstance(value, str) else json.dumps(value, default=str)
        return NestedResult(name, text, "ok")

    return ToolCaller(offered, run, loop)


async def call_with_tools(
    spec: ToolSpec,
    arguments: Mapping[str, Any],
    context: ToolContext,
    tools: Iterable[ToolSpec] = (),
) -> Any:
    """Call ``spec`` as the engine would, with ``tools`` reachable through
    ``context.tool_caller()`` (a :func:`direct_caller`)."""
    call_tools_with(direct_caller(tools, context, asyncio.get_running_loop()))
    return await call_tool(spec, arguments, context)
