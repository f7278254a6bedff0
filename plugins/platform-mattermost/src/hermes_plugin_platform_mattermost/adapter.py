"""The Mattermost adapter: a bot account on the websocket for what arrives, the REST API for
what goes out, interactive buttons for approvals.

What delivery it can promise: Mattermost keeps every post, so nothing said while the
gateway was away is lost. At every (re)connect each channel the bot is in is read back over
REST from the newest post it handed over (``GET /channels/ID/posts?since=``), before the
websocket's events are read; a post that comes both ways keeps its id and the gateway
admits it once. Where each channel was read to is kept in
``HERMES_HOME/platforms/mattermost/read.json``; the first start reads nothing older."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import json
import logging
import random
import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import aiohttp

from hermes_commons.platform_files import IncomingFile, hand_over_with_files
from hermes_commons.read_positions import ReadPositions
from hermes_commons.sending import send_in_parts
from hermes_plugin_platform_mattermost.api import ApiError, MattermostApi
from hermes_plugin_platform_mattermost.read_back import MARGIN_MS, Marks, missed_posts
from hermes_plugin_platform_mattermost.reading import Attached, Me, read_post
from hermes_plugin_platform_mattermost.settings import MattermostSettings
from hermes_sdk.media import Attachment
from hermes_sdk.platform import (
    ButtonPress,
    ChatOrder,
    ChatRef,
    Choice,
    MessageGone,
    NotSent,
    PlatformContext,
    PlatformHost,
    PlatformNotConfigured,
    TypedAnswers,
    choices_prompt,
    split_message,
    yes_and_no,
)

if TYPE_CHECKING:
    from aiohttp import web

__all__ = ["MattermostAdapter"]

log = logging.getLogger("hermes.mattermost")

MAX_MESSAGE_CHARS = 4000
"""Mattermost takes 16,383 characters; shorter posts read better and edit faster."""
BACKOFF_FIRST, BACKOFF_MOST = 2.0, 120.0
STABLE_SECONDS = 300.0
HELLO_SECONDS = 15.0
QUIET_SECONDS = 30.0
CHECK_SECONDS = 300.0
"""How often the token is checked while connected: a revoked one closes no socket."""
QUESTION_CHARS = 1000
ANSWERS_KEPT = 512
ROOT_GONE = "api.post.create_post.root_id.app_error"


def _newer(position: str, than: str) -> bool:
    try:
        return int(position) > int(than)
    except ValueError:
        return False


def _previous(position: str) -> str:
    try:
        return str(int(position) - 1)
    except ValueError:
        return position


class MattermostAdapter:
    max_message_chars = MAX_MESSAGE_CHARS
    can_edit = True

    def __init__(self, context: PlatformContext) -> None:
        self.settings = MattermostSettings.from_context(context)
        self.media = context.media()
        self.api = MattermostApi(self.settings.url, self.settings.token)
        self.me: Me | None = None
        folder = Path(context.home) / "platforms" / "mattermost"
        self.positions = ReadPositions(folder / "read.json", _newer, _previous)
        self.marks = Marks(folder / "marks.json")
        self._storing: dict[str, int] = {}
        self._reread: dict[str, int] = {}
        """Channels a read-back could not read, and where they stood then (read again)."""
        self._answers: OrderedDict[str, None] = OrderedDict()
        """Posts that were typed answers to a question: a read-back does not take them
        for new messages once the question is closed."""
        """Per channel, the posts being stored now."""
        self._unauthorized = False
        self._order = ChatOrder()
        self._typed = TypedAnswers()
        self._channel_types: dict[str, str] = {}
        self._names: dict[str, str] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._key = hmac.new(
            self.settings.token.encode(), b"hermes mattermost actions", hashlib.sha256
        ).digest()
        """Signs what a button carries: the server posts its press to the listener unsigned."""

    # --- connecting ------------------------------------------------------------------

    async def _whoami(self) -> Me:
        try:
            me = await self.api.call("GET", "/users/me")
        except ApiError as exc:
            if exc.status == 401:
                raise PlatformNotConfigured(
                    f"{self.settings.url} refused MATTERMOST_TOKEN ({exc.message}): make a new "
                    "access token for the bot account and put it in HERMES_HOME/.env"
                ) from None
            raise
        return Me(user_id=str(me["id"]), username=str(me["username"]))

    async def run(self, host: PlatformHost) -> None:
        self.me = await self._whoami()
        if self.settings.actions_url is not None:
            await host.http_route(self.settings.actions_path, self._pressed_handler(host))
        if not self.marks.started:  # the first start: nothing older is ever read back
            self.marks.seen_now()
            self.marks.started = self.marks.last_seen
            self.marks.save()
        delay = BACKOFF_FIRST
        while True:
            began = time.monotonic()
            try:
                await self._connected(host)
            except PlatformNotConfigured:
                raise
            except (aiohttp.ClientError, ApiError, OSError, TimeoutError, ValueError) as exc:
                if self._unauthorized or (
                    isinstance(exc, aiohttp.WSServerHandshakeError) and exc.status == 401
                ):
                    await self._whoami()  # raises the one line when the token is refused
                    self._unauthorized = False
                log.warning("mattermost: the connection broke (%s); reconnecting", exc)
            finally:
                self._save()
            if time.monotonic() - began > STABLE_SECONDS:
                delay = BACKOFF_FIRST
            await asyncio.sleep(delay * random.uniform(0.8, 1.2))
            delay = min(delay * 2, BACKOFF_MOST)

    def _save(self) -> None:
        self.positions.save()
        self.marks.save()

    async def _connected(self, host: PlatformHost) -> None:
        """One websocket connection: hello; the read-back, while events wait in turn (the
        socket is read all along, so the server's pings are answered); then events until
        it ends. Every half minute: a read-back if a post failed to be stored, and now and
        then a check that the token still works (a revoked one silences the socket)."""
        async with self.api.session().ws_connect(
            self.api.websocket_url(), heartbeat=30.0, autoping=True
        ) as socket:
            hello = await self._event(socket, HELLO_SECONDS)
            if hello is None or hello.get("event") != "hello":
                raise ValueError(f"the server did not say hello: {str(hello)[:200]}")
            log.info("mattermost: connected to %s as @%s", self.settings.url, self._me().username)
            reading = asyncio.ensure_future(self._read_back(host))
            waiting: list[dict[str, Any]] = []
            receiving: asyncio.Task[Any] | None = None
            checked = swept = time.monotonic()
            try:
                while True:
                    if receiving is None:
                        receiving = asyncio.ensure_future(self._event(socket, QUIET_SECONDS))
                    await asyncio.wait(
                        {receiving, reading} if not reading.done() else {receiving},
                        return_when=asyncio.FIRST_COMPLETED,
                    )
                    if reading.done():
                        reading.result()  # a read-back that failed ends the connection
                        for data in waiting:  # what came meanwhile, in its order, now
                            self._posted(host, data)
                        waiting.clear()
                    event = None
                    if receiving.done():
                        with contextlib.suppress(TimeoutError):  # quiet: the timers below
                            event = receiving.result()
                        receiving = None
                    if event is not None and event.get("event") == "posted":
                        data = event.get("data") or {}
                        if reading.done():
                            self._posted(host, data)
                        else:
                            waiting.append(data)
                    now = time.monotonic()
                    if now - swept > QUIET_SECONDS:  # on a timer, busy or quiet
                        swept = now
                        if reading.done() and (self.positions.held() or self._reread):
                            reading = asyncio.ensure_future(self._read_back(host))
                    if now - checked > CHECK_SECONDS:
                        checked = now
                        await self._whoami()
                    if self._unauthorized:
                        raise ConnectionError("the server refused the token")
            finally:
                for task in (reading, receiving):
                    if task is not None and not task.done():
                        task.cancel()

    async def _event(self, socket: aiohttp.ClientWebSocketResponse, seconds: float) -> Any:
        """The next event (a JSON object), or None for a frame that is not one; raises
        when the socket closes."""
        frame = await socket.receive(timeout=seconds)
        if frame.type in (
            aiohttp.WSMsgType.CLOSE,
            aiohttp.WSMsgType.CLOSING,
            aiohttp.WSMsgType.CLOSED,
            aiohttp.WSMsgType.ERROR,
        ):
            raise ConnectionError(f"the websocket closed ({socket.close_code})")
        if frame.type != aiohttp.WSMsgType.TEXT:
            return None
        try:
            event = json.loads(frame.data)
        except ValueError:
            return None
        return event if isinstance(event, dict) else None

    def _me(self) -> Me:
        assert self.me is not None
        return self.me

    # --- receiving -------------------------------------------------------------------

    def _posted(self, host: PlatformHost, data: dict[str, Any]) -> None:
        try:
            post = json.loads(str(data.get("post") or "{}"))
        except ValueError:
            return
        channel_type = str(data.get("channel_type") or "")
        if channel_type:
            self._channel_types[str(post.get("channel_id"))] = channel_type
        sender = str(data.get("sender_name") or "")
        self.marks.seen_now()
        self._start(self._take(host, post, channel_type or "O", sender))

    def _start(self, work: Any) -> None:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _passed(self, channel: str, created: str) -> None:
        """A post not for the gateway: the channel's position moves past it, unless an
        earlier one of the channel is still being stored (the read-back's margin covers
        it then)."""
        if not self._storing.get(channel):
            self.positions.saw(channel, created)

    def _passed_alone(self, channel: str, created: str) -> None:
        """:meth:`_passed` for a post counted as being stored (itself): the position moves
        past it when no other post of the channel is being stored."""
        if self._storing.get(channel, 0) <= 1:
            self.positions.saw(channel, created)

    async def _take(self, host: PlatformHost, post: dict[str, Any], kind: str, sender: str) -> None:
        """One post, handed over in its chat's order (the ordering starts before any
        await); its channel's position moves once it is stored."""
        root = str(post.get("root_id") or "")
        said = read_post(
            post,
            kind,
            sender or self._names.get(str(post.get("user_id")), ""),
            self._me(),
            threaded=self.settings.reply_mode == "thread",
            in_bot_thread=root in self.marks.threads,
        )
        channel = str(post.get("channel_id") or "")
        created = str(post.get("create_at") or "0")
        if said is None:
            self._passed(channel, created)
            return
        inbound = said.inbound
        self._storing[channel] = self._storing.get(channel, 0) + 1

        async def hand_over() -> None:
            given = inbound
            if given.message_id in self._answers:
                self._passed_alone(channel, created)
                return
            if not said.files and await self._typed.answer(
                host, given.chat, given.user_id, given.text
            ):
                self._answers[given.message_id] = None
                while len(self._answers) > ANSWERS_KEPT:
                    self._answers.popitem(last=False)
                self._passed_alone(channel, created)
                return
            unaddressed = given.chat.chat_type != "private" and not given.addressed
            if unaddressed and self.settings.require_mention:
                self._passed_alone(channel, created)
                return
            if not given.user_name:
                given = replace(given, user_name=await self._name_of(given.user_id))
            files = [self._incoming(file) for file in said.files]
            await self.positions.storing(
                channel,
                created,
                hand_over_with_files(
                    host, given, files, self.media, lambda line: self.send(given.chat, line)
                ),
            )

        try:
            await self._order.run(inbound.chat, hand_over)
        except Exception as exc:  # noqa: BLE001 - held: the next read-back hands it over
            log.warning("mattermost: post %s was not handed over (%s)", inbound.message_id, exc)
        finally:
            self._storing[channel] -= 1

    async def _name_of(self, user_id: str) -> str:
        if user_id not in self._names:
            try:
                user = await self.api.call("GET", f"/users/{user_id}")
                self._names[user_id] = str(user.get("username") or user_id)
            except ApiError:
                return user_id
        return self._names[user_id]

    def _incoming(self, file: Attached) -> IncomingFile:
        async def download(limit: int) -> bytes:
            if file.size is not None and file.size > limit:
                raise ValueError(f"it is over {limit} bytes")
            return await self.api.download(file.file_id, limit)

        return IncomingFile(name=file.name, declared=file.mime, size=file.size, download=download)

    async def _read_back(self, host: PlatformHost) -> None:
        """Every channel the bot is in, from where it was read to (a channel never read:
        from when the bot was last connected), oldest post first. A channel that cannot
        be read is held where it was, read again by the next read-back."""
        channels = await self._api("GET", "/users/me/channels") or []
        count = 0
        for channel in channels:
            channel_id, kind = str(channel.get("id")), str(channel.get("type") or "O")
            self._channel_types[channel_id] = kind
            position = int(self.positions.get(channel_id) or self.marks.last_seen)
            # A channel that could not be read before is read from where it stood then,
            # whatever live posts moved its position to since.
            position = min(position, self._reread.get(channel_id, position))
            if int(channel.get("last_post_at") or 0) < position - MARGIN_MS:
                self._reread.pop(channel_id, None)
                continue
            try:
                posts = await missed_posts(self._api, channel_id, position, self.marks.started)
            except ApiError as exc:
                log.info("mattermost: could not read back %s (%s)", channel_id, exc)
                self._reread[channel_id] = position
                continue
            self._reread.pop(channel_id, None)
            for post in posts:
                await self._take(host, post, kind, "")
                count += 1
        if count:
            log.info("mattermost: read back %d posts", count)
        self.marks.seen_now()
        self._save()

    async def _api(self, method: str, path: str, **options: Any) -> Any:
        """A REST call; a 401 marks the token refused (the connection then ends, and the
        token is checked before the next)."""
        try:
            return await self.api.call(method, path, **options)
        except ApiError as exc:
            if exc.status == 401:
                self._unauthorized = True
            raise

    # --- buttons ---------------------------------------------------------------------

    def _sign(self, context: dict[str, str]) -> str:
        text = json.dumps(context, sort_keys=True, separators=(",", ":"))
        return hmac.new(self._key, text.encode(), hashlib.sha256).hexdigest()

    def _pressed_handler(self, host: PlatformHost) -> Any:
        from aiohttp import web

        async def pressed(request: web.Request) -> web.StreamResponse:
            try:
                body = await request.json()
                context = {str(k): str(v) for k, v in dict(body.get("context") or {}).items()}
                user_id = str(body["user_id"])
            except (ValueError, KeyError, TypeError, AttributeError):
                return web.json_response({"error": "not a Mattermost button press"}, status=400)
            signature = context.pop("signature", "")
            if not hmac.compare_digest(signature, self._sign(context)):
                log.warning("mattermost: a button press with a wrong signature was refused")
                return web.json_response({"error": "not signed by this bot"}, status=403)
            request_id = context.get("request", "")
            chat = ChatRef(
                "mattermost",
                context.get("channel", ""),
                context.get("kind", "channel"),
                context.get("thread") or None,
            )
            press = ButtonPress(
                chat=chat, user_id=user_id, request_id=request_id, choice=context.get("choice", "")
            )
            toast = await host.pressed(press)
            if host.question_open(request_id):
                return web.json_response({"ephemeral_text": toast})
            self._typed.settle(request_id, False)
            # The question rides in the signed context: the post closes after a restart too.
            who = str(body.get("user_name") or user_id)
            update = {"message": f"{context.get('question', '')}\n\n{toast} (@{who})", "props": {}}
            return web.json_response({"update": update})

        return pressed

    # --- sending ---------------------------------------------------------------------

    async def _post(self, chat: ChatRef, body: dict[str, Any]) -> str:
        body = {"channel_id": chat.chat_id, **body}
        if chat.thread_id:
            body["root_id"] = chat.thread_id
        try:
            post = await self._api("POST", "/posts", body=body)
        except ApiError as exc:
            if exc.error_id != ROOT_GONE or not chat.thread_id:
                raise _not_sent(exc) from None
            # The thread's first post was deleted while the agent worked: in the channel.
            del body["root_id"]
            try:
                post = await self._api("POST", "/posts", body=body)
            except ApiError as again:
                raise _not_sent(again) from None
        if chat.thread_id:
            self.marks.thread(chat.thread_id)
        return str(post["id"])

    async def send(self, chat: ChatRef, text: str, *, reply_to: str | None = None) -> list[str]:
        parts = split_message(text, MAX_MESSAGE_CHARS)
        return await send_in_parts(parts, lambda part: self._post(chat, {"message": part}))

    async def edit(self, chat: ChatRef, message_id: str, text: str) -> None:
        try:
            await self._api("PUT", f"/posts/{message_id}/patch", body={"message": text})
        except ApiError as exc:
            # Gone, or past the server's edit time limit: the gateway sends it anew.
            if exc.status in (403, 404) or "time_limit" in exc.error_id:
                raise MessageGone(str(exc)) from None
            raise _not_sent(exc) from None

    async def typing(self, chat: ChatRef) -> None:
        body = {"channel_id": chat.chat_id, "parent_id": chat.thread_id or ""}
        try:
            await self.api.call("POST", f"/users/{self._me().user_id}/typing", body=body)
        except (ApiError, aiohttp.ClientError) as exc:
            log.debug("mattermost: no typing: %s", exc)

    async def ask(
        self, chat: ChatRef, question: str, choices: Sequence[Choice], request_id: str
    ) -> None:
        """Buttons when the server can reach the gateway (``actions_url``); the choices to
        type besides, or alone."""
        text = self._typed.prompt(chat, question, choices, request_id)
        if self.settings.actions_url is None:
            await self.send(chat, text)
            return
        meaning = yes_and_no(choices)
        actions = []
        for number, choice in enumerate(choices, 1):
            context = {
                "request": request_id,
                "choice": choice.value,
                "channel": chat.chat_id,
                "kind": chat.chat_type,
                "thread": chat.thread_id or "",
                "question": question[:QUESTION_CHARS],
            }
            style = "default"
            if meaning is not None:
                style = "danger" if choice is meaning[1] else "primary"
            actions.append(
                {
                    "id": f"choice{number}",  # letters and digits only: the server's route
                    "type": "button",
                    "name": choice.label,
                    "style": style,
                    "integration": {
                        "url": self.settings.actions_url,
                        "context": {**context, "signature": self._sign(context)},
                    },
                }
            )
        shown = choices_prompt(question, choices).replace(
            "Reply with one of", "Press a button, or reply with one of"
        )
        await self._post(chat, {"message": shown, "props": {"attachments": [{"actions": actions}]}})

    async def send_file(
        self, chat: ChatRef, attachment: Attachment, *, caption: str | None = None
    ) -> list[str]:
        data = await asyncio.to_thread(attachment.read_bytes)
        form = aiohttp.FormData()
        form.add_field("channel_id", chat.chat_id)  # before the file: the server streams it
        form.add_field(
            "files",
            data,
            filename=attachment.name or "file",
            content_type=attachment.mime or "application/octet-stream",
        )
        try:
            uploaded = await self.api.call("POST", "/files", form=form, seconds=300.0)
        except ApiError as exc:
            raise _not_sent(exc) from None
        file_id = str(uploaded["file_infos"][0]["id"])
        return [await self._post(chat, {"message": caption or "", "file_ids": [file_id]})]

    async def aclose(self) -> None:
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)  # held before the save
        self._save()
        await self.api.aclose()


def _not_sent(exc: ApiError) -> Exception:
    """A refusal as the gateway's ledger wants it: a rate limit or a server's own error is
    tried again; what the same post will always get (no permission, no such channel) is
    given up. A 5xx without Mattermost's error (a proxy's timeout) may have come after the
    post was made: not a refusal, so the retry says it may be a duplicate."""
    if exc.status >= 500 and not exc.error_id:
        return ConnectionError(f"no answer from Mattermost for the post: {exc}")
    if exc.status == 429:
        return NotSent(
            f"Mattermost is rate limiting the bot (retry after {exc.retry_after or '?'} s)"
        )
    if exc.status in (400, 403, 404, 413):
        return NotSent(f"Mattermost refused the post: {exc}", permanent=True)
    return NotSent(f"Mattermost did not take the post: {exc}")
