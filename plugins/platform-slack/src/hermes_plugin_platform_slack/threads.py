"""The channel threads the bot answers in, kept in HERMES_HOME/platforms/slack/threads.json,
so a follow-up in such a thread needs no mention after a restart either. The newest
:data:`MAX_THREADS` are kept."""

from __future__ import annotations

import contextlib
import json
import logging
from pathlib import Path

from hermes_commons.files import atomic_write_text

__all__ = ["MAX_THREADS", "AnsweredThreads"]

log = logging.getLogger("hermes.slack")

MAX_THREADS = 2000


class AnsweredThreads:
    def __init__(self, home: str) -> None:
        self.path = Path(home) / "platforms" / "slack" / "threads.json"
        self._threads: dict[tuple[str, str], None] = {}  # insertion order: oldest first
        with contextlib.suppress(OSError, ValueError, TypeError):
            for channel, thread in json.loads(self.path.read_text()):
                self._threads[(str(channel), str(thread))] = None

    def __contains__(self, key: object) -> bool:
        return key in self._threads

    def add(self, channel: str, thread: str) -> None:
        if (channel, thread) in self._threads:
            return
        self._threads[(channel, thread)] = None
        while len(self._threads) > MAX_THREADS:
            del self._threads[next(iter(self._threads))]
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # Not synced: losing the newest entry to a power cut costs one more mention.
            atomic_write_text(self.path, json.dumps(list(self._threads)), sync=False)
        except OSError as exc:
            log.warning("slack: could not save %s: %s", self.path, exc)
