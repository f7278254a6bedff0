"""``platforms.dingtalk`` and the secrets beside it, under hermes-agent's names
(DINGTALK_CLIENT_ID, DINGTALK_CLIENT_SECRET, DINGTALK_REQUIRE_MENTION), checked before
anything connects."""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import urlsplit

from hermes_sdk.platform import PlatformContext, PlatformNotConfigured

__all__ = ["API", "DingTalkSettings"]

API = "https://api.dingtalk.com"


@dataclass(frozen=True, slots=True)
class DingTalkSettings:
    client_id: str
    """The app's Client ID (AppKey): the robot's code too, unless ``robot_code`` says."""
    client_secret: str = field(repr=False)
    robot_code: str
    api_url: str
    """``https://api.dingtalk.com``, or (tests) a loopback URL: Stream mode's gateway, the
    tokens and the robot's API."""
    require_mention: bool

    @classmethod
    def from_context(cls, context: PlatformContext) -> DingTalkSettings:
        config, secrets = context.config, context.secrets
        client_id = str(config.get("client_id") or secrets.get("DINGTALK_CLIENT_ID") or "")
        client_secret = str(secrets.get("DINGTALK_CLIENT_SECRET") or "").strip()
        if not client_id.strip() or not client_secret:
            raise PlatformNotConfigured(
                "set DINGTALK_CLIENT_ID and DINGTALK_CLIENT_SECRET in HERMES_HOME/.env to your "
                "app's Client ID and Client Secret (DingTalk developer console > your app > "
                "Credentials & Basic Info)"
            )
        api = str(config.get("api_url") or API).strip().rstrip("/")
        parts = urlsplit(api)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise PlatformNotConfigured(
                f"platforms.dingtalk.api_url is DingTalk's API, as {API}, not {api!r}"
            )
        mention = config.get("require_mention", secrets.get("DINGTALK_REQUIRE_MENTION", True))
        return cls(
            client_id=client_id.strip(),
            client_secret=client_secret,
            robot_code=str(config.get("robot_code") or client_id).strip(),
            api_url=api,
            require_mention=str(mention).strip().lower() not in ("false", "no", "off", "0"),
        )

    def takes_webhook(self, url: str) -> bool:
        """Whether a message's session webhook may be posted to: DingTalk's own (https, a
        dingtalk.com host), or the configured API's host (a test's DingTalk). Anything else
        in a message is not followed."""
        parts = urlsplit(url)
        host = (parts.hostname or "").lower()
        if parts.scheme == "https" and (host == "dingtalk.com" or host.endswith(".dingtalk.com")):
            return True
        configured = urlsplit(self.api_url)
        return parts.scheme == configured.scheme and parts.netloc == configured.netloc
