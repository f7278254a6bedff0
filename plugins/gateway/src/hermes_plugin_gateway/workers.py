"""This gateway among the workers that serve one store: staying a member (a pulse a
second), and the platforms' lease (whoever holds it connects the chat platforms and sends
every reply). Both are :mod:`hermes_commons.leases`; a gateway on SQLite is alone: it holds
the platforms with no lease, and no other member can be alive.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from hermes_commons.leases import Leases, hold, new_holder
from hermes_commons.sending import Deliveries
from hermes_commons.supervision import one_line
from hermes_plugin_gateway.claims import Claims
from hermes_plugin_gateway.dispatch import Dispatch
from hermes_plugin_gateway.intake import Intake
from hermes_plugin_gateway.platforms import Platforms
from hermes_plugin_gateway.standing import Standing

__all__ = ["PLATFORMS_LEASE", "Workers"]

log = logging.getLogger("hermes.gateway")

PLATFORMS_LEASE = "gateway-platforms"
"""Whoever holds it connects the chat platforms (Telegram lets one poller in)."""
PULSE_SECONDS = 1.0


class Workers:
    def __init__(
        self,
        claims: Claims,
        leases: Leases,
        platforms: Platforms,
        deliveries: Deliveries,
        dispatch: Dispatch,
        intake: Intake,
        standing: Standing,
        *,
        alone: bool,
        lease_seconds: float,
        timeout_seconds: float,
        stopping: asyncio.Event,
    ) -> None:
        self.claims = claims
        self.leases = leases
        self.platforms = platforms
        self.deliveries = deliveries
        self.dispatch = dispatch
        self.intake = intake
        self.alone = alone
        self.lease_seconds = lease_seconds
        self.timeout_seconds = timeout_seconds
        self.stopping = stopping
        self.standing = standing
        self._tasks: list[asyncio.Task[None]] = []

    @property
    def name(self) -> str:
        return self.claims.worker

    async def join(self) -> None:
        """Counted as alive before it takes a message, and heard from then on (alone, less
        often: nobody waits to judge it, but its sender lease must not lapse)."""
        await self.pulse()
        every = PULSE_SECONDS if not self.alone else self.timeout_seconds / 4
        self._tasks.append(asyncio.ensure_future(self._keep_alive(every)))

    async def contend(self) -> None:
        """Hold the platforms: at once when alone (a failure stops it), else through the
        lease."""
        if self.alone:
            await self.lead(True)
            return
        # Held until the shutdown has drained the turns and stopped the platforms: said
        # alive meanwhile, so no other worker takes this one's turns while they finish.
        self._tasks.append(
            asyncio.ensure_future(
                hold(self.leases, PLATFORMS_LEASE, self.name, self.lease_seconds, self.lead)
            )
        )

    async def lead(self, leading: bool) -> None:
        """The platforms' lease won or lost (or, first, not won): this worker connects the
        chat platforms and sends every reply, or leaves that to the worker that holds it."""
        if not leading or self.stopping.is_set():
            self.standing.leading = False
            await self.platforms.stop()
            if not self.stopping.is_set():
                log.info("gateway: another worker holds the chat platforms; this one runs turns")
            self.standing.decided.set()
            return
        # Sends that were in flight when the last holder stopped may have gone out: their
        # next attempt says so. (Raising, the lease is given back and tried again.)
        outbox = self.deliveries.outbox  # the sends' own connections (on PostgreSQL)
        in_flight = await outbox.store.run(outbox.after_crash)
        if in_flight:
            log.warning("%d replies were being sent when Hermes stopped; resending them", in_flight)
        if self.stopping.is_set():  # it began while the store was asked
            return
        if self.standing.peers:
            log.warning("gateway: this worker now holds the chat platforms")
        self.standing.leading = True
        await self.pulse()  # the delivery ledger's sender from now on
        self.platforms.start()
        self.standing.decided.set()

    async def _keep_alive(self, every: float) -> None:
        # A loop of its own: sending a burst of replies must not make this worker look dead.
        while True:
            await asyncio.sleep(every)
            await self.pulse()

    async def pulse(self) -> None:
        """Tell the other workers this one is alive; learn of dead ones, and of turns here
        that a /stop in a chat the platforms' worker serves asked to stop."""
        try:
            pulse = await self.claims.store.run(
                self.claims.pulse, self.alone, sending=self.standing.leading
            )
        except Exception as exc:  # noqa: BLE001 - tried again in a second
            log.warning("gateway: could not tell the store this worker is alive: %s", one_line(exc))
            return
        self.standing.peers = pulse.peers
        if pulse.freed:
            log.warning("gateway: %d messages of a worker that stopped are taken up", pulse.freed)
            self.dispatch.wake()
        if pulse.was_dead:
            # What it held under its old name is being resumed elsewhere: its turns stop,
            # and what they would still write under that name no longer counts.
            log.error(
                "gateway: this worker went unheard for over %g s and the others took its "
                "messages; stopping its turns",
                self.timeout_seconds,
            )
            self.claims.rename(new_holder())
            self.intake.worker = self.name
        self.dispatch.stop_turns(pulse.to_stop, all_turns=pulse.was_dead)

    async def leave(self) -> None:
        """Released as its holding ends (another worker connects at once); what it took and
        did not finish goes to the other workers, or the next start."""
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        try:
            await self.claims.store.run(self.claims.leave)
        except Exception as exc:  # noqa: BLE001 - they go back once this worker is missed
            log.warning("gateway: could not hand its messages back: %s", one_line(exc))
