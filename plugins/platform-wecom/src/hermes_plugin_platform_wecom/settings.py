"""``platforms.wecom`` and the secrets beside it, under hermes-agent's names for a
self-built app's callbacks (WECOM_CALLBACK_CORP_ID, WECOM_CALLBACK_CORP_SECRET,
WECOM_CALLBACK_AGENT_ID, WECOM_CALLBACK_TOKEN, WECOM_CALLBACK_ENCODING_AES_KEY), checked
before anything is served."""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from hermes_sdk.platform import PlatformContext, PlatformNotConfigured

__all__ = ["API", "WeComSettings"]

API = "https://qyapi.weixin.qq.com"
DEFAULT_PATH = "/wecom/callback"
FORMATS = ("text", "markdown")


@dataclass(frozen=True, slots=True)
class WeComSettings:
    corp_id: str
    agent_id: int
    corp_secret: str = field(repr=False)
    """The app's Secret: access tokens for the send API."""
    token: str = field(repr=False)
    """The callback's Token: each request's ``msg_signature`` is made with it."""
    aes_key: str = field(repr=False)
    """The callback's EncodingAESKey (43 characters): the AES-256 key, base64."""
    path: str
    api_url: str
    message_format: str

    @classmethod
    def from_context(cls, context: PlatformContext) -> WeComSettings:
        config, secrets = context.config, context.secrets

        def setting(key: str, variable: str) -> str:
            return str(config.get(key) or secrets.get(variable) or "").strip()

        corp_id = setting("corp_id", "WECOM_CALLBACK_CORP_ID")
        agent = setting("agent_id", "WECOM_CALLBACK_AGENT_ID")
        secret = str(secrets.get("WECOM_CALLBACK_CORP_SECRET") or "").strip()
        token = str(secrets.get("WECOM_CALLBACK_TOKEN") or "").strip()
        aes_key = str(secrets.get("WECOM_CALLBACK_ENCODING_AES_KEY") or "").strip()
        missing = [
            name
            for name, value in (
                ("platforms.wecom.corp_id", corp_id),
                ("platforms.wecom.agent_id", agent),
                ("WECOM_CALLBACK_CORP_SECRET", secret),
                ("WECOM_CALLBACK_TOKEN", token),
                ("WECOM_CALLBACK_ENCODING_AES_KEY", aes_key),
            )
            if not value
        ]
        if missing:
            raise PlatformNotConfigured(
                f"set {', '.join(missing)} (the secrets in HERMES_HOME/.env) from the WeCom "
                "admin console: My Company > Corp ID; App Management > your app > AgentId, "
                "Secret, and Receive Messages > Token, EncodingAESKey"
            )
        if not agent.isdigit():
            raise PlatformNotConfigured(
                f"platforms.wecom.agent_id is the app's AgentId (digits), not {agent!r}"
            )
        if len(aes_key) != 43 or not _decodes(aes_key):
            raise PlatformNotConfigured(
                "WECOM_CALLBACK_ENCODING_AES_KEY is the 43 characters the console made "
                "(Receive Messages > EncodingAESKey), not what is set"
            )
        path = "/" + str(config.get("callback_path") or DEFAULT_PATH).strip().strip("/")
        if path == "/":
            raise PlatformNotConfigured(
                "platforms.wecom.callback_path needs a path of its own, as /wecom/callback: "
                "the gateway's listener is shared with the other platforms"
            )
        api = str(config.get("api_url") or API).strip().rstrip("/")
        if urlsplit(api).scheme not in ("http", "https") or not urlsplit(api).hostname:
            raise PlatformNotConfigured(f"platforms.wecom.api_url is WeCom's API, as {API}")
        message_format = str(config.get("message_format") or "text").strip()
        if message_format not in FORMATS:
            raise PlatformNotConfigured(
                "platforms.wecom.message_format is text (WeCom and WeChat show it) or "
                f"markdown (WeCom's own client only), not {message_format!r}"
            )
        return cls(
            corp_id=corp_id,
            agent_id=int(agent),
            corp_secret=secret,
            token=token,
            aes_key=aes_key,
            path=path,
            api_url=api,
            message_format=message_format,
        )


def _decodes(aes_key: str) -> bool:
    try:
        return len(base64.b64decode(aes_key + "=")) == 32
    except (binascii.Error, ValueError):
        return False
