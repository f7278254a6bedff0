"""The ``signal`` platform: a Signal account run by signal-cli's JSON-RPC daemon (the
supported way to run a bot on Signal). Messages arrive on the daemon's event stream;
replies, attachments, typing and reactions go out as JSON-RPC calls. Importing this is
cheap; the adapter is imported when the gateway starts the platform."""

from __future__ import annotations

from collections.abc import Iterator

from hermes_sdk import PlatformSpec, hookimpl


@hookimpl
def hermes_platforms() -> Iterator[PlatformSpec]:
    yield PlatformSpec(
        name="signal",
        description="Signal through signal-cli's JSON-RPC daemon (DMs, groups on a mention)",
        factory="hermes_plugin_platform_signal.adapter:SignalAdapter",
    )
