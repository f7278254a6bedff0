"""The ``qqbot`` platform: an official QQ bot on QQ's gateway (direct messages, group and
guild @-messages). Importing this is cheap; the adapter (and qq-botpy) is imported when the
gateway starts the platform."""

from __future__ import annotations

from collections.abc import Iterator

from hermes_sdk import PlatformSpec, hookimpl


@hookimpl
def hermes_platforms() -> Iterator[PlatformSpec]:
    yield PlatformSpec(
        name="qqbot",
        description="QQ: an official bot (direct messages, group and guild @-messages)",
        factory="hermes_plugin_platform_qqbot.adapter:QQAdapter",
    )
