"""``platforms.qqbot`` and the secrets beside it, under hermes-agent's names (QQ_APP_ID,
QQ_CLIENT_SECRET, QQ_SANDBOX), checked before anything connects."""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import urlsplit

from hermes_sdk.platform import PlatformContext, PlatformNotConfigured

__all__ = ["API", "SANDBOX_API", "TOKEN_URL", "QQSettings"]

API = "https://api.sgroup.qq.com"
SANDBOX_API = "https://sandbox.api.sgroup.qq.com"
TOKEN_URL = "https://bots.qq.com/app/getAppAccessToken"
MEDIA_HOSTS = ("qq.com", "qq.com.cn", "qpic.cn", "qlogo.cn", "gtimg.cn")
"""Where the files people send are kept (QQ's CDNs): a file elsewhere is not fetched."""


@dataclass(frozen=True, slots=True)
class QQSettings:
    app_id: str
    client_secret: str = field(repr=False)
    api_url: str
    token_url: str

    @classmethod
    def from_context(cls, context: PlatformContext) -> QQSettings:
        config, secrets = context.config, context.secrets
        app_id = str(config.get("app_id") or secrets.get("QQ_APP_ID") or "").strip()
        secret = str(secrets.get("QQ_CLIENT_SECRET") or "").strip()
        if not app_id or not secret:
            raise PlatformNotConfigured(
                "set QQ_APP_ID and QQ_CLIENT_SECRET in HERMES_HOME/.env to your bot's AppID and "
                "AppSecret (q.qq.com > your bot > Development > Development settings)"
            )
        sandbox = str(config.get("sandbox") or secrets.get("QQ_SANDBOX") or "").strip().lower()
        default = SANDBOX_API if sandbox in ("1", "true", "yes", "on") else API
        api = str(config.get("api_url") or default).strip().rstrip("/")
        token_url = str(config.get("token_url") or TOKEN_URL).strip()
        for name, url in (("api_url", api), ("token_url", token_url)):
            parts = urlsplit(url)
            if parts.scheme not in ("http", "https") or not parts.hostname:
                raise PlatformNotConfigured(f"platforms.qqbot.{name} is a URL, not {url!r}")
        return cls(app_id=app_id, client_secret=secret, api_url=api, token_url=token_url)

    def takes_media(self, url: str) -> bool:
        """Whether a file's URL is QQ's own (https, one of its CDNs) or the configured API's
        host (a test's QQ): a message cannot make the gateway fetch anything else."""
        parts = urlsplit(url)
        host = (parts.hostname or "").lower()
        if parts.scheme == "https" and any(
            host == h or host.endswith(f".{h}") for h in MEDIA_HOSTS
        ):
            return True
        configured = urlsplit(self.api_url)
        return parts.scheme == configured.scheme and parts.netloc == configured.netloc
