"""``service-host``: the gateway as a long-running service of the user's service manager.

``hermes gateway install | uninstall | start | restart`` write, check and drive a systemd
user service (Linux) or a launchd agent (macOS) that runs ``hermes gateway run`` for this
home, and ``hermes status`` says how that service stands. The commands are subcommands of
the gateway plugin's ``hermes gateway`` group, declared here (``command.gateway.NAME``);
without the gateway plugin there is nothing for them to run. Importing this is cheap:
nothing loads until a command or ``hermes status`` runs.
"""

from __future__ import annotations

from collections.abc import Iterator

from hermes_sdk import CommandSpec, HealthContext, StatusLine, hookimpl

COMMANDS = {
    "install": "Run the gateway as a service (systemd, launchd), now and at each login.",
    "uninstall": "Stop the gateway's service and remove it.",
    "start": "Start the gateway's installed service and wait until it serves.",
    "restart": "Restart the gateway's service: running turns finish first.",
}


@hookimpl
def hermes_cli_commands() -> Iterator[CommandSpec]:
    for name, description in COMMANDS.items():
        yield CommandSpec(
            name=f"gateway.{name}",
            description=description,
            factory=f"hermes_plugin_service_host.commands:{name}",
        )


@hookimpl
def hermes_status_lines(context: HealthContext) -> Iterator[StatusLine]:
    from hermes_plugin_service_host.health import status_lines

    yield from status_lines(context)
