"""The gateway's config.yaml sections: ``gateway:`` (how ``hermes gateway run`` serves) and
``platforms:`` (per chat platform: whether it starts and who may use the agent there; the
rest of ``platforms.<name>`` belongs to that platform's plugin)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, RootModel, field_validator

from hermes_commons.sections import section_settings

__all__ = ["GatewayConfig", "PlatformAccessConfig", "PlatformsConfig", "gateway_settings"]


class GatewayConfig(BaseModel):
    """The ``gateway:`` section: how ``hermes gateway run`` serves chat platforms."""

    model_config = ConfigDict(extra="forbid")

    max_concurrent_turns: int = Field(
        default=16, ge=1, le=10_000, description="Turns running at once across all chats."
    )
    group_sessions: Literal["per_user", "shared"] = Field(
        default="per_user",
        description="In a group: a session per participant, or one the whole group shares "
        "(threads and forum topics are always shared).",
    )
    stream: bool = Field(
        default=True, description="Show a reply as it is written, by editing one message."
    )
    stream_interval_seconds: float = Field(
        default=1.0, ge=0.05, le=60, description="Least time between two edits of that message."
    )
    typing: bool = Field(default=True, description="Show 'typing…' while the agent works.")
    drain_seconds: float = Field(
        default=30.0,
        ge=0,
        le=3600,
        description="On stop, how long running turns may finish; the rest resume at the next "
        "start.",
    )
    approval_timeout_seconds: float = Field(
        default=300.0, gt=0, le=86_400, description="How long a question in the chat waits."
    )
    restart_backoff_seconds: float = Field(
        default=30.0, gt=0, description="First wait before restarting a platform that failed."
    )
    restart_backoff_max_seconds: float = Field(
        default=300.0, gt=0, description="Longest wait between restarts (the wait doubles)."
    )
    delivery_attempts: int = Field(
        default=5, ge=1, le=100, description="Sends of one reply before it is abandoned."
    )
    delivery_max_age_hours: float = Field(
        default=24.0, gt=0, description="A reply older than this is abandoned, not sent."
    )
    leader_lease_seconds: float = Field(
        default=15.0,
        ge=1,
        le=600,
        description="Workers sharing a store in PostgreSQL: how long the chat platforms' "
        "connections stay with a worker that stopped renewing its lease (a dead host).",
    )
    worker_timeout_seconds: float = Field(
        default=15.0,
        ge=2,
        le=600,
        description="Workers sharing a store in PostgreSQL: how long a worker may go unheard "
        "before the messages it took go to the others.",
    )
    cwd: str | None = Field(
        default=None, description="Working folder of gateway sessions (default: where it runs)."
    )
    http_host: str = Field(
        default="127.0.0.1",
        description="Address of the HTTP listener platforms share (webhooks, Slack's Events "
        "API); bound only when such a platform runs.",
    )
    http_port: int = Field(
        default=8644, ge=0, le=65535, description="Port of that HTTP listener (0: any free one)."
    )


PLATFORM_ENABLED: Final = True
"""``platforms.<name>.enabled``: an installed platform starts with the gateway."""


class PlatformAccessConfig(BaseModel):
    """``platforms.<name>``: who may use the agent there. Other keys belong to the platform
    plugin (its token variable, group behaviour ...)."""

    model_config = ConfigDict(extra="allow")

    enabled: bool = Field(
        default=PLATFORM_ENABLED, description="Start this platform with the gateway."
    )
    allowed_users: list[str] = Field(
        default_factory=list,
        description="User ids allowed to use the agent (ids, not @names: names change hands).",
    )
    allow_all: bool = Field(
        default=False,
        description="Let anyone who finds the bot use the agent, its tools and your machine.",
    )
    pairing: bool = Field(
        default=True, description="Unknown users may ask for a pairing code in a DM."
    )
    toolsets: list[str] | None = Field(
        default=None,
        description="The toolsets a private chat's turns get (unset: all of them; on email "
        "and webhooks, the safe set: no terminal, files, code, browser, cron, delegation, "
        "memory writes or MCP).",
    )
    group_toolsets: list[str] | None = Field(
        default=None,
        description="The toolsets a group chat's or channel's turns get (unset: the safe set).",
    )

    @field_validator("allowed_users", mode="before")
    @classmethod
    def _ids_as_text(cls, value: Any) -> Any:
        # YAML reads 12345 as a number; ids are compared as text.
        return [str(v) for v in value] if isinstance(value, list) else value


class PlatformsConfig(RootModel[dict[str, PlatformAccessConfig]]):
    """The ``platforms:`` section: one entry per chat platform, by the platform's name."""

    root: dict[str, PlatformAccessConfig] = Field(default_factory=dict)


def gateway_settings(config: Mapping[str, Any]) -> GatewayConfig:
    """The ``gateway:`` section of config.yaml, validated; ValueError (one line per
    problem) for a wrong value."""
    section = config.get("gateway")
    return section_settings(
        "gateway", GatewayConfig, section if isinstance(section, Mapping) else None
    )
