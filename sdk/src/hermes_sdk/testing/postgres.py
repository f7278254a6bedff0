"""Moved to :mod:`hermes_plugin_store_postgresql.testing`
(the hermes-plugin-store-postgresql package): this old name still imports it, with a
DeprecationWarning, until hermes-sdk 0.3."""

from hermes_sdk._moved import moved

moved(__name__, "hermes_plugin_store_postgresql.testing", "hermes-plugin-store-postgresql")
