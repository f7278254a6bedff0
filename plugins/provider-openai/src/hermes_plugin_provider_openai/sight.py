"""Which well-known models served over chat completions take images. A model not listed is
unknown (None): ``model.vision`` or ``providers.NAME.vision`` says, else it is sent text."""

from __future__ import annotations

__all__ = ["known_sight"]

# Longest prefix first wins; names are matched without a vendor prefix ("openai/gpt-4o").
_KNOWN_SIGHT: tuple[tuple[str, bool], ...] = (
    ("gpt-4o", True),
    ("gpt-4.1", True),
    ("gpt-4-turbo", True),
    ("gpt-4-vision", True),
    ("gpt-4", False),
    ("gpt-5", True),
    ("gpt-3.5", False),
    ("chatgpt-4o", True),
    ("o1-mini", False),
    ("o1", True),
    ("o3-mini", False),
    ("o3", True),
    ("o4-mini", True),
    ("claude-3", True),
    ("claude-instant", False),
    ("claude-2", False),
    ("claude", True),
    ("gemini", True),
    ("grok-4", True),
    ("grok-2-vision", True),
    ("grok-vision", True),
    ("llama-4", True),
    ("llama-3.2-11b-vision", True),
    ("llama-3.2-90b-vision", True),
    ("llava", True),
    ("bakllava", True),
    ("moondream", True),
    ("qwen2.5-vl", True),
    ("qwen2-vl", True),
    ("qwen-vl", True),
    ("qwen3-vl", True),
    ("pixtral", True),
    ("mistral-small-3", True),
    ("gemma-3", True),
    ("gemma3", True),
    ("minicpm-v", True),
    ("internvl", True),
    ("deepseek-vl", True),
    ("deepseek", False),
    ("kimi-vl", True),
    ("glm-4v", True),
    ("glm-4.5v", True),
    ("smollm2", False),
    ("smolvlm", True),
)


def known_sight(model: str) -> bool | None:
    """Whether a well-known model takes images, by the longest matching name prefix; None
    for a model this table does not know."""
    name = model.lower().rsplit("/", 1)[-1]
    best: tuple[int, bool] | None = None
    for prefix, sees in _KNOWN_SIGHT:
        if name.startswith(prefix) and (best is None or len(prefix) > best[0]):
            best = (len(prefix), sees)
    return best[1] if best is not None else None
