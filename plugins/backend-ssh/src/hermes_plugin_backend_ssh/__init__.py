"""Hermes terminal backend ``ssh``: commands and files on another host, over one reused
SSH connection."""

from __future__ import annotations

from collections.abc import Iterator

from hermes_commons.sections import section_settings
from hermes_plugin_backend_ssh.config import SSHConfig
from hermes_sdk import BackendSpec, ConfigSectionSpec, hookimpl
from hermes_sdk.terminal import BackendContext, TerminalBackend


def _build(context: BackendContext) -> TerminalBackend:
    from hermes_plugin_backend_ssh.backend import SSHBackend

    return SSHBackend(section_settings("ssh", SSHConfig, context.config))


@hookimpl
def hermes_terminal_backends() -> Iterator[BackendSpec]:
    yield BackendSpec(name="ssh", description="another host over SSH", factory=_build)


@hookimpl
def hermes_config_sections() -> Iterator[ConfigSectionSpec]:
    yield ConfigSectionSpec(name="ssh", description="the ssh terminal backend", model=SSHConfig)
