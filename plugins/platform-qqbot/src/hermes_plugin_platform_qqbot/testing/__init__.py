"""QQ's bot platform on loopback, for tests: :class:`FakeQQ` (the token endpoint, the
gateway, the message API with its passive-reply rules)."""

from hermes_plugin_platform_qqbot.testing.qq import BOT_ID, CHANNEL, GROUP, GUILD, FakeQQ, Sent

__all__ = ["BOT_ID", "CHANNEL", "GROUP", "GUILD", "FakeQQ", "Sent"]
