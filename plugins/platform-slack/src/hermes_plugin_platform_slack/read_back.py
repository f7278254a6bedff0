"""Reading back what Slack stopped redelivering.

Slack retries an event the app did not acknowledge three times over about six minutes (at
once, after a minute, after five), then drops it. So after a longer outage, or a restart,
the conversations the bot was reading are read back from the newest message it handed over
(``conversations.history``, a thread's with ``conversations.replies``), and each message is
handed over like its event: the gateway's ledger admits a ts once, so a message that also
arrives as an event is not answered twice.

Where each conversation was read to is kept in ``HERMES_HOME/platforms/slack/read.json``:
the newest :data:`MAX_CONVERSATIONS`, each read back only if it was active in the last
:data:`WINDOW_SECONDS`, :data:`MAX_MESSAGES` messages at most.
"""

from __future__ import annotations

import contextlib
import json
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from hermes_commons.files import atomic_write_text

__all__ = ["MAX_MESSAGES", "ReadPositions", "read_back"]

log = logging.getLogger("hermes.slack")

MAX_CONVERSATIONS = 200
WINDOW_SECONDS = 7 * 24 * 3600
MAX_MESSAGES = 200
"""Per conversation: past that, the oldest missed messages are left (and said in the log)."""

Call = Callable[..., Awaitable[Mapping[str, Any]]]
"""The adapter's Web API call: ``await call("conversations.history", channel=...)``."""


def _newer(ts: str, than: str) -> bool:
    try:
        return Decimal(ts) > Decimal(than)
    except InvalidOperation:
        return False


class ReadPositions:
    """The newest ts handed over in each conversation (a channel, or a thread of it)."""

    def __init__(self, home: str) -> None:
        self.path = Path(home) / "platforms" / "slack" / "read.json"
        self._read: dict[str, str] = {}  # "CHANNEL THREAD_TS" ("CHANNEL " at top) -> ts
        self._dirty = False
        with contextlib.suppress(OSError, ValueError, TypeError, AttributeError):
            loaded = json.loads(self.path.read_text())
            self._read = {str(k): str(v) for k, v in loaded.items()}

    def saw(self, channel: str, thread_ts: str | None, ts: str) -> None:
        key = f"{channel} {thread_ts or ''}"
        if key in self._read and not _newer(ts, self._read[key]):
            return
        self._read.pop(key, None)  # newest last, so the oldest go first past the limit
        self._read[key] = ts
        while len(self._read) > MAX_CONVERSATIONS:
            del self._read[next(iter(self._read))]
        self._dirty = True

    def active(self, now: float | None = None) -> list[tuple[str, str | None, str]]:
        """``(channel, thread_ts or None, newest ts read)`` of the recently active ones."""
        since = Decimal((now if now is not None else time.time()) - WINDOW_SECONDS)
        found = []
        for key, ts in self._read.items():
            channel, _, thread = key.partition(" ")
            with contextlib.suppress(InvalidOperation):
                if Decimal(ts) >= since:
                    found.append((channel, thread or None, ts))
        return found

    def save(self) -> None:
        if not self._dirty:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # Not synced: a position lost to a power cut only reads a little more back.
            atomic_write_text(self.path, json.dumps(self._read), sync=False)
            self._dirty = False
        except OSError as exc:
            log.warning("slack: could not save %s: %s", self.path, exc)


async def _missed(call: Call, channel: str, thread: str | None, after: str) -> list[dict[str, Any]]:
    """The conversation's messages newer than ``after``, oldest first."""
    found: list[dict[str, Any]] = []
    cursor = ""
    while len(found) < MAX_MESSAGES + 1:
        arguments: dict[str, Any] = {"channel": channel, "oldest": after, "limit": 100}
        if cursor:
            arguments["cursor"] = cursor
        if thread is None:
            page = await call("conversations.history", **arguments)
        else:
            page = await call("conversations.replies", ts=thread, **arguments)
        found.extend(m for m in page.get("messages") or () if _newer(str(m.get("ts")), after))
        cursor = str((page.get("response_metadata") or {}).get("next_cursor") or "")
        if not page.get("has_more") or not cursor:
            break
    found.sort(key=lambda m: Decimal(str(m["ts"])))
    if thread is not None:  # the parent comes with its replies; it is its own conversation
        found = [m for m in found if m.get("ts") != thread]
    if len(found) > MAX_MESSAGES:
        log.warning(
            "slack: more than %d messages in %s while away; the oldest are skipped",
            MAX_MESSAGES,
            channel,
        )
        found = found[-MAX_MESSAGES:]
    return found


async def read_back(
    call: Call,
    positions: ReadPositions,
    hand_over: Callable[[dict[str, Any]], Awaitable[None]],
) -> int:
    """Hand over what each recently active conversation missed, as ``message`` events;
    returns how many. A conversation Slack will not read back is skipped with a line."""
    count = 0
    for channel, thread, after in positions.active():
        try:
            missed = await _missed(call, channel, thread, after)
        except Exception as exc:  # noqa: BLE001 - one conversation never stops the others
            log.info("slack: could not read back %s (%s)", channel, str(exc).splitlines()[0][:200])
            continue
        for message in missed:
            event = {
                **message,
                "type": "message",
                "channel": channel,
                "channel_type": "im" if channel.startswith("D") else "channel",
            }
            await hand_over(event)
            count += 1
    positions.save()
    return count
