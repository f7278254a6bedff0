"""Bundles loaded with ``/bundles``, waiting for the next message of their chat (the
``hermes_turn_context`` hook hands them over). A module of its own: the hook runs before
every turn, so it must not import more than this."""

from __future__ import annotations

import threading
import time
from collections import OrderedDict

__all__ = ["queue_for_turn", "take_for_turn"]

WAIT_SECONDS = 600
"""A bundle loaded and never followed by a message is forgotten after this."""
NOT_A_CHAT = ("review", "cron", "delegate")
"""Sources whose turns are no one's next message (a background review, a scheduled job, a
delegated child working for its parent)."""
SEEN_AT_MOST = 20_000

_waiting: dict[str, tuple[float, str]] = {}
"""Bundles loaded with /bundles, by session (or "new:<scope>" before the first message of
a new one), waiting for the next message of that session."""
_seen: OrderedDict[str, None] = OrderedDict()
"""Sessions that had a turn in this process (the newest kept): only a session's first
message takes what was queued before it existed."""
_lock = threading.Lock()


def queue_for_turn(key: str, text: str) -> None:
    with _lock:
        known = _waiting.get(key)
        joined = f"{known[1]}\n\n{text}" if known else text
        _waiting[key] = (time.monotonic(), joined)


def take_for_turn(session_id: str, user_scope: str | None, source: str) -> str | None:
    """What /bundles queued for this turn: its session's, or (the first message of a new
    session) its person's; nothing for a review's or a job's turn."""
    if source in NOT_A_CHAT:
        return None
    now = time.monotonic()
    with _lock:
        first = session_id not in _seen
        _seen[session_id] = None
        if len(_seen) > SEEN_AT_MOST:
            _seen.popitem(last=False)
        if not _waiting:
            return None
        for key, (at, _text) in list(_waiting.items()):
            if now - at > WAIT_SECONDS:
                del _waiting[key]
        found = _waiting.pop(session_id, None)
        fresh = _waiting.pop(f"new:{user_scope or ''}", None) if first else None
    parts = [part[1] for part in (found, fresh) if part]
    return "\n\n".join(parts) if parts else None
