"""The ``webhook`` platform: signed HTTP requests on named routes start turns whose replies
go to a chat (``telegram:CHAT``) or a callback URL. Importing this is cheap; aiohttp and
Jinja are imported when the gateway starts the platform."""

from __future__ import annotations

from collections.abc import Iterator

from hermes_sdk import PlatformSpec, hookimpl


@hookimpl
def hermes_platforms() -> Iterator[PlatformSpec]:
    yield PlatformSpec(
        name="webhook",
        description="Webhooks (HMAC-signed JSON on named routes; replies to a chat or a URL)",
        factory="hermes_plugin_platform_webhook.adapter:WebhookAdapter",
    )
