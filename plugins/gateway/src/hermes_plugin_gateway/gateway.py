"""The gateway: platform events in, turns, replies out.

A message goes: authorization (default deny; pairing in DMs) -> stored in the inbox ->
its conversation's queue (one turn at a time per session; a cap across sessions) -> a turn
on the runtime (streamed preview, typing, approvals asked in the chat) -> the reply recorded
in the ledger together with the message being done -> delivered. At start, what a crash or
a stop left behind is picked up: replies that were not delivered go out (with a note if they
may have gone out already), queued messages run, an interrupted turn resumes once.

Several gateways (workers, on several hosts) may serve one store in PostgreSQL. The one that
holds the platforms' lease connects the chat platforms, takes messages in and sends every
reply; any worker takes stored messages to run (:mod:`.claims`) and records their replies in
the ledger. A gateway alone is a worker that holds the lease.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import os
import time
from collections import deque
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hermes_commons.leases import LEASES, Leases, hold, new_holder
from hermes_commons.scan import as_untrusted
from hermes_plugin_gateway.access import Access
from hermes_plugin_gateway.claims import Claims
from hermes_plugin_gateway.delivery import Deliveries, ReplyStream
from hermes_plugin_gateway.intake import Intake
from hermes_plugin_gateway.ledger import ClaimLost, InboxItem, Ledger, OutboxItem
from hermes_plugin_gateway.outbox import serving
from hermes_plugin_gateway.pairing import Pairings
from hermes_plugin_gateway.platforms import Platforms
from hermes_plugin_gateway.questions import Asker, ChatQuestions, sends_notes
from hermes_plugin_gateway.routing import route_key, user_scope
from hermes_plugin_gateway.schema import SCHEMA
from hermes_plugin_gateway.services import Services, enabled_services
from hermes_plugin_gateway.settings import PLATFORM_ENABLED, GatewayConfig
from hermes_plugin_gateway.status import write_status
from hermes_plugin_gateway.supervisor import one_line
from hermes_plugin_gateway.toolsets import tool_choice, untrusted_source
from hermes_sdk import Kind, PlatformSpec, ServiceSpec, SlashCommandSpec
from hermes_sdk.events import CommandContext
from hermes_sdk.following import TurnWatcher, follow_turn
from hermes_sdk.media import Attachment
from hermes_sdk.platform import ButtonPress, ChatRef, Inbound, PlatformAdapter, PlatformContext
from hermes_sdk.runtime import (
    Delivery,
    DeliveryUnavailable,
    Runtime,
    RuntimeOptions,
    RuntimeTurn,
    SessionBusy,
    SessionNotFound,
    SessionOptions,
    TurnEnded,
)
from hermes_sdk.service import ServiceContext
from hermes_sdk.storage import open_store

if TYPE_CHECKING:  # aiohttp is imported only when a platform asks for an HTTP route
    from hermes_sdk.listener import Handler, SharedListener

__all__ = ["Gateway", "compose_reply", "open_gateway"]

log = logging.getLogger("hermes.gateway")

TYPING_EVERY_SECONDS = 4.0
TYPING_AFTER_SECONDS = 0.5
"""A reply sooner than this needs no typing indicator; skipping it saves an API call per
message, which under load queues in front of the replies themselves."""
UPKEEP_SECONDS = 1.0
STATUS_EVERY_SECONDS = 5.0
PLATFORMS_LEASE = "gateway-platforms"
"""Whoever holds it connects the chat platforms (Telegram lets one poller in)."""
SHARED_POLL_SECONDS = 0.1
"""Workers sharing a store look this often for messages another worker took in, and the
one with the platforms for replies others recorded. A gateway alone is woken instead."""
PULSE_SECONDS = 1.0
BUSY_RETRY_SECONDS = 75.0
"""A turn resumed after its worker died waits this long for the session's lease, which a
dead host's turn holds until it expires (60 s)."""

HELP_INTRO = "I am Hermes, your agent. Write to me as you would to a person."
PAIRING = (
    "I don't know you yet, so I can't help. If you know my owner, send them this code and "
    "ask them to run:\n\n`hermes pairing approve {platform} {code}`\n\n"
    "The code expires in an hour."
)
RESUMED = (
    "(Hermes restarted while working on this message. The transcript shows what was done "
    "before; a tool whose effect is UNKNOWN may or may not have acted, so check before "
    "repeating it. Continue where you left off.)\n\nThe message was:\n{text}"
)
BUSY = "another Hermes process is working in this conversation; try again in a moment"


@dataclass
class Conversation:
    """One route's queue and, while it runs, its turn."""

    key: str
    chat: ChatRef
    queue: deque[InboxItem] = field(default_factory=deque)
    task: asyncio.Task[None] | None = None
    turn: RuntimeTurn | None = None
    stopped_by_user: bool = False
    dropped: set[int] = field(default_factory=set)
    """Messages /stop dropped after they were taken off the queue."""
    current: int | None = None


def compose_reply(ended: TurnEnded, stopped_by_user: bool) -> str:
    """What the user reads for a finished turn."""
    text = ended.reply.strip()
    if ended.status == "done":
        return text or "(no reply)"
    if ended.status in {"stopped", "interrupted"}:
        return f"{text}\n\n_(stopped)_" if text else "Stopped."
    note = f"⚠️ {BUSY if ended.status == 'busy' else ended.error or ended.status}"
    return f"{text}\n\n{note}" if text else note


def runtime_options(settings: GatewayConfig, cwd: Path) -> RuntimeOptions:
    """The gateway's runtime: nobody at a terminal watches its sessions (the compaction
    safety net applies), questions wait as long as the chats' do."""
    return RuntimeOptions(
        cwd=str(cwd),
        unattended=True,
        question_timeout_s=settings.approval_timeout_seconds,
        close_timeout_s=max(1.0, settings.drain_seconds),
    )


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
    async with context.open_runtime(runtime_options(settings, where)) as runtime:
        yield Gateway(context, runtime, settings, where)


class Gateway:
    def __init__(
        self, context: CommandContext, runtime: Runtime, settings: GatewayConfig, cwd: Path
    ) -> None:
        self.context = context
        self.runtime = runtime
        self.settings = settings
        self.cwd = cwd
        self.home = Path(context.home)
        config = context.config
        self.questions = ChatQuestions()
        self.store = runtime.plugin_store(SCHEMA)
        self.ledger = Ledger(self.store)
        self.intake = Intake(self.ledger, self._stored)
        self.worker = new_holder()
        """This process among the workers serving the store (``host:pid:token``)."""
        self.intake.worker = self.worker
        leases = runtime.plugin_store(LEASES)  # made, if missing, on the runtime's store
        # On PostgreSQL, what keeps the workers in step (the platforms' lease, being heard,
        # taking messages) and what marks a reply delivered go through connections of their
        # own: queued behind the turns' store work, a lease would lapse under load (two
        # workers polling Telegram), and a reply sent but not yet marked delivered would go
        # again, as a possible duplicate, if this worker died meanwhile.
        self._control_store = (
            open_store(self.home, SCHEMA) if self.store.dialect == "postgresql" else None
        )
        control = self._control_store or self.store
        self.claims = Claims(control, self.worker, settings.worker_timeout_seconds)
        self.leases = Leases(control if self._control_store is not None else leases)
        self.leading = False
        """Whether this worker holds the platforms (connects them, sends the replies)."""
        self.peers = 0
        """Other live workers on the store (0: this gateway serves it alone)."""
        self.pairings = Pairings(self.store)
        platforms_config: Mapping[str, Any] = config.get("platforms") or {}
        self.access = Access(platforms_config, self.pairings)
        specs = [
            spec
            for spec in context.provided.of(Kind.PLATFORM)
            if isinstance(spec, PlatformSpec)
            and (platforms_config.get(spec.name) or {}).get("enabled", PLATFORM_ENABLED)
            is not False
        ]
        self.platforms = Platforms(
            specs,
            lambda name: PlatformContext(
                name=name,
                home=context.home,
                config=platforms_config.get(name) or {},
                secrets=context.secrets,
                root_config=context.config,
            ),
            lambda name: _Host(self, name),
            backoff=settings.restart_backoff_seconds,
            backoff_max=settings.restart_backoff_max_seconds,
            on_running=self._platform_running,
            on_stopped=self._platform_stopped,
        )
        self.http: SharedListener | None = None
        """The HTTP listener platforms share (webhooks, Slack's Events API); bound when
        first asked for a route."""
        self.deliveries = Deliveries(
            Ledger(self._control_store) if self._control_store is not None else self.ledger,
            self.platforms.adapter,
            attempts=settings.delivery_attempts,
            max_age_seconds=settings.delivery_max_age_hours * 3600,
        )
        self.services = Services(
            enabled_services(
                [s for s in context.provided.of(Kind.SERVICE) if isinstance(s, ServiceSpec)],
                config,
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
        )
        self.conversations: dict[str, Conversation] = {}
        self.stopping = False
        self.started_at = time.time()
        self.loop: asyncio.AbstractEventLoop | None = None
        self._slots: asyncio.Semaphore | None = None
        self._background: set[asyncio.Task[Any]] = set()
        self._wake: asyncio.Event | None = None
        self._lease_known: asyncio.Event | None = None
        self._membership: list[asyncio.Task[None]] = []
        self._alone = self.store.dialect != "postgresql"
        """A SQLite home: no other worker can share its store (one gateway per home)."""
        self._claimed_as: dict[int, str] = {}
        """The name each message in hand was taken under (this worker's, unless renamed)."""
        self._frozen_after_first_turn = False
        self._slash: dict[str, SlashCommandSpec] | None = None

    # --- lifecycle --------------------------------------------------------------------------

    async def run(self, stop: asyncio.Event) -> None:
        """Serve until ``stop`` is set, then shut down cleanly."""
        self.loop = asyncio.get_running_loop()
        self._slots = asyncio.Semaphore(self.settings.max_concurrent_turns)
        self._wake = asyncio.Event()
        self._lease_known = asyncio.Event()
        await self._pulse()  # counted as alive before it takes a message
        if not self._alone:  # other workers may share it: stay heard
            self._membership.append(asyncio.ensure_future(self._keep_alive()))
        await asyncio.to_thread(self.ledger.prune)
        # Tool sources (MCP servers) connect once, before any chat is served, and are shared.
        for warning in await self.runtime.warm_up("gateway"):
            log.warning("gateway: %s", warning)
        _freeze_heap()
        with serving(self.context.home, self):
            self.services.start()
            lease = self.settings.leader_lease_seconds
            # Held until the shutdown has drained the turns and stopped the platforms: said
            # alive meanwhile, so no other worker takes this one's turns while they finish.
            if not self._alone:
                self._membership.append(
                    asyncio.ensure_future(
                        hold(self.leases, PLATFORMS_LEASE, self.worker, lease, self._lead)
                    )
                )
            loops = [asyncio.ensure_future(self._upkeep()), asyncio.ensure_future(self._dispatch())]
            try:
                if self._alone:  # it holds the platforms: no lease (a failure stops it)
                    await self._lead(True)
                await stop.wait()
            finally:
                await _cancelled(*loops)
                await self.shutdown()

    async def shutdown(self) -> None:
        """Let running turns finish up to ``drain_seconds``; stop the rest, which resume at
        the next start; messages still queued stay queued."""
        self.stopping = True
        running = [c.task for c in self.conversations.values() if c.task is not None]
        if running:
            log.info("gateway: letting %d running turns finish", len(running))
            await asyncio.wait(running, timeout=self.settings.drain_seconds)
        for conversation in self.conversations.values():
            if conversation.turn is not None:
                conversation.turn.stop()
        left = [c.task for c in self.conversations.values() if c.task is not None]
        if left:
            await asyncio.wait(left, timeout=10)
        await self.services.stop()
        await self.platforms.stop()
        if self.http is not None:
            await self.http.close()
        # The lease is released as its holding ends: another worker connects at once.
        await _cancelled(*self._membership)
        try:  # what it took and did not finish: to the other workers, or the next start
            await self.claims.store.run(self.claims.leave)
        except Exception as exc:  # noqa: BLE001 - they go back once this worker is missed
            log.warning("gateway: could not hand its messages back: %s", one_line(exc))
        if self._control_store is not None:
            self._control_store.close()
        self._write_status("stopped")

    def _platform_stopped(self, name: str) -> None:
        if self.http is not None:
            self.http.release(name)

    async def http_route(self, platform: str, prefix: str, handler: Handler) -> str:
        from hermes_sdk.listener import SharedListener

        if self.http is None:
            self.http = SharedListener(
                self.settings.http_host, self.settings.http_port, setting="gateway.http_port"
            )
        return await self.http.route(platform, prefix, handler)

    def _platform_running(self, name: str) -> None:
        # Its messages may be taken now (those the last run left too: connected first, so
        # a resumed turn can stream, show typing and ask for approvals).
        self._woken()
        self._spawn(self._redeliver(name))

    async def _lead(self, leading: bool) -> None:
        """The platforms' lease won or lost (or, first, not won): this worker connects the
        chat platforms and sends every reply, or leaves that to the worker that holds it."""
        if not leading or self.stopping:
            self.leading = False
            await self.platforms.stop()
            if not self.stopping:
                log.info("gateway: another worker holds the chat platforms; this one runs turns")
            self._lease_decided()
            return
        # Sends that were in flight when the last holder stopped may have gone out: their
        # next attempt says so. (Raising, the lease is given back and tried again.)
        ledger = self.deliveries.ledger  # the sends' own connections (on PostgreSQL)
        in_flight = await ledger.store.run(ledger.after_crash)
        if in_flight:
            log.warning("%d replies were being sent when Hermes stopped; resending them", in_flight)
        if self._shutting_down():  # it began while the store was asked
            return
        if self.peers:
            log.warning("gateway: this worker now holds the chat platforms")
        self.leading = True
        self.platforms.start()
        self._lease_decided()

    def _shutting_down(self) -> bool:
        return self.stopping

    def _lease_decided(self) -> None:
        if self._lease_known is not None:
            self._lease_known.set()

    async def _dispatch(self) -> None:
        """Take stored messages to run, as many as there are free turn slots: woken when
        this gateway stores one or finishes one, and polling for what other workers stored."""
        assert self._wake is not None and self._lease_known is not None
        # Not before this worker knows whether it holds the platforms: holding them, it
        # takes only connected ones' messages (a resumed turn there streams and asks).
        await self._lease_known.wait()
        while not self.stopping:
            poll = SHARED_POLL_SECONDS if self.peers else UPKEEP_SECONDS
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(poll):  # wait_for may swallow a cancel (3.11)
                    await self._wake.wait()
            self._wake.clear()
            if any(name != self.worker for name in self._claimed_as.values()):
                continue  # renamed: what it held under its old name must end first
            free = self.settings.max_concurrent_turns - len(self.conversations)
            # The worker with the platforms takes messages of connected ones only (a turn
            # resumed there can stream and ask); the others take any platform's: their
            # replies wait in the ledger for it.
            platforms = (
                [name for name in self.platforms.states if self.platforms.adapter(name)]
                if self.leading
                else None
            )
            try:
                items = await self.claims.store.run(self.claims.claim, platforms, free)
            except Exception as exc:  # noqa: BLE001 - the store may be back at the next poll
                log.warning("gateway: could not take messages from the inbox: %s", one_line(exc))
                await asyncio.sleep(UPKEEP_SECONDS)
                continue
            for item in items:
                self._enqueue(item)

    def _stored(self, item: InboxItem) -> None:
        # Alone, this gateway runs what it stores at once. Among workers it polls like the
        # others, so a busy worker (this one takes messages in and sends every reply)
        # leaves messages to the less busy.
        if not self.peers:
            self._woken()

    def _woken(self) -> None:
        if self._wake is not None:
            self._wake.set()

    async def _upkeep(self) -> None:
        last_status = 0.0
        while True:
            if self.leading:
                await self._redeliver(None)
            if time.monotonic() - last_status >= STATUS_EVERY_SECONDS:
                last_status = time.monotonic()
                await asyncio.to_thread(self._write_status, "running")
            await asyncio.sleep(SHARED_POLL_SECONDS if self.peers else UPKEEP_SECONDS)

    async def _keep_alive(self) -> None:
        # A loop of its own: sending a burst of replies must not make this worker look dead.
        while True:
            await asyncio.sleep(PULSE_SECONDS)
            await self._pulse()

    async def _pulse(self) -> None:
        """Tell the other workers this one is alive; learn of dead ones, and of turns here
        that a /stop in a chat the platforms' worker serves asked to stop."""
        try:
            pulse = await self.claims.store.run(self.claims.pulse, self._alone)
        except Exception as exc:  # noqa: BLE001 - tried again in a second
            log.warning("gateway: could not tell the store this worker is alive: %s", one_line(exc))
            return
        self.peers = pulse.peers
        if pulse.freed:
            log.warning("gateway: %d messages of a worker that stopped are taken up", pulse.freed)
            self._woken()
        if pulse.was_dead:
            # What it held under its old name is being resumed elsewhere: its turns stop,
            # and what they would still write under that name no longer counts.
            log.error(
                "gateway: this worker went unheard for over %g s and the others took its "
                "messages; stopping its turns",
                self.settings.worker_timeout_seconds,
            )
            self.worker = self.intake.worker = new_holder()
            self.claims.rename(self.worker)
        for conversation in self.conversations.values():
            if conversation.current in pulse.to_stop:
                conversation.stopped_by_user = True  # also while it waits to resume
                if conversation.turn is not None:
                    conversation.turn.stop()
            elif pulse.was_dead and conversation.turn is not None:
                conversation.turn.stop()

    async def _redeliver(self, platform: str | None) -> None:
        await self.deliveries.deliver_due(await self.store.run(self.ledger.open_outbox, platform))

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
                "worker": self.worker,
                "leading": self.leading,
                "peers": self.peers,
                "turns_running": sum(1 for c in self.conversations.values() if c.turn),
                "conversations": len(self.conversations),
                **counts,
            },
        )

    def _spawn(self, coroutine: Any) -> None:
        task = asyncio.ensure_future(coroutine)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    # --- events from platforms --------------------------------------------------------------

    async def receive(self, message: Inbound) -> None:
        # Config answers without touching the database: the common case stays on the loop.
        if (
            not self.access.allowed_by_config(message)
            and not _verifies_senders(self.platforms.adapter(message.chat.platform))
            and not await self.store.run(self.access.allowed, message)
        ):
            await self._stranger(message)
            return
        key = route_key(message, self.settings.group_sessions)
        text = message.text.strip()
        if _command(text) in {"/stop", "/cancel"}:
            await self._stop(key, message)
            return
        if not message.attachments and self.questions.typed(message.chat, message.user_id, text):
            return
        # Queued by the intake once stored (a message the platform sent again is not).
        await self.intake.accept(message, key)

    async def pressed(self, press: ButtonPress) -> str:
        return self.questions.pressed(press)

    async def allows(self, platform: str, user_id: str) -> bool:
        if self.access.allowed_by_user(platform, user_id):
            return True
        return bool(await self.store.run(self.pairings.is_paired, platform, user_id))

    async def _stranger(self, message: Inbound) -> None:
        platform = message.chat.platform
        adapter = self.platforms.adapter(platform)
        if not self.access.may_pair(message, default=_pairs_by_default(adapter)):
            log.info("%s: ignored a message from user %s (not allowed)", platform, message.user_id)
            return
        code = await asyncio.to_thread(
            self.pairings.request, platform, message.user_id, message.user_name
        )
        if code is None:
            log.info(
                "%s: user %s was not given a pairing code (asked recently, or 3 wait)",
                platform,
                message.user_id,
            )
            return
        log.warning(
            "%s: user %s (%s) asks to pair; see: hermes pairing list",
            platform,
            message.user_id,
            message.user_name or "no name",
        )
        if adapter is not None:
            with contextlib.suppress(Exception):  # they can write again in 10 minutes
                await adapter.send(message.chat, PAIRING.format(platform=platform, code=code))

    async def _stop(self, key: str, message: Inbound) -> None:
        """``/stop``: the runtime stops this chat's turn in this process; the gateway drops
        the messages still waiting, and asks the worker that runs the turn, if another
        does, to stop it at its next pulse."""
        conversation = self.conversations.get(key)
        self.questions.cancel(message.chat)
        session_id = None
        if conversation is not None:
            for waiting in conversation.queue:
                self._claimed_as.pop(waiting.id, None)
            conversation.queue.clear()
            if conversation.current is not None and conversation.turn is None:
                conversation.dropped.add(conversation.current)
            if conversation.turn is not None:
                conversation.stopped_by_user = True
                session_id = conversation.turn.session_id
        reply = await self.runtime.run_slash(
            "stop", "", session_id, user_scope=user_scope(message.chat, message.user_id, key)
        )
        dropped, elsewhere = await self.claims.store.run(self.claims.request_stop, key)
        note = reply.text if reply.stopped or not elsewhere else "stopping… (in another worker)"
        if dropped:
            note += f"; dropped {dropped} waiting message{'s' if dropped != 1 else ''}"
        await self._reply(None, message.chat, note)

    # --- conversations ----------------------------------------------------------------------

    def _enqueue(self, item: InboxItem) -> None:
        conversation = self.conversations.get(item.route_key)
        if conversation is None:
            conversation = self.conversations[item.route_key] = Conversation(
                item.route_key, item.chat
            )
        self._claimed_as[item.id] = item.worker or self.worker
        conversation.queue.append(item)
        if conversation.task is None:
            conversation.task = asyncio.ensure_future(self._drain(conversation))

    async def _drain(self, conversation: Conversation) -> None:
        try:
            while conversation.queue and not self.stopping:
                item = conversation.queue.popleft()  # /stop empties the queue
                conversation.current = item.id
                try:
                    await self._process(conversation, item)
                except Exception:
                    log.exception("gateway: message %d failed", item.id)
                    if await self._settle_failed(item):
                        with contextlib.suppress(Exception):
                            await self._reply(
                                None,
                                item.chat,
                                "⚠️ Something went wrong on my side; the error is in the "
                                "gateway's log.",
                            )
                finally:
                    self._claimed_as.pop(item.id, None)
        finally:
            conversation.task = None
            if not conversation.queue:
                self.conversations.pop(conversation.key, None)
            self._woken()  # a turn slot is free, and this route's next message may run

    async def _settle_failed(self, item: InboxItem) -> bool:
        """Close a message whose handling failed, so its chat's next message may run: tried
        again while the store fails (the failure may have been the store's), until this
        gateway stops. Whether this worker closed it (else another holds it, or it is
        closed already)."""
        while not self.stopping:
            try:
                return bool(
                    await self.store.run(
                        self.ledger.mark, item.id, "failed", None, self._as(item.id)
                    )
                )
            except Exception as exc:  # noqa: BLE001 - the store may be back in a moment
                log.warning("gateway: message %d stays open: %s", item.id, one_line(exc))
                await asyncio.sleep(UPKEEP_SECONDS * 2)
        return False  # left open: this worker hands it back as it leaves

    def _as(self, item_id: int) -> str:
        """The name a message in hand was taken under (its writes only count under it)."""
        return self._claimed_as.get(item_id, self.worker)

    async def deliver(self, platform: str, chat_id: str, text: str) -> Delivery:
        """A front-end's message to a chat (``Runtime.deliver`` in this process)."""
        if platform not in self.platforms.states:
            enabled = ", ".join(sorted(self.platforms.states)) or "none"
            raise DeliveryUnavailable(
                f"no platform {platform!r} runs in this gateway (enabled: {enabled})"
            )
        chat = ChatRef(platform=platform, chat_id=chat_id, chat_type="private")
        outbox_id, sent = await self._reply(None, chat, text)
        return Delivery(delivery_id=outbox_id, state="sent" if sent else "queued")

    async def _reply(
        self,
        item_id: int | None,
        chat: ChatRef,
        text: str,
        *,
        reply_to: str | None = None,
        preview_id: str | None = None,
        attachment: Attachment | None = None,
    ) -> tuple[int, bool]:
        """Record the reply in the ledger and try to send it: its id, and whether it went.
        With ``attachment``, the entry sends that file (``text``: its caption)."""
        # Recorded as being sent in the same write when the platform runs (one write less
        # on every reply's way out).
        sending = self.platforms.adapter(chat.platform) is not None
        try:
            outbox_id = await self.store.run(
                self.ledger.reply_ready,
                item_id,
                chat,
                text,
                reply_to=reply_to,
                preview_id=preview_id,
                attempting=sending,
                attachment=attachment,
                worker=None if item_id is None else self._as(item_id),
            )
        except ClaimLost as exc:
            log.warning("gateway: %s (stopped, or taken over by another worker)", exc)
            return 0, False
        now = time.time()
        sent = await self.deliveries.deliver(
            OutboxItem(
                outbox_id,
                chat,
                reply_to,
                preview_id,
                text,
                "pending",
                0,
                False,
                now,
                now,
                attachment,
            ),
            marked=sending,
        )
        return outbox_id, sent

    async def _process(self, conversation: Conversation, item: InboxItem) -> None:
        name = _command(item.text)[1:]
        name = "help" if name == "start" else name  # what Telegram sends first
        if name and name in await self._slash_commands():
            text = await self._slash_command(conversation, item, name)
            await self._reply(item.id, item.chat, text, reply_to=item.message_id)
            return
        if item.state == "resuming":
            await self.store.run(self.ledger.mark, item.id, "failed", None, self._as(item.id))
            await self._reply(
                item.id,
                item.chat,
                "⚠️ Hermes was interrupted twice while working on your message, so I stopped "
                "trying. Check what was done, then send it again if you still need it.",
                reply_to=item.message_id,
            )
            return
        assert self._slots is not None
        async with self._slots:
            if self.stopping:
                return  # stays queued (or running): picked up at the next start
            if item.id in conversation.dropped:
                return  # /stop dropped it while it waited for a turn slot
            await self._turn(conversation, item)

    async def _slash_commands(self) -> dict[str, SlashCommandSpec]:
        """The runtime's slash commands, loaded on the first message that starts with ``/``."""
        if self._slash is None:
            commands = await asyncio.to_thread(self.runtime.slash_commands)
            self._slash = dict(commands)
        return self._slash

    async def _slash_command(self, conversation: Conversation, item: InboxItem, name: str) -> str:
        """A ``/NAME`` from a chat, never seen by the model: the runtime runs it on the
        conversation's session, for that person (``user_scope``). Only a command that
        allows it on platforms runs (``on_platforms``: ``/new``, ``/memory`` on that
        person's own memory ...); the others touch what everyone shares."""
        spec = (await self._slash_commands())[name]
        if not spec.on_platforms:
            return f"/{name} is for the terminal (hermes chat): what it changes is shared"
        args = item.text.strip().partition(" ")[2].strip()
        session_id = item.session_id or await self.store.run(self.ledger.route, conversation.key)
        try:
            reply = await self.runtime.run_slash(
                name,
                args,
                session_id,
                user_scope=user_scope(item.chat, item.user_id, conversation.key),
            )
        except SessionBusy:
            return BUSY
        except Exception as exc:  # noqa: BLE001 - a command's failure is one line to the user
            log.warning("/%s failed: %s", name, exc)
            return f"/{name} failed: {one_line(exc)}"
        if reply.new_session:  # the chat's next message opens a new session
            await self.store.run(self.ledger.drop_route, conversation.key)
        if name == "help":
            return f"{HELP_INTRO}\n\n{reply.text}"
        return reply.text or "(nothing to show)"

    async def _session(self, conversation: Conversation, item: InboxItem) -> str:
        """The id of the session the message's route talks in, opened if it has none (or
        its session was deleted meanwhile)."""
        session_id = item.session_id or await self.store.run(self.ledger.route, conversation.key)
        toolsets, left_out = tool_choice(
            self.platforms.adapter(item.chat.platform),
            self.access.rules(item.chat.platform),
            item.chat,
            self.runtime.toolsets(),
        )
        options = SessionOptions(
            source=item.chat.platform,
            user_scope=user_scope(item.chat, item.user_id, conversation.key),
            cwd=str(self.cwd),
            toolsets=toolsets,
            exclude_tools=left_out,
        )
        if session_id is not None:
            with contextlib.suppress(SessionNotFound):  # the same tools after a restart
                return (await self.runtime.resume_session(session_id, options)).session_id
        opened = await self.runtime.open_session(options)
        await self.store.run(self.ledger.set_route, conversation.key, opened.session_id)
        return opened.session_id

    async def _turn(self, conversation: Conversation, item: InboxItem) -> None:
        session_id = await self._session(conversation, item)
        resumed = item.state == "running"
        adapter = self.platforms.adapter(item.chat.platform)
        text = item.text
        if (source := untrusted_source(adapter, item.chat)) is not None:
            text = as_untrusted(text, source)
        text = RESUMED.format(text=text) if resumed else text
        # Marked before the turn starts: a crash from here on resumes it once, with a note
        # that says to check what was done (nothing, if it came before the turn's first write).
        if not await self.store.run(
            self.ledger.mark,
            item.id,
            "resuming" if resumed else "running",
            session_id,
            self._as(item.id),
        ):
            return  # /stop dropped it meanwhile, or this worker was taken for dead
        if resumed and adapter is not None and sends_notes(adapter):
            with contextlib.suppress(Exception):
                await adapter.send(
                    item.chat, "Hermes restarted while working on your message; continuing."
                )
        conversation.stopped_by_user = False
        stream = None
        if adapter is not None and adapter.can_edit and self.settings.stream:
            stream = ReplyStream(
                adapter, item.chat, item.message_id, self.settings.stream_interval_seconds
            )
        asker = Asker(adapter, item.chat, item.user_id) if adapter is not None else None
        typing = None
        if adapter is not None and self.settings.typing:
            typing = asyncio.ensure_future(_keep_typing(adapter, item.chat))
        try:
            ended = await self._run_turn(
                conversation, session_id, text, stream, asker, item.attachments
            )
            waited_until = time.monotonic() + BUSY_RETRY_SECONDS
            while ended.status == "busy" and resumed and not self.stopping:
                if conversation.stopped_by_user or item.id in conversation.dropped:
                    conversation.stopped_by_user = True
                    ended = TurnEnded(session_id=session_id, status="stopped", reply="")
                    break
                if time.monotonic() > waited_until:
                    break
                # The turn that was interrupted still holds the session: its worker died
                # on another host, and its lease runs out.
                await asyncio.sleep(2.0)
                ended = await self._run_turn(
                    conversation, session_id, text, stream, asker, item.attachments
                )
        finally:
            if typing is not None:
                typing.cancel()
            preview = await stream.close() if stream is not None else None
        if (
            self.stopping
            and ended.status in {"stopped", "interrupted"}
            and not conversation.stopped_by_user
        ):
            # Stopped by the shutdown: another worker, or the next start, resumes it (once).
            await self.store.run(self.ledger.mark, item.id, "running", None, self._as(item.id))
            return
        reply = compose_reply(ended, conversation.stopped_by_user)
        recorded, _ = await self._reply(
            item.id, item.chat, reply, reply_to=item.message_id, preview_id=preview
        )
        if not recorded:
            return  # no longer this worker's to answer: its files are not sent either
        for attachment in ended.attachments:  # each one an obligation of its own
            await self._reply(None, item.chat, "", attachment=attachment)
        if not self._frozen_after_first_turn:
            self._frozen_after_first_turn = True
            _freeze_heap()  # now the provider and the platform's HTTP stack are loaded too

    async def _run_turn(
        self,
        conversation: Conversation,
        session_id: str,
        text: str,
        stream: ReplyStream | None,
        asker: Asker | None,
        attachments: tuple[Attachment, ...] = (),
    ) -> TurnEnded:
        """Run one turn and follow its events: the reply's text to the preview, questions to
        the chat (answered no where nobody can be asked)."""
        try:
            turn = self.runtime.start_turn(
                session_id, text, answers_questions=asker is not None, attachments=attachments
            )
        except SessionBusy:  # a service of this gateway runs a turn on it
            return TurnEnded(session_id=session_id, status="busy", reply="")
        conversation.turn = turn
        watcher = TurnWatcher(
            on_text=stream.feed if stream is not None else None,
            on_restart=stream.restart if stream is not None else None,
            # Asked in a task of its own: the turn's events keep flowing meanwhile.
            on_question=(
                (lambda event: self._spawn(self.questions.ask(asker, event)))
                if asker is not None
                else None
            ),
        )
        try:
            return await follow_turn(turn, watcher)
        finally:
            conversation.turn = None


async def _cancelled(*tasks: asyncio.Task[Any] | asyncio.Future[Any]) -> None:
    for task in tasks:
        task.cancel()
    for task in tasks:
        with contextlib.suppress(asyncio.CancelledError):
            await task


def _verifies_senders(adapter: PlatformAdapter | None) -> bool:
    return adapter is not None and getattr(adapter, "verifies_senders", False) is True


def _pairs_by_default(adapter: PlatformAdapter | None) -> bool:
    return adapter is None or getattr(adapter, "pairs_by_default", True) is not False


def _freeze_heap() -> None:
    """Exempt what is loaded so far (modules, plugins, config) from garbage collection.

    A full collection walks every object, and with a thousand conversations it took 60-70 ms
    on the event loop, a stall that every reply in flight shared; what the gateway loads
    at start lives as long as the process, so walking it again finds nothing. Frozen, full
    collections walk only what came later (15-20 ms in the same run)."""
    gc.collect()
    gc.freeze()


def _command(text: str) -> str:
    """The command a message starts with (``/new``), lower case; '' if none."""
    words = text.strip().split(maxsplit=1)
    return words[0].lower() if words and words[0].startswith("/") else ""


async def _keep_typing(adapter: PlatformAdapter, chat: ChatRef) -> None:
    await asyncio.sleep(TYPING_AFTER_SECONDS)
    while True:
        with contextlib.suppress(Exception):  # only a hint to the user
            await adapter.typing(chat)
        await asyncio.sleep(TYPING_EVERY_SECONDS)


class _Host:
    """What a platform adapter sees of the gateway."""

    def __init__(self, gateway: Gateway, platform: str) -> None:
        self._gateway = gateway
        self._platform = platform

    async def receive(self, message: Inbound) -> None:
        if message.chat.platform != self._platform:
            # Who may write is judged by platform: a message must come as its own platform's.
            log.warning("%s: dropped a message labelled %r", self._platform, message.chat.platform)
            return
        await self._gateway.receive(message)

    async def pressed(self, press: ButtonPress) -> str:
        return await self._gateway.pressed(press)

    def question_open(self, request_id: str) -> bool:
        return self._gateway.questions.is_open(request_id)

    async def allows(self, user_id: str) -> bool:
        return await self._gateway.allows(self._platform, user_id)

    async def forward(self, platform: str, chat_id: str, text: str) -> None:
        await self._gateway.deliver(platform, chat_id, text)

    async def http_route(self, prefix: str, handler: Handler) -> str:
        return await self._gateway.http_route(self._platform, prefix, handler)
