"""DingTalk on loopback, for tests: :class:`FakeDingTalk` (Stream mode's gateway, tokens,
session webhooks, the robot's API and interactive cards)."""

from hermes_plugin_platform_dingtalk.testing.dingtalk import GROUP, Card, FakeDingTalk, Sent

__all__ = ["GROUP", "Card", "FakeDingTalk", "Sent"]
