"""``delegate_task``: one child session per goal (see :mod:`children`), in parallel within
the limits; waited for here, or started in the background (:mod:`family`). When the user
stops the parent's turn, every child it waits for is stopped within about a second.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from hermes_plugin_delegation.children import Child, depth_of, follow_child, open_child
from hermes_plugin_delegation.settings import DelegationConfig, settings_from
from hermes_sdk.runtime import Runtime
from hermes_sdk.tooling import ToolContext, Unsupported

__all__ = ["delegate_task"]


async def _run_child(
    runtime: Runtime,
    settings: DelegationConfig,
    context: ToolContext,
    task: dict[str, Any],
    slots: asyncio.Semaphore,
    depth: int,
) -> Child:
    async with slots:
        child, turn = await open_child(runtime, settings, context, task, depth)
        if turn is None:
            return child
        return await follow_child(runtime, settings, child, turn, context.cancel)


async def delegate_task(
    tasks: list[dict[str, Any]], context: ToolContext, background: bool | None = None
) -> str:
    """Run ``tasks`` and return each child's status, summary and session id, as JSON; in
    the background (``background``, by default where the front-end takes reports and this
    is not itself a delegated task), return their handles at once instead."""
    try:
        settings = settings_from(context.section("delegation"))
    except ValueError as exc:
        return f"error: config.yaml: {exc}"
    goals = [task for task in tasks if str(task.get("goal") or "").strip()]
    if not goals:
        return "error: every task needs a goal"
    try:
        runtime = context.runtime()
    except Unsupported as exc:
        return f"error: {exc}"
    depth = depth_of(context.session_id) + 1
    if depth > settings.max_depth:
        return (
            f"error: delegation.max_depth is {settings.max_depth}: a delegated task cannot "
            "delegate further; do the work yourself"
        )
    wanted = background if background is not None else depth == 1
    note = None
    if wanted and context.later is None:
        note = "ran to the end here: this front-end takes no reports of work left running"
    elif wanted:
        from hermes_plugin_delegation.family import start_batch

        return await start_batch(runtime, settings, context, goals, depth)
    slots = asyncio.Semaphore(settings.max_concurrent_children)
    children = await asyncio.gather(
        *(_run_child(runtime, settings, context, task, slots, depth) for task in goals)
    )
    report: dict[str, Any] = {
        "children": [child.as_json(settings.max_summary_chars) for child in children],
    }
    if note is not None:
        report["note"] = note
    return json.dumps(report, ensure_ascii=False, indent=1)
