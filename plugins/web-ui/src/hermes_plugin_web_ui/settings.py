"""The ``web_ui:`` section of config.yaml, and the key from the environment / .env."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from hermes_commons.addresses import is_loopback
from hermes_commons.sections import section_settings
from hermes_sdk.service import ServiceNotConfigured

__all__ = ["KEY_ENV", "WebSettings", "WebUiConfig", "settings_from"]

DEFAULT_PORT = 8650
KEY_ENV = "WEB_UI_KEY"
MIN_KEY_LENGTH = 16


class WebUiConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    enabled: bool = False
    """Whether ``hermes gateway run`` hosts the web UI beside the platforms."""
    host: str = "127.0.0.1"
    """Where to listen. Any address but a loopback one needs WEB_UI_KEY in .env."""
    port: int = Field(default=DEFAULT_PORT, ge=0, le=65535)
    allowed_hosts: list[str] = []
    """Host names the browser may use to reach it besides loopback ones, IP addresses and
    this machine's own names ("hermes.example.org" behind a proxy): a request naming any
    other host is refused (DNS rebinding). A name that is not loopback needs WEB_UI_KEY."""
    login_days: float = Field(default=14.0, gt=0, le=365)
    """How long a login lasts."""
    secure_cookie: bool = False
    """Mark the login cookie Secure: set it when a TLS proxy serves the UI over https."""
    max_body_bytes: int = Field(default=32 * 1024 * 1024, ge=1024)
    """The largest request: a message with its attachments (each also within media.max_mb)."""
    panel_seconds: float = Field(default=20.0, gt=0, le=600)
    """How long a dashboard page may take to show (its plugin's answer), before the page says
    it did not answer."""
    action_seconds: float = Field(default=300.0, gt=0, le=3600)
    """How long a dashboard button or form may take (an install, a test request)."""


@dataclass(frozen=True, slots=True)
class WebSettings:
    host: str
    port: int
    key: str | None = field(repr=False)
    """WEB_UI_KEY; None: a token made for each run is the key (loopback only)."""
    home: str
    allowed_hosts: tuple[str, ...] = ()
    login_seconds: float = 14 * 86400.0
    secure_cookie: bool = False
    max_body_bytes: int = 32 * 1024 * 1024
    panel_seconds: float = 20.0
    action_seconds: float = 300.0


def settings_from(
    config: Mapping[str, Any],
    secrets: Mapping[str, str],
    *,
    home: str,
    host: str | None = None,
    port: int | None = None,
) -> WebSettings:
    """What the UI runs with: the section, overridden by command-line options. Raises
    ServiceNotConfigured (one line saying what to set) when it must not start."""
    try:
        section = section_settings("web_ui", WebUiConfig, config)
    except ValueError as exc:
        raise ServiceNotConfigured(f"config.yaml: {exc}") from None
    host = host if host is not None else section.host
    port = port if port is not None else section.port
    key = secrets.get(KEY_ENV, "").strip() or None
    if key is None and not is_loopback(host):
        raise ServiceNotConfigured(
            f"refusing to serve the web UI on {host} without a key: put {KEY_ENV}=<a long "
            "random string> in HERMES_HOME/.env, or serve on 127.0.0.1"
        )
    allowed = tuple(name.strip().lower() for name in section.allowed_hosts if name.strip())
    public = [name for name in allowed if not is_loopback(name)]
    if key is None and public:
        raise ServiceNotConfigured(
            f"web_ui.allowed_hosts names {public[0]}, which is not this machine: reaching the "
            f"web UI by it needs {KEY_ENV} in HERMES_HOME/.env"
        )
    if key is not None and len(key) < MIN_KEY_LENGTH:
        raise ServiceNotConfigured(
            f"{KEY_ENV} is {len(key)} characters: use at least {MIN_KEY_LENGTH} (e.g. the "
            "output of: python3 -c 'import secrets; print(secrets.token_urlsafe(24))')"
        )
    return WebSettings(
        host=host,
        port=port,
        key=key,
        home=home,
        allowed_hosts=allowed,
        login_seconds=section.login_days * 86400.0,
        secure_cookie=section.secure_cookie,
        max_body_bytes=section.max_body_bytes,
        panel_seconds=section.panel_seconds,
        action_seconds=section.action_seconds,
    )
