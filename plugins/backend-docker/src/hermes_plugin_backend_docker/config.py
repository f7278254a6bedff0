"""The ``docker:`` section of config.yaml. The defaults are the hardened ones."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class DockerConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    image: str = Field(
        default="debian:bookworm-slim", min_length=1, description="Image of the container."
    )
    host: str | None = Field(
        default=None, description="Docker daemon URL; unset: DOCKER_HOST, else the local socket."
    )
    workspace: str = Field(
        default="/workspace", pattern=r"^/", description="Where the workspace is inside."
    )
    mount_workspace: bool = Field(
        default=True,
        description="Mount the directory Hermes runs in at `workspace`; false: an empty "
        "in-memory workspace, and the container reaches none of your files.",
    )
    network: str = Field(
        default="bridge", min_length=1, description="Docker network mode; `none` cuts it off."
    )
    read_only: bool = Field(default=True, description="Read-only root filesystem.")
    memory: str = Field(default="1g", description="Memory limit (docker syntax: 512m, 2g).")
    cpus: float = Field(default=1.0, gt=0, le=256, description="CPU limit.")
    pids_limit: int = Field(default=256, ge=16, description="Most processes at once.")
    tmp_size: str = Field(default="512m", description="Size of the in-memory /tmp.")
    shell: str = Field(default="/bin/sh", description="Shell commands run in.")
    user: str | None = Field(default=None, description="User inside; unset: the image's.")
