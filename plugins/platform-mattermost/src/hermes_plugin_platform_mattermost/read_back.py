"""Reading a channel back after the websocket was away, and what is kept across restarts
for it.

``GET /channels/ID/posts?since=MS`` returns the posts *updated* after ``MS``, newest 1000
only; a channel read back from a position gets ``since`` a margin earlier (posts made in
the same millisecond, or committed a moment after a later one, are not skipped: the
gateway admits a post id once), and pages further back with ``before=`` when the 1000 did
not reach the position. A post made before the position (edited since) is left."""

from __future__ import annotations

import json
import logging
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from hermes_commons.files import atomic_write_text

__all__ = ["MARGIN_MS", "Marks", "missed_posts"]

log = logging.getLogger("hermes.mattermost")

MARGIN_MS = 60_000
SINCE_CAP = 1000
"""The most ``since`` returns (the newest)."""
PAGE = 200
MAX_PAGES = 25
THREADS_KEPT = 512

Call = Callable[..., Awaitable[Any]]


def _created(post: dict[str, Any]) -> int:
    value = post.get("create_at")
    return value if isinstance(value, int) else 0


async def missed_posts(
    call: Call, channel_id: str, position: int, floor: int = 0
) -> list[dict[str, Any]]:
    """The channel's posts made at ``position`` (ms) or later, less the margin, but none
    before ``floor`` (the first start: history is never read), oldest first."""
    since = max(floor, position - MARGIN_MS)
    listed = await call("GET", f"/channels/{channel_id}/posts", params={"since": str(since)})
    posts: dict[str, dict[str, Any]] = dict((listed or {}).get("posts") or {})
    order = list((listed or {}).get("order") or ())
    pages = 0
    while len(order) >= SINCE_CAP or (pages and len(order) >= PAGE):
        oldest = min((posts[i] for i in order if i in posts), key=_created, default=None)
        if oldest is None or _created(oldest) <= since or pages >= MAX_PAGES:
            break
        page = await call(
            "GET",
            f"/channels/{channel_id}/posts",
            params={"before": str(oldest["id"]), "per_page": str(PAGE)},
        )
        order = list((page or {}).get("order") or ())
        posts.update((page or {}).get("posts") or {})
        pages += 1
    if pages >= MAX_PAGES:
        log.warning(
            "mattermost: more than %d posts in %s while away; the oldest are not read back",
            SINCE_CAP + MAX_PAGES * PAGE,
            channel_id,
        )
    found = [p for p in posts.values() if _created(p) > since and p.get("channel_id") == channel_id]
    return sorted(found, key=lambda p: (_created(p), str(p.get("id"))))


class Marks:
    """What the read-back needs beside each channel's position, in
    ``platforms/mattermost/marks.json``: when the bot was last connected (a channel it has
    no position for, one it joined meanwhile, is read back from then) and the threads it
    answered in (a reply there needs no mention, after a restart too)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.started = 0
        """The first start (ms): nothing older is ever read back."""
        self.last_seen = 0
        self.threads: OrderedDict[str, None] = OrderedDict()
        try:
            loaded = json.loads(path.read_text())
            self.started = int(loaded.get("started") or 0)
            self.last_seen = int(loaded.get("last_seen") or 0)
            self.threads = OrderedDict((str(t), None) for t in loaded.get("threads") or ())
        except (OSError, ValueError, TypeError, AttributeError):
            pass

    def seen_now(self) -> None:
        self.last_seen = int(time.time() * 1000)

    def thread(self, root: str) -> None:
        self.threads.pop(root, None)
        self.threads[root] = None
        while len(self.threads) > THREADS_KEPT:
            self.threads.popitem(last=False)

    def save(self) -> None:
        data = {
            "started": self.started,
            "last_seen": self.last_seen,
            "threads": list(self.threads),
        }
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_text(self.path, json.dumps(data), sync=False)
        except OSError as exc:
            log.warning("could not save %s: %s", self.path, exc)
