"""The ``dingtalk`` platform: an internal app's robot in Stream mode (no public URL needed).
Replies go through the message's session webhook or the robot's API; approvals are
interactive cards. Importing this is cheap; the adapter (and dingtalk-stream) is imported
when the gateway starts the platform."""

from __future__ import annotations

from collections.abc import Iterator

from hermes_sdk import PlatformSpec, hookimpl


@hookimpl
def hermes_platforms() -> Iterator[PlatformSpec]:
    yield PlatformSpec(
        name="dingtalk",
        description="DingTalk: an internal app's robot in Stream mode (one-to-one, group mentions)",
        factory="hermes_plugin_platform_dingtalk.adapter:DingTalkAdapter",
    )
