"""Google Chat on loopback, for tests: :class:`FakeGoogleChat` (Chat posting events, Google's
keys and token endpoint, the Chat API)."""

from hermes_plugin_platform_google_chat.testing.google_chat import (
    CHAT_EMAIL,
    PROJECT_NUMBER,
    FakeGoogleChat,
    Sent,
)

__all__ = ["CHAT_EMAIL", "PROJECT_NUMBER", "FakeGoogleChat", "Sent"]
