"""Feishu's open platform on loopback, for tests: :class:`FakeFeishu` (the long connection,
signed and encrypted callbacks, the token endpoint and the IM API)."""

from hermes_plugin_platform_feishu.testing.feishu import BOT_OPEN_ID, GROUP, FakeFeishu, Sent

__all__ = ["BOT_OPEN_ID", "GROUP", "FakeFeishu", "Sent"]
