"""``Runtime.deliver`` for the rest of Hermes (the gateway's ``hermes_deliveries``).

In the gateway's own process a message goes straight to the gateway (sent now, or queued
while its platform reconnects). In any other process (``hermes cron run``, ``hermes serve``)
it is recorded in the gateway's delivery ledger, which the gateway running for the same home
sends within a second or two; with no gateway running it is refused, with the command that
starts one.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from hermes_sdk import Kind
from hermes_sdk.delivery import DeliveryContext
from hermes_sdk.platform import ChatRef
from hermes_sdk.runtime import Delivery, DeliveryUnavailable

if TYPE_CHECKING:
    from hermes_plugin_gateway.gateway import Gateway

__all__ = ["LedgerDelivery", "gateway_serves", "serving"]

_SERVING: dict[str, Gateway] = {}
"""Home -> the gateway serving it in this process."""


def _key(home: str | Path) -> str:
    return str(Path(home).expanduser().resolve())


@contextlib.contextmanager
def serving(home: str | Path, gateway: Gateway) -> Iterator[None]:
    """While the block runs, deliveries for ``home`` in this process go to ``gateway``."""
    key = _key(home)
    _SERVING[key] = gateway
    try:
        yield
    finally:
        if _SERVING.get(key) is gateway:
            del _SERVING[key]


def gateway_serves(home: str | Path) -> bool:
    """Whether a gateway serves ``home``: in this process, or as a running process."""
    from hermes_plugin_gateway.status import running_pid

    return _key(home) in _SERVING or running_pid(Path(home)) is not None


class LedgerDelivery:
    """A runtime's :class:`~hermes_sdk.delivery.Deliverer`."""

    def __init__(self, context: DeliveryContext) -> None:
        self._context = context
        self._platforms: frozenset[str] | None = None

    async def deliver(self, platform: str, chat_id: str, text: str) -> Delivery:
        gateway = _SERVING.get(_key(self._context.home))
        if gateway is not None and gateway.loop is not None:
            if gateway.loop is asyncio.get_running_loop():
                return await gateway.deliver(platform, chat_id, text)
            # A runtime on another loop of this process (a test's, an embedding program's).
            sent = asyncio.run_coroutine_threadsafe(
                gateway.deliver(platform, chat_id, text), gateway.loop
            )
            return await asyncio.wrap_future(sent)
        return await self._to_ledger(platform, chat_id, text)

    async def _to_ledger(self, platform: str, chat_id: str, text: str) -> Delivery:
        from hermes_plugin_gateway.ledger import Ledger
        from hermes_plugin_gateway.schema import SCHEMA
        from hermes_plugin_gateway.status import running_pid

        if self._platforms is None:
            specs = await asyncio.to_thread(self._context.provided.of, Kind.PLATFORM)
            self._platforms = frozenset(spec.name for spec in specs)
        if platform not in self._platforms:
            installed = ", ".join(sorted(self._platforms)) or "none"
            raise DeliveryUnavailable(
                f"no platform {platform!r} is installed (installed: {installed})"
            )
        home = Path(self._context.home)
        if running_pid(home) is None:
            raise DeliveryUnavailable(
                f"no gateway runs for {home}; start it with: hermes gateway run"
            )
        store = self._context.store(SCHEMA)
        ledger = Ledger(store)
        chat = ChatRef(platform=platform, chat_id=chat_id, chat_type="private")
        delivery_id = await store.run(ledger.reply_ready, None, chat, text)
        return Delivery(delivery_id=delivery_id, state="queued")
