"""The ``browser:`` section, and the one line of the ``web:`` section the browser obeys too
(``web.allow_private_hosts``: what the user opened to the web tools is open to the browser,
and nothing else private is)."""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from hermes_commons.sections import section_settings

__all__ = ["BrowserSettings", "Settings", "find_chromium", "settings_from"]

CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


class BrowserSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    executable: str | None = Field(
        default=None,
        description="The Chromium (or Chrome) to run; found on PATH when unset "
        "(chromium, chromium-browser, google-chrome). Nothing is downloaded.",
    )
    headless: bool = Field(default=True, description="false shows the window (needs a display).")
    cdp_url: str | None = Field(
        default=None,
        pattern=r"^(https?|wss?)://",
        description="Attach to a browser you run (chromium --remote-debugging-port=9222): "
        "http://127.0.0.1:9222. Hermes then starts no browser and never closes yours.",
    )
    timeout_seconds: float = Field(
        default=30.0, gt=0, le=300, description="A page load at most; a hung page fails alone."
    )
    action_timeout_seconds: float = Field(
        default=10.0, gt=0, le=120, description="A click, a keystroke or a snapshot at most."
    )
    idle_seconds: float = Field(
        default=300.0,
        gt=0,
        description="A session's pages and cookies are closed after this long unused; the "
        "browser itself closes when no session uses it.",
    )
    max_sessions: int = Field(
        default=8,
        ge=1,
        le=200,
        description="Sessions with a browser at once; the least "
        "recently used one is closed to make room.",
    )
    max_pages: int = Field(
        default=4, ge=1, le=50, description="Tabs per session; pop-ups past it are closed."
    )
    snapshot_chars: int = Field(
        default=20_000, ge=1000, le=500_000, description="A snapshot's text at most."
    )
    downloads: Literal["refuse", "keep"] = Field(
        default="refuse",
        description="keep: downloads are kept in HERMES_HOME/browser/downloads/SESSION "
        "(at most max_download_mb each); refuse: none is.",
    )
    max_download_mb: float = Field(
        default=50.0, gt=0, description="A kept download larger than this is removed."
    )


class Settings(BaseModel):
    """What a browser is built for: the section, and the hosts the web tools may reach."""

    browser: BrowserSettings
    allow_private_hosts: tuple[str, ...] = ()


def settings_from(config: Mapping[str, Any]) -> Settings:
    section = config.get("browser") if hasattr(config, "get") else None
    web = config.get("web") if hasattr(config, "get") else None
    allowed = web.get("allow_private_hosts") if isinstance(web, Mapping) else None
    return Settings(
        browser=section_settings("browser", BrowserSettings, section),
        allow_private_hosts=tuple(str(h) for h in allowed or ()),
    )


def find_chromium(settings: BrowserSettings) -> str:
    """The browser to run: ``browser.executable``, else the first Chromium on PATH.
    RuntimeError, saying how to get one, when there is none."""
    if settings.executable:
        found = shutil.which(settings.executable)
        if found is None:
            raise RuntimeError(
                f"browser.executable {settings.executable!r} is not an executable file; "
                "fix the path, or remove it to use the chromium on PATH"
            )
        return found
    for name in CHROMIUM_NAMES:
        found = shutil.which(name)
        if found is not None:
            return found
    raise RuntimeError(
        "no Chromium is installed: install it (Debian/Ubuntu: apt install chromium) or set "
        "browser.executable, or browser.cdp_url to use a browser you run"
    )
