"""Moved: the test kit is the hermes-testkit package (:mod:`hermes_testkit`), and each
capability's fake lives beside its plugin (``hermes_plugin_platform_telegram.testing`` ...).
The old names here still work, each with a DeprecationWarning, until hermes-sdk 0.3."""

from __future__ import annotations

import importlib
import warnings
from typing import Any

_FAKES = {
    "FakeTelegram": "hermes_plugin_platform_telegram.testing.telegram_server",
    "FakeDiscord": "hermes_plugin_platform_discord.testing",
    "FakeSlack": "hermes_plugin_platform_slack.testing",
    "Synapse": "hermes_plugin_platform_matrix.testing",
    "MailServer": "hermes_plugin_platform_email.testing",
    "PostgresServer": "hermes_plugin_store_postgresql.testing",
}


def __getattr__(name: str) -> Any:
    if name.startswith("__"):
        raise AttributeError(name)
    where = _FAKES.get(name, "hermes_testkit")
    warnings.warn(
        f"hermes_sdk.testing.{name} moved to {where}.{name}: import it from there; "
        "the old name goes in hermes-sdk 0.3",
        DeprecationWarning,
        stacklevel=2,
    )
    return getattr(importlib.import_module(where), name)
