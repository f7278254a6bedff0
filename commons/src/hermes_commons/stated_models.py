"""What an endpoint's config states about its models (a preset's ``context_windows`` and
``vision_models`` options), read the same way by every transport."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["StatedModels"]


class StatedModels:
    """A model's window and image input, as ``ProviderSettings.options`` state them."""

    def __init__(self, options: Mapping[str, Any]) -> None:
        windows = options.get("context_windows")
        self._windows = {str(k): int(v) for k, v in windows.items()} if windows else {}
        self._sighted = frozenset(str(name) for name in options.get("vision_models") or ())

    def window(self, model: str) -> int | None:
        return self._windows.get(model)

    def sees(self, model: str) -> bool | None:
        """True for a model stated to take images; None (unknown) for any other."""
        return True if model in self._sighted else None
