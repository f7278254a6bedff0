"""Twilio on loopback, for tests: :class:`FakeTwilio`."""

from hermes_plugin_platform_sms.testing.twilio_server import (
    ACCOUNT_SID,
    AUTH_TOKEN,
    NUMBER,
    FakeTwilio,
    Text,
)

__all__ = ["ACCOUNT_SID", "AUTH_TOKEN", "NUMBER", "FakeTwilio", "Text"]
