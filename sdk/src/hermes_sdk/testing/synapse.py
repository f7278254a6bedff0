"""Moved to :mod:`hermes_plugin_platform_matrix.testing`
(the hermes-plugin-platform-matrix package): this old name still imports it, with a
DeprecationWarning, until hermes-sdk 0.3."""

from hermes_sdk._moved import moved

moved(__name__, "hermes_plugin_platform_matrix.testing", "hermes-plugin-platform-matrix")
