"""How far a platform has read each of its conversations, kept across restarts.

A chat service that does not replay what was said while the bot was away (Slack after its
retries, Discord after a session it could not resume, or after a restart) is read back
from these positions: each conversation's newest message handed over to the gateway.
Recorded only once that message is stored, so a read-back never skips one; the gateway's
ledger admits a message id once, so reading a little too much back costs nothing.

A message whose hand-over failed holds its conversation where it was (later messages do
not move it on) until it is stored, by the next read-back, which the platform starts while
:meth:`ReadPositions.held` says some are waiting.

Kept in a JSON file of the platform's (``HERMES_HOME/platforms/NAME/read.json``), written
when :meth:`ReadPositions.save` is called (not at every message), newest conversations last,
the oldest forgotten past ``limit``.
"""

from __future__ import annotations

import contextlib
import json
import logging
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from hermes_commons.files import atomic_write_text

__all__ = ["ReadPositions"]

log = logging.getLogger("hermes.platforms")


class ReadPositions:
    """``conversation -> newest message id read``, with when each was last read."""

    def __init__(
        self,
        path: Path,
        newer: Callable[[str, str], bool],
        previous: Callable[[str], str],
        limit: int = 200,
    ) -> None:
        """``newer(a, b)``: whether message id ``a`` comes after ``b`` on this platform;
        ``previous(a)``: an id just before ``a`` (a read-back from it includes ``a``)."""
        self.path = path
        self._newer = newer
        self._previous = previous
        self._limit = limit
        self._read: dict[str, tuple[str, float]] = {}  # conversation -> (id, when read)
        self._held: dict[str, str] = {}  # conversation -> the oldest message that failed
        self._dirty = False
        with contextlib.suppress(OSError, ValueError, TypeError, AttributeError):
            loaded = json.loads(path.read_text())
            for key, (position, when) in loaded.items():
                self._read[str(key)] = (str(position), float(when))

    def __contains__(self, conversation: object) -> bool:
        return conversation in self._read

    def get(self, conversation: str) -> str | None:
        """The newest message id of ``conversation`` read (or held before), if any."""
        known = self._read.get(conversation)
        return known[0] if known is not None else None

    def restart(self, conversation: str, position: str) -> None:
        """Stand ``conversation`` at ``position``, whatever was read or held before (the
        platform's history starts over: a new database)."""
        self._held.pop(conversation, None)
        self._read.pop(conversation, None)
        self._read[conversation] = (position, time.time())
        self._dirty = True

    def saw(self, conversation: str, position: str) -> None:
        """``position`` (a message id) of ``conversation`` is stored by the gateway."""
        held = self._held.get(conversation)
        if held is not None and not self._newer(held, position):
            if position != held:
                return  # held until the failed one is stored
            del self._held[conversation]  # the failed one is in: move on from it
        known = self._read.get(conversation)
        if known is not None and not self._newer(position, known[0]):
            return
        self._read.pop(conversation, None)  # newest last: the oldest go first past the limit
        self._read[conversation] = (position, time.time())
        while len(self._read) > self._limit:
            del self._read[next(iter(self._read))]
        self._dirty = True

    async def storing(
        self, conversation: str | None, position: str, store: Awaitable[object]
    ) -> None:
        """Await ``store`` (the gateway storing the message at ``position``); then the
        conversation has read it or, if storing raised, is held before it (and it raises).
        ``conversation`` None: one not read back."""
        try:
            await store
        except BaseException:
            if conversation is not None:
                self.failed(conversation, position)
            raise
        if conversation is not None:
            self.saw(conversation, position)

    def failed(self, conversation: str, position: str) -> None:
        """Handing ``position`` over failed: hold the conversation before it."""
        held = self._held.get(conversation)
        if held is None or self._newer(held, position):
            self._held[conversation] = position
        known = self._read.get(conversation)
        if known is None or not self._newer(position, known[0]):
            self._read.pop(conversation, None)
            self._read[conversation] = (self._previous(position), time.time())
            self._dirty = True

    def held(self) -> bool:
        """Some message failed and waits to be read back."""
        return bool(self._held)

    def active(self, within_seconds: float) -> list[tuple[str, str]]:
        """``(conversation, newest id read)`` of those read in the last ``within_seconds``."""
        since = time.time() - within_seconds
        return [(key, position) for key, (position, when) in self._read.items() if when >= since]

    def save(self) -> None:
        if not self._dirty:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # Not synced: a position lost to a power cut only reads a little more back.
            atomic_write_text(self.path, json.dumps(self._read), sync=False)
            self._dirty = False
        except OSError as exc:
            log.warning("could not save %s: %s", self.path, exc)
