"""The WhatsApp Cloud API on loopback, for tests: :class:`FakeWhatsApp`."""

from hermes_plugin_platform_whatsapp.testing.whatsapp_server import (
    APP_SECRET,
    PHONE_ID,
    TOKEN,
    VERIFY_TOKEN,
    FakeWhatsApp,
    SentMessage,
)

__all__ = ["APP_SECRET", "PHONE_ID", "TOKEN", "VERIFY_TOKEN", "FakeWhatsApp", "SentMessage"]
