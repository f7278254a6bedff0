"""How big a model's context window is, and how many tokens a request to it takes.

The window comes from config.yaml (``providers.NAME.context_length``, then
``model.context_length``), else from the provider (a
:class:`~hermes_sdk.context.WindowReporter`: an embedded model knows its own context size, a
service's client the windows of its models), else a default. A context-overflow error whose
provider read the real limit from it (``ProviderError.stated_window``) corrects it for the
rest of the process. Token counts are the provider's own when its last reply reported usage;
the rest is estimated from the text (about four characters a token; CJK text, which takes
about one token a character, counts more).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hermes_sdk.models import ChatMessage, ToolSchema

__all__ = [
    "DEFAULT_WINDOW",
    "Window",
    "configured_window",
    "estimate_tokens",
    "message_tokens",
    "request_tokens",
    "schema_tokens",
]

DEFAULT_WINDOW = 128_000
"""For a model nobody named: a window most current models have. A smaller one shows itself
on the first context-overflow error, which is then compacted and retried."""


@dataclass(frozen=True)
class Window:
    tokens: int
    source: str
    """config, provider, default, or error (learnt from an overflow error)."""


def _positive(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int) and value > 0:
        return value
    return None


def configured_window(raw: Mapping[str, Any], endpoint: str) -> int | None:
    """The window config.yaml gives the endpoint's model, if it does."""
    providers = raw.get("providers")
    entry = providers.get(endpoint) if isinstance(providers, Mapping) else None
    if isinstance(entry, Mapping) and (tokens := _positive(entry.get("context_length"))):
        return tokens
    model = raw.get("model")
    return _positive(model.get("context_length")) if isinstance(model, Mapping) else None


def estimate_tokens(text: str) -> int:
    """About four characters a token; each non-ASCII character counts as about one token
    (CJK), by the UTF-8 bytes past the first of each character."""
    if not text:
        return 0
    extra = len(text.encode("utf-8", "surrogatepass")) - len(text)
    return (len(text) + (3 * extra) // 2) // 4 + 1


_PER_MESSAGE = 4
"""Tokens a message costs besides its text (its role and separators)."""


IMAGE_TOKENS = 1_600
"""What one image costs, estimated: an image scaled to 1568 pixels a side is about 1,600
tokens (1568 x 1568 / 750) at the services that publish how they count."""


def message_tokens(message: ChatMessage) -> int:
    tokens = _PER_MESSAGE + estimate_tokens(message.content) + IMAGE_TOKENS * len(message.images)
    for call in message.tool_calls:
        tokens += _PER_MESSAGE + estimate_tokens(call.name) + estimate_tokens(call.arguments)
    return tokens


def schema_tokens(schemas: Iterable[ToolSchema]) -> int:
    return sum(
        estimate_tokens(schema.name)
        + estimate_tokens(schema.description)
        + estimate_tokens(json.dumps(schema.parameters, separators=(",", ":")))
        for schema in schemas
    )


def request_tokens(messages: Sequence[ChatMessage], schemas: Sequence[ToolSchema]) -> int:
    return sum(message_tokens(message) for message in messages) + schema_tokens(schemas)
