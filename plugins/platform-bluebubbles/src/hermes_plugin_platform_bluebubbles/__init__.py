"""The ``bluebubbles`` platform: iMessage through a BlueBubbles server on a Mac. Messages
are read from its REST API (its webhooks only wake the reader); replies, files, typing and
read receipts go out through the same API. Importing this is cheap; httpx and aiohttp are
imported when the gateway starts it."""

from __future__ import annotations

from collections.abc import Iterator

from hermes_sdk import PlatformSpec, hookimpl


@hookimpl
def hermes_platforms() -> Iterator[PlatformSpec]:
    yield PlatformSpec(
        name="bluebubbles",
        description="iMessage through a BlueBubbles server on a Mac (tapbacks for approvals)",
        factory="hermes_plugin_platform_bluebubbles.adapter:BlueBubblesAdapter",
    )
