"""The Telegram Bot API on loopback, for tests of the Telegram plugin and the gateway:
``FakeTelegram`` (long polling, sending, editing, buttons, files, 429s, a control API to act
as users) in :mod:`.telegram_server`; the files it serves in :mod:`.telegram_files`, and how
it reads Telegram's markup in :mod:`.telegram_markup`. It changes with the plugin it fakes
for, so it lives beside it. Importing it needs hermes-testkit (``[testing]``)."""

from __future__ import annotations

from hermes_plugin_platform_telegram.testing.telegram_server import (
    DEFAULT_TOKEN,
    FakeTelegram,
    SentMessage,
)

__all__ = ["DEFAULT_TOKEN", "FakeTelegram", "SentMessage"]
