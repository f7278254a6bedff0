"""The Matrix adapter: a /sync long poll in, formatted messages out, through mautrix's
client-server API.

Each sync's events are handed to the gateway room by room (rooms at once, a room's events
in order), and the sync position is saved only after all of them are stored, so a restart
resumes exactly where the last stored message was. A gap the server leaves in a busy room
(a ``limited`` timeline) is fetched back, not skipped. End-to-end encrypted rooms are read
and answered encrypted (``encryption.py``); where encryption is off or cannot load, a message
that cannot be read gets one line to its sender and to the log, and nothing is ever sent as
plaintext into an encrypted room but that line.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import Any

from hermes_commons.platform_files import IncomingFile, hand_over_with_files, read_capped
from hermes_plugin_platform_matrix.encryption import (
    KEY_WAIT_SECONDS,
    EncryptionUnavailable,
    RoomEncryption,
    encryption_available,
    new_state_store,
)
from hermes_plugin_platform_matrix.events import (
    Bot,
    RoomFacts,
    SharedMedia,
    is_encrypted_message,
    is_message,
    media_of,
    read_message,
    replied_to,
    thread_of,
)
from hermes_plugin_platform_matrix.render import message_content
from hermes_plugin_platform_matrix.settings import MatrixSettings
from hermes_plugin_platform_matrix.state import MatrixState
from hermes_sdk.media import Attachment
from hermes_sdk.platform import (
    ChatRef,
    Choice,
    MessageGone,
    NotSent,
    PlatformContext,
    PlatformHost,
    TypedAnswers,
    split_message,
)

__all__ = ["EncryptedRoom", "MatrixAdapter"]

log = logging.getLogger("hermes.matrix")

MAX_MESSAGE_CHARS = 4000
"""Well under the 64 KiB event limit with the HTML copy beside the text."""
SYNC_TIMEOUT_MS = 30_000
BACKOFF = (1.0, 2.0, 5.0, 10.0, 30.0, 60.0)
TYPING_MS = 6_000
GAP_LIMIT = 500
"""The most events fetched back for one room after a gap (a long absence)."""
UNREADABLE = (
    "🔒 I could not read that message: it is end-to-end encrypted, and encryption is off in "
    "this Hermes. Write to me in a room without encryption."
)
UNVERIFIED = (
    "🔒 I did not act on that message: it came from a session of yours ({device}) that you "
    "have not verified. Verify it from one of your other sessions, then write again."
)
UNENCRYPTED = (
    "🔒 I did not act on that message: it was sent unencrypted into an encrypted room, so "
    "nothing shows which of your sessions wrote it. Send it from an app that encrypts."
)
KEY_MISSING = "🔒 I could not read that message: the key to it did not reach me. Send it again."
_FILTER = json.dumps(
    {
        "presence": {"not_types": ["*"]},
        "account_data": {"not_types": ["*"]},
        "room": {
            "timeline": {"limit": 100},
            "ephemeral": {"not_types": ["*"]},
            "account_data": {"not_types": ["*"]},
            "state": {"lazy_load_members": True},
        },
    },
    separators=(",", ":"),
)
_FIRST_FILTER = json.dumps(
    {
        "presence": {"not_types": ["*"]},
        "account_data": {"not_types": ["*"]},
        "room": {"timeline": {"limit": 20}, "ephemeral": {"not_types": ["*"]}},
    },
    separators=(",", ":"),
)
"""The very first sync (no position saved yet) skips history: Hermes answers only what was
written from FIRST_START_GRACE_MS before it started."""
FIRST_START_GRACE_MS = 30_000


class EncryptedRoom(NotSent):
    """The room is end-to-end encrypted; nothing is sent into it in plaintext."""


class _Bounded(OrderedDict[str, Any]):
    def remember(self, key: str, value: Any, limit: int = 4096) -> None:
        self[key] = value
        self.move_to_end(key)
        while len(self) > limit:
            self.popitem(last=False)


class MatrixAdapter:
    max_message_chars = MAX_MESSAGE_CHARS
    can_edit = True

    def __init__(self, context: PlatformContext) -> None:
        self.settings = MatrixSettings.from_context(context)
        self.state = MatrixState(context.home)
        self.media = context.media()
        self.api: Any = None  # mautrix's Client, made on the event loop in run()
        self.crypto: RoomEncryption | None = None
        self._crypto_off = ""  # why encrypted rooms cannot be read, when they cannot
        self.bot: Bot | None = None
        self._members: dict[str, int] = {}
        self._encrypted: dict[str, bool] = {}
        self._senders = _Bounded()  # event id -> its sender (the bot's own events too)
        self._bot_threads: set[tuple[str, str]] = set()
        self._answers = TypedAnswers()
        self._told: dict[tuple[str, str], float] = {}  # (room, line) -> when it was said
        self._started_ms = 0

    # --- connecting --------------------------------------------------------------------------

    async def _connect(self) -> Bot:
        from mautrix.client import Client
        from mautrix.errors import MatrixRequestError, MUnknownToken

        settings = self.settings
        self.api = Client(
            base_url=settings.homeserver, default_retry_count=0, state_store=new_state_store()
        )
        if settings.access_token:
            self.api.api.token = settings.access_token
            try:
                whoami = await self.api.whoami()
            except MUnknownToken:
                raise RuntimeError(
                    "the homeserver refused MATRIX_ACCESS_TOKEN (M_UNKNOWN_TOKEN); make a new "
                    "one or log in with MATRIX_PASSWORD"
                ) from None
            user_id = str(whoami.user_id)
            self.api.device_id = str(whoami.device_id or "")
            if settings.user_id and settings.user_id != user_id:
                raise RuntimeError(
                    f"MATRIX_ACCESS_TOKEN belongs to {user_id}, not platforms.matrix.user_id "
                    f"{settings.user_id}; fix one of them"
                )
        else:
            user_id = await self._password_login(MatrixRequestError, MUnknownToken)
        self.api.mxid = user_id
        name = ""
        with contextlib.suppress(MatrixRequestError):
            name = str(await self.api.get_displayname(user_id) or "")
        return Bot(user_id, name)

    async def _password_login(
        self, request_error: type[Exception], unknown: type[Exception]
    ) -> str:
        settings = self.settings
        saved = self.state.device(settings.homeserver, settings.user_id)
        if saved is not None:
            self.api.api.token = saved["access_token"]
            try:
                await self.api.whoami()
                self.api.device_id = saved["device_id"]
                return settings.user_id
            except unknown:
                log.info(
                    "matrix: the saved login of %s expired; logging in again", settings.user_id
                )
        try:
            login = await self.api.login(
                identifier=settings.user_id,
                password=settings.password,
                device_name=settings.device_name,
                device_id=saved["device_id"] if saved else None,
                store_access_token=True,
            )
        except request_error as exc:
            if getattr(exc, "http_status", 0) == 403:
                raise RuntimeError(
                    f"the homeserver refused MATRIX_PASSWORD for {settings.user_id} (403)"
                ) from None
            raise
        self.state.save_device(
            settings.homeserver, str(login.user_id), str(login.device_id), str(login.access_token)
        )
        self.api.device_id = str(login.device_id)
        return str(login.user_id)

    async def _encryption(self) -> None:
        """The bot's device for encrypted rooms, or the reason there is none (said once)."""
        settings = self.settings
        reason = (
            encryption_available()
            if settings.encryption
            else "platforms.matrix.encryption is false"
        )
        if not reason:
            try:
                self.crypto = await RoomEncryption.open(
                    self.api, self.state.folder, settings.trust, settings.password
                )
            except EncryptionUnavailable as exc:
                reason = str(exc)
        if reason:
            self._crypto_off = reason
            log.warning("matrix: encrypted rooms cannot be read: %s", reason)

    # --- receiving ---------------------------------------------------------------------------

    async def run(self, host: PlatformHost) -> None:
        from mautrix.errors import MatrixConnectionError, MatrixRequestError, MUnknownToken

        self._started_ms = int(time.time() * 1000)
        self.bot = bot = await self._connect()
        await self._encryption()
        homeserver = self.settings.homeserver
        since = self.state.since(homeserver, bot.user_id)
        failures = 0
        log.info("matrix: syncing as %s", bot.user_id)
        while True:
            try:
                data = await self.api.sync(
                    since=since,
                    timeout=SYNC_TIMEOUT_MS if since else 0,
                    filter_id=_FILTER if since else _FIRST_FILTER,
                )
            except MUnknownToken:
                self.state.forget_device()
                raise RuntimeError(
                    "the homeserver ended this login (M_UNKNOWN_TOKEN); it is made again on "
                    "restart with MATRIX_PASSWORD, or set a new MATRIX_ACCESS_TOKEN"
                ) from None
            except (MatrixConnectionError, OSError, TimeoutError, MatrixRequestError) as exc:
                refused = isinstance(exc, MatrixRequestError) and 400 <= exc.http_status < 500
                if refused and exc.http_status != 429:  # type: ignore[union-attr]
                    raise
                delay = BACKOFF[min(failures, len(BACKOFF) - 1)]
                failures += 1
                log.warning("matrix: sync failed (%s); again in %s s", _short(exc), delay)
                await asyncio.sleep(delay)
                continue
            failures = 0
            if self.crypto is not None:
                await self.crypto.absorb(data)
            await self._handle(host, data, since)
            since = str(data["next_batch"])
            await asyncio.to_thread(self.state.save_since, homeserver, bot.user_id, since)

    async def _handle(self, host: PlatformHost, data: Mapping[str, Any], since: str | None) -> None:
        rooms = data.get("rooms") or {}
        for room_id, invited in (rooms.get("invite") or {}).items():
            await self._invited(host, room_id, invited)
        for room_id in rooms.get("leave") or {}:
            self._members.pop(room_id, None)
        joined = rooms.get("join") or {}
        await asyncio.gather(
            *(self._room(host, room_id, room, since) for room_id, room in joined.items())
        )

    async def _invited(self, host: PlatformHost, room_id: str, invited: Mapping[str, Any]) -> None:
        assert self.bot is not None
        inviter = ""
        for event in (invited.get("invite_state") or {}).get("events") or ():
            if event.get("type") == "m.room.member" and event.get("state_key") == self.bot.user_id:
                inviter = str(event.get("sender") or "")
        if not inviter or not await _allows(host, inviter):
            log.info("matrix: ignored an invitation to %s from %s (not allowed)", room_id, inviter)
            return
        await self.api.join_room(room_id)
        log.info("matrix: joined %s, invited by %s", room_id, inviter)

    async def _room(
        self, host: PlatformHost, room_id: str, room: Mapping[str, Any], since: str | None
    ) -> None:
        timeline = room.get("timeline") or {}
        events = list(timeline.get("events") or ())
        for event in (room.get("state") or {}).get("events") or ():
            self._note_state(room_id, event)
        if since is None:  # the first sync: history is not answered
            oldest = self._started_ms - FIRST_START_GRACE_MS
            events = [e for e in events if int(e.get("origin_server_ts") or 0) >= oldest]
        elif timeline.get("limited") and timeline.get("prev_batch"):
            gap = await self._gap(room_id, str(timeline["prev_batch"]), since)
            if self.crypto is not None:  # a member who left meanwhile gets no new room key
                await self.crypto.absorb_state(room_id, gap)
            events = gap + events
        for event in events:
            self._note_state(room_id, event)
            await self._dispatch(host, room_id, event)

    async def _gap(self, room_id: str, prev_batch: str, since: str) -> list[dict[str, Any]]:
        """What the server left out of a limited timeline: the events between the last sync
        and the ones it sent, oldest first."""
        from mautrix.api import Method

        fetched: list[dict[str, Any]] = []
        start = prev_batch
        while len(fetched) < GAP_LIMIT:
            page = await self.api.api.request(
                Method.GET,
                f"/_matrix/client/v3/rooms/{_quote(room_id)}/messages",
                query_params={
                    "from": start,
                    "to": since,
                    "dir": "b",
                    "limit": "100",
                },
            )
            chunk = page.get("chunk") or []
            fetched.extend(chunk)
            if not chunk or not page.get("end") or page.get("end") == start:
                break
            start = str(page["end"])
        if len(fetched) >= GAP_LIMIT:
            log.warning(
                "matrix: more than %d messages in %s while away; the oldest are skipped",
                GAP_LIMIT,
                room_id,
            )
        return list(reversed(fetched))

    def _note_state(self, room_id: str, event: Mapping[str, Any]) -> None:
        kind = event.get("type")
        if kind == "m.room.member":
            self._members.pop(room_id, None)  # counted again when next needed
        elif kind == "m.room.encryption" and "state_key" in event:
            self._encrypted[room_id] = True
        if event.get("event_id") and event.get("sender"):
            self._senders.remember(str(event["event_id"]), str(event["sender"]))

    async def _dispatch(self, host: PlatformHost, room_id: str, event: Mapping[str, Any]) -> None:
        assert self.bot is not None
        if not is_encrypted_message(event) or event.get("sender") == self.bot.user_id:
            if (
                self.crypto is not None
                and self.settings.trust != "any"
                and is_message(event, self.bot)
                and await self._room_encrypted(room_id)
            ):  # plaintext where only encrypted messages prove which device wrote them
                await self._unreadable(host, room_id, event, UNENCRYPTED)
                return
            await self._act(host, room_id, event)
            return
        self._encrypted[room_id] = True
        if self.crypto is None:
            await self._unreadable(host, room_id, event, UNREADABLE)
            return
        await self._decrypted(host, room_id, event, wait=0)

    async def _decrypted(
        self, host: PlatformHost, room_id: str, event: Mapping[str, Any], wait: float
    ) -> None:
        """An encrypted event read and acted on as its plaintext would be. One whose key has
        not come yet waits for it beside the sync (which brings the key), not in its way."""
        from mautrix.errors import DecryptionError, SessionNotFound
        from mautrix.types import SerializerError

        assert self.crypto is not None and self.bot is not None
        try:
            plain = await self.crypto.decrypt(room_id, event, wait=wait)
        except SessionNotFound:
            if wait == 0:
                self.crypto.keep(
                    asyncio.create_task(
                        self._decrypted(host, room_id, event, wait=KEY_WAIT_SECONDS)
                    )
                )
                return
            await self._unreadable(host, room_id, event, KEY_MISSING)
            return
        except (DecryptionError, SerializerError) as exc:
            log.warning("matrix: could not decrypt %s: %s", event.get("event_id"), _short(exc))
            await self._unreadable(host, room_id, event, KEY_MISSING)
            return
        except Exception as exc:  # noqa: BLE001 - one event never stops the sync
            log.warning("matrix: could not read %s: %s", event.get("event_id"), _short(exc))
            return
        self._note_state(room_id, plain.event)
        if plain.trusted:
            await self._act(host, room_id, plain.event)
        elif is_message(plain.event, self.bot):
            await self._unreadable(
                host, room_id, event, UNVERIFIED.format(device=plain.device), every=0
            )

    async def _act(self, host: PlatformHost, room_id: str, event: Mapping[str, Any]) -> None:
        assert self.bot is not None
        bot = self.bot
        if not is_message(event, bot):
            return
        thread = thread_of(event)
        reply = replied_to(event)
        facts = RoomFacts(
            direct=await self._member_count(room_id) <= 2,
            in_thread_with_bot=thread is not None
            and (
                (room_id, thread) in self._bot_threads
                or await self._sender_of(room_id, thread) == bot.user_id
            ),
            replied_to_bot=reply is not None
            and await self._sender_of(room_id, reply) == bot.user_id,
        )
        message = read_message(room_id, event, bot, facts, self.settings.require_mention)
        press = self._answers.press_for(
            message.chat, message.user_id, message.text, host.question_open
        )
        if press is not None:
            toast = await host.pressed(press)
            still_open = host.question_open(press.request_id)
            self._answers.settle(press.request_id, still_open)
            if still_open:  # not theirs to answer: say why, the question stays
                await self._notice(message.chat, toast)
            return
        if not message.addressed:
            return
        shared = media_of(event.get("content") or {})
        if shared is None:
            await host.receive(message)
            return
        await hand_over_with_files(
            host,
            message,
            [self._incoming(shared)],
            self.media,
            lambda line: self._notice(message.chat, line),
        )

    def _incoming(self, shared: SharedMedia) -> IncomingFile:
        encrypted = shared.encrypted

        async def download(limit: int) -> bytes:
            # As mautrix's download_media (authenticated media on servers with Matrix 1.11),
            # but read in chunks and stopped at the limit: the announced size is the sender's.
            from mautrix.types import SpecVersions

            http = self.api.api
            authenticated = (await self.api.versions()).supports(SpecVersions.V111)
            url = http.get_download_url(shared.url, authenticated=authenticated)
            headers = {"Authorization": f"Bearer {http.token}"} if authenticated else {}
            params = {"allow_redirect": "true"}
            async with http.session.get(url, params=params, headers=headers) as response:
                response.raise_for_status()
                data = await read_capped(response.content.iter_chunked(65_536), limit)
            return data if encrypted is None else _decrypt_file(data, encrypted)

        return IncomingFile(
            name=shared.name, declared=shared.mimetype, size=shared.size, download=download
        )

    async def _unreadable(
        self,
        host: PlatformHost,
        room_id: str,
        event: Mapping[str, Any],
        line: str,
        every: float = 60,
    ) -> None:
        """One line to an allowed sender of a message not acted on (the same line at most
        once a minute in a room, unless ``every`` says otherwise), and to the log."""
        sender = str(event.get("sender") or "")
        log.warning(
            "matrix: did not act on an encrypted message from %s in %s: %s",
            sender,
            room_id,
            self._crypto_off or line.removeprefix("🔒 "),
        )
        loop = asyncio.get_running_loop()
        said = self._told.get((room_id, line), -1e9)
        if not await _allows(host, sender) or loop.time() - said < every:
            return
        self._told[(room_id, line)] = loop.time()
        thread = thread_of(event)
        await self._notice(ChatRef("matrix", room_id, "group", thread), line, plaintext_ok=True)

    async def _member_count(self, room_id: str) -> int:
        count = self._members.get(room_id)
        if count is None:
            members = await self.api.get_joined_members(room_id)
            count = self._members[room_id] = len(members)
        return count

    async def _sender_of(self, room_id: str, event_id: str) -> str:
        from mautrix.errors import MatrixRequestError

        known = self._senders.get(event_id)
        if known is None:
            try:
                event = await self.api.get_event(room_id, event_id)
                known = str(event.sender)
            except MatrixRequestError:
                known = ""
            self._senders.remember(event_id, known)
        return str(known)

    async def _room_encrypted(self, room_id: str) -> bool:
        """Whether the room is encrypted, as the client that encrypts what is sent sees it
        (its state store, which each sync updates), else as the adapter knows it."""
        if self.crypto is not None:
            known = await self.api.state_store.is_encrypted(room_id)
            if known is not None:
                return bool(known)
        return await self._is_encrypted(room_id)

    async def _is_encrypted(self, room_id: str) -> bool:
        from mautrix.errors import MNotFound
        from mautrix.types import EventType

        known = self._encrypted.get(room_id)
        if known is None:
            try:
                await self.api.get_state_event(room_id, EventType.ROOM_ENCRYPTION)
                known = True
            except MNotFound:
                known = False
            self._encrypted[room_id] = known
        return known

    # --- sending -----------------------------------------------------------------------------

    async def _post(
        self, chat: ChatRef, content: dict[str, Any], plaintext_ok: bool = False
    ) -> str:
        from mautrix.types import EventType

        if not plaintext_ok and self.crypto is None and await self._is_encrypted(chat.chat_id):
            raise EncryptedRoom(
                f"room {chat.chat_id} is end-to-end encrypted and encrypted rooms cannot be "
                f"read here ({self._crypto_off}); nothing was sent"
            )
        event_id = str(
            await self.api.send_message_event(chat.chat_id, EventType.ROOM_MESSAGE, content)
        )
        assert self.bot is not None
        self._senders.remember(event_id, self.bot.user_id)
        if chat.thread_id is not None:
            self._bot_threads.add((chat.chat_id, chat.thread_id))
        return event_id

    @staticmethod
    def _relate(content: dict[str, Any], chat: ChatRef, reply_to: str | None) -> None:
        if chat.thread_id is not None:
            content["m.relates_to"] = {
                "rel_type": "m.thread",
                "event_id": chat.thread_id,
                "is_falling_back": reply_to is None,
                "m.in_reply_to": {"event_id": reply_to or chat.thread_id},
            }
        elif reply_to is not None:
            content["m.relates_to"] = {"m.in_reply_to": {"event_id": reply_to}}

    async def send(self, chat: ChatRef, text: str, *, reply_to: str | None = None) -> list[str]:
        ids = []
        for number, chunk in enumerate(split_message(text, MAX_MESSAGE_CHARS)):
            content = message_content(chunk)
            # A DM needs no quote of the message answered; a group room does, to say whose.
            quote = reply_to if number == 0 and chat.chat_type != "private" else None
            self._relate(content, chat, quote)
            ids.append(await self._post(chat, content))
        return ids

    async def send_file(
        self, chat: ChatRef, attachment: Attachment, *, caption: str | None = None
    ) -> list[str]:
        """The file uploaded to the homeserver's media repository and sent as ``m.image``,
        ``m.audio`` (OGG/Opus as a voice message, MSC3245, as Element records them),
        ``m.video`` or ``m.file``."""
        encrypted = await self._room_encrypted(chat.chat_id)
        if encrypted and self.crypto is None:  # before the upload: nothing would be sent
            raise EncryptedRoom(
                f"room {chat.chat_id} is end-to-end encrypted and encrypted rooms cannot be "
                f"read here ({self._crypto_off}); nothing was sent"
            )
        data = upload = await asyncio.to_thread(attachment.read_bytes)
        secret_file: dict[str, Any] | None = None
        if encrypted:  # the homeserver keeps only ciphertext; the key goes in the event
            from mautrix.crypto.attachments import encrypt_attachment

            upload, info = await asyncio.to_thread(encrypt_attachment, data)
            secret_file = info.serialize()
        uri = await self.api.upload_media(
            upload,
            mime_type="application/octet-stream" if secret_file is not None else attachment.mime,
            filename=attachment.name,
            size=len(upload),
        )
        msgtype = {"image": "m.image", "audio": "m.audio", "video": "m.video"}.get(
            attachment.kind, "m.file"
        )
        content: dict[str, Any] = {
            "msgtype": msgtype,
            "body": caption or attachment.name,
            "filename": attachment.name,
            "info": {"mimetype": attachment.mime, "size": len(data)},
        }
        if secret_file is None:
            content["url"] = str(uri)
        else:
            content["file"] = {**secret_file, "url": str(uri)}
        if msgtype == "m.audio" and attachment.mime == "audio/ogg":
            content["org.matrix.msc3245.voice"] = {}
        self._relate(content, chat, None)
        return [await self._post(chat, content)]

    async def _notice(self, chat: ChatRef, text: str, plaintext_ok: bool = False) -> None:
        content = message_content(text, "m.notice")
        self._relate(content, chat, None)
        try:
            await self._post(chat, content, plaintext_ok=plaintext_ok)
        except Exception as exc:  # noqa: BLE001 - a note the user may miss
            log.info("matrix: could not send a notice: %s", _short(exc))

    async def edit(self, chat: ChatRef, message_id: str, text: str) -> None:
        if await self._sender_of(chat.chat_id, message_id) == "":
            raise MessageGone(f"no message {message_id} in {chat.chat_id}")
        new = message_content(text)
        content = {
            **new,
            "body": f"* {text}",
            "m.new_content": new,
            "m.relates_to": {"rel_type": "m.replace", "event_id": message_id},
        }
        content.pop("formatted_body", None)
        content.pop("format", None)
        await self._post(chat, content)

    async def typing(self, chat: ChatRef) -> None:
        await self.api.set_typing(chat.chat_id, timeout=TYPING_MS)

    async def ask(
        self, chat: ChatRef, question: str, choices: Sequence[Choice], request_id: str
    ) -> None:
        await self.send(chat, self._answers.prompt(chat, question, choices, request_id))

    async def aclose(self) -> None:
        if self.crypto is not None:
            await self.crypto.aclose()
        if self.api is not None:
            await self.api.api.session.close()


async def _allows(host: PlatformHost, user_id: str) -> bool:
    allows = getattr(host, "allows", None)
    return bool(await allows(user_id)) if callable(allows) else False


def _decrypt_file(data: bytes, secret: Mapping[str, Any]) -> bytes:
    """A file of an encrypted room: AES-CTR with the key, IV and SHA-256 in its event."""
    from mautrix.crypto.attachments import decrypt_attachment

    key: Any = secret.get("key") or {}
    hashes: Any = secret.get("hashes") or {}
    return bytes(
        decrypt_attachment(
            data, str(key.get("k")), str(hashes.get("sha256")), str(secret.get("iv"))
        )
    )


def _short(exc: BaseException) -> str:
    return (str(exc) or type(exc).__name__).splitlines()[0][:200]


def _quote(value: str) -> str:
    from urllib.parse import quote

    return quote(value, safe="")
