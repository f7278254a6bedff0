"""The front door: what the platform adapters see of the gateway (:class:`PlatformHost`).

A message is judged first: who may write (default deny: the allowlists, DM pairing for a
stranger where the platform allows it); ``/stop`` is acted on at once (it must not queue
behind the turn it stops); a typed answer to an open question answers it; anything else goes
to the intake, which stores it and hands it on. Buttons pressed answer the questions shown.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import replace
from typing import TYPE_CHECKING

from hermes_commons.scan import as_untrusted
from hermes_commons.supervision import one_line
from hermes_plugin_gateway.access import Access
from hermes_plugin_gateway.chat_commands import command_of
from hermes_plugin_gateway.claims import Claims
from hermes_plugin_gateway.dispatch import Dispatch
from hermes_plugin_gateway.intake import Intake
from hermes_plugin_gateway.pairing import Pairings
from hermes_plugin_gateway.platforms import Platforms
from hermes_plugin_gateway.questions import ChatQuestions
from hermes_plugin_gateway.replies import Replies
from hermes_plugin_gateway.routing import route_key, user_scope
from hermes_plugin_gateway.toolsets import untrusted_source
from hermes_sdk.platform import ButtonPress, Inbound, PlatformAdapter
from hermes_sdk.runtime import Runtime
from hermes_sdk.storage import Store

if TYPE_CHECKING:  # aiohttp is imported only when a platform asks for an HTTP route
    from hermes_sdk.listener import Handler, SharedListener

__all__ = ["FrontDoor", "PlatformDoor"]

AT_ONCE = frozenset({"/steer", "/bg", "/background"})
"""Commands run as they arrive, beside the chat's running turn (see ``FrontDoor._at_once``)."""
AT_ONCE_REMEMBERED = 1000
"""How many of those messages are remembered, so a redelivered one is not run again."""

log = logging.getLogger("hermes.gateway")

PAIRING = (
    "I don't know you yet, so I can't help. If you know my owner, send them this code and "
    "ask them to run:\n\n`hermes pairing approve {platform} {code}`\n\n"
    "The code expires in an hour."
)


class FrontDoor:
    def __init__(
        self,
        runtime: Runtime,
        store: Store,
        access: Access,
        pairings: Pairings,
        platforms: Platforms,
        questions: ChatQuestions,
        intake: Intake,
        dispatch: Dispatch,
        replies: Replies,
        claims: Claims,
        *,
        group_sessions: str,
        http: tuple[str, int],
    ) -> None:
        self.runtime = runtime
        self.store = store
        self.access = access
        self.pairings = pairings
        self.platforms = platforms
        self.questions = questions
        self.intake = intake
        self.dispatch = dispatch
        self.replies = replies
        self.claims = claims
        self.group_sessions = group_sessions
        self._http_at = http
        self._later: set[asyncio.Task[object]] = set()
        """Commands run at once, and lines they promised for later, being sent."""
        self._ran_at_once: dict[tuple[str, str, str], None] = {}
        """The messages run at once lately (platform, chat, message id): a redelivery is not."""
        self.http: SharedListener | None = None
        """The HTTP listener platforms share (webhooks, Slack's Events API); bound when
        first asked for a route."""

    def door(self, platform: str) -> PlatformDoor:
        return PlatformDoor(self, platform)

    async def receive(self, message: Inbound) -> None:
        # Config answers without touching the database: the common case stays on the loop.
        store = self.store
        if (
            not self.access.allowed_by_config(message)
            and not _verifies_senders(self.platforms.adapter(message.chat.platform))
            and not await store.run(self.access.allowed, message)
        ):
            await self._stranger(message)
            return
        key = route_key(message, self.group_sessions)
        text = message.text.strip()
        command = command_of(text)
        if command in {"/stop", "/cancel"}:
            await self._stop(key, message)
            return
        if command in AT_ONCE and self._takes_at_once(key, message, command[1:]):
            return
        if not message.attachments and self.questions.typed(message.chat, message.user_id, text):
            return
        # Handed on by the intake once stored (a message the platform sent again is not).
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

    def _takes_at_once(self, key: str, message: Inbound, name: str) -> bool:
        """``/steer`` while this chat's turn runs here, and ``/background`` whenever: run
        now, beside the turn the queue waits for, in a task of their own (the platform's
        receiving goes on). False leaves a ``/steer`` with no turn to the queue (it is then
        sent as a message). A message the platform delivers again is run once."""
        session_id = self.dispatch.running_session(key)
        if name == "steer" and session_id is None:
            return False
        seen = (message.chat.platform, message.chat.chat_id, message.message_id)
        if message.message_id and seen in self._ran_at_once:
            return True
        self._ran_at_once[seen] = None
        while len(self._ran_at_once) > AT_ONCE_REMEMBERED:
            self._ran_at_once.pop(next(iter(self._ran_at_once)))
        task = asyncio.ensure_future(self._at_once(key, message, name, session_id))
        self._later.add(task)
        task.add_done_callback(self._later.discard)
        return True

    async def _at_once(self, key: str, message: Inbound, name: str, session_id: str | None) -> None:
        if session_id is None:
            session_id = await self.store.run(self.intake.route, key)
        loop = asyncio.get_running_loop()
        chat = message.chat

        def notify(line: str) -> None:  # later, from any thread: a message to this chat
            def send() -> None:
                task = asyncio.ensure_future(self.replies.reply(None, chat, line))
                self._later.add(task)
                task.add_done_callback(self._later.discard)

            loop.call_soon_threadsafe(send)

        scope = user_scope(chat, message.user_id, key)
        said = args = message.text.strip().partition(" ")[2].strip()
        source = untrusted_source(self.platforms.adapter(chat.platform), chat)
        if source is not None and args:  # a group's or an email's words are data
            args = as_untrusted(args, source)
        try:
            reply = await self.runtime.run_slash(
                name, args, session_id, user_scope=scope, notify=notify
            )
            text = reply.text
            if reply.send is not None:  # the turn ended meanwhile: the note is a message
                await self.intake.accept(replace(message, text=said), key)  # fenced there
        except Exception as exc:  # noqa: BLE001 - a command's failure is one line to the user
            log.warning("/%s failed: %s", name, exc)
            text = f"/{name} failed: {one_line(exc)}"
        await self.replies.reply(None, chat, text)

    async def _stop(self, key: str, message: Inbound) -> None:
        """``/stop``: the runtime stops this chat's turn in this process; the messages still
        waiting are dropped, and the worker that runs the turn, if another does, is asked to
        stop it at its next pulse."""
        self.questions.cancel(message.chat)
        session_id = self.dispatch.stop_route(key)
        reply = await self.runtime.run_slash(
            "stop", "", session_id, user_scope=user_scope(message.chat, message.user_id, key)
        )
        dropped, elsewhere = await self.claims.store.run(self.claims.request_stop, key)
        note = reply.text if reply.stopped or not elsewhere else "stopping… (in another worker)"
        if dropped:
            note += f"; dropped {dropped} waiting message{'s' if dropped != 1 else ''}"
        await self.replies.reply(None, message.chat, note)

    # --- the HTTP listener platforms share --------------------------------------------------

    async def http_route(self, platform: str, prefix: str, handler: Handler) -> str:
        from hermes_sdk.listener import SharedListener

        if self.http is None:
            host, port = self._http_at
            self.http = SharedListener(host, port, setting="gateway.http_port")
        return await self.http.route(platform, prefix, handler)

    def platform_stopped(self, name: str) -> None:
        if self.http is not None:
            self.http.release(name)

    async def close(self) -> None:
        if self.http is not None:
            await self.http.close()


class PlatformDoor:
    """What one platform's adapter sees: its messages are judged as its own platform's."""

    def __init__(self, door: FrontDoor, platform: str) -> None:
        self._door = door
        self._platform = platform

    async def receive(self, message: Inbound) -> None:
        if message.chat.platform != self._platform:
            # Who may write is judged by platform: a message must come as its own platform's.
            log.warning("%s: dropped a message labelled %r", self._platform, message.chat.platform)
            return
        await self._door.receive(message)

    async def pressed(self, press: ButtonPress) -> str:
        return await self._door.pressed(press)

    def question_open(self, request_id: str) -> bool:
        return self._door.questions.is_open(request_id)

    async def allows(self, user_id: str) -> bool:
        return await self._door.allows(self._platform, user_id)

    async def forward(self, platform: str, chat_id: str, text: str) -> None:
        await self._door.replies.deliver(platform, chat_id, text)

    async def reported(self, message_id: str, status: str, detail: str = "") -> None:
        await self._door.replies.deliveries.reported(self._platform, message_id, status, detail)

    async def http_route(self, prefix: str, handler: Handler) -> str:
        return await self._door.http_route(self._platform, prefix, handler)


def _verifies_senders(adapter: PlatformAdapter | None) -> bool:
    return adapter is not None and getattr(adapter, "verifies_senders", False) is True


def _pairs_by_default(adapter: PlatformAdapter | None) -> bool:
    return adapter is None or getattr(adapter, "pairs_by_default", True) is not False
