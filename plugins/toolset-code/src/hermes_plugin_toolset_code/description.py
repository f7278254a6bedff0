"""What the model reads about execute_code: the functions its script can call, with their
arguments, and the limits it runs under, written for the tools this session offers."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hermes_plugin_toolset_code.defaults import allowed_tools, shown_settings
from hermes_plugin_toolset_code.stubs import function_lines
from hermes_sdk import ToolSpec

__all__ = ["description"]


def description(base: str, tools: Mapping[str, ToolSpec], config: Mapping[str, Any]) -> str:
    settings = shown_settings(config)
    allowed = allowed_tools(settings.tools, tools)
    limits = (
        f"Limits: {settings.timeout_seconds:g} s, {settings.max_tool_calls} tool calls, "
        f"{settings.max_output_chars:,} characters of output"
        + (f", {settings.memory_mb} MiB of memory." if settings.memory_mb else ".")
    )
    if not allowed:
        return f"{base}\n{limits}\nNo tool functions are available in this session."
    functions = "\n".join(function_lines([tools[name] for name in allowed]))
    return f"{base}\n{limits}\nFunctions (keyword arguments; ... marks optional ones):\n{functions}"
