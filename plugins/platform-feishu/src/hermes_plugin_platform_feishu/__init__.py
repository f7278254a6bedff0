"""The ``feishu`` platform: a Feishu or Lark self-built app's bot. Events come over the long
connection (no public URL needed) or as HTTP callbacks on the gateway's listener; replies,
streamed card updates and approval cards go out through the IM API. Importing this is
cheap; the adapter (and lark-oapi) is imported when the gateway starts the platform."""

from __future__ import annotations

from collections.abc import Iterator

from hermes_sdk import PlatformSpec, hookimpl


@hookimpl
def hermes_platforms() -> Iterator[PlatformSpec]:
    yield PlatformSpec(
        name="feishu",
        description="Feishu / Lark: a self-built app's bot (p2p chats, group mentions, cards)",
        factory="hermes_plugin_platform_feishu.adapter:FeishuAdapter",
    )
