"""The ``matrix`` platform: DMs, group rooms and threads on any Matrix homeserver.
Importing this is cheap; mautrix is imported when the gateway starts the platform."""

from __future__ import annotations

from collections.abc import Iterator

from hermes_sdk import PlatformSpec, hookimpl


@hookimpl
def hermes_platforms() -> Iterator[PlatformSpec]:
    yield PlatformSpec(
        name="matrix",
        description="Matrix rooms and DMs (any homeserver)",
        factory="hermes_plugin_platform_matrix.adapter:MatrixAdapter",
    )
