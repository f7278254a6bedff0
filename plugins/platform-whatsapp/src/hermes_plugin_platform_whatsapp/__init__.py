"""The ``whatsapp`` platform: a WhatsApp Business number through Meta's Cloud API. Messages
arrive as webhooks on the gateway's shared HTTP listener (each POST's signature checked
with the app secret); replies, files and approval buttons go out through the Graph API
with pywa. Importing this is cheap; pywa is imported when the gateway starts it."""

from __future__ import annotations

from collections.abc import Iterator

from hermes_sdk import PlatformSpec, hookimpl


@hookimpl
def hermes_platforms() -> Iterator[PlatformSpec]:
    yield PlatformSpec(
        name="whatsapp",
        description="WhatsApp Business (the Cloud API: signed webhooks, reply buttons, media)",
        factory="hermes_plugin_platform_whatsapp.adapter:WhatsAppAdapter",
    )
