"""DingTalk on loopback, for tests: :class:`FakeDingTalk` (Stream mode's gateway, tokens,
session webhooks and the robot's API)."""

from hermes_plugin_platform_dingtalk.testing.dingtalk import GROUP, FakeDingTalk, Sent

__all__ = ["GROUP", "FakeDingTalk", "Sent"]
