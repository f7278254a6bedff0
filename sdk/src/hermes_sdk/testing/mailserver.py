"""Moved to :mod:`hermes_plugin_platform_email.testing`
(the hermes-plugin-platform-email package): this old name still imports it, with a
DeprecationWarning, until hermes-sdk 0.3."""

from hermes_sdk._moved import moved

moved(__name__, "hermes_plugin_platform_email.testing", "hermes-plugin-platform-email")
