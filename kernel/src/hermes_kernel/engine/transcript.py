"""Stored messages as the model sees them."""

from __future__ import annotations

from hermes_kernel.store.messages import Message
from hermes_sdk.models import ChatMessage, ToolCallRequest


def stored_calls(calls: tuple[ToolCallRequest, ...]) -> list[dict[str, str]]:
    return [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in calls]


def to_chat(message: Message) -> ChatMessage:
    calls = tuple(
        ToolCallRequest(str(c.get("id", "")), str(c.get("name", "")), str(c.get("arguments", "")))
        for c in message.tool_calls or []
    )
    return ChatMessage(
        role=message.role,
        content=message.content or "",
        tool_calls=calls,
        tool_call_id=message.tool_call_id,
        name=message.tool_name,
        reasoning_details=tuple(message.reasoning_details or ()),
    )
