"""``platforms.whatsapp`` and the Cloud API's secrets beside it (hermes-agent's names, so
its ``.env`` works as it is), checked before anything listens."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from hermes_sdk.platform import PlatformContext, PlatformNotConfigured

__all__ = ["WhatsAppSettings"]

API_VERSION = "23.0"
"""The Graph API version asked for (pywa speaks 17.0 to 26.0)."""
_CONSOLE = "developers.facebook.com/apps > your app > WhatsApp > API Setup"


def _secure(url: str) -> bool:
    parts = urlsplit(url)
    loopback = parts.hostname in ("127.0.0.1", "localhost", "::1")
    return parts.scheme == "https" or (parts.scheme == "http" and loopback)


def _secret(context: PlatformContext, variable: str, what: str) -> str:
    value = context.secrets.get(variable, "").strip()
    if not value:
        raise PlatformNotConfigured(f"set {variable} in HERMES_HOME/.env to {what}")
    return value


@dataclass(frozen=True, slots=True)
class WhatsAppSettings:
    token: str = field(repr=False)
    """A system user's permanent access token (or the console's 24-hour one)."""
    phone_number_id: str
    """The number the bot answers from: its Phone number ID, not the number itself."""
    app_secret: str = field(repr=False)
    """Signs every webhook POST (X-Hub-Signature-256): a request without it is refused."""
    verify_token: str = field(repr=False)
    """What Meta sends back when it verifies the webhook's URL (any string you choose)."""
    api_url: str | None
    """Another Graph API host (a test server); None: graph.facebook.com."""
    api_version: str
    path: str
    """Where Meta POSTs, on the gateway's HTTP listener."""

    @classmethod
    def from_context(cls, context: PlatformContext) -> WhatsAppSettings:
        config = context.config
        token = _secret(
            context,
            str(config.get("token_env") or "WHATSAPP_CLOUD_ACCESS_TOKEN"),
            f"a system user's access token with whatsapp_business_messaging ({_CONSOLE})",
        )
        phone = str(
            config.get("phone_number_id")
            or context.secrets.get("WHATSAPP_CLOUD_PHONE_NUMBER_ID")
            or ""
        ).strip()
        if not phone.isdigit():
            raise PlatformNotConfigured(
                "set WHATSAPP_CLOUD_PHONE_NUMBER_ID in HERMES_HOME/.env (or "
                f"platforms.whatsapp.phone_number_id) to the number's Phone number ID ({_CONSOLE})"
            )
        app_secret = _secret(
            context,
            "WHATSAPP_CLOUD_APP_SECRET",
            "the app's secret, which signs every webhook (App settings > Basic > App secret)",
        )
        verify_token = _secret(
            context,
            "WHATSAPP_CLOUD_VERIFY_TOKEN",
            "a string of your choosing, entered again as the webhook's Verify token",
        )
        api_url = str(config.get("api_url") or "").strip().rstrip("/") or None
        if api_url is not None and not _secure(api_url):
            raise PlatformNotConfigured(
                "platforms.whatsapp.api_url must be an https:// address (http:// only on this "
                f"machine's loopback): the token travels to it, not {api_url!r}"
            )
        version = str(config.get("api_version") or API_VERSION).removeprefix("v")
        if not re.fullmatch(r"\d{2}\.0", version):
            raise PlatformNotConfigured(
                f"platforms.whatsapp.api_version is a Graph API version (23.0), not {version!r}"
            )
        return cls(
            token=token,
            phone_number_id=phone,
            app_secret=app_secret,
            verify_token=verify_token,
            api_url=api_url,
            api_version=version,
            path="/" + str(config.get("path") or "whatsapp/webhook").strip("/"),
        )
