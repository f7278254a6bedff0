"""How big a model's context window is, and how many tokens a request to it takes.

The window comes from config.yaml (``providers.NAME.context_length``, then
``model.context_length``), else from the provider (a :class:`~hermes_sdk.context.WindowReporter`,
such as the embedded model that knows its own context size), else from a table of known
models, else a default. A context-overflow error that states the real limit corrects it for
the rest of the process. Token counts are the provider's own when its last reply reported
usage; the rest is estimated from the text (about four characters a token; CJK text, which
takes about one token a character, counts more).
"""

from __future__ import annotations

import json
import re
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
    "table_window",
    "window_in_error",
]

DEFAULT_WINDOW = 128_000
"""For a model nobody named: a window most current models have. A smaller one shows itself
on the first context-overflow error, which is then compacted and retried."""

# Longest prefix first wins; names are matched without a vendor prefix ("openai/gpt-4o").
_KNOWN_WINDOWS: tuple[tuple[str, int], ...] = (
    ("gpt-4.1", 1_047_576),
    ("gpt-4o", 128_000),
    ("gpt-4-turbo", 128_000),
    ("gpt-4", 8_192),
    ("gpt-5", 400_000),
    ("gpt-3.5-turbo", 16_385),
    ("o1-mini", 128_000),
    ("o1", 200_000),
    ("o3", 200_000),
    ("o4-mini", 200_000),
    ("claude", 200_000),
    ("gemini-1.5", 1_048_576),
    ("gemini-2", 1_048_576),
    ("gemini", 1_048_576),
    ("deepseek", 128_000),
    ("grok-4", 256_000),
    ("grok", 131_072),
    ("llama-3.1", 128_000),
    ("llama-3.2", 128_000),
    ("llama-3.3", 128_000),
    ("llama-4", 1_000_000),
    ("mistral-large", 128_000),
    ("qwen3", 131_072),
    ("qwen2.5", 131_072),
    ("kimi-k2", 131_072),
    ("glm-4", 128_000),
    ("smollm2", 8_192),
)


@dataclass(frozen=True)
class Window:
    tokens: int
    source: str
    """config, provider, table, default, or error (learnt from an overflow error)."""


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


def table_window(model: str) -> int | None:
    name = model.lower().rsplit("/", 1)[-1]
    best: tuple[int, int] | None = None
    for prefix, tokens in _KNOWN_WINDOWS:
        if name.startswith(prefix) and (best is None or len(prefix) > best[0]):
            best = (len(prefix), tokens)
    return best[1] if best else None


_LIMIT_IN_ERROR = re.compile(
    r"(?:maximum context length is|context (?:length|window|size) (?:is|of)|"
    r"available context size \(|max_model_len(?: is|=)?|maximum of|limit is|limit of)"
    r"\s*(\d[\d,_]*)\s*(?:tokens)?",
    re.IGNORECASE,
)


_LIMIT_AFTER = re.compile(r">\s*(\d[\d,_]*)\s*maximum", re.IGNORECASE)  # Anthropic's


def window_in_error(message: str) -> int | None:
    """The window an overflow error states ("maximum context length is 8192 tokens",
    "prompt is too long: 9000 tokens > 8192 maximum")."""
    found = _LIMIT_IN_ERROR.search(message) or _LIMIT_AFTER.search(message)
    if found is None:
        return None
    tokens = int(re.sub(r"[,_]", "", found.group(1)))
    return tokens if tokens >= 256 else None


def estimate_tokens(text: str) -> int:
    """About four characters a token; each non-ASCII character counts as about one token
    (CJK), by the UTF-8 bytes past the first of each character."""
    if not text:
        return 0
    extra = len(text.encode("utf-8", "surrogatepass")) - len(text)
    return (len(text) + (3 * extra) // 2) // 4 + 1


_PER_MESSAGE = 4
"""Tokens a message costs besides its text (its role and separators)."""


def message_tokens(message: ChatMessage) -> int:
    tokens = _PER_MESSAGE + estimate_tokens(message.content)
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
