"""Writes waiting for the user's approval, for a runtime's front-ends: every plugin's queue
(``hermes_pending_writes``) listed together, and one write approved or rejected.

The kernel knows no queue's content: each plugin says what its writes are, what approving
one does (a title, a diff) and does it. Every call into the plugin (its factory, ``pending``,
``approve``, ``reject``) runs in a plugin worker under the hook deadline
(``plugins.hook_timeout_seconds``), so a queue that hangs delays only its own answer.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any, TypeVar, cast

from hermes_commons.proposals import UnknownProposal
from hermes_kernel.plugins.host import PluginHost
from hermes_kernel.plugins.workers import plugin_workers
from hermes_sdk import Kind, PendingWritesSpec
from hermes_sdk.pending_writes import PendingContext, PendingWrite, PendingWrites

__all__ = ["PendingQueues"]

log = logging.getLogger("hermes.runtime")

T = TypeVar("T")


class PendingQueues:
    """The installed queues of pending writes, for the home ``home``."""

    def __init__(self, host: PluginHost, home: str, config: Mapping[str, Any]) -> None:
        self.host = host
        self.home = home
        self.config = config
        self._failed: dict[str, str] = {}
        """Queue -> why its last listing failed (cleared when it answers again)."""

    def warnings(self) -> list[str]:
        """One line per queue whose last listing failed."""
        return [
            f"the pending writes of {name!r} cannot be listed: {why}"
            for name, why in sorted(self._failed.items())
        ]

    def _queue(self, spec: PendingWritesSpec, user_scope: str | None) -> PendingWrites:
        context = PendingContext(home=self.home, config=self.config, user_scope=user_scope)
        return cast("PendingWrites", spec.build(context))

    async def _call(self, call: Callable[[], T]) -> T:
        """``call()`` in a plugin worker; TimeoutError past the hook deadline (the call is
        abandoned, its thread left to finish)."""
        return await asyncio.wait_for(plugin_workers.run(call), self.host.hooks.deadline)

    async def _specs(self) -> list[tuple[str, PendingWritesSpec]]:
        provided = await asyncio.to_thread(self.host.provided, Kind.PENDING)
        found = []
        for item in provided:
            spec = item.spec
            assert isinstance(spec, PendingWritesSpec)  # the index holds these under PENDING
            found.append((item.plugin, spec))
        return found

    async def writes(self, user_scope: str | None) -> list[PendingWrite]:
        """Every queue's writes, oldest first; a queue that fails is left out and logged."""
        found: list[PendingWrite] = []
        for plugin, spec in await self._specs():

            def listing(spec: PendingWritesSpec = spec) -> list[PendingWrite]:
                return list(self._queue(spec, user_scope).pending())

            try:
                writes = await self._call(listing)
            except TimeoutError:
                why = f"no answer within {self.host.hooks.deadline:g} s"
            except Exception as exc:  # noqa: BLE001 - a plugin's failure: the others still show
                why = " ".join(f"{type(exc).__name__}: {exc}".split())
            else:
                self._failed.pop(spec.name, None)
                found += [
                    write if write.queue == spec.name else replace(write, queue=spec.name)
                    for write in writes
                    if isinstance(write, PendingWrite)
                ]
                continue
            self._failed[spec.name] = why
            log.warning("pending writes of %r (plugin %r) left out: %s", spec.name, plugin, why)
        return sorted(found, key=lambda write: (write.created_at, write.queue, write.id))

    async def decide(
        self, name: str, write_id: str, *, approve: bool, user_scope: str | None
    ) -> str:
        """Approve or reject one write in queue ``name``; the plugin's line."""
        provided = await asyncio.to_thread(self.host.require, Kind.PENDING, name)
        if provided is None:
            known = ", ".join(spec.name for _, spec in await self._specs()) or "none installed"
            raise UnknownProposal(f"no queue of pending writes named {name!r} (queues: {known})")
        spec = provided.spec
        assert isinstance(spec, PendingWritesSpec)  # required under PENDING

        def decide() -> str:
            queue = self._queue(spec, user_scope)
            return str(queue.approve(write_id) if approve else queue.reject(write_id))

        try:
            return await self._call(decide)
        except TimeoutError:
            raise TimeoutError(
                f"the {name!r} queue did not answer within {self.host.hooks.deadline:g} s; "
                "the write may or may not have been decided"
            ) from None
