"""What an MCP tool returned, as the text the model reads: text as it is, every other kind of
content described (never dropped in silence), structured content as JSON, capped."""

from __future__ import annotations

import json
from typing import Any

__all__ = ["RESULT_CHARS", "result_text"]

RESULT_CHARS = 50_000
"""Longer results are cut here; the engine's preview and spill rules then apply."""


def _size(data: str | None) -> str:
    return f"{len(data or '') * 3 // 4:,} bytes" if data else "empty"


def _describe(block: Any) -> str:
    kind = getattr(block, "type", None)
    if kind == "text":
        return str(block.text)
    if kind == "image":
        return f"[image: {block.mime_type}, {_size(block.data)}; not shown to this model]"
    if kind == "audio":
        return f"[audio: {block.mime_type}, {_size(block.data)}; not played to this model]"
    if kind == "resource":
        resource = block.resource
        text = getattr(resource, "text", None)
        if text is not None:
            return f"[resource {resource.uri}]\n{text}"
        kind_of = resource.mime_type or "binary"
        return f"[resource {resource.uri}: {kind_of}, {_size(resource.blob)}]"
    if kind == "resource_link":
        return f"[resource link: {block.uri} ({block.name})]"
    return f"[{kind or type(block).__name__} content, not shown]"


def result_text(result: Any) -> str:
    """A CallToolResult's content as one text, capped at RESULT_CHARS."""
    parts = [_describe(block) for block in result.content or []]
    structured = getattr(result, "structured_content", None)
    if structured is not None and not any(
        getattr(b, "type", "") == "text" for b in result.content or []
    ):
        parts.append(json.dumps(structured, ensure_ascii=False, indent=1))
    text = "\n".join(parts) if parts else "(the tool returned nothing)"
    if len(text) > RESULT_CHARS:
        text = text[:RESULT_CHARS] + f"\n[… cut at {RESULT_CHARS:,} of {len(text):,} characters]"
    return text
