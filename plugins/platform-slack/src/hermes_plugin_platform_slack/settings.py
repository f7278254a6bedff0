"""``platforms.slack`` and the tokens beside it, checked before anything connects."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal
from urllib.parse import urlsplit

from hermes_sdk.platform import PlatformContext, PlatformNotConfigured

__all__ = ["SlackSettings"]


@dataclass(frozen=True, slots=True)
class SlackSettings:
    bot_token: str = field(repr=False)
    app_token: str = field(repr=False)
    """Socket Mode's app-level token (``xapp-``); '' in Events API mode."""
    signing_secret: str = field(repr=False)
    """The Events API's signing secret; '' in Socket Mode."""
    mode: Literal["socket", "events"]
    require_mention: bool
    api_url: str | None
    """Another Web API base (``.../api/``), for a test server; None: Slack's own."""
    events_path: str
    """Where the Events API POSTs, on the gateway's HTTP listener."""

    @classmethod
    def from_context(cls, context: PlatformContext) -> SlackSettings:
        config, secrets = context.config, context.secrets
        mode = str(config.get("mode") or "socket")
        if mode not in ("socket", "events"):
            raise PlatformNotConfigured(
                f"platforms.slack.mode is 'socket' (the default) or 'events', not {mode!r}"
            )
        bot_token = secrets.get("SLACK_BOT_TOKEN", "").strip()
        if not bot_token:
            raise PlatformNotConfigured(
                "set SLACK_BOT_TOKEN in HERMES_HOME/.env to the app's Bot User OAuth Token "
                "(xoxb-..., api.slack.com/apps > OAuth & Permissions)"
            )
        app_token = secrets.get("SLACK_APP_TOKEN", "").strip()
        signing_secret = secrets.get("SLACK_SIGNING_SECRET", "").strip()
        if mode == "socket" and not app_token.startswith("xapp-"):
            raise PlatformNotConfigured(
                "set SLACK_APP_TOKEN in HERMES_HOME/.env to an app-level token with "
                "connections:write (xapp-..., Basic Information > App-Level Tokens), "
                "or use platforms.slack.mode: events"
            )
        if mode == "events" and not signing_secret:
            raise PlatformNotConfigured(
                "platforms.slack.mode: events needs SLACK_SIGNING_SECRET in HERMES_HOME/.env "
                "(Basic Information > Signing Secret)"
            )
        api_url = str(config.get("api_url") or "").strip() or None
        if api_url is not None and urlsplit(api_url).scheme not in {"http", "https"}:
            raise PlatformNotConfigured(
                f"platforms.slack.api_url must be an http(s) URL, not {api_url!r}"
            )
        for moved in ("host", "port"):
            if moved in config:
                raise PlatformNotConfigured(
                    f"platforms.slack.{moved} is gateway.http_{moved} (the HTTP listener the "
                    "platforms share)"
                )
        return cls(
            bot_token=bot_token,
            app_token=app_token,
            signing_secret=signing_secret,
            mode="events" if mode == "events" else "socket",
            require_mention=config.get("require_mention", True) is not False,
            api_url=api_url if api_url is None or api_url.endswith("/") else api_url + "/",
            events_path="/" + str(config.get("path") or "slack/events").lstrip("/"),
        )
