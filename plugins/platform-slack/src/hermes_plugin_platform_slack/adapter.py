"""The Slack adapter, on slack_sdk: events arrive over Socket Mode (or the Events API over
HTTP, signature checked), replies go out through the Web API as mrkdwn, split in pieces,
and questions carry Block Kit buttons.

Exactly once: an event is acknowledged only after the gateway has stored it, so one lost
on the way is delivered again by Slack; one delivered again after it was stored (a
redelivery, a reconnect, the ``message`` and ``app_mention`` twins of one mention) keeps
its ts as ``message_id``, and the gateway's ledger admits a ts once. What Slack stops
redelivering (after about six minutes) is read back from history on every (re)connection
(``read_back.py``).

slack_sdk rather than slack-bolt: Bolt acknowledges events before its listeners run, and
the acknowledgement must wait for the store here; slack_sdk is the layer Bolt is built on.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs

from hermes_commons.platform_files import IncomingFile, hand_over_with_files, read_capped
from hermes_plugin_platform_slack.read_back import (
    QUIET_SECONDS,
    Snapshot,
    conversation_of,
    positions,
    read_back,
    to_read_back,
)
from hermes_plugin_platform_slack.reading import (
    Bot,
    SharedFile,
    read_event,
    read_press,
    shared_files,
)
from hermes_plugin_platform_slack.render import to_mrkdwn
from hermes_plugin_platform_slack.settings import SlackSettings
from hermes_plugin_platform_slack.threads import AnsweredThreads
from hermes_sdk.platform import (
    ChatOrder,
    ChatRef,
    Choice,
    MessageGone,
    NotSent,
    PlatformContext,
    PlatformHost,
    PlatformNotConfigured,
    split_message,
)

if TYPE_CHECKING:
    from slack_sdk.socket_mode.async_client import AsyncBaseSocketModeClient
    from slack_sdk.socket_mode.request import SocketModeRequest
    from slack_sdk.web.async_client import AsyncWebClient

__all__ = ["SlackAdapter"]

log = logging.getLogger("hermes.slack")

MAX_MESSAGE_CHARS = 4000
"""Slack truncates at 40,000 characters but asks for far less; 4,000 reads well."""
APP_TOKEN_CHECK_SECONDS = 60.0
"""While Socket Mode is down, how often to ask whether Slack still takes the app token."""
_TOKEN_REFUSED = frozenset(
    {"invalid_auth", "not_authed", "token_revoked", "account_inactive", "not_allowed_token_type"}
)
"""What apps.connections.open answers for an app token that will not work until replaced."""
_REFUSALS = {
    "channel_not_found",
    "not_in_channel",
    "is_archived",
    "msg_too_long",
    "no_text",
    "invalid_blocks",
    "restricted_action",
}


class SlackAdapter:
    max_message_chars = MAX_MESSAGE_CHARS
    can_edit = True
    app_token_check_seconds = APP_TOKEN_CHECK_SECONDS
    read_back_after_seconds = QUIET_SECONDS

    def __init__(self, context: PlatformContext) -> None:
        self.settings = SlackSettings.from_context(context)
        self.bot: Bot | None = None
        self._web: AsyncWebClient | None = None
        self._order = ChatOrder()  # the library runs each event as a task: keep chat order
        self.threads = AnsweredThreads(context.home)
        self.positions = positions(context.home)
        self._reading_back = asyncio.Lock()
        self._read_backs: set[asyncio.Task[None]] = set()
        self._heard = 0.0  # when Socket Mode last said anything (the loop's clock)
        self._heard_once = False
        self.media = context.media()
        self.events_url: str | None = None
        """Where the Events API is served, once it is."""

    def _client(self) -> AsyncWebClient:
        from slack_sdk.http_retry.builtin_async_handlers import AsyncRateLimitErrorRetryHandler
        from slack_sdk.web.async_client import AsyncWebClient

        if self._web is None:
            import aiohttp

            # One session for every call (slack_sdk opens one per request without it).
            self._web = AsyncWebClient(
                token=self.settings.bot_token,
                base_url=self._base_url(),
                session=aiohttp.ClientSession(),
            )
            # A 429 waits out its Retry-After instead of failing the reply.
            self._web.retry_handlers.append(AsyncRateLimitErrorRetryHandler(max_retry_count=3))
        return self._web

    def _base_url(self) -> str:
        from slack_sdk.web.async_base_client import AsyncBaseClient

        return self.settings.api_url or str(AsyncBaseClient.BASE_URL)

    async def _call(self, method: str, **arguments: Any) -> Mapping[str, Any]:
        from slack_sdk.errors import SlackApiError

        try:
            response = await self._client().api_call(method, json=arguments)
        except SlackApiError as exc:
            error = str(exc.response.get("error") or "")
            if error == "message_not_found":
                raise MessageGone(f"Slack message {arguments.get('ts')} no longer exists") from None
            if error in _REFUSALS:
                raise NotSent(f"Slack refused {method}: {error}") from None
            raise
        return response.data if isinstance(response.data, dict) else {}

    async def _read(self, method: str, **arguments: Any) -> Mapping[str, Any]:
        """A read method (``conversations.history``): a GET, its arguments in the query,
        as Slack takes them (it ignores a JSON body there)."""
        response = await self._client().api_call(method, http_verb="GET", params=arguments)
        return response.data if isinstance(response.data, dict) else {}

    # --- receiving -----------------------------------------------------------------------

    async def run(self, host: PlatformHost) -> None:
        from slack_sdk.errors import SlackApiError

        try:
            auth = await self._client().auth_test()
        except SlackApiError as exc:
            raise RuntimeError(
                f"Slack refused the bot token ({exc.response.get('error')}); check SLACK_BOT_TOKEN"
            ) from None
        self.bot = Bot(
            user_id=str(auth["user_id"]), bot_id=str(auth.get("bot_id") or ""), threads=self.threads
        )
        if self.settings.mode == "events":
            await self._serve_events(host)
        else:
            await self._serve_socket_mode(host)

    async def _serve_socket_mode(self, host: PlatformHost) -> None:
        from slack_sdk.socket_mode.aiohttp import SocketModeClient
        from slack_sdk.socket_mode.response import SocketModeResponse
        from slack_sdk.web.async_client import AsyncWebClient

        client = SocketModeClient(
            app_token=self.settings.app_token,
            web_client=AsyncWebClient(base_url=self._base_url()),
            trace_enabled=False,
        )

        async def on_request(client: AsyncBaseSocketModeClient, request: SocketModeRequest) -> None:
            # Not acknowledged when handing over fails: Slack delivers it again.
            await self._handle(host, request.type, request.payload)
            await client.send_socket_mode_response(
                SocketModeResponse(envelope_id=request.envelope_id)
            )

        async def on_message(
            client: AsyncBaseSocketModeClient, message: dict[str, Any], raw: str | None
        ) -> None:
            now = asyncio.get_running_loop().time()
            quiet, self._heard = now - self._heard, now
            # Connected (again): read back what was missed, from where each conversation
            # stood now (live events about to come must not move it first). Not after a
            # short break: Slack redelivers that itself.
            if message.get("type") == "hello" and (
                quiet >= self.read_back_after_seconds or not self._heard_once
            ):
                self._heard_once = True
                self._start_read_back(host, to_read_back(self.positions))

        client.socket_mode_request_listeners.append(on_request)
        client.message_listeners.append(on_message)
        try:
            # slack_sdk retries a refused app token every 5 s for ever: ask first, and say it.
            await self._app_token_opens()
            await client.connect()  # type: ignore[no-untyped-call] # slack_sdk leaves it unannotated
            log.info("slack: connected over Socket Mode as %s", self.bot and self.bot.user_id)
            while True:  # slack_sdk reconnects on its own until cancelled ...
                await asyncio.sleep(self.app_token_check_seconds)
                self.positions.save()
                if self.positions.held() and not self._read_backs:  # a hand-over failed
                    self._start_read_back(host, to_read_back(self.positions))
                if not await client.is_connected():
                    await self._app_token_opens()  # ... unless its token was revoked meanwhile
        finally:
            self.positions.save()
            with contextlib.suppress(Exception):
                await client.close()  # type: ignore[no-untyped-call] # likewise

    async def _app_token_opens(self) -> None:
        """PlatformNotConfigured, in one line, when Slack refuses the app-level token."""
        from slack_sdk.errors import SlackApiError
        from slack_sdk.web.async_client import AsyncWebClient

        web = AsyncWebClient(token=self.settings.app_token, base_url=self._base_url())
        try:
            await web.apps_connections_open(app_token=self.settings.app_token)
        except SlackApiError as exc:
            error = str(exc.response.get("error") or "")
            if error in _TOKEN_REFUSED:
                raise PlatformNotConfigured(
                    f"Slack refused the app-level token ({error}): generate one with the "
                    "connections:write scope under Basic Information, App-Level Tokens, and "
                    "put it in SLACK_APP_TOKEN"
                ) from None
            log.info("slack: could not ask about the app token (%s); Socket Mode retries", error)
        except Exception as exc:  # noqa: BLE001 - the network: slack_sdk reconnects on its own
            log.info("slack: could not ask about the app token (%s); Socket Mode retries", exc)

    def _start_read_back(self, host: PlatformHost, snapshot: Snapshot) -> None:
        task = asyncio.ensure_future(self._read_back(host, snapshot))
        self._read_backs.add(task)
        task.add_done_callback(self._read_backs.discard)

    async def _read_back(self, host: PlatformHost, snapshot: Snapshot) -> None:
        async with self._reading_back:  # one at a time: a quick reconnect waits its turn
            try:
                count = await read_back(
                    self._read,
                    snapshot,
                    self.positions,
                    lambda event: self._handle(host, "events_api", {"event": event}),
                )
            except Exception as exc:  # noqa: BLE001 - the next connection reads back again
                log.warning("slack: reading back missed messages failed: %s", exc)
                return
            if count:
                log.info("slack: read back %d message(s) written while disconnected", count)

    async def _handle(self, host: PlatformHost, kind: str, payload: Mapping[str, Any]) -> None:
        assert self.bot is not None
        if kind == "events_api":
            event = payload.get("event") or {}
            inbound = read_event(event, self.bot, require_mention=self.settings.require_mention)
            if inbound is None:  # chatter: read all the same
                conversation = self._conversation(event, handed_over=False)
                if conversation is not None:
                    self.positions.saw(conversation, str(event["ts"]))
                return
            files = [self._incoming(file) for file in shared_files(event)]
            await self.positions.storing(
                self._conversation(event, handed_over=True),
                str(event.get("ts")),
                self._order.run(
                    inbound.chat,
                    lambda: hand_over_with_files(
                        host, inbound, files, self.media, lambda line: self.send(inbound.chat, line)
                    ),
                ),
            )
        elif kind == "interactive":
            await self._pressed(host, payload)

    def _conversation(self, event: Mapping[str, Any], handed_over: bool) -> str | None:
        """The conversation a message event is read in, if it is one to read back: a
        thread only if the bot took part in it, a channel whenever it was read."""
        ts, channel = str(event.get("ts") or ""), str(event.get("channel") or "")
        if event.get("type") != "message" or not ts or not channel:
            return None
        thread = event.get("thread_ts")
        thread = str(thread) if thread and thread != ts else None
        if thread is None or handed_over or (channel, thread) in self.threads:
            return conversation_of(channel, thread)
        return None

    def _incoming(self, file: SharedFile) -> IncomingFile:
        async def download(limit: int) -> bytes:
            return await self._download(file.url, limit)

        return IncomingFile(
            name=file.name, declared=file.mimetype, size=file.size, download=download
        )

    def _sends_token_to(self, url: str) -> bool:
        """The bot token goes only to Slack's own file hosts (or the API host set for a
        test): a file URL elsewhere would hand the token to a stranger."""
        from urllib.parse import urlsplit

        host = (urlsplit(url).hostname or "").lower()
        if host == "slack.com" or host.endswith(".slack.com"):
            return True
        configured = self.settings.api_url
        return configured is not None and host == (urlsplit(configured).hostname or "").lower()

    async def _download(self, url: str, limit: int) -> bytes:
        if not self._sends_token_to(url):
            raise ValueError(f"it is not on Slack's file hosts ({url[:80]})")
        session = self._client().session
        assert session is not None  # the client is built with one
        headers = {"Authorization": f"Bearer {self.settings.bot_token}"}
        async with session.get(url, headers=headers) as response:
            if response.status != 200:
                raise ValueError(f"Slack answered {response.status}")
            return await read_capped(response.content.iter_chunked(65_536), limit)

    async def _pressed(self, host: PlatformHost, payload: Mapping[str, Any]) -> None:
        read = read_press(payload)
        if read is None:
            return
        press, message_ts = read
        toast = await host.pressed(press)
        thread = {"thread_ts": press.chat.thread_id} if press.chat.thread_id else {}
        try:
            if host.question_open(press.request_id):
                # Not the answer (someone else pressed): tell that person only; the buttons
                # stay for the one asked.
                await self._call(
                    "chat.postEphemeral",
                    channel=press.chat.chat_id,
                    user=press.user_id,
                    text=to_mrkdwn(toast),
                    **thread,
                )
                return
            asked = str((payload.get("message") or {}).get("text") or "")
            answered = f"{asked}\n\n_{to_mrkdwn(toast)}_" if toast else asked
            await self._call(
                "chat.update",
                channel=press.chat.chat_id,
                ts=message_ts,
                text=answered,
                blocks=[{"type": "section", "text": {"type": "mrkdwn", "text": answered[:3000]}}],
            )
        except Exception as exc:  # noqa: BLE001 - the press counted; showing it is a courtesy
            log.info("slack: could not show the answer to a press: %s", exc)

    async def _serve_events(self, host: PlatformHost) -> None:
        """The Events API: Slack POSTs each event, signed with the signing secret."""
        from aiohttp import web
        from slack_sdk.signature import SignatureVerifier

        verifier = SignatureVerifier(self.settings.signing_secret)

        async def receive(request: web.Request) -> web.StreamResponse:
            if request.method != "POST":
                return web.Response(status=405, text="the Events API POSTs")
            body = await request.read()
            try:
                valid = verifier.is_valid_request(body, dict(request.headers))
            except Exception:  # noqa: BLE001 - a malformed timestamp or body is not valid
                valid = False
            if not valid:
                log.warning("slack: refused an events request with a bad or old signature")
                return web.Response(status=401, text="invalid signature")
            try:
                if body.startswith(b"payload="):  # a button press comes as a form
                    form = parse_qs(body.decode())
                    await self._handle(host, "interactive", json.loads(form["payload"][0]))
                    return web.Response(status=200)
                payload = json.loads(body)
            except (ValueError, KeyError, UnicodeDecodeError):
                return web.Response(status=400, text="neither an event nor a press")
            if not isinstance(payload, dict):
                return web.Response(status=400, text="neither an event nor a press")
            if payload.get("type") == "url_verification":
                return web.json_response({"challenge": payload.get("challenge")})
            await self._handle(host, "events_api", payload)
            return web.Response(status=200)

        base = await host.http_route(self.settings.events_path, receive)
        self.events_url = base + self.settings.events_path
        log.info("slack: Events API at %s", self.events_url)
        await self._read_back(host, to_read_back(self.positions))  # written while down
        while True:
            await asyncio.sleep(self.app_token_check_seconds)
            self.positions.save()
            if self.positions.held():  # a hand-over failed: read it back
                await self._read_back(host, to_read_back(self.positions))

    # --- sending -------------------------------------------------------------------------

    def _where(self, chat: ChatRef) -> dict[str, Any]:
        where: dict[str, Any] = {"channel": chat.chat_id}
        if chat.thread_id is not None:
            where["thread_ts"] = chat.thread_id
            if chat.chat_type == "group":
                self.threads.add(chat.chat_id, chat.thread_id)
        return where

    async def send(self, chat: ChatRef, text: str, *, reply_to: str | None = None) -> list[str]:
        ids = []
        for chunk in split_message(text, MAX_MESSAGE_CHARS):
            sent = await self._call(
                "chat.postMessage", **self._where(chat), text=to_mrkdwn(chunk), unfurl_links=False
            )
            ids.append(str(sent.get("ts")))
        return ids

    async def edit(self, chat: ChatRef, message_id: str, text: str) -> None:
        await self._call(
            "chat.update",
            channel=chat.chat_id,
            ts=message_id,
            text=to_mrkdwn(text[: MAX_MESSAGE_CHARS * 2]),
        )

    async def typing(self, chat: ChatRef) -> None:
        # Slack gives bots no typing indicator outside its AI-assistant threads (which need
        # a scope most apps do not have): nothing to show.
        return None

    async def ask(
        self, chat: ChatRef, question: str, choices: Sequence[Choice], request_id: str
    ) -> None:
        text = to_mrkdwn(question)
        buttons = [
            {
                "type": "button",
                "action_id": f"choice-{number}",
                "text": {"type": "plain_text", "text": choice.label[:75]},
                "value": f"{request_id}:{choice.value}"[:2000],
            }
            for number, choice in enumerate(choices)
        ]
        await self._call(
            "chat.postMessage",
            **self._where(chat),
            text=text,
            blocks=[
                {"type": "section", "text": {"type": "mrkdwn", "text": text[:3000]}},
                {"type": "actions", "block_id": "choices", "elements": buttons},
            ],
        )

    async def aclose(self) -> None:
        for task in list(self._read_backs):
            task.cancel()
        self.positions.save()
        web, self._web = self._web, None
        if web is not None and web.session is not None:
            await web.session.close()
