"""The turn runner: one message taken from the inbox becomes one turn on the runtime, and
its outcome a reply handed to the last stage (:class:`~.replies.Replies`).

On the way: a chat command runs instead of a turn; a turn interrupted twice is given up;
the message waits for a turn slot (a cap across conversations); its session is opened (or
resumed, with the same tools after a restart); the turn streams a preview, shows typing and
asks its questions in the chat (on a worker without the platforms, through the store:
:class:`~.relay.QuestionRelay`).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from hermes_commons.scan import as_untrusted
from hermes_plugin_gateway.access import Access
from hermes_plugin_gateway.chat_commands import BUSY, ChatCommands
from hermes_plugin_gateway.conversation import Conversation
from hermes_plugin_gateway.ledger import InboxItem, Ledger
from hermes_plugin_gateway.platforms import Platforms
from hermes_plugin_gateway.preview import Preview, ReplyStream
from hermes_plugin_gateway.questions import Asker, ChatQuestions, sends_notes
from hermes_plugin_gateway.relay import QuestionRelay
from hermes_plugin_gateway.relayed_preview import PreviewRelay
from hermes_plugin_gateway.replies import Replies
from hermes_plugin_gateway.routing import user_scope
from hermes_plugin_gateway.settings import GatewayConfig
from hermes_plugin_gateway.toolsets import tool_choice, untrusted_source
from hermes_sdk.following import TurnWatcher, follow_turn
from hermes_sdk.platform import ChatRef, Inbound, PlatformAdapter
from hermes_sdk.runtime import Runtime, SessionBusy, SessionNotFound, SessionOptions, TurnEnded

__all__ = ["TurnRunner", "compose_reply"]

log = logging.getLogger("hermes.gateway")

SENDING = frozenset({"queue", "goal"})
"""Commands whose reply is a message the chat sends as its user's next (``SlashReply.send``)."""
UNTRUSTED_GOAL = (
    "/goal is not offered here: in a group chat or an email the words are other people's "
    "data, and a goal would repeat them to the model turn after turn"
)
TYPING_EVERY_SECONDS = 4.0
TYPING_AFTER_SECONDS = 0.5
"""A reply sooner than this needs no typing indicator; skipping it saves an API call per
message, which under load queues in front of the replies themselves."""
BUSY_RETRY_SECONDS = 75.0
"""A turn resumed after its worker died waits this long for the session's lease, which a
dead host's turn holds until it expires (60 s)."""
RESUMED = (
    "(Hermes restarted while working on this message. The transcript shows what was done "
    "before; a tool whose effect is UNKNOWN may or may not have acted, so check before "
    "repeating it. Continue where you left off.)\n\nThe message was:\n{text}"
)
GIVEN_UP = (
    "⚠️ Hermes was interrupted twice while working on your message, so I stopped trying. "
    "Check what was done, then send it again if you still need it."
)


def compose_reply(ended: TurnEnded, stopped_by_user: bool) -> str:
    """What the user reads for a finished turn."""
    text = ended.reply.strip()
    if ended.status == "done":
        return text or "(no reply)"
    if ended.status in {"stopped", "interrupted"}:
        return f"{text}\n\n_(stopped)_" if text else "Stopped."
    note = f"⚠️ {BUSY if ended.status == 'busy' else ended.error or ended.status}"
    return f"{text}\n\n{note}" if text else note


REPORT_ID = "hermes-report:"
"""How the message id of a report (``later``) begins: the gateway's own message, which no
platform message has, so a reply to it replies to nothing."""


def _reply_to(item: InboxItem) -> str | None:
    return None if item.message_id.startswith(REPORT_ID) else item.message_id


class TurnRunner:
    def __init__(
        self,
        runtime: Runtime,
        ledger: Ledger,
        platforms: Platforms,
        access: Access,
        replies: Replies,
        questions: ChatQuestions,
        relay: QuestionRelay,
        settings: GatewayConfig,
        cwd: Path,
        stopping: asyncio.Event,
        previews: PreviewRelay | None = None,
    ) -> None:
        self.runtime = runtime
        self.ledger = ledger
        self.platforms = platforms
        self.access = access
        self.replies = replies
        self.questions = questions
        self.relay = relay
        self.settings = settings
        self.cwd = cwd
        self.stopping = stopping
        self.previews = previews
        self.commands = ChatCommands(runtime, ledger)
        self.slots = asyncio.Semaphore(settings.max_concurrent_turns)
        self._frozen_after_first_turn = False
        self.accept: Callable[[Inbound, str], Awaitable[object]] | None = None
        """The intake's ``accept``: how a report of work a turn's tools left running (a
        background subagent's) becomes the conversation's next message."""
        self._reports: set[asyncio.Task[object]] = set()

    async def handle(self, conversation: Conversation, item: InboxItem) -> None:
        """Answer one message taken from the inbox (by the worker ``item.worker`` names)."""
        name = await self.commands.name_of(item)
        if name in SENDING and item.state in ("running", "resuming"):
            # Its message was on its way when Hermes stopped: it goes on as that message
            # (the command is not run again).
            item = replace(item, text=item.text.strip().partition(" ")[2].strip())
            name = None
        if name == "goal" and untrusted_source(
            self.platforms.adapter(item.chat.platform), item.chat
        ):
            await self._answer(item, UNTRUSTED_GOAL)
            return
        if name is not None:
            text, send = await self.commands.run(conversation, item, name)
            if send is None:
                await self._answer(item, text)
                return
            # /queue, /goal: the command's line goes out on its own, and the message it
            # sends is this item's turn (answered, and resumed after a crash, as any).
            await self.replies.reply(None, item.chat, text)
            item = replace(item, text=send)
        if item.state == "resuming":
            await self.ledger.store.run(self.ledger.mark, item.id, "failed", None, item.worker)
            await self._answer(item, GIVEN_UP)
            return
        async with self.slots:
            if self.stopping.is_set():
                return  # stays queued (or running): picked up at the next start
            if item.id in conversation.dropped:
                return  # /stop dropped it while it waited for a turn slot
            await self._turn(conversation, item)

    async def _answer(self, item: InboxItem, text: str, preview_id: str | None = None) -> int:
        recorded, _ = await self.replies.reply(
            item.id,
            item.chat,
            text,
            worker=item.worker,
            reply_to=_reply_to(item),
            preview_id=preview_id,
        )
        return recorded

    async def _session(self, conversation: Conversation, item: InboxItem) -> str:
        """The id of the session the message's route talks in, opened if it has none (or
        its session was deleted meanwhile)."""
        ledger = self.ledger
        session_id = item.session_id or await ledger.store.run(ledger.route, conversation.key)
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
        await ledger.store.run(ledger.set_route, conversation.key, opened.session_id)
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
        state = "resuming" if resumed else "running"
        if not await self.ledger.store.run(
            self.ledger.mark, item.id, state, session_id, item.worker
        ):
            return  # /stop dropped it meanwhile, or this worker was taken for dead
        if resumed and adapter is not None and sends_notes(adapter):
            with contextlib.suppress(Exception):
                await adapter.send(
                    item.chat, "Hermes restarted while working on your message; continuing."
                )
        conversation.stopped_by_user = False
        stream: Preview | None = None
        interval = self.settings.stream_interval_seconds
        if adapter is not None and adapter.can_edit and self.settings.stream:
            stream = ReplyStream(adapter, item.chat, _reply_to(item), interval)
        elif adapter is None and self.previews is not None and self.settings.stream:
            stream = self.previews.stream(item, interval)  # shown by the platforms' worker
        typing = None
        if adapter is not None and self.settings.typing:
            typing = asyncio.ensure_future(_keep_typing(adapter, item.chat))
        try:
            ended = await self._run_turn(conversation, item, session_id, text, stream)
            waited_until = time.monotonic() + BUSY_RETRY_SECONDS
            while ended.status == "busy" and resumed and not self.stopping.is_set():
                if conversation.stopped_by_user or item.id in conversation.dropped:
                    conversation.stopped_by_user = True
                    ended = TurnEnded(session_id=session_id, status="stopped", reply="")
                    break
                if time.monotonic() > waited_until:
                    break
                # The turn that was interrupted still holds the session: its worker died
                # on another host, and its lease runs out.
                await asyncio.sleep(2.0)
                ended = await self._run_turn(conversation, item, session_id, text, stream)
        finally:
            if typing is not None:
                typing.cancel()
            preview = await stream.close() if stream is not None else None
        if (
            self.stopping.is_set()
            and ended.status in {"stopped", "interrupted"}
            and not conversation.stopped_by_user
        ):
            # Stopped by the shutdown: another worker, or the next start, resumes it (once).
            await self.ledger.store.run(self.ledger.mark, item.id, "running", None, item.worker)
            return
        reply = compose_reply(ended, conversation.stopped_by_user)
        if not await self._answer(item, reply, preview):
            return  # no longer this worker's to answer: its files are not sent either
        for attachment in ended.attachments:  # each one an obligation of its own
            await self.replies.reply(None, item.chat, "", attachment=attachment)
        if not self._frozen_after_first_turn:
            self._frozen_after_first_turn = True
            freeze_heap()  # now the provider and the platform's HTTP stack are loaded too

    def _reporter(
        self, conversation: Conversation, item: InboxItem, session_id: str
    ) -> Callable[[str], None] | None:
        """``later`` for a turn of ``session_id``: a report is stored as a message of the
        same person in the same conversation (run, and answered there, as any message;
        after the turn running then). A person no longer let in gets nothing; a chat that
        went on in another session meanwhile is only told that the work finished."""
        accept = self.accept
        if accept is None:
            return None
        message = Inbound(
            chat=item.chat,
            user_id=item.user_id,
            user_name=item.user_name,
            text="",
            message_id="",
        )

        async def deliver(text: str) -> None:
            ledger, access = self.ledger, self.access
            if not access.allowed_by_config(message) and not await ledger.store.run(
                access.allowed, message
            ):
                log.warning("gateway: a report for %s dropped: no longer let in", item.chat)
                return
            if await ledger.store.run(ledger.route, conversation.key) != session_id:
                await self.replies.reply(
                    None,
                    item.chat,
                    "Background work of an earlier conversation finished; it is not part of "
                    "this one.",
                )
                return
            said = replace(message, text=text, message_id=f"{REPORT_ID}{secrets.token_hex(8)}")
            await accept(said, conversation.key)

        def report(text: str) -> None:
            task = asyncio.ensure_future(deliver(text))
            self._reports.add(task)
            task.add_done_callback(self._report_done)

        return report

    def _report_done(self, task: asyncio.Task[object]) -> None:
        self._reports.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.warning("gateway: a report could not be stored: %s", task.exception())

    async def _run_turn(
        self,
        conversation: Conversation,
        item: InboxItem,
        session_id: str,
        text: str,
        stream: Preview | None,
    ) -> TurnEnded:
        """Run one turn and follow its events: the reply's text to the preview, questions to
        the chat (through the store when the platform runs in another worker; answered no
        where nobody can be asked)."""
        adapter = self.platforms.adapter(item.chat.platform)
        relayed = adapter is None and self.relay.reaches_users()
        try:
            turn = self.runtime.start_turn(
                session_id,
                text,
                answers_questions=adapter is not None or relayed,
                attachments=item.attachments,
                later=self._reporter(conversation, item, session_id),
            )
        except SessionBusy:  # a service of this gateway runs a turn on it
            return TurnEnded(session_id=session_id, status="busy", reply="")
        conversation.turn = turn
        asking: set[asyncio.Task[Any]] = set()

        def ask(event: Any) -> None:  # in a task of its own: the turn's events flow on
            if adapter is not None:
                self.questions.spawn(Asker(adapter, item.chat, item.user_id), event)
                return
            task = asyncio.ensure_future(self.relay.ask(event, item))
            asking.add(task)
            task.add_done_callback(asking.discard)

        async def interim(text: str) -> None:  # a goal's step: a message of its own
            if stream is not None:
                stream.restart()
            if text.strip():
                await self.replies.reply(None, item.chat, text)

        async def chat_notice(line: str) -> None:  # a goal's progress, a note not taken
            await self.replies.reply(None, item.chat, line)

        watcher = TurnWatcher(
            on_text=stream.feed if stream is not None else None,
            on_restart=stream.restart if stream is not None else None,
            on_chat_notice=chat_notice,
            on_interim=interim,
            on_question=ask if adapter is not None or relayed else None,
        )
        try:
            return await follow_turn(turn, watcher)
        finally:
            conversation.turn = None
            for task in list(asking):  # withdrawn from the chat: the turn waits no more
                task.cancel()


def freeze_heap() -> None:
    """Exempt what is loaded so far (modules, plugins, config) from garbage collection.

    A full collection walks every object, and with a thousand conversations it took 60-70 ms
    on the event loop, a stall that every reply in flight shared; what the gateway loads
    at start lives as long as the process, so walking it again finds nothing. Frozen, full
    collections walk only what came later (15-20 ms in the same run)."""
    gc.collect()
    gc.freeze()


async def _keep_typing(adapter: PlatformAdapter, chat: ChatRef) -> None:
    await asyncio.sleep(TYPING_AFTER_SECONDS)
    while True:
        with contextlib.suppress(Exception):  # only a hint to the user
            await adapter.typing(chat)
        await asyncio.sleep(TYPING_EVERY_SECONDS)
