"""The model provider contract: what the turn engine sends, what a provider returns, and how
a provider reports failure.

A provider plugin's ``ProviderSpec.factory`` is called with one :class:`ProviderSettings`
and returns an object satisfying :class:`ModelProvider`. Providers translate; they do not
retry or fall back: the engine does both, guided by the :class:`ProviderError` they raise.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Protocol, runtime_checkable

__all__ = [
    "MODEL_TIMEOUT_SECONDS",
    "REASONING_EFFORTS",
    "ChatMessage",
    "ErrorKind",
    "ImagePart",
    "ModelCall",
    "ModelProvider",
    "ModelRequest",
    "ModelResponse",
    "ModelUsage",
    "ProviderError",
    "ProviderSettings",
    "SightReporter",
    "ToolCallRequest",
    "ToolSchema",
    "classify_http_error",
    "parse_retry_after",
]


@dataclass(frozen=True, slots=True)
class ToolCallRequest:
    """A tool call the model asked for; ``arguments`` is the raw JSON text it produced."""

    id: str
    name: str
    arguments: str


@dataclass(frozen=True, slots=True)
class ChatMessage:
    """One message of the conversation sent to the model."""

    role: str  # system | user | assistant | tool
    content: str = ""
    tool_calls: tuple[ToolCallRequest, ...] = ()
    tool_call_id: str | None = None
    name: str | None = None  # the tool's name, on tool results
    reasoning_details: tuple[Mapping[str, Any], ...] = ()
    """Opaque reasoning blocks a provider returned with this (assistant) message and wants
    back on the next request, such as Anthropic's signed thinking blocks."""
    images: tuple[ImagePart, ...] = ()
    """Pictures for a model that sees, on a user message: the provider sends each in its
    wire format (an OpenAI ``image_url`` part, an Anthropic image block) after the text.
    Only sent to a model that sees; a message without them is sent exactly as before."""


@dataclass(frozen=True, slots=True)
class ImagePart:
    """An image ready for a model: re-encoded within its size limit, metadata stripped."""

    mime: str
    """``image/jpeg``, ``image/png``, ``image/gif`` or ``image/webp``."""
    data: bytes

    def base64(self) -> str:
        import base64

        return base64.b64encode(self.data).decode("ascii")

    def data_url(self) -> str:
        return f"data:{self.mime};base64,{self.base64()}"


@dataclass(frozen=True, slots=True)
class ToolSchema:
    name: str
    description: str
    parameters: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class ModelRequest:
    model: str
    messages: Sequence[ChatMessage]
    tools: Sequence[ToolSchema] = ()
    max_tokens: int | None = None
    temperature: float | None = None
    tool_choice: str | None = None
    """None or "auto": the model decides; "required": some tool; "none": no tool; any
    other value names the one tool the model must call."""
    reasoning_effort: str | None = None
    """How hard a model that reasons should think (one of :data:`REASONING_EFFORTS`);
    None: the model's own default. Each provider says it in its API's form (OpenAI's
    ``reasoning_effort``, the Responses API's ``reasoning.effort``, Anthropic's thinking
    budget); one whose models do not reason leaves it out."""


REASONING_EFFORTS: Final = ("none", "minimal", "low", "medium", "high", "xhigh")
"""``model.reasoning_effort``'s values, from none (no reasoning where the model allows it)
to xhigh (OpenAI's longest, on the models that have it)."""


@dataclass(frozen=True, slots=True)
class ModelUsage:
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0


@dataclass(frozen=True, slots=True)
class ModelCall:
    """A model call a virtual provider made to answer (a mixture's reference model): the
    engine records and prices it as that endpoint's and model's own."""

    provider: str
    """The endpoint's name (``providers:`` entry or a plugin's)."""
    model: str
    usage: ModelUsage


@dataclass(frozen=True, slots=True)
class ModelResponse:
    content: str
    tool_calls: tuple[ToolCallRequest, ...] = ()
    finish_reason: str | None = None
    usage: ModelUsage = field(default_factory=ModelUsage)
    reasoning: str | None = None
    reasoning_details: tuple[Mapping[str, Any], ...] = ()
    """Provider blocks to send back with this message next time (see ChatMessage)."""
    calls: tuple[ModelCall, ...] = ()
    """The calls a virtual provider made to other models for this response, each recorded
    and priced as its own model's (``usage`` is then the provider's own, often nothing)."""
    notices: tuple[str, ...] = ()
    """One line each the user is told about how the response was made ("reference model x
    failed: ..."), shown as the turn's notices; never sent to a model."""


MODEL_TIMEOUT_SECONDS: Final = 120.0
"""One model request's deadline unless ``model.timeout_seconds`` says otherwise."""


@dataclass(frozen=True, slots=True)
class ProviderSettings:
    """What a provider factory receives. ``api_key`` is resolved by the kernel from the
    environment or .env; providers never read secrets themselves."""

    base_url: str
    api_key: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    timeout_seconds: float = MODEL_TIMEOUT_SECONDS
    stream: bool = True
    options: Mapping[str, Any] = field(default_factory=dict)
    """Provider-specific settings from the endpoint's config (for example a context size)."""
    home: str = ""
    """HERMES_HOME, for providers that keep files there (local model weights)."""
    resolve: Callable[[str, str | None], tuple[ModelProvider, str]] | None = None
    """For a virtual provider that asks other models (a mixture of agents): another
    endpoint's provider and model by its name and a model (None: the endpoint's default),
    built by the model router as for a session; the caller closes it. Raises ValueError,
    one line, for an endpoint that cannot be used. None where the router offers none."""


@runtime_checkable
class ModelProvider(Protocol):
    """A model client. ``complete`` streams text to ``on_text`` as it arrives (when given)
    and returns the whole response; it raises :class:`ProviderError` on any failure."""

    async def complete(
        self, request: ModelRequest, on_text: Callable[[str], None] | None = None
    ) -> ModelResponse: ...

    async def aclose(self) -> None: ...


@runtime_checkable
class SightReporter(Protocol):
    """A provider that knows whether a model takes images says so: True (it sees), False
    (text only) or None (it does not know). ``model.vision`` and ``providers.NAME.vision``
    in config.yaml decide first; a model nobody vouches for is sent text only."""

    def sees(self, model: str) -> bool | None: ...


class ErrorKind(enum.StrEnum):
    AUTH = "auth"  # 401, 403: a bad or missing key
    BILLING = "billing"  # 402: out of credit
    TIMEOUT = "timeout"  # 408, or no answer in time
    PAYLOAD_TOO_LARGE = "payload_too_large"  # 413
    RATE_LIMIT = "rate_limit"  # 429
    SERVER = "server"  # 500, 502, 504
    OVERLOADED = "overloaded"  # 503, 529
    CONTEXT_OVERFLOW = "context_overflow"  # the conversation no longer fits the model
    CONTENT_POLICY = "content_policy"  # refused by the provider's policy
    BAD_REQUEST = "bad_request"  # any other 4xx: our request is wrong
    BAD_RESPONSE = "bad_response"  # the server answered something we cannot parse
    CONNECTION = "connection"  # refused, reset, or the stream was cut


_RETRYABLE = {
    ErrorKind.TIMEOUT,
    ErrorKind.RATE_LIMIT,
    ErrorKind.SERVER,
    ErrorKind.OVERLOADED,
    ErrorKind.BAD_RESPONSE,
    ErrorKind.CONNECTION,
}
_FALLBACK = _RETRYABLE | {ErrorKind.AUTH, ErrorKind.BILLING, ErrorKind.CONTENT_POLICY}
_COMPRESS = {ErrorKind.CONTEXT_OVERFLOW, ErrorKind.PAYLOAD_TOO_LARGE}


class ProviderError(Exception):
    """A classified provider failure; the message is one line a user can act on.

    ``stated_window`` is the context window (in tokens) that a context-overflow error
    states, when the provider can read it from its service's answer ("maximum context
    length is 8192 tokens"): the kernel then keeps each request under it for the rest of
    the process. Only the provider knows how its service says so; set it before raising.
    """

    def __init__(
        self,
        kind: ErrorKind,
        message: str,
        *,
        status: int | None = None,
        retry_after: float | None = None,
        stated_window: int | None = None,
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.status = status
        self.retry_after = retry_after
        self.stated_window = stated_window
        self.fixed = False
        """Whether the message ends with the step that fixes it, naming the setting or file
        (:meth:`with_fix`), rather than a generic hint."""

    def with_fix(self, fix: str) -> ProviderError:
        """The same failure, its message ending with ``fix`` (what to change, and where)
        instead of a generic hint."""
        message = str(self)
        generic = _HINTS.get(self.kind)
        if generic and message.endswith(f"; {generic}"):
            message = message[: -len(f"; {generic}")]
        fixed = ProviderError(
            self.kind,
            f"{message}; {fix}",
            status=self.status,
            retry_after=self.retry_after,
            stated_window=self.stated_window,
        )
        fixed.fixed = True
        return fixed

    @property
    def retryable(self) -> bool:
        """Worth trying again on the same provider after a pause."""
        return self.kind in _RETRYABLE

    @property
    def should_fallback(self) -> bool:
        """Worth trying the next provider in ``fallback_providers`` for this turn."""
        return self.kind in _FALLBACK

    @property
    def should_compress(self) -> bool:
        """The conversation is too big: compressing it may help, retrying will not."""
        return self.kind in _COMPRESS


_CONTEXT_WORDS = (
    "context length",
    "context_length",
    "maximum context",
    "too many tokens",
    "prompt is too long",
    "context window",
    "exceeds the maximum number of tokens",  # Gemini
    "input is too long",  # Bedrock
)
_POLICY_WORDS = (
    "content policy",
    "content_policy",
    "safety system",
    "flagged",
    "content management policy",  # Azure's content filter
)


_HINTS = {
    ErrorKind.AUTH: "check the API key",
    ErrorKind.BILLING: "check the account's credit",
    ErrorKind.CONTEXT_OVERFLOW: "the conversation is too long for this model",
}
"""What a failure of each kind says when nobody knows which setting is at fault."""


def classify_http_error(status: int, body: str, retry_after: float | None = None) -> ProviderError:
    """Turn an HTTP error status and body into a :class:`ProviderError`."""
    text = " ".join(_error_message(body).split())[:300]
    lowered = text.lower()
    if any(word in lowered for word in _CONTEXT_WORDS):
        kind = ErrorKind.CONTEXT_OVERFLOW
    elif any(word in lowered for word in _POLICY_WORDS):
        kind = ErrorKind.CONTENT_POLICY
    else:
        kind = {
            401: ErrorKind.AUTH,
            403: ErrorKind.AUTH,
            402: ErrorKind.BILLING,
            408: ErrorKind.TIMEOUT,
            413: ErrorKind.PAYLOAD_TOO_LARGE,
            429: ErrorKind.RATE_LIMIT,
            503: ErrorKind.OVERLOADED,
            529: ErrorKind.OVERLOADED,
        }.get(status, ErrorKind.SERVER if status >= 500 else ErrorKind.BAD_REQUEST)
    hint = _HINTS.get(kind)
    message = f"HTTP {status} ({kind.value}): {text or 'no details'}"
    return ProviderError(
        kind, f"{message}; {hint}" if hint else message, status=status, retry_after=retry_after
    )


def _error_message(body: str) -> str:
    """The message inside a JSON error body (``{"error": {"message": ...}}`` and its
    variants), or the body as it is."""
    import json

    try:
        data = json.loads(body)
    except ValueError:
        return body
    error = data.get("error", data) if isinstance(data, dict) else None
    message = error.get("message") if isinstance(error, dict) else None
    if isinstance(message, str):
        return message
    if isinstance(error, str):
        return error
    return body


def parse_retry_after(value: str | None) -> float | None:
    """Seconds to wait from a Retry-After header (delta-seconds or an HTTP date)."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    from email.utils import parsedate_to_datetime

    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    import time

    return max(0.0, when.timestamp() - time.time())
