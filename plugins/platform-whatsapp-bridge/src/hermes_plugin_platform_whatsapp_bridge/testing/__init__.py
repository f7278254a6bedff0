"""hermes-agent's WhatsApp bridge on loopback, for tests: :class:`FakeBridge`."""

from hermes_plugin_platform_whatsapp_bridge.testing.bridge import BOT, FakeBridge, Sent

__all__ = ["BOT", "FakeBridge", "Sent"]
