"""Delivery: how the rest of Hermes reaches a chat. ``Runtime.deliver`` (a scheduled job's
result, a front-end's note) goes to the plugin that yields a :class:`~hermes_sdk.DeliverySpec`
(the gateway, which owns the delivery ledger); the kernel only passes it on.

The kernel builds the deliverer on the first ``deliver`` of a runtime, with a
:class:`DeliveryContext`, and awaits its :meth:`Deliverer.deliver` on the runtime's event
loop. With no delivery plugin installed, ``deliver`` raises
:class:`~hermes_sdk.runtime.DeliveryUnavailable`. Only one delivery is used: if several
plugins yield one, the first by name serves and the others are logged as unused.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from hermes_sdk.provided import ProvidedSpecs

if TYPE_CHECKING:
    from hermes_sdk.runtime import Delivery
    from hermes_sdk.storage import Store, StoreSchema

__all__ = ["Deliverer", "DeliveryContext"]


@dataclass(frozen=True, slots=True, kw_only=True)
class DeliveryContext:
    """What a delivery's factory gets: the runtime it serves."""

    home: str
    config: Mapping[str, Any] = field(default_factory=dict)
    """config.yaml as loaded (secrets live in .env, never here); read your own section."""
    store: Callable[[StoreSchema], Store]
    """The runtime's ``plugin_store``: your tables, on the runtime's connection."""
    provided: ProvidedSpecs = field(default_factory=ProvidedSpecs)
    """What the installed plugins provide (``provided.of(Kind.PLATFORM)``: the platforms),
    loaded when first asked for."""


class Deliverer(Protocol):
    """What a delivery's factory returns."""

    async def deliver(self, platform: str, chat_id: str, text: str) -> Delivery:
        """Send ``text`` to a chat, or record it to be sent (never twice), and say which.
        Raise :class:`~hermes_sdk.runtime.DeliveryUnavailable` (one line: what to start or
        install) when it cannot be done."""
        ...
