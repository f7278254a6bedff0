"""The ``ssh:`` section of config.yaml. Host keys are checked unless you say otherwise."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class SSHConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    host: str = Field(default="", description="Host name or address to connect to.")
    port: int = Field(default=22, ge=1, le=65535)
    user: str | None = Field(default=None, description="Remote user; unset: yours.")
    key_file: str | None = Field(
        default=None, description="Private key file; unset: the SSH agent, then ~/.ssh keys."
    )
    use_agent: bool = Field(default=True, description="Try keys from a running SSH agent.")
    known_hosts: str = Field(
        default="~/.ssh/known_hosts", description="Known host keys, in OpenSSH format."
    )
    check_host_key: bool = Field(
        default=True,
        description="Refuse hosts whose key is not in known_hosts. Turning this off lets "
        "anyone on the network between you pose as the host.",
    )
    workspace: str | None = Field(
        default=None, description="Remote directory commands start in; unset: the home."
    )
    shell: str = Field(default="/bin/sh", description="Remote shell commands run in.")
    connect_timeout_seconds: float = Field(default=15.0, gt=0, le=300)
    keepalive_seconds: int = Field(
        default=30, ge=0, le=3600, description="Keepalive interval; 0 turns it off."
    )
