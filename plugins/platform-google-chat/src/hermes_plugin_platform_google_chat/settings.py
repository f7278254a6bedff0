"""``platforms.google_chat`` and the secrets beside it (hermes-agent's names:
GOOGLE_CHAT_SERVICE_ACCOUNT_JSON, GOOGLE_CHAT_HTTP_EVENTS_URL,
GOOGLE_CHAT_HTTP_EVENTS_AUDIENCE), checked before anything is served."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hermes_commons.listener_routes import route_of
from hermes_sdk.platform import PlatformContext, PlatformNotConfigured

__all__ = ["CHAT_CERTS", "CHAT_ISSUER", "GOOGLE_CERTS", "GoogleChatSettings"]

CHAT_ISSUER = "chat@system.gserviceaccount.com"
GOOGLE_CERTS = "https://www.googleapis.com/oauth2/v1/certs"
"""The keys Google signs ID tokens with (an endpoint URL audience)."""
CHAT_CERTS = f"https://www.googleapis.com/service_accounts/v1/metadata/x509/{CHAT_ISSUER}"
"""The keys Chat's own account signs with (a project number audience)."""
API = "https://chat.googleapis.com"
_PROJECT_NUMBER = re.compile(r"^\d{6,20}$")


@dataclass(frozen=True, slots=True)
class GoogleChatSettings:
    endpoint_url: str
    """The HTTP endpoint URL set in the Chat API's configuration: where Google posts
    events (its path is served on the gateway's listener)."""
    path: str
    project_number: str | None
    """Set: the requests' audience is the project number (a token Chat's own account
    signs); unset: the endpoint URL (an ID token Google signs)."""
    service_account: dict[str, Any] = field(repr=False)
    """The app's service account key, for replies through the Chat API."""
    api_url: str
    certs_url: str

    @property
    def audience(self) -> str:
        return self.project_number or self.endpoint_url

    @classmethod
    def from_context(cls, context: PlatformContext) -> GoogleChatSettings:
        config, secrets = context.config, context.secrets
        endpoint = str(
            config.get("endpoint_url") or secrets.get("GOOGLE_CHAT_HTTP_EVENTS_URL") or ""
        ).strip()
        path = route_of(
            endpoint,
            "platforms.google_chat.endpoint_url",
            "the HTTP endpoint URL of your Chat app (Google Cloud console > Google Chat API > "
            "Configuration)",
            "https://hermes.example.org/google-chat/events",
        )
        project = config.get("project_number") or secrets.get("GOOGLE_CHAT_HTTP_EVENTS_AUDIENCE")
        project_number = str(project).strip() if project else None
        if project_number is not None and not _PROJECT_NUMBER.match(project_number):
            if project_number == endpoint:
                project_number = None  # hermes-agent's audience: the endpoint URL itself
            else:
                raise PlatformNotConfigured(
                    "platforms.google_chat.project_number is your Cloud project's number "
                    f"(digits, IAM & Admin > Settings), not {project_number!r}"
                )
        default_certs = CHAT_CERTS if project_number else GOOGLE_CERTS
        return cls(
            endpoint_url=endpoint,
            path=path,
            project_number=project_number,
            service_account=_service_account(secrets),
            api_url=str(config.get("api_url") or API).rstrip("/"),
            certs_url=str(config.get("certs_url") or default_certs),
        )


def _service_account(secrets: Any) -> dict[str, Any]:
    raw = str(
        secrets.get("GOOGLE_CHAT_SERVICE_ACCOUNT_JSON")
        or secrets.get("GOOGLE_APPLICATION_CREDENTIALS")
        or ""
    ).strip()
    how = (
        "set GOOGLE_CHAT_SERVICE_ACCOUNT_JSON in HERMES_HOME/.env to the path of the Chat "
        "app's service account key (IAM & Admin > Service Accounts > Keys > Add key > JSON)"
    )
    if not raw:
        raise PlatformNotConfigured(how)
    try:
        text = raw if raw.startswith("{") else Path(raw).expanduser().read_text()
        info = json.loads(text)
    except OSError as exc:
        raise PlatformNotConfigured(f"{how}; {raw!r} cannot be read ({exc.strerror})") from None
    except ValueError:
        raise PlatformNotConfigured(f"{how}; what it names is not JSON") from None
    missing = [k for k in ("client_email", "private_key", "token_uri") if not info.get(k)]
    if info.get("type") != "service_account" or missing:
        raise PlatformNotConfigured(
            f"{how}; the key given is not a service account key (missing "
            f"{', '.join(missing) or 'type: service_account'})"
        )
    return dict(info)
