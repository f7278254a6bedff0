"""Hermes terminal backend ``local``: commands run on this machine, as the user running
Hermes, with an environment built from an allow-list (never the whole of yours)."""

from __future__ import annotations

from collections.abc import Iterator

from hermes_sdk import BackendSpec, hookimpl
from hermes_sdk.terminal import BackendContext, TerminalBackend


def _build(context: BackendContext) -> TerminalBackend:
    from hermes_plugin_backend_local.backend import LocalBackend

    shell = context.config.get("shell")
    return LocalBackend(context.cwd, context.env, shell=str(shell) if shell else None)


@hookimpl
def hermes_terminal_backends() -> Iterator[BackendSpec]:
    yield BackendSpec(
        name="local", description="this machine, in a clean environment", factory=_build
    )
