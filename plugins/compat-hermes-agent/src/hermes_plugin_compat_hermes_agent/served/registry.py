"""``tools.registry`` for hermes-agent plugins on Hermes: the two helpers tool handlers use to
shape their JSON answers. Tools are registered through ``ctx.register_tool`` here; the
registry object itself is not offered (a plugin that feature-detects it falls back)."""

from __future__ import annotations

import json
from typing import Any

__all__ = ["tool_error", "tool_result"]


def tool_error(message: object, **extra: Any) -> str:
    """``{"error": message, ...extra}`` as JSON."""
    return json.dumps({"error": str(message), **extra}, ensure_ascii=False)


def tool_result(data: Any = None, **kwargs: Any) -> str:
    """``data`` as JSON, or the keyword arguments when no data is given."""
    return json.dumps(data if data is not None else kwargs, ensure_ascii=False)
