"""``platforms.sms`` and the Twilio secrets beside it (hermes-agent's names, so its
``.env`` works as it is), checked before anything listens."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from hermes_sdk.platform import PlatformContext, PlatformNotConfigured

__all__ = ["SmsSettings"]

_E164 = re.compile(r"^\+[1-9]\d{6,14}$")


def _secure(url: str) -> bool:
    parts = urlsplit(url)
    loopback = parts.hostname in ("127.0.0.1", "localhost", "::1")
    return parts.scheme == "https" or (parts.scheme == "http" and loopback)


@dataclass(frozen=True, slots=True)
class SmsSettings:
    account_sid: str
    auth_token: str = field(repr=False)
    phone_number: str
    """The Twilio number texts come to and replies go from (E.164: +15551234567)."""
    webhook_url: str
    """The public address Twilio POSTs to, exactly as set in Twilio's console: the
    signature covers it, so it cannot be guessed from the request behind a proxy."""
    path: str
    """Where that address arrives on the gateway's HTTP listener."""
    signing_secret: str = field(repr=False)
    """A webhook signing key's secret, for the webhooks that say they are signed with it
    (``X-Twilio-Webhooks-Signature-Settings``); the others are signed with the auth token."""
    api_url: str | None
    """Another Twilio API host (a test server); None: api.twilio.com."""
    max_chars: int
    help_text: str
    """Hermes's own answer to HELP, for an account without Twilio's Advanced Opt-Out
    (which answers HELP itself); '' leaves it to Twilio."""
    mms: bool
    """Send files as MMS pictures (US and Canadian numbers); otherwise a file is named."""

    @classmethod
    def from_context(cls, context: PlatformContext) -> SmsSettings:
        config, secrets = context.config, context.secrets
        sid = secrets.get("TWILIO_ACCOUNT_SID", "").strip()
        if not re.fullmatch(r"AC[0-9a-f]{32}", sid):
            raise PlatformNotConfigured(
                "set TWILIO_ACCOUNT_SID in HERMES_HOME/.env to your Account SID (AC..., "
                "console.twilio.com > Account Info)"
            )
        token = secrets.get("TWILIO_AUTH_TOKEN", "").strip()
        if not token:
            raise PlatformNotConfigured(
                "set TWILIO_AUTH_TOKEN in HERMES_HOME/.env (console.twilio.com > Account Info)"
            )
        number = str(config.get("phone_number") or secrets.get("TWILIO_PHONE_NUMBER") or "")
        number = number.strip().replace(" ", "").replace("-", "")
        if not _E164.match(number):
            raise PlatformNotConfigured(
                "set TWILIO_PHONE_NUMBER in HERMES_HOME/.env (or platforms.sms.phone_number) to "
                f"your Twilio number with its country code, as +15551234567, not {number!r}"
            )
        url = str(config.get("webhook_url") or secrets.get("SMS_WEBHOOK_URL") or "").strip()
        parts = urlsplit(url)
        if parts.scheme not in ("https", "http") or not parts.hostname:
            raise PlatformNotConfigured(
                "set platforms.sms.webhook_url (or SMS_WEBHOOK_URL) to the public address you "
                "give Twilio for incoming messages (https://your.host/sms/webhook): Twilio's "
                "signature covers it"
            )
        path = "/" + str(config.get("path") or parts.path or "").strip("/")
        if path == "/":
            raise PlatformNotConfigured(
                "platforms.sms.webhook_url needs a path of its own (https://your.host/sms/webhook)"
                ": the listener is shared with the other platforms"
            )
        api_url = str(config.get("api_url") or "").strip().rstrip("/") or None
        if api_url is not None and not _secure(api_url):
            raise PlatformNotConfigured(
                "platforms.sms.api_url must be an https:// address (http:// only on this "
                f"machine's loopback): the credentials travel to it, not {api_url!r}"
            )
        raw_max = config.get("max_chars", 1600)
        try:
            max_chars = int(raw_max)
        except (TypeError, ValueError):
            max_chars = 0
        if not 160 <= max_chars <= 1600:
            raise PlatformNotConfigured(
                f"platforms.sms.max_chars is a number from 160 to 1600 (Twilio's limit), not "
                f"{raw_max!r}"
            )
        mms = config.get("mms", True)
        if not isinstance(mms, bool):
            raise PlatformNotConfigured(f"platforms.sms.mms is true or false, not {mms!r}")
        return cls(
            account_sid=sid,
            auth_token=token,
            phone_number=number,
            webhook_url=url,
            path=path,
            signing_secret=secrets.get("TWILIO_WEBHOOK_SIGNING_SECRET", "").strip(),
            api_url=api_url,
            max_chars=max_chars,
            help_text=str(config.get("help_text") or ""),
            mms=mms,
        )
