"""``platforms.teams`` and the secrets beside it (hermes-agent's names: TEAMS_CLIENT_ID,
TEAMS_CLIENT_SECRET, TEAMS_TENANT_ID; Azure's: MICROSOFT_APP_ID, MICROSOFT_APP_PASSWORD,
MICROSOFT_APP_TENANT_ID), checked before anything is served."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from hermes_sdk.platform import PlatformContext, PlatformNotConfigured

__all__ = ["BOT_ISSUER", "TeamsSettings"]

BOT_ISSUER = "https://api.botframework.com"
OPENID = "https://login.botframework.com/v1/.well-known/openidconfiguration"
LOGIN = "https://login.microsoftonline.com"
SERVICE_URL = "https://smba.trafficmanager.net/teams/"
_GUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")


@dataclass(frozen=True, slots=True)
class TeamsSettings:
    app_id: str
    """The bot's Microsoft App ID (the Azure Bot's, an Entra app registration)."""
    app_password: str = field(repr=False)
    tenant_id: str
    """The app's tenant (single-tenant bots, all new ones), or ``botframework.com``."""
    path: str
    """Where the Azure Bot's messaging endpoint arrives on the gateway's listener."""
    openid_url: str
    token_url: str
    service_url: str
    """Where replies go for a conversation no activity has come from yet (scheduled jobs
    after a restart): Teams' public connector unless set."""
    require_mention: bool

    @classmethod
    def from_context(cls, context: PlatformContext) -> TeamsSettings:
        config, secrets = context.config, context.secrets

        def value(key: str, *variables: str) -> str:
            found = config.get(key) or next((secrets[v] for v in variables if secrets.get(v)), "")
            return str(found).strip()

        app_id = value("app_id", "TEAMS_CLIENT_ID", "MICROSOFT_APP_ID").lower()
        if not _GUID.match(app_id):
            raise PlatformNotConfigured(
                "set TEAMS_CLIENT_ID (or platforms.teams.app_id) to the Azure Bot's Microsoft App "
                "ID, a GUID (Azure portal > your Azure Bot > Configuration)"
            )
        password = next(
            (
                secrets[v].strip()
                for v in ("TEAMS_CLIENT_SECRET", "MICROSOFT_APP_PASSWORD")
                if secrets.get(v, "").strip()
            ),
            "",
        )
        if config.get("app_password") or config.get("client_secret"):
            raise PlatformNotConfigured(
                "the Teams app's secret belongs in HERMES_HOME/.env as TEAMS_CLIENT_SECRET, not "
                "in config.yaml"
            )
        if not password:
            raise PlatformNotConfigured(
                "set TEAMS_CLIENT_SECRET in HERMES_HOME/.env to a client secret of the bot's app "
                "registration (Azure portal > your Azure Bot > Configuration > Manage Password)"
            )
        tenant = (
            value("tenant_id", "TEAMS_TENANT_ID", "MICROSOFT_APP_TENANT_ID") or "botframework.com"
        )
        if tenant != "botframework.com" and not _GUID.match(tenant):
            raise PlatformNotConfigured(
                f"TEAMS_TENANT_ID is the app's Directory (tenant) ID, a GUID, not {tenant!r}"
            )
        path = "/" + str(config.get("path") or "/api/messages").strip().strip("/")
        if path == "/":
            raise PlatformNotConfigured(
                "platforms.teams.path needs a path of its own (/api/messages): the gateway's "
                "listener is shared with other platforms"
            )
        service = str(config.get("service_url") or SERVICE_URL).strip()
        if urlsplit(service).scheme not in ("http", "https"):
            raise PlatformNotConfigured(
                f"platforms.teams.service_url is a URL, as {SERVICE_URL}, not {service!r}"
            )
        return cls(
            app_id=app_id,
            app_password=password,
            tenant_id=tenant,
            path=path,
            openid_url=str(config.get("openid_url") or OPENID),
            token_url=str(config.get("token_url") or f"{LOGIN}/{tenant}/oauth2/v2.0/token"),
            service_url=service.rstrip("/") + "/",
            require_mention=config.get("require_mention", True) is not False,
        )
