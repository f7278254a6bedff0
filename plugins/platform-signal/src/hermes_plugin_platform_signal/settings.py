"""``platforms.signal`` and the settings beside it (hermes-agent's names: SIGNAL_HTTP_URL,
SIGNAL_ACCOUNT), checked before anything connects."""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from hermes_sdk.platform import PlatformContext, PlatformNotConfigured

__all__ = ["SignalSettings"]

_E164 = re.compile(r"^\+[1-9]\d{6,14}$")


@dataclass(frozen=True, slots=True)
class SignalSettings:
    daemon_url: str
    """signal-cli's HTTP daemon (``signal-cli -a NUMBER daemon --http 127.0.0.1:8080
    --receive-mode=on-connection``)."""
    account: str
    """The bot's own number, as registered with signal-cli (E.164)."""
    require_mention: bool
    """In groups: answer only a mention of the bot or a reply to it."""

    @classmethod
    def from_context(cls, context: PlatformContext) -> SignalSettings:
        config, secrets = context.config, context.secrets
        url = str(config.get("daemon_url") or secrets.get("SIGNAL_HTTP_URL") or "").strip()
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise PlatformNotConfigured(
                "set platforms.signal.daemon_url (or SIGNAL_HTTP_URL) to signal-cli's HTTP "
                "daemon, as http://127.0.0.1:8080 (signal-cli -a +NUMBER daemon --http "
                "127.0.0.1:8080 --receive-mode=on-connection)"
            )
        account = str(config.get("account") or secrets.get("SIGNAL_ACCOUNT") or "").strip()
        if not _E164.match(account):
            raise PlatformNotConfigured(
                "set platforms.signal.account (or SIGNAL_ACCOUNT) to the bot's number as "
                f"signal-cli registered it, as +15551234567, not {account!r}"
            )
        return cls(
            daemon_url=url.rstrip("/"),
            account=account,
            require_mention=config.get("require_mention", True) is not False,
        )
