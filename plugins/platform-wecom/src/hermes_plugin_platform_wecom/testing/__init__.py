"""WeCom on loopback, for tests: :class:`FakeWeCom` (encrypted callbacks to the app, the
token, message and media APIs)."""

from hermes_plugin_platform_wecom.testing.wecom import FakeWeCom, Sent

__all__ = ["FakeWeCom", "Sent"]
