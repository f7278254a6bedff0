"""``platforms.feishu`` and the secrets beside it, under hermes-agent's names (FEISHU_APP_ID,
FEISHU_APP_SECRET, FEISHU_DOMAIN, FEISHU_CONNECTION_MODE, FEISHU_ENCRYPT_KEY,
FEISHU_VERIFICATION_TOKEN, FEISHU_WEBHOOK_PATH), checked before anything connects."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from hermes_sdk.platform import PlatformContext, PlatformNotConfigured

__all__ = ["DOMAINS", "FeishuSettings"]

DOMAINS = {"feishu": "https://open.feishu.cn", "lark": "https://open.larksuite.com"}
"""Feishu (mainland China) and Lark (everywhere else) are one platform on two domains; an
app belongs to one of them."""
MODES = ("websocket", "webhook")
DEFAULT_PATH = "/feishu/webhook"


@dataclass(frozen=True, slots=True)
class FeishuSettings:
    app_id: str
    app_secret: str = field(repr=False)
    base_url: str
    """``https://open.feishu.cn``, ``https://open.larksuite.com``, or (tests) a loopback URL."""
    mode: str
    """``websocket``: the long connection, no public URL needed; ``webhook``: Feishu posts
    events to ``path`` on the gateway's listener."""
    path: str
    encrypt_key: str = field(repr=False)
    verification_token: str = field(repr=False)
    require_mention: bool

    @classmethod
    def from_context(cls, context: PlatformContext) -> FeishuSettings:
        config, secrets = context.config, context.secrets
        app_id = str(config.get("app_id") or secrets.get("FEISHU_APP_ID") or "").strip()
        app_secret = str(secrets.get("FEISHU_APP_SECRET") or "").strip()
        if not app_id or not app_secret:
            raise PlatformNotConfigured(
                "set FEISHU_APP_ID and FEISHU_APP_SECRET in HERMES_HOME/.env to your app's "
                "credentials (Feishu or Lark developer console > your app > Credentials & "
                "Basic Info)"
            )
        mode = str(
            config.get("connection_mode") or secrets.get("FEISHU_CONNECTION_MODE") or "websocket"
        ).strip()
        if mode not in MODES:
            raise PlatformNotConfigured(
                f"platforms.feishu.connection_mode is websocket (the long connection) or "
                f"webhook (HTTP callbacks), not {mode!r}"
            )
        encrypt_key = str(secrets.get("FEISHU_ENCRYPT_KEY") or "").strip()
        token = str(secrets.get("FEISHU_VERIFICATION_TOKEN") or "").strip()
        if mode == "webhook" and not (encrypt_key or token):
            raise PlatformNotConfigured(
                "HTTP callbacks need FEISHU_ENCRYPT_KEY (better: requests are then signed) or "
                "FEISHU_VERIFICATION_TOKEN in HERMES_HOME/.env, from your app's Events & "
                "Callbacks > Encryption Strategy; without them anyone could post events"
            )
        path = str(config.get("webhook_path") or secrets.get("FEISHU_WEBHOOK_PATH") or "")
        path = "/" + (path or DEFAULT_PATH).strip().strip("/")
        if path == "/":
            raise PlatformNotConfigured(
                "platforms.feishu.webhook_path needs a path of its own, as /feishu/webhook: "
                "the gateway's listener is shared with the other platforms"
            )
        return cls(
            app_id=app_id,
            app_secret=app_secret,
            base_url=base_url_of(config.get("domain") or secrets.get("FEISHU_DOMAIN") or "feishu"),
            mode=mode,
            path=path,
            encrypt_key=encrypt_key,
            verification_token=token,
            require_mention=str(config.get("require_mention", True)).strip().lower()
            not in ("false", "no", "off", "0"),
        )


def base_url_of(domain: Any) -> str:
    """``feishu``, ``lark``, or the open platform's URL: https, or http on loopback only
    (a test's Feishu; the SDK allows no more)."""
    named = str(domain).strip()
    if named.lower() in DOMAINS:
        return DOMAINS[named.lower()]
    parts = urlsplit(named)
    host = parts.hostname or ""
    loopback = host == "localhost" or _is_loopback(host)
    if (parts.scheme == "https" and host) or (parts.scheme == "http" and loopback):
        return f"{parts.scheme}://{parts.netloc}"
    raise PlatformNotConfigured(
        f"platforms.feishu.domain is feishu (open.feishu.cn), lark (open.larksuite.com) or "
        f"an https URL, not {named!r}"
    )


def _is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
