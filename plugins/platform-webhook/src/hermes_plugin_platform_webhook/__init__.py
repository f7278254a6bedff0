"""x

Importing this module is cheap: httpx is imported when the gateway starts the platform.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from hermes_sdk import PlatformSpec, hookimpl
from hermes_sdk.platform import PlatformContext


def build(context: PlatformContext) -> Any:
    """The factory the gateway calls. ``context.config`` is this platform's section of
    config.yaml (under ``platforms:``); ``context.secrets`` holds the environment and
    HERMES_HOME/.env."""
    from hermes_plugin_platform_webhook.adapter import ChatAdapter

    return ChatAdapter(context)


@hookimpl
def hermes_platforms() -> Iterator[PlatformSpec]:
    yield PlatformSpec(
        name="platform_webhook",
        description="x",
        factory=build,
    )
