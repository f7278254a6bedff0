"""Reading back what Slack stopped redelivering.

Slack retries an event the app did not acknowledge three times over about six minutes (at
once, after a minute, after five), then drops it. So after a longer outage, or a restart,
the conversations the bot was reading are read back from the newest message it handed over
(``conversations.history``, a thread's with ``conversations.replies``), and each message is
handed over like its event: the gateway's ledger admits a ts once, so a message that also
arrives as an event is not answered twice.

Where each conversation was read to is kept in ``HERMES_HOME/platforms/slack/read.json``
(the commons' :class:`ReadPositions`), each read back only if it was read in the last
:data:`WINDOW_SECONDS`, :data:`MAX_MESSAGES` messages at most.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from hermes_commons.read_positions import ReadPositions

__all__ = ["MAX_MESSAGES", "positions", "read_back"]

log = logging.getLogger("hermes.slack")

WINDOW_SECONDS = 7 * 24 * 3600
MAX_MESSAGES = 200
"""Per conversation: past that, the oldest missed messages are left (and said in the log)."""
MAX_PAGES = 10
QUIET_SECONDS = 60.0
"""A connection back after less than this is not read back: Slack redelivers what it sent
meanwhile (its retries go on for about six minutes), and it refreshes connections often."""

Call = Callable[..., Awaitable[Mapping[str, Any]]]
"""The adapter's read call: ``await call("conversations.history", channel=...)`` (a GET
with the arguments in the query: Slack's read methods take no JSON body)."""
Snapshot = list[tuple[str, str]]
"""``(conversation, newest ts read)`` as they stood when the connection came back."""


def _newer(ts: str, than: str) -> bool:
    try:
        return Decimal(ts) > Decimal(than)
    except InvalidOperation:
        return False


def _previous(ts: str) -> str:
    try:
        return str(Decimal(ts) - Decimal("0.000001"))
    except InvalidOperation:
        return ts


def positions(home: str) -> ReadPositions:
    """Each conversation (``"CHANNEL"`` or ``"CHANNEL THREAD_TS"``) and its newest ts read."""
    return ReadPositions(Path(home) / "platforms" / "slack" / "read.json", _newer, _previous)


def conversation_of(channel: str, thread: str | None) -> str:
    return f"{channel} {thread or ''}"


def to_read_back(positions: ReadPositions) -> Snapshot:
    return positions.active(WINDOW_SECONDS)


async def _missed(call: Call, channel: str, thread: str | None, after: str) -> list[dict[str, Any]]:
    """The conversation's messages newer than ``after``, oldest first."""
    found: list[dict[str, Any]] = []
    cursor = ""
    for _ in range(MAX_PAGES):  # history pages newest first, replies oldest first
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
    if len(found) > MAX_MESSAGES or cursor:
        log.warning(
            "slack: more than %d messages in %s while away; only the newest %d are read back",
            MAX_MESSAGES,
            channel,
            MAX_MESSAGES,
        )
        found = found[-MAX_MESSAGES:]
    return found


async def read_back(
    call: Call,
    snapshot: Snapshot,
    positions: ReadPositions,
    hand_over: Callable[[dict[str, Any]], Awaitable[None]],
) -> int:
    """Hand over what each conversation of ``snapshot`` missed, as ``message`` events;
    returns how many. A conversation Slack will not read back is skipped with a line; one
    whose message cannot be handed over is held there (the next read-back tries again)."""
    count = 0
    for conversation, after in snapshot:
        channel, _, thread_ts = conversation.partition(" ")
        thread = thread_ts or None
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
            try:
                await hand_over(event)
            except Exception as exc:  # noqa: BLE001 - held; the next read-back tries again
                positions.failed(conversation, str(message.get("ts")))
                log.warning("slack: could not hand over a message of %s: %s", channel, exc)
                break
            count += 1
    positions.save()
    return count
