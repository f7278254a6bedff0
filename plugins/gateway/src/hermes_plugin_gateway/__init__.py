"""``gateway``: one long-running process that serves the agent on chat platforms.

``hermes gateway run`` hosts the platform plugins (``hermes_platforms``) and the services
(``hermes_services``) on the runtime contract, and owns what they share: who may write
(allowlists, DM pairing: ``hermes pairing``), which session a chat talks in, the inbox of
messages, and questions asked in the chat. It sends what the delivery ledger holds
(:mod:`hermes_commons.outbox`: its replies, and what ``Runtime.deliver`` recorded in any
process through the ``delivery`` plugin).
Importing this is cheap: nothing of the gateway loads until a command or a delivery runs.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from hermes_sdk import (
    CommandSpec,
    ConfigSectionSpec,
    DashboardPanelSpec,
    Finding,
    HealthContext,
    SlashCommandSpec,
    StatusLine,
    hookimpl,
)

if TYPE_CHECKING:
    from hermes_sdk.archive import PairedUser
    from hermes_sdk.events import SlashContext
    from hermes_sdk.storage import StoreSchema


@hookimpl
def hermes_cli_commands() -> Iterator[CommandSpec]:
    yield CommandSpec(
        name="gateway",
        description="Serve the agent on chat platforms: run, status, stop.",
        factory="hermes_plugin_gateway.command:gateway",
    )
    yield CommandSpec(
        name="pairing",
        description="Approve, list and revoke users of chat platforms.",
        factory="hermes_plugin_gateway.pairing_command:pairing",
    )


@hookimpl
def hermes_config_sections() -> Iterator[ConfigSectionSpec]:
    yield ConfigSectionSpec(
        name="gateway",
        description="How hermes gateway run serves chats",
        model="hermes_plugin_gateway.settings:GatewayConfig",
    )
    yield ConfigSectionSpec(
        name="platforms",
        description="Per chat platform: whether it starts, who may use the agent",
        model="hermes_plugin_gateway.settings:PlatformsConfig",
    )


@hookimpl
def hermes_dashboard_panels() -> Iterator[DashboardPanelSpec]:
    yield DashboardPanelSpec(
        name="gateway",
        title="Gateway",
        description="Chat platforms: the gateway's state, pairing, allowlists, deliveries.",
        factory="hermes_plugin_gateway.panel:GatewayPanel",
        order=50,
    )


@hookimpl
def hermes_admit_chat_users(home: str, users: Sequence[PairedUser]) -> list[PairedUser]:
    from hermes_plugin_gateway.pairing import admit

    return admit(home, users)


@hookimpl
def hermes_slash_commands() -> Iterator[SlashCommandSpec]:
    yield SlashCommandSpec(
        name="handoff",
        usage="/handoff PLATFORM [CHAT_ID] | cli",
        description="go on with this conversation in a chat app, or back in the terminal",
        handler=_handoff,
        on_platforms=True,  # /handoff cli from a chat; only the owner hands one to a chat
    )


def _handoff(args: str, context: SlashContext) -> str:
    from hermes_plugin_gateway.handoff import handoff

    return handoff(args, context)


@hookimpl
def hermes_store_schemas() -> list[StoreSchema]:
    from hermes_plugin_gateway.schema import SCHEMA

    return [*SCHEMA.uses, SCHEMA]  # the leases and the delivery ledger it shares, first


@hookimpl
def hermes_status_lines(context: HealthContext) -> Iterator[StatusLine]:
    from hermes_plugin_gateway.health import status_lines

    yield from status_lines(context)


@hookimpl
def hermes_doctor_checks(context: HealthContext) -> Iterator[Finding]:
    from hermes_plugin_gateway.health import doctor_checks

    yield from doctor_checks(context)
