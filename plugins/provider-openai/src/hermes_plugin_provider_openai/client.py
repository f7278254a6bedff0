"""Chat completions over httpx, streamed with server-sent events (httpx-sse)."""

from __future__ import annotations

import operator
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
from hermes_commons.sse import SSEDecoder
from hermes_commons.stated_models import StatedModels
from hermes_plugin_provider_openai.sight import known_sight
from hermes_plugin_provider_openai.windows import known_window, note_stated_window
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

_REASONS = re.compile(r"^(o\d|gpt-5|gpt-oss)", re.IGNORECASE)
"""OpenAI's reasoning models, which take ``reasoning_effort`` on chat completions."""
_COMPLETION_TOKENS = re.compile(r"^(o\d|gpt-5(?!-chat))", re.IGNORECASE)
"""OpenAI's own reasoning models, which refuse ``max_tokens`` (``max_completion_tokens``
instead) and any ``temperature`` but the default."""


def _message(message: ChatMessage) -> dict[str, Any]:
    if message.role == "tool":
        return {"role": "tool", "tool_call_id": message.tool_call_id, "content": message.content}
    wire: dict[str, Any] = {"role": message.role, "content": message.content}
    if message.images:  # only a model that sees gets them; others get text, as before
        wire["content"] = [
            *([{"type": "text", "text": message.content}] if message.content else []),
            *(
                {"type": "image_url", "image_url": {"url": image.data_url()}}
                for image in message.images
            ),
        ]
    if message.tool_calls:
        # Some servers (llama.cpp) reject null content beside tool calls: send "".
        wire["content"] = message.content or ""
        wire["tool_calls"] = [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": call.arguments},
            }
            for call in message.tool_calls
        ]
    return wire


class WireCache:
    """Wire dicts of messages already sent. A turn resends the whole, growing history on
    every model call; converting it again each time costs more than the rest of a round."""

    LIMIT = 50_000
    """Messages remembered, across every session using this provider."""

    def __init__(self) -> None:
        # Keyed by id(); each entry keeps its message alive, so an id is never reused
        # while its entry exists.
        self._by_id: dict[int, tuple[ChatMessage, dict[str, Any]]] = {}
        # The last request, whose messages the next one of the same turn starts with.
        self._last: list[ChatMessage] = []
        self._last_wire: list[dict[str, Any]] = []

    def messages(self, messages: Sequence[ChatMessage]) -> list[dict[str, Any]]:
        known = len(self._last)
        if 0 < known <= len(messages) and all(map(operator.is_, messages[:known], self._last)):
            # The same history plus new messages: an identity check per message, in C.
            wire = self._last_wire + [self._one(message) for message in messages[known:]]
        else:
            wire = [self._one(message) for message in messages]
        self._last, self._last_wire = list(messages), wire
        return wire

    def _one(self, message: ChatMessage) -> dict[str, Any]:
        if message.images:
            # Not kept: a turn makes its images' messages anew, so an entry would never be
            # found again, and each holds the images twice (bytes and base64).
            return _message(message)
        if len(self._by_id) > self.LIMIT:
            self._by_id.clear()
        cached = self._by_id.get(id(message))
        if cached is None:
            cached = self._by_id[id(message)] = (message, _message(message))
        return cached[1]


def payload(
    request: ModelRequest,
    stream: bool,
    cache: WireCache | None = None,
    reasons: bool | None = None,
) -> dict[str, Any]:
    """The request body. ``reasons`` says whether the model is an OpenAI reasoning model
    when its name does not (an Azure deployment's name is its owner's choice)."""
    bare = request.model.rsplit("/", 1)[-1]
    reasoning = bool(_COMPLETION_TOKENS.match(bare)) if reasons is None else reasons
    messages = (
        cache.messages(request.messages) if cache else [_message(m) for m in request.messages]
    )
    body: dict[str, Any] = {"model": request.model, "messages": messages, "stream": stream}
    if stream:
        body["stream_options"] = {"include_usage": True}
    if request.tools:
        body["tools"] = [
            {
                "type": "function",
                "function": {
                    "name": t.name,
                    "description": t.description,
                    "parameters": dict(t.parameters),
                },
            }
            for t in request.tools
        ]
        if request.tool_choice in (None, "auto", "none", "required"):
            if request.tool_choice is not None:
                body["tool_choice"] = request.tool_choice
        else:
            body["tool_choice"] = {"type": "function", "function": {"name": request.tool_choice}}
    if request.max_tokens is not None:
        body["max_completion_tokens" if reasoning else "max_tokens"] = request.max_tokens
    if request.temperature is not None and not reasoning:
        body["temperature"] = request.temperature
    if request.reasoning_effort is not None and (reasoning or _REASONS.match(bare)):
        # Chat completions' own parameter; a model that does not reason would refuse it.
        body["reasoning_effort"] = request.reasoning_effort
    return body


def usage_of(raw: Any) -> ModelUsage:
    """OpenAI counts cached prompt tokens inside prompt_tokens; we report them apart."""
    if not isinstance(raw, dict):
        return ModelUsage()
    cached = int((raw.get("prompt_tokens_details") or {}).get("cached_tokens") or 0)
    reasoning = int((raw.get("completion_tokens_details") or {}).get("reasoning_tokens") or 0)
    return ModelUsage(
        input_tokens=max(0, int(raw.get("prompt_tokens") or 0) - cached),
        output_tokens=int(raw.get("completion_tokens") or 0),
        cache_read_tokens=cached,
        reasoning_tokens=reasoning,
    )


@dataclass
class _PartialCall:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


@dataclass
class _Assembly:
    """A streamed reply put back together."""

    text: list[str] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)
    calls: dict[int, _PartialCall] = field(default_factory=dict)
    finish_reason: str | None = None
    usage: ModelUsage = field(default_factory=ModelUsage)
    done: bool = False

    def add(self, chunk: dict[str, Any], on_text: Callable[[str], None] | None) -> None:
        if chunk.get("usage"):
            self.usage = usage_of(chunk["usage"])
        for choice in chunk.get("choices") or ():
            delta = choice.get("delta") or {}
            content = delta.get("content")
            if content:
                self.text.append(content)
                if on_text is not None:
                    on_text(content)
                if len(delta) == 1 and choice.get("finish_reason") is None:
                    continue  # a plain text piece: nearly every event of a reply
            self._rest(choice, delta)

    def _rest(self, choice: dict[str, Any], delta: dict[str, Any]) -> None:
        for key in ("reasoning_content", "reasoning"):
            if isinstance(delta.get(key), str):
                self.reasoning.append(delta[key])
        for piece in delta.get("tool_calls") or ():
            call = self.calls.setdefault(self._index_of(piece), _PartialCall())
            # Some servers repeat id and name in every chunk: keep the first of each.
            call.id = call.id or piece.get("id") or ""
            function = piece.get("function") or {}
            call.name = call.name or function.get("name") or ""
            if function.get("arguments"):
                call.arguments.append(function["arguments"])
        if choice.get("finish_reason"):
            self.finish_reason = choice["finish_reason"]

    def _index_of(self, piece: dict[str, Any]) -> int:
        """The call a streamed piece belongs to. Servers that omit ``index`` start a new
        call with a new id; a piece without either continues the latest call."""
        index = piece.get("index")
        if isinstance(index, int):
            return index
        latest = max(self.calls, default=0)
        known = self.calls.get(latest)
        new_id = piece.get("id")
        if known is not None and new_id and known.id and new_id != known.id:
            return latest + 1
        return latest

    def response(self) -> ModelResponse:
        calls = tuple(
            ToolCallRequest(c.id or f"call_{i}", c.name, "".join(c.arguments))
            for i, c in sorted(self.calls.items())
        )
        return ModelResponse(
            content="".join(self.text),
            tool_calls=calls,
            finish_reason=self.finish_reason,
            usage=self.usage,
            reasoning="".join(self.reasoning) or None,
        )


def stream_error(error: Any) -> ProviderError:
    """An error object sent inside a stream, classified like an HTTP error."""
    if isinstance(error, dict):
        code = error.get("code")
        status = code if isinstance(code, int) and 400 <= code < 600 else 500
        return classify_http_error(status, str(error.get("message") or error))
    return classify_http_error(500, str(error))


def _auth_headers(settings: ProviderSettings) -> dict[str, str]:
    return {"Authorization": f"Bearer {settings.api_key}"} if settings.api_key else {}


class ChatCompletionsProvider:
    """A :class:`hermes_sdk.models.ModelProvider` for ``POST {base_url}/chat/completions``."""

    route = "/chat/completions"
    """Where requests go, below ``base_url``."""

    def __init__(self, settings: ProviderSettings) -> None:
        self._settings = settings
        self._http = LoopClient(settings, self.auth_headers(settings))
        self._wire = WireCache()
        options = settings.options
        said = options.get("reasoning")
        self._reasons = None if said is None else bool(said)
        # A preset's knowledge of its models (hermes-plugin-provider-presets), and its quirks.
        self._stated = StatedModels(options)
        self._omit_temperature = bool(options.get("omit_temperature"))
        self._max_tokens = options.get("max_tokens")

    def prepared(self, request: ModelRequest) -> ModelRequest:
        """The request as this endpoint takes it (a subclass's renames)."""
        return request

    def _body(self, request: ModelRequest, stream: bool) -> bytes:
        body = payload(self.prepared(request), stream, self._wire, self._reasons)
        if self._omit_temperature:  # a server that refuses any but its own
            body.pop("temperature", None)
        if isinstance(self._max_tokens, int):  # a server that refuses more than its cap
            for name in ("max_tokens", "max_completion_tokens"):
                if name in body:
                    body[name] = min(body[name], self._max_tokens)
        return orjson.dumps(body)

    def auth_headers(self, settings: ProviderSettings) -> dict[str, str]:
        return _auth_headers(settings)

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
            note_stated_window(error)
            raise

    def route_for(self, request: ModelRequest) -> str:
        return self.route

    async def context_window(self, model: str) -> int | None:
        """A well-known model's window (a :class:`~hermes_sdk.context.WindowReporter`)."""
        return self._stated.window(model) or known_window(model)

    def sees(self, model: str) -> bool | None:
        """Whether a well-known model takes images (a
        :class:`~hermes_sdk.models.SightReporter`); None for one the table does not know."""
        return self._stated.sees(model) or known_sight(model)

    async def _whole(self, request: ModelRequest) -> ModelResponse:
        body = self._body(request, False)
        response = await self.client.post(
            self.route_for(request), content=body, headers=JSON_HEADERS
        )
        await raise_for_status(response)
        try:
            data = response.json()
            choice = data["choices"][0]
            message = choice.get("message") or {}
            calls = tuple(
                ToolCallRequest(
                    call.get("id") or f"call_{i}",
                    call["function"]["name"],
                    call["function"].get("arguments") or "",
                )
                for i, call in enumerate(message.get("tool_calls") or [])
            )
        except (ValueError, KeyError, IndexError, TypeError, AttributeError):
            raise ProviderError(
                ErrorKind.BAD_RESPONSE,
                f"{self._settings.base_url} answered something that is not a chat completion",
            ) from None
        return ModelResponse(
            content=message.get("content") or "",
            tool_calls=calls,
            finish_reason=choice.get("finish_reason"),
            usage=usage_of(data.get("usage")),
            reasoning=message.get("reasoning_content") or message.get("reasoning"),
        )

    async def _streamed(
        self, request: ModelRequest, on_text: Callable[[str], None] | None
    ) -> ModelResponse:
        assembly = _Assembly()
        body = self._body(request, True)
        route = self.route_for(request)
        async with event_stream(self.client, route, body, self._settings) as response:
            decoder = SSEDecoder()
            async for line in response.aiter_lines():
                event = decoder.feed(line)
                if event is None:
                    continue
                data = event[1]
                # After [DONE] the stream is read to its end anyway, so that the connection
                # goes back to the pool instead of being closed.
                if assembly.done or data == "[DONE]" or data.strip() == "[DONE]":
                    assembly.done = True
                    continue
                try:
                    chunk = orjson.loads(data)
                except ValueError:
                    raise ProviderError(
                        ErrorKind.BAD_RESPONSE,
                        f"{self._settings.base_url} streamed an event that is not JSON",
                    ) from None
                if isinstance(chunk, dict) and chunk.get("error"):
                    raise stream_error(chunk["error"])
                if isinstance(chunk, dict):
                    assembly.add(chunk, on_text)
        if not assembly.done and assembly.finish_reason is None:
            raise cut_short(self._settings)
        return assembly.response()
