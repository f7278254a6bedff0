"""WhatsApp's customer-service window: a business may write freely to a person only within
24 hours of that person's last message; after that, only an approved template goes. Each
person's last message is remembered here (kept in ``platforms/whatsapp/windows.json``,
written at most every few seconds and when the platform stops), so a reply that comes too
late (a cron job's, a long turn's) is refused in one line instead of vanishing: the Cloud
API takes such a message and only later reports it failed."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from pathlib import Path

from hermes_commons.files import atomic_write_text

__all__ = ["WINDOW_SECONDS", "Windows"]

log = logging.getLogger("hermes.whatsapp")

WINDOW_SECONDS = 24 * 3600.0
SAVE_EVERY_SECONDS = 5.0
KEPT_SECONDS = 2 * WINDOW_SECONDS
"""Older records are dropped when saved: their windows closed long ago."""


class Windows:
    def __init__(self, home: str, clock: Callable[[], float] = time.time) -> None:
        self.path = Path(home) / "platforms" / "whatsapp" / "windows.json"
        self._clock = clock
        self._last: dict[str, float] = {}
        self._saved_at = 0.0
        self._dirty = False
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            self._last = {str(k): float(v) for k, v in data.items()}
        except FileNotFoundError:
            pass
        except (OSError, ValueError, TypeError, AttributeError) as exc:
            log.warning("whatsapp: %s is unreadable (%s); windows start unknown", self.path, exc)

    def saw(self, person: str, at: float | None = None) -> None:
        """``person`` wrote (at ``at``, the message's own time, else now)."""
        when = min(at or self._clock(), self._clock())
        if when > self._last.get(person, 0.0):
            self._last[person] = when
            self._dirty = True
        if self._dirty and self._clock() - self._saved_at >= SAVE_EVERY_SECONDS:
            self.save()

    def closed_since(self, person: str) -> float | None:
        """When ``person``'s window closed, or None when it is open or not known (a person
        never seen here: the Cloud API is asked, and says)."""
        last = self._last.get(person)
        if last is None or self._clock() - last < WINDOW_SECONDS:
            return None
        return last + WINDOW_SECONDS

    def save(self) -> None:
        if not self._dirty:
            return
        now = self._clock()
        self._last = {k: v for k, v in self._last.items() if now - v < KEPT_SECONDS}
        try:
            atomic_write_text(self.path, json.dumps(self._last), sync=False)
        except OSError as exc:
            log.warning("whatsapp: cannot write %s: %s", self.path, exc)
            return
        self._saved_at, self._dirty = now, False
