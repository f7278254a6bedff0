"""Reasoning effort as the model transports share it: the endpoint's own effort checked,
Claude's thinking budgets (the Messages API and Bedrock both take them), and whether the
tool calls being answered were made without thinking (Claude then refuses thinking)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from hermes_sdk.models import REASONING_EFFORTS, ErrorKind, ModelRequest, ProviderError

__all__ = ["CLAUDE_THINKING_BUDGETS", "answers_unthought_calls", "effort_of"]

CLAUDE_THINKING_BUDGETS = {
    "minimal": 1024,
    "low": 2048,
    "medium": 8192,
    "high": 24576,
    "xhigh": 32768,
}
"""``model.reasoning_effort`` as Claude's thinking budget in tokens (1,024 is the least)."""


def effort_of(request: ModelRequest, options: Mapping[str, Any]) -> str | None:
    """The endpoint's own effort (``providers.NAME.options.reasoning_effort``) before the
    request's, checked: a wrong one is a one-line error naming the choices."""
    effort = options.get("reasoning_effort")
    if effort is None:
        return request.reasoning_effort
    if str(effort) not in REASONING_EFFORTS:
        raise ProviderError(
            ErrorKind.BAD_REQUEST,
            f"reasoning_effort must be one of {', '.join(REASONING_EFFORTS)}, not {effort!r} (in "
            "providers.NAME.options)",
        )
    return str(effort)


def answers_unthought_calls(
    request: ModelRequest, own_thinking: Callable[[Mapping[str, Any]], bool]
) -> bool:
    """Whether the request answers tool calls made without this API's thinking (a forced
    tool, another provider's turn): Claude refuses thinking unless the message holding those
    calls starts with its own. ``own_thinking`` tells one of its ``reasoning_details``."""
    last = next((m for m in reversed(request.messages) if m.role == "assistant"), None)
    if last is None or not last.tool_calls:
        return False
    return not any(own_thinking(detail) for detail in last.reasoning_details)
