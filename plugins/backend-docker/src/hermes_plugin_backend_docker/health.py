"""What ``hermes status`` and ``hermes doctor`` say of the Docker backend when it is the
one tools use (``agent.backend: docker``): whether the daemon answers, and if not, what to
do. A shell tool on a daemon that does not answer fails at every call; said here, the user
learns it before the model does."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from hermes_commons.sections import section_settings
from hermes_plugin_backend_docker.config import DockerConfig
from hermes_sdk.health import Finding, HealthContext, StatusLine

__all__ = ["daemon_findings", "daemon_status", "in_use"]

PING_SECONDS = 3.0
FIX = (
    "start the Docker daemon (sudo systemctl start docker; docker info says whether it "
    "answers), or run commands on this machine: hermes config set agent.backend local"
)


def in_use(config: Mapping[str, Any]) -> bool:
    agent = config.get("agent")
    return isinstance(agent, Mapping) and agent.get("backend") == "docker"


def _ping(context: HealthContext) -> tuple[str | None, str]:
    """The daemon's version, or None and why it did not answer."""
    import docker
    from docker.errors import DockerException
    from requests import RequestException

    section = context.config.get("docker")
    settings = section_settings(
        "docker", DockerConfig, section if isinstance(section, Mapping) else None
    )
    try:
        client = (
            docker.DockerClient(base_url=settings.host, timeout=PING_SECONDS)
            if settings.host
            else docker.from_env(timeout=PING_SECONDS)
        )
        try:
            client.api.ping()
            version = str(client.api.version().get("Version") or "?")
        finally:
            client.close()
    except (DockerException, RequestException, ConnectionError) as exc:
        return None, _why(str(exc), settings.host)
    return version, ""


def _why(said: str, host: str | None) -> str:
    """What the Docker client's error means, in words."""
    where = host or os.environ.get("DOCKER_HOST") or "unix:///var/run/docker.sock"
    if "FileNotFoundError" in said or "No such file" in said:
        return f"nothing at {where}: the daemon is not running"
    if "Permission denied" in said or "PermissionError" in said:
        return f"no permission to use {where}: add yourself to the docker group, then log in again"
    if "Connection refused" in said or "NewConnectionError" in said:
        return f"nothing answers at {where}"
    return " ".join(said.split())[:200] or "no answer"


def daemon_status(context: HealthContext) -> list[StatusLine]:
    if not in_use(context.config):
        return []
    version, why = _ping(context)
    if version is None:
        text = f"the daemon does not answer ({why}); hermes doctor says what to do"
    else:
        text = f"the daemon answers (Docker {version})"
    return [StatusLine(label="Docker", text=text)]


def daemon_findings(context: HealthContext) -> list[Finding]:
    if not in_use(context.config):
        return []
    version, why = _ping(context)
    if version is None:
        return [
            Finding(
                level="error",
                message=f"terminal backend docker: the Docker daemon does not answer ({why}), "
                "so every command a tool runs would fail",
                fix=FIX,
            )
        ]
    return [Finding(level="ok", message=f"terminal backend docker: Docker {version} answers")]
