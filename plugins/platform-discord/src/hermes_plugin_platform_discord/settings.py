"""``platforms.discord`` and the token beside it, checked before anything connects."""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import urlsplit

from hermes_sdk.platform import PlatformContext, PlatformNotConfigured

__all__ = ["DiscordSettings"]

TOKEN_VARIABLE = "DISCORD_BOT_TOKEN"


def _ids(value: object, key: str) -> frozenset[str]:
    if value is None:
        return frozenset()
    if not isinstance(value, list | tuple):
        value = [value]
    ids = {str(item).strip() for item in value}
    wrong = sorted(item for item in ids if not item.isdigit())
    if wrong:
        raise PlatformNotConfigured(
            f"platforms.discord.{key} takes numeric ids (turn on Developer Mode, then "
            f"right-click > Copy ID), not {wrong[0]!r}"
        )
    return frozenset(ids)


def _url(value: object, key: str, schemes: set[str]) -> str | None:
    url = str(value or "").strip().rstrip("/") or None
    if url is not None:
        parts = urlsplit(url)
        if parts.scheme not in schemes or not parts.netloc:
            wanted = " or ".join(f"{scheme}://" for scheme in sorted(schemes))
            raise PlatformNotConfigured(
                f"platforms.discord.{key} must be a {wanted} URL, not {url!r}"
            )
    return url


@dataclass(frozen=True, slots=True)
class DiscordSettings:
    token: str = field(repr=False)
    allowed_guilds: frozenset[str]
    """Servers whose channels it listens in; empty: every server the bot was added to (who
    may talk to it is still the gateway's allowlist)."""
    require_mention: bool
    api_url: str | None
    """Another REST base (``.../api/v10``), for a test server; None: Discord's own."""
    gateway_url: str | None
    """Another gateway WebSocket (``ws://...``), for a test server; None: Discord's own."""

    @classmethod
    def from_context(cls, context: PlatformContext) -> DiscordSettings:
        config = context.config
        token = context.token(
            TOKEN_VARIABLE,
            "your bot's token (Discord Developer Portal > your application > Bot > Reset Token)",
        )
        api_url = _url(config.get("api_url"), "api_url", {"http", "https"})
        gateway_url = _url(config.get("gateway_url"), "gateway_url", {"ws", "wss"})
        _ids(config.get("allowed_users"), "allowed_users")  # the gateway reads them; @names fail
        return cls(
            token=token,
            allowed_guilds=_ids(config.get("allowed_guilds"), "allowed_guilds"),
            require_mention=config.get("require_mention", True) is not False,
            api_url=api_url,
            gateway_url=gateway_url,
        )
