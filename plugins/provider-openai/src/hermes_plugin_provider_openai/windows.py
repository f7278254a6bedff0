"""What this provider knows about context windows: those of well-known models served over
chat completions (OpenAI's, and the open and hosted models OpenAI-compatible servers and
routers serve), and how those servers state the window in a context-overflow error."""

from __future__ import annotations

import re

from hermes_sdk.models import ProviderError

__all__ = ["known_window", "note_stated_window", "window_in_error"]

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


def known_window(model: str) -> int | None:
    """The window of a well-known model, by the longest matching name prefix."""
    name = model.lower().rsplit("/", 1)[-1]
    best: tuple[int, int] | None = None
    for prefix, tokens in _KNOWN_WINDOWS:
        if name.startswith(prefix) and (best is None or len(prefix) > best[0]):
            best = (len(prefix), tokens)
    return best[1] if best else None


# OpenAI's wording, vLLM's max_model_len, llama.cpp's "available context size (N", and the
# phrasings routers pass on from the models behind them.
_LIMIT_IN_ERROR = re.compile(
    r"(?:maximum context length is|context (?:length|window|size) (?:is|of)|"
    r"available context size \(|max_model_len(?: is|=)?|maximum of|limit is|limit of)"
    r"\s*(\d[\d,_]*)\s*(?:tokens)?",
    re.IGNORECASE,
)


def window_in_error(message: str) -> int | None:
    """The window an overflow error states ("maximum context length is 8192 tokens")."""
    found = _LIMIT_IN_ERROR.search(message)
    if found is None:
        return None
    tokens = int(re.sub(r"[,_]", "", found.group(1)))
    return tokens if tokens >= 256 else None


def note_stated_window(error: ProviderError) -> None:
    """Put the window a context-overflow error states on it, for the kernel to keep to."""
    if error.should_compress and error.stated_window is None:
        error.stated_window = window_in_error(str(error))
