"""The ``whatsapp_bridge`` platform: a personal WhatsApp account through hermes-agent's
WhatsApp bridge (Baileys), which serves it over HTTP on this machine. Importing this is
cheap; httpx is imported when the gateway starts it."""

from __future__ import annotations

from collections.abc import Iterator

from hermes_sdk import PlatformSpec, hookimpl


@hookimpl
def hermes_platforms() -> Iterator[PlatformSpec]:
    yield PlatformSpec(
        name="whatsapp_bridge",
        description="A personal WhatsApp account through hermes-agent's bridge (Baileys)",
        factory="hermes_plugin_platform_whatsapp_bridge.adapter:BridgeAdapter",
    )
