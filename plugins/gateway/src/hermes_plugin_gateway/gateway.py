"""The gateway: platform events in, turns, replies out, as a pipeline of stages that each
hand forward:

    front door (who may write; /stop) -> intake (stored, then acknowledged)
    -> dispatch (the oldest open message of a route, claimed) -> turn runner
    -> replies (recorded in the ledger with the message done, then delivered)

At start, what a crash or a stop left behind is picked up: replies that were not delivered
go out (with a note if they may have gone out already), queued messages run, an interrupted
turn resumes once.

Several gateways (workers, on several hosts) may serve one store in PostgreSQL; the stages
are the same, only the store and the leases differ (:mod:`.workers`). The one that holds the
platforms' lease connects the chat platforms, takes messages in, sends every reply and shows
every question (:mod:`.relay`); any worker takes stored messages to run and records their
replies in the ledger. A gateway on SQLite is a worker alone that holds the platforms.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

from hermes_commons.hosting import Services, enabled_services
from hermes_commons.leases import LEASES, Leases, new_holder
from hermes_commons.outbox import Outbox
from hermes_commons.sending import Deliveries
from hermes_plugin_gateway.access import Access
from hermes_plugin_gateway.claims import Claims
from hermes_plugin_gateway.dispatch import SHARED_POLL_SECONDS, Dispatch
from hermes_plugin_gateway.front_door import FrontDoor
from hermes_plugin_gateway.intake import Intake
from hermes_plugin_gateway.ledger import InboxItem, Ledger
from hermes_plugin_gateway.pairing import Pairings
from hermes_plugin_gateway.platforms import Platforms
from hermes_plugin_gateway.questions import ChatQuestions
from hermes_plugin_gateway.relay import QuestionRelay
from hermes_plugin_gateway.relayed_preview import PreviewRelay
from hermes_plugin_gateway.replies import Replies
from hermes_plugin_gateway.schema import SCHEMA
from hermes_plugin_gateway.settings import PLATFORM_ENABLED, GatewayConfig
from hermes_plugin_gateway.standing import Standing
from hermes_plugin_gateway.status import write_status
from hermes_plugin_gateway.turns import (
    TYPING_AFTER_SECONDS,
    TYPING_EVERY_SECONDS,
    TurnRunner,
    freeze_heap,
)
from hermes_plugin_gateway.workers import Workers
from hermes_sdk import Kind, PlatformSpec, ServiceSpec
from hermes_sdk.delivery import Deliverer
from hermes_sdk.events import CommandContext
from hermes_sdk.platform import PlatformContext
from hermes_sdk.runtime import Delivery, DeliveryUnavailable, Runtime, RuntimeOptions
from hermes_sdk.service import ServiceContext
from hermes_sdk.storage import open_store

__all__ = ["Gateway", "open_gateway", "runtime_options"]

log = logging.getLogger("hermes.gateway")

UPKEEP_SECONDS = 1.0
STATUS_EVERY_SECONDS = 5.0


def runtime_options(
    settings: GatewayConfig, cwd: Path, deliverer: Deliverer | None = None
) -> RuntimeOptions:
    """The gateway's runtime: nobody at a terminal watches its sessions (the compaction
    safety net applies), questions wait as long as the chats' do, and what its services
    deliver goes straight to its platforms."""
    return RuntimeOptions(
        cwd=str(cwd),
        unattended=True,
        question_timeout_s=settings.approval_timeout_seconds,
        close_timeout_s=max(1.0, settings.drain_seconds),
        deliverer=deliverer,
    )


class _ThroughItsPlatforms:
    """``Runtime.deliver`` in the gateway's process (its services: the scheduler, the API
    server): straight to the platforms it runs, once the gateway is built."""

    def __init__(self) -> None:
        self.replies: Replies | None = None

    async def deliver(self, platform: str, chat_id: str, text: str) -> Delivery:
        if self.replies is None:
            raise DeliveryUnavailable("the gateway is starting; try again in a moment")
        return await self.replies.deliver(platform, chat_id, text)


@contextlib.asynccontextmanager
async def open_gateway(
    context: CommandContext, settings: GatewayConfig, cwd: Path | None = None
) -> AsyncIterator[Gateway]:
    """The gateway of the command's home on a runtime of its own, closed on exit."""
    if context.open_runtime is None:
        raise RuntimeError("this Hermes gives its commands no runtime: upgrade hermes-kernel")
    from hermes_commons.http_transport import expect_many_requests

    # Before the runtime exists: every HTTP client made from now on (the models', the
    # platforms') shares pooled aiohttp connections, a fraction of httpx's own CPU per request.
    expect_many_requests()
    where = Path(cwd or settings.cwd or Path.cwd()).expanduser()
    deliverer = _ThroughItsPlatforms()
    async with context.open_runtime(runtime_options(settings, where, deliverer)) as runtime:
        gateway = Gateway(context, runtime, settings, where)
        deliverer.replies = gateway.replies
        yield gateway


class Gateway:
    """The stages, built and wired once; then :meth:`run` until stopped."""

    def __init__(
        self, context: CommandContext, runtime: Runtime, settings: GatewayConfig, cwd: Path
    ) -> None:
        self.context = context
        self.runtime = runtime
        self.settings = settings
        self.home = Path(context.home)
        self.started_at = time.time()
        self.stopping = asyncio.Event()
        store = runtime.plugin_store(SCHEMA)
        alone = not store.shared  # a store in the home's files: one gateway per home
        # On PostgreSQL, what keeps the workers in step (the platforms' lease, being heard,
        # taking messages) and what marks a reply delivered go through connections of their
        # own: queued behind the turns' store work, a lease would lapse under load (two
        # workers polling Telegram), and a reply sent but not yet marked delivered would go
        # again, as a possible duplicate, if this worker died meanwhile.
        self._control_store = None if alone else open_store(self.home, SCHEMA)
        control = self._control_store or store
        self.ledger = Ledger(store)
        config = context.config
        platforms_config: Mapping[str, Any] = config.get("platforms") or {}
        self.pairings = Pairings(store)
        self.access = Access(platforms_config, self.pairings)
        self.platforms = Platforms(
            _enabled_platforms(context, platforms_config),
            lambda name: PlatformContext(
                name=name,
                home=context.home,
                config=platforms_config.get(name) or {},
                secrets=context.secrets,
                root_config=context.config,
            ),
            lambda name: self.front_door.door(name),  # noqa: PLW0108 - the door is built below
            backoff=settings.restart_backoff_seconds,
            backoff_max=settings.restart_backoff_max_seconds,
            on_running=self._platform_running,
            on_stopped=lambda name: self.front_door.platform_stopped(name),  # noqa: PLW0108
        )
        deliveries = Deliveries(
            Outbox(control) if self._control_store is not None else self.ledger.outbox,
            self.platforms.adapter,
            attempts=settings.delivery_attempts,
            max_age_seconds=settings.delivery_max_age_hours * 3600,
        )
        # Among workers, a turn run where the platforms are not has its preview shown by the
        # worker that has them.
        self.previews = None if alone else PreviewRelay(control, self.platforms)
        self.replies = Replies(self.ledger, deliveries, self.platforms, self.previews)
        self.claims = Claims(control, new_holder(), settings.worker_timeout_seconds)
        self.questions = ChatQuestions()
        self.relay = QuestionRelay(
            control, self.questions, self.platforms, lambda: self.claims.worker, shared=not alone
        )
        runner = TurnRunner(
            runtime,
            self.ledger,
            self.platforms,
            self.access,
            self.replies,
            self.questions,
            self.relay,
            settings,
            cwd,
            self.stopping,
            self.previews,
        )
        self.standing = Standing(self.platforms)
        self.dispatch = Dispatch(
            self.claims,
            self.ledger,
            runner,
            self.replies,
            self.standing,
            turns=settings.max_concurrent_turns,
            stopping=self.stopping,
        )
        self.intake = Intake(self.ledger, self._stored)
        self.intake.worker = self.claims.worker
        runner.accept = self.intake.accept
        self.workers = Workers(
            self.claims,
            Leases(control if self._control_store else runtime.plugin_store(LEASES)),
            self.platforms,
            deliveries,
            self.dispatch,
            self.intake,
            self.standing,
            alone=alone,
            lease_seconds=settings.leader_lease_seconds,
            timeout_seconds=settings.worker_timeout_seconds,
            stopping=self.stopping,
        )
        self.front_door = FrontDoor(
            runtime,
            store,
            self.access,
            self.pairings,
            self.platforms,
            self.questions,
            self.intake,
            self.dispatch,
            self.replies,
            self.claims,
            group_sessions=settings.group_sessions,
            http=(settings.http_host, settings.http_port),
        )
        self.services = _services(context, runtime, settings)

    # --- lifecycle --------------------------------------------------------------------------

    async def run(self, stop: asyncio.Event) -> None:
        """Serve until ``stop`` is set, then shut down cleanly."""
        await self.workers.join()
        await asyncio.to_thread(self.ledger.prune)
        # Tool sources (MCP servers) connect once, before any chat is served, and are shared.
        for warning in await self.runtime.warm_up("gateway"):
            log.warning("gateway: %s", warning)
        freeze_heap()
        self.services.start()
        loops = [
            asyncio.ensure_future(self._upkeep()),
            asyncio.ensure_future(self.dispatch.run()),
            asyncio.ensure_future(self._relay_typing()),
            asyncio.ensure_future(self._relay_previews()),
        ]
        try:
            await self.workers.contend()
            await stop.wait()
        finally:
            for task in loops:
                task.cancel()
            await asyncio.gather(*loops, return_exceptions=True)
            await self.shutdown()

    async def shutdown(self) -> None:
        """Let running turns finish up to ``drain_seconds``; stop the rest, which resume at
        the next start; messages still queued stay queued."""
        self.stopping.set()
        await self.dispatch.drain(self.settings.drain_seconds)
        await self.services.stop()
        await self.platforms.stop()
        await self.front_door.close()
        await self.workers.leave()
        if self._control_store is not None:
            self._control_store.close()
        self._write_status("stopped")

    def _stored(self, _item: InboxItem) -> None:
        # Alone, this gateway runs what it stores at once. Among workers it polls like the
        # others, so a busy worker (this one takes messages in and sends every reply)
        # leaves messages to the less busy.
        if not self.standing.peers:
            self.dispatch.wake()

    def _platform_running(self, name: str) -> None:
        # Its messages may be taken now (those the last run left too: connected first, so
        # a resumed turn can stream, show typing and ask for approvals).
        self.dispatch.wake()
        task = asyncio.ensure_future(self.replies.send_due(name))
        task.add_done_callback(_logged)

    async def _upkeep(self) -> None:
        last_status = 0.0
        while True:
            if self.standing.leading:
                await self.replies.send_due()
                if self.relay.shared:  # asked on a worker (or by an earlier self) without them
                    await self.relay.show_asked()
            if time.monotonic() - last_status >= STATUS_EVERY_SECONDS:
                last_status = time.monotonic()
                await asyncio.to_thread(self._write_status, "running")
            await asyncio.sleep(SHARED_POLL_SECONDS if self.standing.peers else UPKEEP_SECONDS)

    async def _relay_typing(self) -> None:
        while self.settings.typing:
            await asyncio.sleep(TYPING_EVERY_SECONDS)
            if self.standing.leading and self.standing.peers:
                with contextlib.suppress(Exception):  # only a hint; the store may be back
                    await self.relay.show_typing(TYPING_AFTER_SECONDS)

    async def _relay_previews(self) -> None:
        while self.previews is not None and self.settings.stream:
            await asyncio.sleep(self.settings.stream_interval_seconds / 2)
            if self.standing.leading and self.standing.peers:
                try:
                    await self.previews.show()
                except Exception as exc:  # noqa: BLE001 - only previews; the store may be back
                    log.info("gateway: previews of other workers' turns: %s", exc)

    def _write_status(self, state: str) -> None:
        try:
            counts = self.ledger.counts()
        except Exception:  # noqa: BLE001 - status is best effort
            counts = {}
        write_status(
            self.home,
            {
                "state": state,
                "pid": os.getpid(),
                "started_at": self.started_at,
                "platforms": dict(self.platforms.status()),
                "services": dict(self.services.status()),
                "worker": self.workers.name,
                "leading": self.standing.leading,
                "peers": self.standing.peers,
                "turns_running": self.dispatch.turns_running(),
                "conversations": len(self.dispatch.conversations),
                **counts,
            },
        )


def _enabled_platforms(
    context: CommandContext, platforms_config: Mapping[str, Any]
) -> list[PlatformSpec]:
    return [
        spec
        for spec in context.provided.of(Kind.PLATFORM)
        if isinstance(spec, PlatformSpec)
        and (platforms_config.get(spec.name) or {}).get("enabled", PLATFORM_ENABLED) is not False
    ]


def _services(context: CommandContext, runtime: Runtime, settings: GatewayConfig) -> Services:
    config = context.config
    return Services(
        enabled_services(
            [s for s in context.provided.of(Kind.SERVICE) if isinstance(s, ServiceSpec)], config
        ),
        lambda spec: ServiceContext(
            name=spec.name,
            home=context.home,
            config=config.get(spec.section) or {},
            secrets=context.secrets,
            in_gateway=True,
        ),
        runtime,
        backoff=settings.restart_backoff_seconds,
        backoff_max=settings.restart_backoff_max_seconds,
        log=log,
    )


def _logged(task: asyncio.Task[Any]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.warning("gateway: %s", task.exception())
