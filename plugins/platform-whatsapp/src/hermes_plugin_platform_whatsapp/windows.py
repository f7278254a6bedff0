"""WhatsApp's customer-service window: a business may write freely to a person only within
24 hours of that person's last message; after that, only an approved template goes. Each
person's last message (when they sent it, not when Meta delivered it) is remembered in
``platforms/whatsapp/windows.json`` for 90 days, so a reply that comes too late (a
scheduled job's, one to a message delivered days late) is refused in one line instead of
vanishing: the Cloud API takes such a message and only later reports it failed.

A message that opens a window again is written down before the webhook is answered (a
crash must not leave a person's window wrongly closed); one inside an open window is
written within 30 seconds (a crash then loses nothing that matters: the window was open
anyway)."""

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
KEPT_SECONDS = 90 * 24 * 3600.0
"""Records older than this are dropped when saved (Meta asks for a template either way);
a person not written down is asked of the Cloud API, which says."""


class Windows:
    def __init__(self, home: str, clock: Callable[[], float] = time.time) -> None:
        self.path = Path(home) / "platforms" / "whatsapp" / "windows.json"
        self._clock = clock
        self._last: dict[str, float] = {}
        self._dirty = False
        self._reopened = False
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            self._last = {str(k): float(v) for k, v in data.items()}
        except FileNotFoundError:
            pass
        except (OSError, ValueError, TypeError, AttributeError) as exc:
            log.warning("whatsapp: %s is unreadable (%s); windows start unknown", self.path, exc)

    def saw(self, person: str, at: float | None = None) -> None:
        """``person`` wrote, at ``at`` (when they sent it; else now)."""
        now = self._clock()
        when = min(at or now, now)
        before = self._last.get(person)
        if before is None or when > before:
            self._last[person] = when
            self._dirty = True
            if (before is None or now - before >= WINDOW_SECONDS) and now - when < WINDOW_SECONDS:
                self._reopened = True

    def closed_since(self, person: str) -> float | None:
        """When ``person``'s window closed, or None when it is open or not known (a person
        never seen here: the Cloud API is asked, and says)."""
        last = self._last.get(person)
        if last is None or self._clock() - last < WINDOW_SECONDS:
            return None
        return last + WINDOW_SECONDS

    def save_if_reopened(self) -> None:
        if self._reopened:
            self.save()

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
        self._dirty = self._reopened = False
