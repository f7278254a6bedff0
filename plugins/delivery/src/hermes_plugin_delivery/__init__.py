"""``delivery``: messages to chats from anywhere in Hermes.

``Runtime.deliver`` (a scheduled job's result, a front-end's note) and ``hermes send``
record the message in the delivery ledger every front-end shares
(:mod:`hermes_commons.outbox`), and the process that runs the chat platforms (the gateway)
sends it, once, keeping it while a platform reconnects. A front-end needs no platform of its
own to reach a chat. Importing this is cheap: nothing loads until a delivery or a command
runs.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from hermes_sdk import CommandSpec, DeliverySpec, hookimpl

if TYPE_CHECKING:
    from hermes_sdk.storage import StoreSchema


@hookimpl
def hermes_deliveries() -> Iterator[DeliverySpec]:
    yield DeliverySpec(
        name="ledger",
        description="Messages to chats through the delivery ledger",
        factory="hermes_plugin_delivery.deliverer:LedgerDelivery",
    )


@hookimpl
def hermes_cli_commands() -> Iterator[CommandSpec]:
    yield CommandSpec(
        name="send",
        description="Send a message to a chat: through the running gateway, or directly.",
        factory="hermes_plugin_delivery.send_command:send",
    )


@hookimpl
def hermes_store_schemas() -> list[StoreSchema]:
    from hermes_commons.leases import LEASES
    from hermes_commons.outbox import OUTBOX

    return [LEASES, OUTBOX]
