"""Bedrock's Converse wire format (``POST /model/{modelId}/converse`` and
``/converse-stream``), from the Bedrock runtime API reference.

Messages alternate ``user`` and ``assistant`` and are made of content blocks: ``text``,
``image``, ``toolUse`` (the input as an object) and, in the next user message,
``toolResult`` with the same ``toolUseId``, all of a step's results in one message.
``reasoningContent`` blocks (Claude's thinking, with its signature) come back on the
assistant message and go back before its tool uses, as Claude requires; another
provider's reasoning is never sent. The system messages become ``system`` blocks.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import orjson

from hermes_commons.reasoning import CLAUDE_THINKING_BUDGETS, answers_unthought_calls, effort_of
from hermes_sdk.models import (
    ChatMessage,
    ModelRequest,
    ModelResponse,
    ModelUsage,
    ToolCallRequest,
)

ANSWER_TOKENS = 8192
"""Room for the answer above Claude's thinking budget (``maxTokens`` must exceed it)."""
_CLAUDE_THINKS = re.compile(r"claude-(3-7|(opus|sonnet|haiku)-[4-9]|[4-9])", re.IGNORECASE)
_GPT_OSS = re.compile(r"gpt-oss", re.IGNORECASE)
_NOVA_2 = re.compile(r"nova-2", re.IGNORECASE)
_STOP = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "guardrail_intervened": "content_filter",
    "content_filtered": "content_filter",
}
_REASONING = "reasoningContent"
_FORMATS = {"image/jpeg": "jpeg", "image/png": "png", "image/gif": "gif", "image/webp": "webp"}


def _user_blocks(message: ChatMessage) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    if message.content.strip():
        blocks.append({"text": message.content})
    blocks.extend(
        {"image": {"format": _FORMATS.get(image.mime, "png"), "source": {"bytes": image.base64()}}}
        for image in message.images
    )
    return blocks or [{"text": "(empty)"}]  # a blank text block is refused


def _input(raw: str) -> dict[str, Any]:
    try:
        parsed = orjson.loads(raw or "{}")
    except orjson.JSONDecodeError:
        return {"arguments": raw}
    return parsed if isinstance(parsed, dict) else {"value": parsed}


def _assistant_blocks(message: ChatMessage) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = [
        {_REASONING: detail[_REASONING]}
        for detail in message.reasoning_details
        if isinstance(detail.get(_REASONING), dict)
    ]
    if message.content.strip():  # Converse refuses a blank text block ("\n\n" before a call)
        blocks.append({"text": message.content})
    blocks.extend(
        {"toolUse": {"toolUseId": call.id, "name": call.name, "input": _input(call.arguments)}}
        for call in message.tool_calls
    )
    return blocks or [{"text": "(empty)"}]


def _result_block(message: ChatMessage) -> dict[str, Any]:
    return {
        "toolResult": {
            "toolUseId": message.tool_call_id or "",
            "content": [{"text": message.content or "(no output)"}],
        }
    }


def conversation(messages: Sequence[ChatMessage]) -> tuple[list[dict[str, Any]], list[Any]]:
    """The ``system`` blocks and the alternating ``messages`` (adjacent messages of one
    role joined: a step's tool results go back as one user message)."""
    system = [{"text": m.content} for m in messages if m.role == "system" and m.content]
    turns: list[dict[str, Any]] = []
    for message in messages:
        if message.role == "system":
            continue
        if message.role == "assistant":
            role, blocks = "assistant", _assistant_blocks(message)
        elif message.role == "tool":
            role, blocks = "user", [_result_block(message)]
        else:
            role, blocks = "user", _user_blocks(message)
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": role, "content": blocks})
    return system, turns


def _tool_choice(choice: str | None) -> dict[str, Any] | None:
    if choice in (None, "none"):
        return None  # Converse has no "none": the tools are left out instead
    if choice == "auto":
        return {"auto": {}}
    if choice == "required":
        return {"any": {}}
    return {"tool": {"name": choice}}


def _reasoning_fields(
    model: str, effort: str | None, request: ModelRequest
) -> dict[str, Any] | None:
    """``additionalModelRequestFields`` for an effort, in the model family's own form."""
    if effort is None:
        return None
    if _CLAUDE_THINKS.search(model):
        budget = CLAUDE_THINKING_BUDGETS.get(effort)
        forced = request.tool_choice not in (None, "auto", "none")
        # Claude refuses thinking with a forced tool, or right after tool calls it made
        # without thinking (a forced tool, another provider's turn).
        if budget is None or forced or answers_unthought_calls(request, _own_reasoning):
            return None
        return {"thinking": {"type": "enabled", "budget_tokens": budget}}
    if _GPT_OSS.search(model):
        levels = {"none": "low", "minimal": "low", "xhigh": "high"}  # it takes these three
        return {"reasoning_effort": levels.get(effort, effort)}
    if _NOVA_2.search(model) and effort != "none":
        level = {"minimal": "low", "xhigh": "high"}.get(effort, effort)
        return {"reasoningConfig": {"type": "enabled", "maxReasoningEffort": level}}
    return None


def _own_reasoning(detail: Mapping[str, Any]) -> bool:
    return isinstance(detail.get(_REASONING), dict)


def payload(request: ModelRequest, options: Mapping[str, Any]) -> dict[str, Any]:
    system, turns = conversation(request.messages)
    body: dict[str, Any] = {"messages": turns}
    if system:
        body["system"] = system
    if request.tools and request.tool_choice != "none":
        tool_config: dict[str, Any] = {
            "tools": [
                {
                    "toolSpec": {
                        "name": tool.name,
                        "description": tool.description or tool.name,
                        "inputSchema": {"json": dict(tool.parameters)},
                    }
                }
                for tool in request.tools
            ]
        }
        choice = _tool_choice(request.tool_choice)
        if choice:
            tool_config["toolChoice"] = choice
        body["toolConfig"] = tool_config
    elif any(
        block.get("toolUse") or block.get("toolResult") for t in turns for block in t["content"]
    ):
        # Converse refuses tool blocks in a conversation sent without a toolConfig.
        body["toolConfig"] = {"tools": [_placeholder(turns)]}
    inference: dict[str, Any] = {}
    if request.max_tokens is not None:
        inference["maxTokens"] = request.max_tokens
    reasoning = _reasoning_fields(request.model, effort_of(request, options), request)
    thinking = (reasoning or {}).get("thinking")
    if thinking:  # the output limit holds the thinking and the answer
        least = int(thinking["budget_tokens"]) + ANSWER_TOKENS
        inference["maxTokens"] = max(int(inference.get("maxTokens") or 0), least)
    if request.temperature is not None and not thinking:
        inference["temperature"] = request.temperature  # Claude refuses it while thinking
    if inference:
        body["inferenceConfig"] = inference
    if reasoning:
        body["additionalModelRequestFields"] = reasoning
    guardrail = options.get("guardrail")
    if isinstance(guardrail, Mapping):
        body["guardrailConfig"] = {
            "guardrailIdentifier": str(guardrail.get("id") or guardrail.get("identifier")),
            "guardrailVersion": str(guardrail.get("version") or "DRAFT"),
        }
    return body


def _placeholder(turns: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    name = next(
        (
            block["toolUse"]["name"]
            for turn in turns
            for block in turn["content"]
            if block.get("toolUse")
        ),
        "tool",
    )
    schema = {"type": "object", "properties": {}}
    return {"toolSpec": {"name": name, "description": name, "inputSchema": {"json": schema}}}


def usage_of(raw: Any) -> ModelUsage:
    if not isinstance(raw, dict):
        return ModelUsage()
    return ModelUsage(
        input_tokens=int(raw.get("inputTokens") or 0),
        output_tokens=int(raw.get("outputTokens") or 0),
        cache_read_tokens=int(raw.get("cacheReadInputTokens") or 0),
        cache_write_tokens=int(raw.get("cacheWriteInputTokens") or 0),
    )


def response_of(
    blocks: Sequence[Mapping[str, Any]], stop_reason: str | None, usage: Any
) -> ModelResponse:
    """The assistant message's content blocks as the engine's response."""
    text: list[str] = []
    thinking: list[str] = []
    details: list[dict[str, Any]] = []
    calls: list[ToolCallRequest] = []
    for block in blocks:
        if "text" in block:
            text.append(str(block["text"]))
        elif "toolUse" in block:
            use = block["toolUse"]
            raw = use.get("input")
            arguments = raw if isinstance(raw, str) else orjson.dumps(raw or {}).decode()
            calls.append(
                ToolCallRequest(str(use["toolUseId"]), str(use["name"]), arguments or "{}")
            )
        elif _REASONING in block:
            content = block[_REASONING]
            said = (content.get("reasoningText") or {}).get("text")
            if said:
                thinking.append(str(said))
            details.append({_REASONING: dict(content)})
    finish = "tool_calls" if calls else _STOP.get(stop_reason or "", "stop")
    return ModelResponse(
        content="".join(text),
        tool_calls=tuple(calls),
        finish_reason=finish,
        usage=usage_of(usage),
        reasoning="".join(thinking) or None,
        reasoning_details=tuple(details) if calls else (),
    )


class StreamAssembly:
    """A ConverseStream reply put back together from its events."""

    def __init__(self) -> None:
        self.blocks: dict[int, dict[str, Any]] = {}
        self.stop_reason: str | None = None
        self.usage: Any = None
        self.done = False

    def add(self, kind: str, event: Mapping[str, Any]) -> str | None:
        """Read one event; the text it adds to the answer, if any."""
        if kind == "contentBlockDelta":
            index = int(event.get("contentBlockIndex", 0))
            delta = event["delta"]
            block = self.blocks.setdefault(index, {})
            if "text" in delta:
                block["text"] = block.get("text", "") + str(delta["text"])
                return str(delta["text"])
            if "toolUse" in delta:
                use = block.setdefault("toolUse", {})
                use["input"] = use.get("input", "") + str(delta["toolUse"].get("input") or "")
            elif _REASONING in delta:
                self._reasoning(block, delta[_REASONING])
        elif kind == "contentBlockStart":
            start = event.get("start") or {}
            if "toolUse" in start:
                index = int(event.get("contentBlockIndex", 0))
                self.blocks[index] = {"toolUse": {**start["toolUse"], "input": ""}}
        elif kind == "messageStop":
            self.stop_reason = str(event.get("stopReason") or "")
        elif kind == "metadata":
            self.usage = event.get("usage")
            self.done = True
        return None

    @staticmethod
    def _reasoning(block: dict[str, Any], delta: Mapping[str, Any]) -> None:
        content = block.setdefault(_REASONING, {})
        if "text" in delta:
            said = content.setdefault("reasoningText", {"text": ""})
            said["text"] += str(delta["text"])
        if "signature" in delta:
            content.setdefault("reasoningText", {"text": ""})["signature"] = delta["signature"]
        if "redactedContent" in delta:
            content["redactedContent"] = delta["redactedContent"]

    def response(self) -> ModelResponse:
        blocks = [block for _, block in sorted(self.blocks.items())]
        return response_of(blocks, self.stop_reason, self.usage)
