"""``auth``: sign in instead of pasting keys. ``hermes login NAME`` runs the service's own
OAuth flow (device code, PKCE in a browser, or MiniMax's user code), keeps the tokens in
``HERMES_HOME/auth.json`` (0600) and renews them; each service is a rung of the provider
ladder. ``hermes auth`` shows sign-ins and credential pools, and adds or removes keys and
accounts. Importing this is cheap: the flows and Authlib load when a command or a refresh
needs them."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from hermes_plugin_auth.services import FIRST_POSITION, SERVICES
from hermes_sdk import CommandSpec, RungSpec, hookimpl

if TYPE_CHECKING:
    from hermes_sdk.importing import HomeImport, ImportSection


@hookimpl
def hermes_cli_commands() -> Iterator[CommandSpec]:
    yield CommandSpec(
        name="login",
        description="Sign in to a subscription provider instead of using an API key.",
        factory="hermes_plugin_auth.commands:login",
    )
    yield CommandSpec(
        name="logout",
        description="Forget a sign-in (or all of them).",
        factory="hermes_plugin_auth.commands:logout",
    )
    yield CommandSpec(
        name="auth",
        description="Sign-ins and credential pools: status, list, add, remove, reset.",
        factory="hermes_plugin_auth.pools:auth",
    )


@hookimpl
def hermes_provider_rungs() -> Iterator[RungSpec]:
    from hermes_plugin_auth.rungs import resolver

    for number, service in enumerate(SERVICES):
        yield RungSpec(
            name=f"{service.name}-sign-in",
            description=f"a sign-in to {service.label} (hermes login {service.name})",
            position=FIRST_POSITION + number,
            resolve=resolver(service),
            endpoint=service.endpoint(),
        )


@hookimpl
def hermes_import_home(request: HomeImport) -> Iterator[ImportSection]:
    if request.source_kind != "hermes-agent":
        return
    from hermes_plugin_auth.importing import import_sign_ins

    yield import_sign_ins(request)
