"""The ``irc`` platform: a bot on an IRC server (Libera.Chat, OFTC, your own ngircd or
InspIRCd): a mention in a channel is answered in the channel, a private message privately.
Importing this is cheap; the adapter is imported when the gateway starts the platform."""

from __future__ import annotations

from collections.abc import Iterator

from hermes_sdk import PlatformSpec, hookimpl


@hookimpl
def hermes_platforms() -> Iterator[PlatformSpec]:
    yield PlatformSpec(
        name="irc",
        description="IRC: channels on a mention, private messages; TLS, SASL, flood-safe",
        factory="hermes_plugin_platform_irc.adapter:IrcAdapter",
    )
