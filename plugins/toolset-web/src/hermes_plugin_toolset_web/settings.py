"""The ``web:`` section."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from hermes_commons.sections import section_settings

__all__ = ["SearchSettings", "WebSettings", "settings_from"]


class SearchSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    backend: str = Field(
        default="auto",
        description="searxng, brave, tavily, duckduckgo, or another installed backend; "
        "auto: searxng when searxng_url is set, else brave or tavily when their key is in "
        ".env, else duckduckgo.",
    )
    searxng_url: str | None = Field(default=None, pattern=r"^https?://")
    brave_url: str = Field(default="https://api.search.brave.com/res/v1/web/search")
    tavily_url: str = Field(default="https://api.tavily.com/search")


class WebSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    search: SearchSettings = Field(default_factory=SearchSettings)
    allow_private_hosts: list[str] = Field(
        default_factory=list,
        description='Hosts, host:port or networks the tools may reach although private ("nas", '
        '"10.0.0.5:8888", "192.168.1.0/24"). Nothing else private is reached.',
    )
    timeout_seconds: float = Field(default=20.0, gt=0, le=300)
    page_chars: int = Field(default=30_000, ge=1000, le=1_000_000, description="Text per page.")
    max_page_bytes: int = Field(
        default=10_000_000, ge=10_000, description="Bytes read of one page at most."
    )
    cache_seconds: float = Field(default=300.0, ge=0, description="Results kept per session.")
    concurrency: int = Field(default=4, ge=1, le=32, description="Requests at once.")


def settings_from(config: Any) -> WebSettings:
    section = config.get("web") if hasattr(config, "get") else None
    return section_settings("web", WebSettings, section)
