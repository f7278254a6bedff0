"""Moved to :mod:`hermes_plugin_platform_discord.testing`
(the hermes-plugin-platform-discord package): this old name still imports it, with a
DeprecationWarning, until hermes-sdk 0.3."""

from hermes_sdk._moved import moved

moved(__name__, "hermes_plugin_platform_discord.testing", "hermes-plugin-platform-discord")
