"""``platforms.mattermost`` and the secrets beside it (hermes-agent's names: MATTERMOST_URL,
MATTERMOST_TOKEN, MATTERMOST_REPLY_MODE, MATTERMOST_REQUIRE_MENTION), checked before
anything connects."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal
from urllib.parse import urlsplit

from hermes_commons.listener_routes import route_of
from hermes_sdk.platform import PlatformContext, PlatformNotConfigured

__all__ = ["ACTIONS_PATH", "MattermostSettings"]

ACTIONS_PATH = "/mattermost/actions"
"""Where the Mattermost server posts a button's press, on the gateway's HTTP listener."""


@dataclass(frozen=True, slots=True)
class MattermostSettings:
    url: str
    """The server (``https://chat.example.org``), without /api/v4."""
    token: str = field(repr=False)
    """The bot account's access token."""
    require_mention: bool
    """In channels: answer only a post that mentions the bot (or in a thread it is in)."""
    reply_mode: Literal["thread", "flat"]
    """In channels: answer in the post's thread (the default), or in the channel itself."""
    actions_url: str | None
    """Where the Mattermost server reaches the gateway's listener for button presses
    (``http://10.0.0.5:8644/mattermost/actions``); None: approvals are typed."""
    actions_path: str

    @classmethod
    def from_context(cls, context: PlatformContext) -> MattermostSettings:
        config, secrets = context.config, context.secrets
        url = str(config.get("url") or secrets.get("MATTERMOST_URL") or "").strip().rstrip("/")
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise PlatformNotConfigured(
                "set platforms.mattermost.url (or MATTERMOST_URL) to your Mattermost server, as "
                "https://chat.example.org"
            )
        if url.endswith("/api/v4"):
            url = url[: -len("/api/v4")]
        token = context.token(
            "MATTERMOST_TOKEN",
            "the bot's access token (System Console > Integrations > Bot Accounts > Add Bot "
            "Account, or a personal access token)",
        )
        mode = str(config.get("reply_mode") or "thread").strip().lower()
        if mode == "off":  # hermes-agent's name for flat replies
            mode = "flat"
        if mode not in ("thread", "flat"):
            raise PlatformNotConfigured(
                f"platforms.mattermost.reply_mode is thread or flat, not {mode!r}"
            )
        actions = str(config.get("actions_url") or "").strip() or None
        path = ACTIONS_PATH
        if actions is not None:
            path = route_of(
                actions,
                "platforms.mattermost.actions_url",
                "where the Mattermost server reaches the gateway's listener",
                "http://10.0.0.5:8644/mattermost/actions",
            )
        return cls(
            url=url,
            token=token,
            require_mention=config.get("require_mention", True) is not False,
            reply_mode="flat" if mode == "flat" else "thread",
            actions_url=actions,
            actions_path=path,
        )
