"""The ``telegram`` platform: a bot reachable in private chats, groups and forum topics.
Importing this is cheap; httpx is imported when the gateway starts the platform."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from hermes_sdk import PlatformSpec, hookimpl
from hermes_sdk.platform import PlatformContext


def _build(context: PlatformContext) -> Any:
    from hermes_plugin_platform_telegram.adapter import TelegramAdapter

    return TelegramAdapter(context)


@hookimpl
def hermes_platforms() -> Iterator[PlatformSpec]:
    yield PlatformSpec(
        name="telegram", description="Telegram bots (Bot API, long polling)", factory=_build
    )
