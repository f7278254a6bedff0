"""The ``wecom`` platform: a WeCom (企业微信) self-built app. WeCom posts each message to the
gateway's listener, encrypted and signed; replies go out through its send API. Importing
this is cheap; the adapter is imported when the gateway starts the platform."""

from __future__ import annotations

from collections.abc import Iterator

from hermes_sdk import PlatformSpec, hookimpl


@hookimpl
def hermes_platforms() -> Iterator[PlatformSpec]:
    yield PlatformSpec(
        name="wecom",
        description="WeCom (企业微信): a self-built app's encrypted callbacks and send API",
        factory="hermes_plugin_platform_wecom.adapter:WeComAdapter",
    )
