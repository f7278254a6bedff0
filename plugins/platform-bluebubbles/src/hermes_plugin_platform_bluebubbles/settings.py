"""``platforms.bluebubbles`` and the secrets beside it (hermes-agent's names:
``BLUEBUBBLES_SERVER_URL``, ``BLUEBUBBLES_PASSWORD``), checked before anything connects."""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from hermes_commons.listener_routes import route_of
from hermes_commons.wake_words import compile_wake_words
from hermes_sdk.platform import PlatformContext, PlatformNotConfigured

__all__ = ["BlueBubblesSettings"]

DEFAULT_PATH = "/bluebubbles/webhook"
DEFAULT_MENTIONS = (r"(?<![\w@])@?hermes\s+agent\b[,:\-]?", r"(?<![\w@])@?hermes\b[,:\-]?")
"""hermes-agent's wake words: iMessage has no mention of a bot to look for."""


_TAILNET = ipaddress.ip_network("100.64.0.0/10")


def _near(host: str) -> bool:
    """Loopback, the local network or a tailnet (Tailscale's addresses, which travel
    encrypted): where plain http is the norm for a BlueBubbles server (a Mac at home), and
    the password does not cross the internet in the clear."""
    if host == "localhost" or host.endswith((".local", ".lan", ".home.arpa", ".ts.net")):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    tailnet = address.version == 4 and address in _TAILNET
    return address.is_loopback or address.is_private or address.is_link_local or tailnet


@dataclass(frozen=True, slots=True)
class BlueBubblesSettings:
    server_url: str
    """The BlueBubbles server (``http://192.168.1.20:1234``, or its https address)."""
    password: str = field(repr=False)
    webhook_url: str | None
    """Where the server can reach the gateway's listener; None: no webhook, only reading
    every ``poll_seconds``."""
    path: str
    """Where that webhook arrives on the gateway's HTTP listener."""
    require_mention: bool
    mentions: tuple[re.Pattern[str], ...]
    """In a group, a message that matches one of these is for the bot."""
    read_receipts: bool
    poll_seconds: float | None
    """How often the server is read even without a webhook; None: chosen at start."""

    @classmethod
    def from_context(cls, context: PlatformContext) -> BlueBubblesSettings:
        config, secrets = context.config, context.secrets
        url = str(config.get("server_url") or secrets.get("BLUEBUBBLES_SERVER_URL") or "")
        url = url.strip().rstrip("/")
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise PlatformNotConfigured(
                "set BLUEBUBBLES_SERVER_URL in HERMES_HOME/.env (or platforms.bluebubbles."
                "server_url) to your BlueBubbles server's address, as http://192.168.1.20:1234 "
                "(BlueBubbles > Settings > Connection)"
            )
        if parts.scheme == "http" and not _near(parts.hostname):
            raise PlatformNotConfigured(
                f"BLUEBUBBLES_SERVER_URL {url!r} is plain http on the internet: the server "
                "password would travel in the clear; use its https address (a Cloudflare or "
                "ngrok URL in BlueBubbles > Settings > Connection)"
            )
        password = secrets.get("BLUEBUBBLES_PASSWORD", "").strip()
        if not password:
            raise PlatformNotConfigured(
                "set BLUEBUBBLES_PASSWORD in HERMES_HOME/.env to the BlueBubbles server "
                "password (BlueBubbles > Settings > Connection)"
            )
        webhook = str(config.get("webhook_url") or "").strip() or None
        path = DEFAULT_PATH
        if webhook is not None:
            path = route_of(
                webhook,
                "platforms.bluebubbles.webhook_url",
                "the address the Mac reaches the gateway's listener at",
                "http://192.168.1.30:8644/bluebubbles/webhook",
            )
        return cls(
            server_url=url,
            password=password,
            webhook_url=webhook,
            path=path,
            require_mention=config.get("require_mention", True) is not False,
            mentions=compile_wake_words(
                config.get("mention_patterns", list(DEFAULT_MENTIONS)),
                "platforms.bluebubbles.mention_patterns",
            ),
            read_receipts=config.get("read_receipts", True) is not False,
            poll_seconds=_poll(config.get("poll_seconds")),
        )


def _poll(raw: object) -> float | None:
    if raw is None:
        return None
    if isinstance(raw, bool) or not isinstance(raw, int | float) or not 1 <= raw <= 3600:
        raise PlatformNotConfigured(
            f"platforms.bluebubbles.poll_seconds is a number of seconds from 1 to 3600, not {raw!r}"
        )
    return float(raw)
