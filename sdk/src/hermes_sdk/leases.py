"""Moved to :mod:`hermes_commons.leases` (the hermes-commons package): this old name still
imports it, with a DeprecationWarning, until hermes-sdk 0.3."""

from hermes_sdk._moved import moved

moved(__name__, "hermes_commons.leases")
