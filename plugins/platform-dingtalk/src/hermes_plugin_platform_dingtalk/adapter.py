"""The DingTalk adapter: an internal app's robot in Stream mode (:mod:`.stream`). Replies go
through the message's session webhook while it lasts (about 90 minutes), else through the
robot's API (a group by its conversation, a person by their staff id). Approvals are typed:
DingTalk calls a robot back over Stream only from cards built on a template of the app's
own, and its plain interactive cards call nobody back.

What delivery it can promise: a robot message is acknowledged once stored, and one that
comes twice keeps its ``msgId`` and is answered once. DingTalk's send APIs take no
idempotency key: a reply the ledger sends again after an unknown failure carries its
"may be a duplicate" note."""

from __future__ import annotations

import functools
import json
import logging
import secrets
import time
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from hermes_commons.platform_files import IncomingFile, hand_over_with_files
from hermes_commons.sending import send_in_parts
from hermes_plugin_platform_dingtalk.api import CredentialsRefused, DingTalkApi, DingTalkError
from hermes_plugin_platform_dingtalk.reading import Fetch, read_message
from hermes_plugin_platform_dingtalk.settings import DingTalkSettings
from hermes_plugin_platform_dingtalk.stream import StreamConnection, load_sdk
from hermes_sdk.platform import (
    ChatOrder,
    ChatRef,
    Choice,
    MessageGone,
    NotSent,
    PlatformContext,
    PlatformHost,
    PlatformNotConfigured,
    TypedAnswers,
    split_message,
)

__all__ = ["DingTalkAdapter"]

log = logging.getLogger("hermes.dingtalk")

MAX_MESSAGE_CHARS = 3500
"""The robot API takes 15,000 bytes of message: 3,500 characters of any script (an emoji is
four bytes) stay within it."""
WEBHOOK_MARGIN_SECONDS = 300.0
"""A session webhook is not used in its last five minutes."""
KEPT = 512


class DingTalkAdapter:
    max_message_chars = MAX_MESSAGE_CHARS
    can_edit = False

    def __init__(self, context: PlatformContext) -> None:
        self.settings = DingTalkSettings.from_context(context)
        self.media = context.media()
        self.api = DingTalkApi(self.settings)
        self._allowed = frozenset(str(u) for u in context.config.get("allowed_users") or ())
        self._order = ChatOrder()
        self._typed = TypedAnswers()
        self._webhooks: OrderedDict[str, tuple[str, float]] = OrderedDict()
        """Each chat's latest session webhook and when it expires (epoch seconds)."""

    async def run(self, host: PlatformHost) -> None:
        try:
            await self.api.token()
        except CredentialsRefused as exc:
            raise PlatformNotConfigured(
                f"DingTalk refused the app's credentials ({exc}): set DINGTALK_CLIENT_ID and "
                "DINGTALK_CLIENT_SECRET to those of the app (Credentials & Basic Info)"
            ) from None
        await load_sdk()
        stream = StreamConnection(self.settings, functools.partial(self._message, host))
        log.info("dingtalk: connecting to %s in Stream mode", self.settings.api_url)
        await stream.run()

    # --- receiving -------------------------------------------------------------------

    async def _message(self, host: PlatformHost, data: dict[str, Any]) -> None:
        read = read_message(data, self._allowed)
        if read is None:
            return
        inbound = read.inbound
        if read.webhook and self.settings.takes_webhook(read.webhook):
            self._webhooks[inbound.chat.chat_id] = (read.webhook, read.webhook_expires_ms / 1000)
            self._webhooks.move_to_end(inbound.chat.chat_id)
            while len(self._webhooks) > KEPT:
                self._webhooks.popitem(last=False)
        elif read.webhook:
            log.warning("dingtalk: a session webhook not on DingTalk's domain was ignored")
        files = [self._incoming(fetch) for fetch in read.files]

        async def deliver() -> None:
            typed = (inbound.chat, inbound.user_id, inbound.text)
            if not files and await self._typed.answer(host, *typed):
                return
            unaddressed = inbound.chat.chat_type != "private" and not inbound.addressed
            if unaddressed and self.settings.require_mention:
                return
            await hand_over_with_files(
                host, inbound, files, self.media, lambda line: self.send(inbound.chat, line)
            )

        await self._order.run(inbound.chat, deliver)

    def _incoming(self, fetch: Fetch) -> IncomingFile:
        async def download(limit: int) -> bytes:
            return await self.api.download(fetch.code, limit)

        return IncomingFile(
            name=fetch.name,
            declared=None,
            size=None,
            download=download,
            expect="image" if fetch.expect_image else None,
        )

    # --- sending ---------------------------------------------------------------------

    def _webhook_for(self, chat: ChatRef) -> str | None:
        found = self._webhooks.get(chat.chat_id)
        if found is None or found[1] - WEBHOOK_MARGIN_SECONDS < time.time():
            return None
        return found[0]

    async def _post_markdown(self, chat: ChatRef, text: str) -> str:
        title = (text.strip().splitlines() or ["Hermes"])[0][:30] or "Hermes"
        hook = self._webhook_for(chat)
        if hook is not None:
            body = {"msgtype": "markdown", "markdown": {"title": title, "text": text}}
            try:
                await self.api.to_webhook(hook, body)
                return f"webhook:{secrets.token_hex(8)}"  # the webhook gives no message id
            except DingTalkError as exc:
                refusal = exc.not_sent()
                param = {"title": title, "text": text}
                if not refusal.permanent:  # too fast: the webhook is kept, this part by API
                    try:
                        return await self._robot_send(chat, "sampleMarkdown", param)
                    except NotSent as api_refusal:
                        if api_refusal.permanent:  # no API for them (an outsider): later
                            raise refusal from None
                        raise
                log.info("dingtalk: the session webhook refused (%s); the robot API then", exc)
                self._webhooks.pop(chat.chat_id, None)
        param = {"title": title, "text": text}
        return await self._robot_send(chat, "sampleMarkdown", param)

    async def _robot_send(self, chat: ChatRef, key: str, param: dict[str, Any]) -> str:
        body: dict[str, Any] = {
            "robotCode": self.settings.robot_code,
            "msgKey": key,
            "msgParam": json.dumps(param, ensure_ascii=False),
        }
        # A conversation id (cid...) is a group's, whatever the caller took it for (a
        # scheduled job's home chat comes as private).
        group = chat.chat_type != "private" or chat.chat_id.startswith("cid")
        try:
            if not group:
                made = await self.api.call(
                    "POST", "/v1.0/robot/oToMessages/batchSend", {**body, "userIds": [chat.chat_id]}
                )
                if chat.chat_id in (made.get("invalidStaffIdList") or ()):
                    raise NotSent(
                        f"DingTalk has no such person in the organisation ({chat.chat_id}): a "
                        "reply to someone outside it needs their message's session webhook",
                        permanent=True,
                    )
                if chat.chat_id in (made.get("flowControlledStaffIdList") or ()):
                    raise NotSent("DingTalk is holding messages to this person back (flow control)")
            else:
                made = await self.api.call(
                    "POST",
                    "/v1.0/robot/groupMessages/send",
                    {**body, "openConversationId": chat.chat_id},
                )
        except DingTalkError as exc:
            raise exc.not_sent() from None
        except CredentialsRefused as exc:
            raise NotSent(f"DingTalk refused the app's credentials: {exc}") from None
        return str(made.get("processQueryKey") or secrets.token_hex(8))

    async def send(self, chat: ChatRef, text: str, *, reply_to: str | None = None) -> list[str]:
        parts = split_message(text, MAX_MESSAGE_CHARS)
        return await send_in_parts(parts, lambda part: self._post_markdown(chat, part))

    async def edit(self, chat: ChatRef, message_id: str, text: str) -> None:
        raise MessageGone("a DingTalk robot's messages cannot be edited")

    async def typing(self, chat: ChatRef) -> None:
        """DingTalk shows a robot no typing indicator."""

    async def ask(
        self, chat: ChatRef, question: str, choices: Sequence[Choice], request_id: str
    ) -> None:
        """The question with its choices to type (in a group, @ the robot with it)."""
        await self.send(chat, self._typed.prompt(chat, question, choices, request_id))

    async def aclose(self) -> None:
        await self.api.aclose()
