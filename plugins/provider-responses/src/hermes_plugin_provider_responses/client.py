"""OpenAI's Responses API over httpx, streamed with server-sent events.

Stateless, as hermes-agent and the Codex CLI use it: ``store: false``, the whole
conversation sent as ``input`` items each time. A reasoning model's ``reasoning`` items come
back with their ``encrypted_content`` (asked for with ``include``), are kept on the
assistant message as its ``reasoning_details``, and are sent again before that message's
function calls, as the API requires to go on reasoning across a tool call. A tool's result
answers its call as a ``function_call_output`` with the same ``call_id``.

``model.reasoning_effort`` (``none``, ``minimal``, ``low``, ``medium``, ``high``), or an
endpoint's own ``providers.NAME.options.reasoning_effort``, becomes ``reasoning: {effort,
summary: auto}``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
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
from hermes_commons.reasoning import effort_of
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

_REASONING_MODELS = re.compile(
    r"^(o\d|gpt-5(?!-chat)|codex|gpt-oss|grok-(3-mini|4))", re.IGNORECASE
)
"""Models that reason (and so take ``reasoning`` and return encrypted reasoning items, and
refuse ``temperature``); ``options.reasoning: true`` says so of a name this misses (an
Azure deployment's)."""
MIN_OUTPUT_TOKENS = 16
"""The least ``max_output_tokens`` the API takes."""
# Error codes inside a stream (``error`` events, a failed response), as HTTP statuses.
_STREAM_ERROR_STATUS = {
    "rate_limit_exceeded": 429,
    "insufficient_quota": 402,
    "invalid_api_key": 401,
    "server_error": 500,
    "context_length_exceeded": 400,
    "invalid_prompt": 400,
}


def _user(message: ChatMessage) -> dict[str, Any]:
    if not message.images:
        return {"role": "user", "content": message.content}
    parts: list[dict[str, Any]] = []
    if message.content:
        parts.append({"type": "input_text", "text": message.content})
    parts.extend({"type": "input_image", "image_url": image.data_url()} for image in message.images)
    return {"role": "user", "content": parts}


def input_items(messages: Sequence[ChatMessage]) -> tuple[str, list[dict[str, Any]]]:
    """The instructions (every system message) and the ``input`` items of a conversation."""
    instructions = "\n\n".join(m.content for m in messages if m.role == "system")
    items: list[dict[str, Any]] = []
    for message in messages:
        if message.role == "system":
            continue
        if message.role == "tool":
            items.append(
                {
                    "type": "function_call_output",
                    "call_id": message.tool_call_id or "",
                    "output": message.content or "(no output)",
                }
            )
        elif message.role == "assistant":
            # Only this API's own reasoning, and only what a stateless request can send
            # back: an item without its encrypted content would be looked up by id (404).
            items.extend(
                {k: v for k, v in detail.items() if k != "id"}
                for detail in message.reasoning_details
                if detail.get("type") == "reasoning" and detail.get("encrypted_content")
            )
            if message.content:
                items.append({"role": "assistant", "content": message.content})
            items.extend(
                {
                    "type": "function_call",
                    "call_id": call.id,
                    "name": call.name,
                    "arguments": call.arguments,
                }
                for call in message.tool_calls
            )
        else:
            items.append(_user(message))
    return instructions, items


def reasons(model: str, options: Mapping[str, Any]) -> bool:
    return bool(options.get("reasoning")) or bool(_REASONING_MODELS.match(model.rsplit("/", 1)[-1]))


def payload(
    request: ModelRequest, stream: bool, options: Mapping[str, Any], summary: bool = True
) -> dict[str, Any]:
    instructions, items = input_items(request.messages)
    body: dict[str, Any] = {
        "model": request.model,
        "input": items,
        "stream": stream,
        "store": False,  # stateless: nothing of the conversation is kept by the service
    }
    if instructions:
        body["instructions"] = instructions
    effort = effort_of(request, options)  # the endpoint's own first
    reasoning = reasons(request.model, options) or (effort is not None and effort != "none")
    if reasoning:
        body["include"] = ["reasoning.encrypted_content"]
        said = {
            **({"summary": "auto"} if summary else {}),
            **({"effort": effort} if effort else {}),
        }
        if said:
            body["reasoning"] = said
    if request.tools:
        body["tools"] = [
            {
                "type": "function",
                "name": tool.name,
                "description": tool.description,
                "parameters": dict(tool.parameters),
                "strict": False,
            }
            for tool in request.tools
        ]
        choice = request.tool_choice
        if choice in ("auto", "none", "required"):
            body["tool_choice"] = choice
        elif choice is not None:
            body["tool_choice"] = {"type": "function", "name": choice}
    if request.max_tokens is not None:
        body["max_output_tokens"] = max(request.max_tokens, MIN_OUTPUT_TOKENS)
    if request.temperature is not None and not reasoning:  # a reasoning model refuses it
        body["temperature"] = request.temperature
    return body


def usage_of(raw: Any) -> ModelUsage:
    if not isinstance(raw, dict):
        return ModelUsage()
    inputs = raw.get("input_tokens_details") or {}
    outputs = raw.get("output_tokens_details") or {}
    cached = int(inputs.get("cached_tokens") or 0)
    return ModelUsage(  # the API's input_tokens include the cached ones: reported apart
        input_tokens=max(0, int(raw.get("input_tokens") or 0) - cached),
        output_tokens=int(raw.get("output_tokens") or 0),
        cache_read_tokens=cached,
        reasoning_tokens=int(outputs.get("reasoning_tokens") or 0),
    )


def response_of(data: Mapping[str, Any], items: Sequence[Mapping[str, Any]]) -> ModelResponse:
    """A ``response`` object (its ``output``, or the ``items`` a stream completed) as the
    engine's response."""
    text: list[str] = []
    summaries: list[str] = []
    details: list[dict[str, Any]] = []
    calls: list[ToolCallRequest] = []
    cut_call = False
    for item in items:
        kind = item.get("type")
        if kind == "message":
            for part in item.get("content") or ():
                if part.get("type") == "output_text":
                    text.append(str(part.get("text") or ""))
                elif part.get("type") == "refusal":
                    text.append(str(part.get("refusal") or ""))
        elif kind == "function_call":
            if item.get("status") == "incomplete":  # its arguments were cut short
                cut_call = True
                continue
            calls.append(
                ToolCallRequest(
                    str(item.get("call_id") or f"call_{len(calls)}"),
                    str(item["name"]),
                    str(item.get("arguments") or "{}"),
                )
            )
        elif kind == "reasoning":
            if item.get("encrypted_content"):  # sent back with the calls it led to
                details.append(
                    {
                        "type": "reasoning",
                        "summary": list(item.get("summary") or ()),
                        "encrypted_content": item["encrypted_content"],
                    }
                )
            summaries.extend(
                str(part.get("text") or "")
                for part in item.get("summary") or ()
                if isinstance(part, dict)
            )
    incomplete = (data.get("incomplete_details") or {}).get("reason")
    if calls:
        finish = "tool_calls"
    elif incomplete == "max_output_tokens" or cut_call:
        finish = "length"
    elif incomplete == "content_filter":
        finish = "content_filter"
    else:
        finish = "stop"
    return ModelResponse(
        content="".join(text),
        tool_calls=tuple(calls),
        finish_reason=finish,
        usage=usage_of(data.get("usage")),
        reasoning="\n\n".join(s for s in summaries if s) or None,
        reasoning_details=tuple(details) if calls else (),
    )


def stream_error(error: Any) -> ProviderError:
    """An ``error`` event, or a failed response's ``error``, classified like its HTTP twin."""
    if isinstance(error, dict):
        status = _STREAM_ERROR_STATUS.get(str(error.get("code")), 500)
        return classify_http_error(status, orjson.dumps({"error": error}).decode())
    return classify_http_error(500, str(error))


@dataclass
class _Assembly:
    """A streamed response put back together from its typed events."""

    items: dict[int, dict[str, Any]] = field(default_factory=dict)
    final: dict[str, Any] | None = None

    def add(self, event: dict[str, Any], on_text: Callable[[str], None] | None) -> None:
        kind = event.get("type")
        if kind == "response.output_text.delta":  # nearly every event: test it first
            delta = event.get("delta")
            if isinstance(delta, str) and delta and on_text is not None:
                on_text(delta)
        elif kind == "response.output_item.done":
            self.items[int(event.get("output_index", len(self.items)))] = dict(event["item"])
        elif kind in ("response.completed", "response.incomplete"):
            self.final = dict(event.get("response") or {})
        elif kind == "response.failed":
            raise stream_error((event.get("response") or {}).get("error"))
        elif kind == "error":
            raise stream_error(event)

    def response(self) -> ModelResponse:
        assert self.final is not None
        output = self.final.get("output")
        items = output if output else [item for _, item in sorted(self.items.items())]
        return response_of(self.final, items)


def _auth_headers(settings: ProviderSettings) -> dict[str, str]:
    return {"Authorization": f"Bearer {settings.api_key}"} if settings.api_key else {}


class ResponsesProvider:
    """A :class:`hermes_sdk.models.ModelProvider` for ``POST {base_url}/responses``."""

    def __init__(self, settings: ProviderSettings) -> None:
        self._settings = settings
        self._options = dict(settings.options)  # a wrong effort is said at the first request
        self._summary = self._options.get("reasoning_summary", True) is not False
        self._http = LoopClient(settings, _auth_headers(settings))
        self._stated = StatedModels(settings.options)  # a preset's (xAI's) models

    async def context_window(self, model: str) -> int | None:
        """A window the endpoint's config states (a :class:`~hermes_sdk.context.WindowReporter`)."""
        return self._stated.window(model)

    def sees(self, model: str) -> bool | None:
        return self._stated.sees(model)

    @property
    def client(self) -> httpx.AsyncClient:
        return self._http.get()

    async def aclose(self) -> None:
        await self._http.aclose()

    async def complete(
        self, request: ModelRequest, on_text: Callable[[str], None] | None = None
    ) -> ModelResponse:
        try:
            return await self._complete(request, on_text)
        except ProviderError as error:
            if not self._summary or error.kind is not ErrorKind.BAD_REQUEST:
                raise
            if "summar" not in str(error).lower():
                raise
            # An organisation OpenAI has not verified may not have reasoning summaries:
            # go on without them (the reasoning itself still works).
            self._summary = False
            return await self._complete(request, on_text)

    async def _complete(
        self, request: ModelRequest, on_text: Callable[[str], None] | None
    ) -> ModelResponse:
        async with transport_errors(self._settings):
            if self._settings.stream:
                return await self._streamed(request, on_text)
            return await self._whole(request)

    def _bad(self, what: str) -> ProviderError:
        return ProviderError(ErrorKind.BAD_RESPONSE, f"{self._settings.base_url} {what}")

    async def _whole(self, request: ModelRequest) -> ModelResponse:
        body = orjson.dumps(payload(request, False, self._options, self._summary))
        response = await self.client.post("responses", content=body, headers=JSON_HEADERS)
        await raise_for_status(response)
        try:
            data = response.json()
            if data.get("status") == "failed":
                raise stream_error(data.get("error"))
            return response_of(data, list(data["output"]))
        except (ValueError, KeyError, TypeError, AttributeError):
            raise self._bad("answered something that is not a Responses API reply") from None

    async def _streamed(
        self, request: ModelRequest, on_text: Callable[[str], None] | None
    ) -> ModelResponse:
        assembly = _Assembly()
        body = orjson.dumps(payload(request, True, self._options, self._summary))
        async with event_stream(self.client, "responses", body, self._settings) as response:
            decoder = SSEDecoder()
            async for line in response.aiter_lines():
                decoded = decoder.feed(line)
                if decoded is None or assembly.final is not None:
                    continue  # read to the end so the connection goes back to the pool
                try:
                    event = orjson.loads(decoded[1])
                except ValueError:
                    raise self._bad("streamed an event that is not JSON") from None
                if not isinstance(event, dict):
                    continue
                try:
                    assembly.add(event, on_text)
                except (TypeError, ValueError, KeyError, AttributeError):
                    raise self._bad("streamed an event of an unexpected shape") from None
        if assembly.final is None:
            raise cut_short(self._settings)
        try:
            return assembly.response()
        except (KeyError, TypeError, ValueError, AttributeError):
            raise self._bad("streamed output items of an unexpected shape") from None
