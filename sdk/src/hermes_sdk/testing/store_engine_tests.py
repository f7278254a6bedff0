"""Moved to :mod:`hermes_testkit.store_engine_tests`
(the hermes-testkit package): this old name still imports it, with a
DeprecationWarning, until hermes-sdk 0.3."""

from hermes_sdk._moved import moved

moved(__name__, "hermes_testkit.store_engine_tests", "hermes-testkit")
