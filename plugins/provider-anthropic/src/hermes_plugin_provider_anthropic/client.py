"""The Anthropic Messages API over httpx, streamed with server-sent events (httpx-sse)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx
import orjson

from hermes_commons.http import (
    JSON_HEADERS,
    LoopClient,
    cut_short,
    event_stream,
    raise_for_status,
    transport_errors,
)
from hermes_commons.reasoning import CLAUDE_THINKING_BUDGETS, answers_unthought_calls
from hermes_commons.sse import SSEDecoder
from hermes_commons.stated_models import StatedModels
from hermes_sdk.models import (
    ChatMessage,
    ErrorKind,
    ModelRequest,
    ModelResponse,
    ModelUsage,
    ProviderError,
    ProviderSettings,
    ToolCallRequest,
    classify_http_error,
)

API_VERSION = "2023-06-01"
DEFAULT_MAX_TOKENS = 8192  # the API requires max_tokens; the model stops earlier on its own
_EPHEMERAL = {"type": "ephemeral"}
# Stop reasons in the vocabulary the engine shares with chat completions.
_FINISH = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "refusal": "content_filter",
    "pause_turn": "stop",
}
# Error types sent inside a stream, mapped to the HTTP status they stand for.
_STREAM_ERROR_STATUS = {
    "overloaded_error": 529,
    "rate_limit_error": 429,
    "api_error": 500,
    "authentication_error": 401,
    "permission_error": 403,
    "billing_error": 402,
    "request_too_large": 413,
    "invalid_request_error": 400,
    "timeout_error": 408,
}


def _tool_input(arguments: str) -> dict[str, Any]:
    """Tool arguments as the object the API wants; our transcript keeps the raw text."""
    try:
        value = json.loads(arguments or "{}")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


_OWN_REASONING = ("thinking", "redacted_thinking")


def _assistant_blocks(message: ChatMessage) -> list[dict[str, Any]]:
    # Only this API's own thinking blocks: another provider's reasoning (a fallback's)
    # would be refused.
    blocks: list[dict[str, Any]] = [
        dict(detail) for detail in message.reasoning_details if detail.get("type") in _OWN_REASONING
    ]
    if message.content.strip():  # the API refuses text blocks of only whitespace
        blocks.append({"type": "text", "text": message.content})
    for call in message.tool_calls:
        blocks.append(
            {
                "type": "tool_use",
                "id": call.id,
                "name": call.name,
                "input": _tool_input(call.arguments),
            }
        )
    return blocks


def _user_blocks(message: ChatMessage) -> list[dict[str, Any]]:
    if message.role == "tool":
        return [
            {
                "type": "tool_result",
                "tool_use_id": message.tool_call_id or "",
                "content": message.content or "(no output)",
            }
        ]
    text = {"type": "text", "text": message.content if message.content.strip() else "(empty)"}
    # Images first, then the words about them: the order Anthropic's guide recommends.
    images = [
        {
            "type": "image",
            "source": {"type": "base64", "media_type": image.mime, "data": image.base64()},
        }
        for image in message.images
    ]
    return [*images, text] if message.content.strip() or not images else images


def conversation(
    messages: Sequence[ChatMessage],
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """System blocks and alternating user/assistant messages. Tool results travel in user
    messages; consecutive messages of one role are merged, as the API expects."""
    system = [{"type": "text", "text": m.content} for m in messages if m.role == "system"]
    turns: list[dict[str, Any]] = []
    for message in messages:
        if message.role == "system":
            continue
        role = "assistant" if message.role == "assistant" else "user"
        blocks = _assistant_blocks(message) if role == "assistant" else _user_blocks(message)
        if not blocks:
            continue
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": role, "content": blocks})
    return system, turns


def _mark_cache_breakpoints(system: list[dict[str, Any]], turns: list[dict[str, Any]]) -> None:
    """Cache the frozen system prompt, and the conversation up to the last two messages: the
    next request then reads everything but its newest message from the cache. At most three
    breakpoints (the API allows four)."""
    if system:
        system[-1]["cache_control"] = _EPHEMERAL
    for turn in turns[-2:]:
        turn["content"][-1]["cache_control"] = _EPHEMERAL


def payload(request: ModelRequest, stream: bool) -> dict[str, Any]:
    system, turns = conversation(request.messages)
    # Blocks are fresh dicts per request, so marking them never leaks into a later request.
    _mark_cache_breakpoints(system, turns)
    body: dict[str, Any] = {
        "model": request.model,
        "max_tokens": request.max_tokens or DEFAULT_MAX_TOKENS,
        "messages": turns,
        "stream": stream,
    }
    if system:
        body["system"] = system
    if request.tools:
        body["tools"] = [
            {"name": t.name, "description": t.description, "input_schema": dict(t.parameters)}
            for t in request.tools
        ]
        choice = request.tool_choice
        if choice == "required":
            body["tool_choice"] = {"type": "any"}
        elif choice == "none":
            body["tool_choice"] = {"type": "none"}
        elif choice not in (None, "auto"):
            body["tool_choice"] = {"type": "tool", "name": choice}
    if request.temperature is not None:
        body["temperature"] = request.temperature
    _think(body, request)
    return body


THINKING_BUDGETS = CLAUDE_THINKING_BUDGETS
_THINKS = re.compile(r"claude-(3-7-sonnet|(sonnet|opus|haiku)-4|4)", re.IGNORECASE)
"""The Claude models with extended thinking; an older one would refuse ``thinking``."""


def _unthought(request: ModelRequest) -> bool:
    """The tool calls being answered were made without thinking (a forced tool, another
    provider's turn): the API refuses thinking unless that message starts with its own."""
    return answers_unthought_calls(request, lambda d: d.get("type") in _OWN_REASONING)


def _think(body: dict[str, Any], request: ModelRequest) -> None:
    """Extended thinking for a reasoning effort, as the Messages API takes it: a budget
    under ``max_tokens``, no temperature of ours, and never beside a forced tool or after
    tool calls made without thinking (both of which the API refuses)."""
    budget = THINKING_BUDGETS.get(request.reasoning_effort or "")
    forced = request.tool_choice not in (None, "auto", "none")
    if budget is None or forced or not _THINKS.search(request.model) or _unthought(request):
        return
    body["thinking"] = {"type": "enabled", "budget_tokens": budget}
    body["max_tokens"] = max(int(body["max_tokens"]), budget + DEFAULT_MAX_TOKENS)
    body.pop("temperature", None)


def usage_of(raw: Any, previous: ModelUsage | None = None) -> ModelUsage:
    """Anthropic reports cache reads and writes apart from ``input_tokens``. A stream sends
    usage twice (message_start, then message_delta); later counts replace earlier ones."""
    base = previous or ModelUsage()
    if not isinstance(raw, dict):
        return base

    def count(key: str, before: int) -> int:
        value = raw.get(key)
        return int(value) if isinstance(value, int) else before

    return ModelUsage(
        input_tokens=count("input_tokens", base.input_tokens),
        output_tokens=count("output_tokens", base.output_tokens),
        cache_read_tokens=count("cache_read_input_tokens", base.cache_read_tokens),
        cache_write_tokens=count("cache_creation_input_tokens", base.cache_write_tokens),
    )


@dataclass
class _Block:
    type: str
    data: dict[str, Any]
    parts: list[str] = field(default_factory=list)


@dataclass
class _Assembly:
    """A streamed message put back together from its content-block events."""

    blocks: dict[int, _Block] = field(default_factory=dict)
    usage: ModelUsage = field(default_factory=ModelUsage)
    stop_reason: str | None = None
    done: bool = False

    def add(self, event: dict[str, Any], on_text: Callable[[str], None] | None) -> None:
        kind = event.get("type")
        if kind == "content_block_delta":  # nearly every event: test it first
            self._delta(event, on_text)
        elif kind == "message_start":
            self.usage = usage_of((event.get("message") or {}).get("usage"), self.usage)
        elif kind == "content_block_start":
            start = dict(event.get("content_block") or {})
            self.blocks[int(event.get("index", len(self.blocks)))] = _Block(
                str(start.get("type")), start
            )
        elif kind == "message_delta":
            self.stop_reason = (event.get("delta") or {}).get("stop_reason") or self.stop_reason
            self.usage = usage_of(event.get("usage"), self.usage)
        elif kind == "message_stop":
            self.done = True

    def _delta(self, event: dict[str, Any], on_text: Callable[[str], None] | None) -> None:
        block = self.blocks.get(int(event.get("index", -1)))
        delta = event.get("delta") or {}
        if block is None:
            raise ProviderError(ErrorKind.BAD_RESPONSE, "a content delta for a block never started")
        kind = delta.get("type")
        if kind == "text_delta":
            text = delta.get("text")
            if isinstance(text, str) and text:
                block.parts.append(text)
                if on_text is not None:
                    on_text(text)
        elif kind == "input_json_delta":
            block.parts.append(str(delta.get("partial_json") or ""))
        elif kind == "thinking_delta":
            block.parts.append(str(delta.get("thinking") or ""))
        elif kind == "signature_delta":
            block.data["signature"] = block.data.get("signature", "") + str(
                delta.get("signature") or ""
            )

    def response(self) -> ModelResponse:
        content: list[dict[str, Any]] = []
        for _, block in sorted(self.blocks.items()):
            data = dict(block.data)
            joined = "".join(block.parts)
            if block.type == "text":
                data["text"] = data.get("text", "") + joined
            elif block.type == "thinking":
                data["thinking"] = data.get("thinking", "") + joined
            elif block.type == "tool_use":
                data["input"] = joined or data.get("input") or {}
            content.append(data)
        return response_of(content, self.stop_reason, self.usage)


def response_of(
    content: list[dict[str, Any]], stop: str | None, usage: ModelUsage
) -> ModelResponse:
    text: list[str] = []
    thinking: list[str] = []
    details: list[dict[str, Any]] = []
    calls: list[ToolCallRequest] = []
    for block in content:
        kind = block.get("type")
        if kind == "text":
            text.append(str(block.get("text") or ""))
        elif kind in ("thinking", "redacted_thinking"):
            # Kept whole, signature included: the API wants them back during tool use.
            details.append(block)
            if kind == "thinking":
                thinking.append(str(block.get("thinking") or ""))
        elif kind == "tool_use":
            raw = block.get("input")
            arguments = raw if isinstance(raw, str) else json.dumps(raw or {})
            calls.append(
                ToolCallRequest(
                    str(block.get("id") or f"toolu_{len(calls)}"), str(block["name"]), arguments
                )
            )
    return ModelResponse(
        content="".join(text),
        tool_calls=tuple(calls),
        finish_reason=_FINISH.get(stop or "", stop),
        usage=usage,
        reasoning="".join(thinking) or None,
        reasoning_details=tuple(details),
    )


def stream_error(error: Any) -> ProviderError:
    """An ``error`` event inside a stream, classified like the HTTP error it stands for."""
    if isinstance(error, dict):
        status = _STREAM_ERROR_STATUS.get(str(error.get("type")), 500)
        return classify_http_error(status, str(error.get("message") or error))
    return classify_http_error(500, str(error))


# The Messages API states its limit after the count sent: "prompt is too long: 210000
# tokens > 200000 maximum".
_LIMIT_IN_ERROR = re.compile(r">\s*(\d[\d,_]*)\s*maximum", re.IGNORECASE)


def window_in_error(message: str) -> int | None:
    """The window an overflow error of the Messages API states, or None."""
    found = _LIMIT_IN_ERROR.search(message)
    if found is None:
        return None
    tokens = int(re.sub(r"[,_]", "", found.group(1)))
    return tokens if tokens >= 256 else None


CLAUDE_WINDOW = 200_000
"""The context window of every Claude model this API serves by default."""


def _auth_headers(settings: ProviderSettings) -> dict[str, str]:
    headers = {"anthropic-version": API_VERSION}
    if settings.api_key and settings.options.get("bearer_auth"):
        # Services that speak the Messages API but take the key as a bearer token
        # (MiniMax, for its keys and its sign-in's tokens alike).
        headers["Authorization"] = f"Bearer {settings.api_key}"
    elif settings.api_key:
        headers["x-api-key"] = settings.api_key
    return headers


class MessagesProvider:
    """A :class:`hermes_sdk.models.ModelProvider` for ``POST {base_url}/v1/messages``."""

    def __init__(self, settings: ProviderSettings) -> None:
        self._settings = settings
        self._http = LoopClient(settings, _auth_headers(settings))
        self._stated = StatedModels(settings.options)  # a preset's (MiniMax's) models

    @property
    def client(self) -> httpx.AsyncClient:
        return self._http.get()

    async def aclose(self) -> None:
        await self._http.aclose()

    async def complete(
        self, request: ModelRequest, on_text: Callable[[str], None] | None = None
    ) -> ModelResponse:
        try:
            async with transport_errors(self._settings):
                if self._settings.stream:
                    return await self._streamed(request, on_text)
                return await self._whole(request)
        except ProviderError as error:
            if error.should_compress and error.stated_window is None:
                error.stated_window = window_in_error(str(error))
            raise

    async def context_window(self, model: str) -> int | None:
        """A Claude model's window (a :class:`~hermes_sdk.context.WindowReporter`)."""
        stated = self._stated.window(model)
        if stated is not None:
            return stated
        return CLAUDE_WINDOW if model.lower().rsplit("/", 1)[-1].startswith("claude") else None

    def sees(self, model: str) -> bool | None:
        """Claude 3 and every later model take images; Claude 2 and Instant do not (a
        :class:`~hermes_sdk.models.SightReporter`). Another name is unknown."""
        if self._stated.sees(model):
            return True
        name = model.lower().rsplit("/", 1)[-1]
        if name.startswith(("claude-2", "claude-instant")):
            return False
        return True if name.startswith("claude") else None

    async def _whole(self, request: ModelRequest) -> ModelResponse:
        body = orjson.dumps(payload(request, False))
        response = await self.client.post("/v1/messages", content=body, headers=JSON_HEADERS)
        await raise_for_status(response)
        try:
            data = response.json()
            content = list(data["content"])
            return response_of(content, data.get("stop_reason"), usage_of(data.get("usage")))
        except (ValueError, KeyError, TypeError, AttributeError):
            raise ProviderError(
                ErrorKind.BAD_RESPONSE,
                f"{self._settings.base_url} answered something that is not a Messages API reply",
            ) from None

    async def _streamed(
        self, request: ModelRequest, on_text: Callable[[str], None] | None
    ) -> ModelResponse:
        assembly = _Assembly()
        body = orjson.dumps(payload(request, True))
        async with event_stream(self.client, "/v1/messages", body, self._settings) as response:
            decoder = SSEDecoder()
            async for line in response.aiter_lines():
                event = decoder.feed(line)
                if event is None:
                    continue
                data = event[1]
                if assembly.done:
                    continue  # read to the end so the connection goes back to the pool
                try:
                    event = orjson.loads(data)
                except ValueError:
                    raise ProviderError(
                        ErrorKind.BAD_RESPONSE,
                        f"{self._settings.base_url} streamed an event that is not JSON",
                    ) from None
                if not isinstance(event, dict):
                    continue
                if event.get("type") == "error":
                    raise stream_error(event.get("error"))
                try:
                    assembly.add(event, on_text)
                except (TypeError, ValueError, AttributeError):
                    raise ProviderError(
                        ErrorKind.BAD_RESPONSE,
                        f"{self._settings.base_url} streamed an event of an unexpected shape",
                    ) from None
        if not assembly.done:
            raise cut_short(self._settings)
        try:
            return assembly.response()
        except (KeyError, TypeError, ValueError):
            raise ProviderError(
                ErrorKind.BAD_RESPONSE,
                f"{self._settings.base_url} streamed content blocks of an unexpected shape",
            ) from None
