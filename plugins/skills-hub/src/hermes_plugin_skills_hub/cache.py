"""Search results kept in ``skills-hub/cache/``: fresh for ``skills_hub.cache_hours``, and
served however old when the hub does not answer (offline, on a plane), said as such."""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from hermes_commons.files import write_cache_json
from hermes_plugin_skills_hub.packages import Listing, Unreachable

__all__ = ["SearchCache"]


class SearchCache:
    def __init__(self, folder: Path, fresh_hours: float) -> None:
        self.folder = folder
        self.fresh_seconds = fresh_hours * 3600

    def _path(self, key: str) -> Path:
        return self.folder / f"{hashlib.sha256(key.encode()).hexdigest()[:32]}.json"

    def _read(self, key: str) -> tuple[float, list[Listing]] | None:
        try:
            data = json.loads(self._path(key).read_text(encoding="utf-8"))
            return float(data["at"]), [Listing.of(item) for item in data["listings"]]
        except (OSError, ValueError, KeyError, TypeError):
            return None

    async def get(
        self, key: str, produce: Callable[[], Awaitable[list[Listing]]], *, refresh: bool = False
    ) -> tuple[list[Listing], str | None]:
        """(listings, a note when they came from an old cache because the hub is unreachable)."""
        known = self._read(key)
        if known is not None and not refresh and time.time() - known[0] < self.fresh_seconds:
            return known[1], None
        try:
            listings = await produce()
        except Unreachable as exc:
            if known is None:
                raise
            age = time.strftime("%Y-%m-%d %H:%M", time.localtime(known[0]))
            return known[1], f"{exc}: showing what it listed at {age}"
        write_cache_json(
            self._path(key),
            {"at": time.time(), "key": key, "listings": [item.as_dict() for item in listings]},
        )
        return listings, None
