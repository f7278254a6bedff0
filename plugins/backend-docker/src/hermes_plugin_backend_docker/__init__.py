"""Hermes terminal backend ``docker``: one long-lived, hardened container per session."""

from __future__ import annotations

from collections.abc import Iterator

from hermes_commons.sections import section_settings
from hermes_plugin_backend_docker.config import DockerConfig
from hermes_sdk import BackendSpec, ConfigSectionSpec, hookimpl
from hermes_sdk.health import Finding, HealthContext, StatusLine
from hermes_sdk.terminal import BackendContext, TerminalBackend


def _build(context: BackendContext) -> TerminalBackend:
    from hermes_plugin_backend_docker.backend import DockerBackend

    return DockerBackend(context, section_settings("docker", DockerConfig, context.config))


@hookimpl
def hermes_terminal_backends() -> Iterator[BackendSpec]:
    yield BackendSpec(name="docker", description="a hardened container per session", factory=_build)


@hookimpl
def hermes_config_sections() -> Iterator[ConfigSectionSpec]:
    yield ConfigSectionSpec(
        name="docker", description="the docker terminal backend", model=DockerConfig
    )


@hookimpl
def hermes_status_lines(context: HealthContext) -> list[StatusLine]:
    from hermes_plugin_backend_docker.health import daemon_status

    return daemon_status(context)


@hookimpl
def hermes_doctor_checks(context: HealthContext) -> list[Finding]:
    from hermes_plugin_backend_docker.health import daemon_findings

    return daemon_findings(context)
