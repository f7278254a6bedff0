"""``ProviderTests``: the conformance suite every model provider plugin passes.

Subclass it in your plugin's tests and supply only what is yours::

    from hermes_testkit import ProviderTests, ScriptedOpenAIServer

    class TestAcmeProvider(ProviderTests):
        server_class = ScriptedOpenAIServer      # the wire protocol your provider speaks

        def make_provider(self, settings):
            return AcmeProvider(settings)

The suite drives your provider against a real scripted server on loopback: plain text,
streaming, a tool call round trip, usage, and the classification of failures (HTTP errors,
Retry-After, a stream cut short, malformed JSON, a hang, a context overflow). A provider
around an embedded model sets ``server_class = None`` and overrides ``settings_for``; the
suite then checks the same behaviour with weaker expectations (a real model's words are not
scripted), and the scripted-failure cases are skipped with that reason.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, ClassVar, TypeVar

import pytest

from hermes_sdk.models import (
    ChatMessage,
    ErrorKind,
    ModelProvider,
    ModelRequest,
    ModelResponse,
    ProviderError,
    ProviderSettings,
    ToolCallRequest,
    ToolSchema,
)
from hermes_testkit._scripted import Reply, ScriptedServer

__all__ = ["ProviderTests"]

T = TypeVar("T")

WEATHER_TOOL = ToolSchema(
    name="get_weather",
    description="Get the current weather for a city.",
    parameters={
        "type": "object",
        "properties": {"city": {"type": "string", "description": "The city name"}},
        "required": ["city"],
    },
)
SYSTEM = ChatMessage("system", "You are a helpful assistant. Answer briefly.")

# HTTP failures every provider classifies the same way (the server renders its own bodies).
_HTTP_FAILURES = [
    pytest.param(401, ErrorKind.AUTH, id="401-auth"),
    pytest.param(402, ErrorKind.BILLING, id="402-billing"),
    pytest.param(408, ErrorKind.TIMEOUT, id="408-timeout"),
    pytest.param(413, ErrorKind.PAYLOAD_TOO_LARGE, id="413-payload"),
    pytest.param(429, ErrorKind.RATE_LIMIT, id="429-rate-limit"),
    pytest.param(500, ErrorKind.SERVER, id="500-server"),
    pytest.param(503, ErrorKind.OVERLOADED, id="503-overloaded"),
    pytest.param(529, ErrorKind.OVERLOADED, id="529-overloaded"),
]


class ProviderTests:
    """Conformance suite for :class:`~hermes_sdk.models.ModelProvider` implementations."""

    server_class: ClassVar[type[ScriptedServer] | None] = None
    """The scripted server speaking your protocol; None for an embedded model."""
    model: ClassVar[str] = "test-model"
    """The model name to request."""
    reads_stated_window: ClassVar[bool] = False
    """True when the provider reads the window an overflow error states
    (``ProviderError.stated_window``): the suite then checks it does, in the server's words."""

    def make_provider(self, settings: ProviderSettings) -> ModelProvider:
        raise NotImplementedError("subclasses return their provider built from settings")

    def settings_for(self, server: ScriptedServer | None) -> ProviderSettings:
        if server is None:
            raise NotImplementedError("a provider without a scripted server overrides this")
        return ProviderSettings(base_url=server.base_url, api_key="test-key", timeout_seconds=5)

    # --- plumbing ----------------------------------------------------------------------------

    @pytest.fixture
    def server(self) -> Iterator[ScriptedServer | None]:
        if self.server_class is None:
            yield None
            return
        with self.server_class() as server:
            yield server

    def run(self, server: ScriptedServer | None, use: Callable[[ModelProvider], Awaitable[T]]) -> T:
        """Build a provider, run ``use`` on a fresh event loop, close the provider."""

        async def scenario() -> T:
            provider = self.make_provider(self.settings_for(server))
            try:
                return await use(provider)
            finally:
                await provider.aclose()

        return asyncio.run(scenario())

    def request(self, *messages: ChatMessage, **options: Any) -> ModelRequest:
        return ModelRequest(model=self.model, messages=(SYSTEM, *messages), **options)

    def scripted(self, server: ScriptedServer | None) -> ScriptedServer:
        if server is None:
            pytest.skip("needs a scripted server; this provider runs an embedded model")
        return server

    # --- behaviour ---------------------------------------------------------------------------

    def test_plain_text(self, server: ScriptedServer | None) -> None:
        if server is not None:
            server.queue(Reply.say("Hello from the script."))
        request = self.request(ChatMessage("user", "Say hello."))
        response = self.run(server, lambda p: p.complete(request))
        assert isinstance(response, ModelResponse)
        assert response.content.strip()
        assert not response.tool_calls
        if server is not None:
            assert response.content == "Hello from the script."
            assert response.finish_reason in {"stop", "end_turn"}

    def test_streaming_delivers_text_as_it_arrives(self, server: ScriptedServer | None) -> None:
        if server is not None:
            server.queue(Reply.say("One, two, three, four, five.", chunk_size=3))
        chunks: list[str] = []
        request = self.request(ChatMessage("user", "Count from one to five."))
        response = self.run(server, lambda p: p.complete(request, chunks.append))
        assert len(chunks) >= 2, "text should arrive in pieces, not all at the end"
        assert "".join(chunks) == response.content

    def test_tool_call_round_trip(self, server: ScriptedServer | None) -> None:
        if server is not None:
            server.queue(
                Reply.tool_call("get_weather", {"city": "Oslo"}), Reply.say("Sunny in Oslo.")
            )
        ask = ChatMessage("user", "What is the weather in Oslo? Use the tool.")
        first = self.request(ask, tools=(WEATHER_TOOL,), tool_choice="get_weather")

        async def round_trip(provider: ModelProvider) -> tuple[ModelResponse, ModelResponse]:
            called = await provider.complete(first)
            assert called.tool_calls, f"expected a tool call, got text {called.content!r}"
            call = called.tool_calls[0]
            answered = ChatMessage(
                "assistant",
                called.content,
                tool_calls=(ToolCallRequest(call.id, call.name, call.arguments),),
                reasoning_details=called.reasoning_details,
            )
            result = ChatMessage(
                "tool", "Sunny, 21 C", tool_call_id=call.id or "call_0", name=call.name
            )
            second = self.request(ask, answered, result, tools=(WEATHER_TOOL,))
            return called, await provider.complete(second)

        called, final = self.run(server, round_trip)
        call = called.tool_calls[0]
        assert call.name == "get_weather"
        arguments = json.loads(call.arguments)
        assert isinstance(arguments, dict) and isinstance(arguments.get("city"), str)
        assert final.content.strip() and not final.tool_calls
        if server is not None:
            assert arguments == {"city": "Oslo"}
            assert "Sunny, 21 C" in json.dumps(server.requests[-1].json)
            assert final.content == "Sunny in Oslo."

    def test_usage_is_reported(self, server: ScriptedServer | None) -> None:
        if server is not None:
            server.queue(Reply.say("ok", usage={"prompt_tokens": 123, "completion_tokens": 45}))
        request = self.request(ChatMessage("user", "Say ok."))
        response = self.run(server, lambda p: p.complete(request))
        assert response.usage.input_tokens > 0 and response.usage.output_tokens > 0
        if server is not None:
            assert (response.usage.input_tokens, response.usage.output_tokens) == (123, 45)

    def test_context_overflow_is_classified(self, server: ScriptedServer | None) -> None:
        if server is not None:
            body = server.error_body(400, "prompt is too long: 250000 tokens > 200000 maximum")
            server.queue(Reply.error(400, json.dumps(body)))
        huge = ChatMessage("user", "lorem ipsum dolor sit amet " * 20_000)
        with pytest.raises(ProviderError) as caught:
            self.run(server, lambda p: p.complete(self.request(huge)))
        assert caught.value.kind is ErrorKind.CONTEXT_OVERFLOW
        assert caught.value.should_compress and not caught.value.retryable

    def test_an_overflow_error_carries_the_window_the_server_states(
        self, server: ScriptedServer | None
    ) -> None:
        """The server refuses a request over its window in its service's own words; a
        provider that reads the window from them says so (``ProviderError.stated_window``),
        and one that does not leaves it None, never a guess."""
        scripted = self.scripted(server)
        scripted.context_window = 3000
        long = ChatMessage("user", "lorem ipsum dolor sit amet " * 2_000)
        with pytest.raises(ProviderError) as caught:
            self.run(server, lambda p: p.complete(self.request(long)))
        assert caught.value.kind is ErrorKind.CONTEXT_OVERFLOW
        stated = caught.value.stated_window
        if self.reads_stated_window:
            assert stated == 3000, "read the window from the error's text"
        else:
            assert stated in (None, 3000), f"stated_window {stated!r} is not what was said"

    # --- scripted failures -------------------------------------------------------------------

    def _fails(self, server: ScriptedServer | None, reply: Reply) -> ProviderError:
        self.scripted(server).queue(reply)
        request = self.request(ChatMessage("user", "Hello?"))
        with pytest.raises(ProviderError) as caught:
            self.run(server, lambda p: p.complete(request))
        error = caught.value
        assert str(error) and "\n" not in str(error), "errors are one line a user can act on"
        return error

    @pytest.mark.parametrize(("status", "kind"), _HTTP_FAILURES)
    def test_http_errors_are_classified(
        self, server: ScriptedServer | None, status: int, kind: ErrorKind
    ) -> None:
        error = self._fails(server, Reply.error(status))
        assert error.kind is kind
        assert error.status == status

    def test_retry_after_is_read(self, server: ScriptedServer | None) -> None:
        error = self._fails(server, Reply.error(429, retry_after=7))
        assert error.kind is ErrorKind.RATE_LIMIT and error.retryable
        assert error.retry_after == 7

    def test_stream_cut_short_is_a_connection_error(self, server: ScriptedServer | None) -> None:
        error = self._fails(server, Reply.cut("This reply will not finish", after_chunks=3))
        assert error.kind is ErrorKind.CONNECTION and error.retryable

    def test_malformed_response_is_a_bad_response(self, server: ScriptedServer | None) -> None:
        error = self._fails(server, Reply.malformed())
        assert error.kind is ErrorKind.BAD_RESPONSE and error.retryable

    def test_silence_times_out(self, server: ScriptedServer | None) -> None:
        settings = self.settings_for(self.scripted(server))
        self.scripted(server).queue(Reply.hang(3))
        request = self.request(ChatMessage("user", "Hello?"))

        async def impatient() -> ModelResponse:
            provider = self.make_provider(
                ProviderSettings(
                    base_url=settings.base_url,
                    api_key=settings.api_key,
                    timeout_seconds=0.3,
                    options=settings.options,
                )
            )
            try:
                return await provider.complete(request)
            finally:
                await provider.aclose()

        with pytest.raises(ProviderError) as caught:
            asyncio.run(impatient())
        assert caught.value.kind is ErrorKind.TIMEOUT and caught.value.retryable

    def test_api_key_is_sent_only_as_a_credential(self, server: ScriptedServer | None) -> None:
        scripted = self.scripted(server)
        scripted.queue(Reply.say("ok"))
        self.run(server, lambda p: p.complete(self.request(ChatMessage("user", "Hi"))))
        recorded = scripted.requests[-1]
        assert any("test-key" in value for value in recorded.headers.values())
        assert "test-key" not in json.dumps(recorded.json)
