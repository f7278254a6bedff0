"""The ``telegram`` platform: a bot reachable in private chats, groups and forum topics.
Importing this is cheap; httpx is imported when the gateway starts the platform."""

from __future__ import annotations

from collections.abc import Iterator

from hermes_sdk import PlatformSpec, hookimpl


@hookimpl
def hermes_platforms() -> Iterator[PlatformSpec]:
    yield PlatformSpec(
        name="telegram",
        description="Telegram bots (Bot API, long polling)",
        factory="hermes_plugin_platform_telegram.adapter:TelegramAdapter",
    )
