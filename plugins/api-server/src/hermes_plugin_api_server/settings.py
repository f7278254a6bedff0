"""The ``api_server:`` section of config.yaml, and the keys from the environment / .env."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from hermes_commons.addresses import is_loopback
from hermes_commons.sections import section_settings
from hermes_sdk.service import ServiceNotConfigured

__all__ = ["ApiServerConfig", "ServerSettings", "settings_from"]

DEFAULT_PORT = 8642


class ApiServerConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    enabled: bool = False
    """Whether ``hermes gateway run`` hosts the API beside the platforms."""
    host: str = "127.0.0.1"
    port: int = Field(default=DEFAULT_PORT, ge=0, le=65535)
    cors_origins: list[str] = []
    """Browser origins allowed to call the API ("https://chat.example.org"); none by default."""
    no_auth: bool = False
    """Serve without keys: refused unless ``host`` is a loopback address."""
    max_body_bytes: int = Field(default=4 * 1024 * 1024, ge=1024)


@dataclass(frozen=True)
class ServerSettings:
    host: str
    port: int
    keys: tuple[str, ...]
    cors_origins: tuple[str, ...] = ()
    max_body_bytes: int = 4 * 1024 * 1024


def keys_from(secrets: Mapping[str, str]) -> tuple[str, ...]:
    """API_SERVER_KEY, and the comma-separated API_SERVER_KEYS."""
    keys = [secrets.get("API_SERVER_KEY", "")]
    keys += secrets.get("API_SERVER_KEYS", "").split(",")
    return tuple(dict.fromkeys(key.strip() for key in keys if key.strip()))


def settings_from(
    config: Mapping[str, Any],
    secrets: Mapping[str, str],
    *,
    host: str | None = None,
    port: int | None = None,
    no_auth: bool | None = None,
) -> ServerSettings:
    """What the server runs with: the section, overridden by command-line options. Raises
    ServiceNotConfigured (one line saying what to set) when it must not start."""
    try:
        section = section_settings("api_server", ApiServerConfig, config)
    except ValueError as exc:
        raise ServiceNotConfigured(f"config.yaml: {exc}") from None
    host = host if host is not None else section.host
    port = port if port is not None else section.port
    keys = keys_from(secrets)
    unauthenticated = section.no_auth if no_auth is None else no_auth
    if not keys:
        if not unauthenticated:
            raise ServiceNotConfigured(
                "no API key is set: put API_SERVER_KEY=<a long random string> in "
                "HERMES_HOME/.env (or API_SERVER_KEYS=a,b), or, on 127.0.0.1 only, "
                "run hermes serve --no-auth"
            )
        if not is_loopback(host):
            raise ServiceNotConfigured(
                f"refusing to serve without keys on {host}: --no-auth is for 127.0.0.1 "
                "only; set API_SERVER_KEY in HERMES_HOME/.env"
            )
    return ServerSettings(
        host=host,
        port=port,
        keys=keys,
        cors_origins=tuple(section.cors_origins),
        max_body_bytes=section.max_body_bytes,
    )
