"""Moved to :mod:`hermes_plugin_platform_telegram.testing.telegram_server`
(the hermes-plugin-platform-telegram package): this old name still imports it, with a
DeprecationWarning, until hermes-sdk 0.3."""

from hermes_sdk._moved import moved

moved(
    __name__,
    "hermes_plugin_platform_telegram.testing.telegram_server",
    "hermes-plugin-platform-telegram",
)
