"""The email adapter: IMAP IDLE (or polling) in, one threaded reply per turn out.

Each new message in the folder is read in UID order and handed to the gateway; the folder's
position (UIDVALIDITY and last UID) is saved only after the gateway stored it, so a restart
neither replays nor skips one. A thread (followed through References and In-Reply-To) is a
session of its own. Replies go out by SMTP, or into the Drafts folder in draft mode; a
per-thread cap on replies per hour stops any loop with an automated sender that slipped
past the filters. IMAP runs in worker threads (imapclient is blocking), one at a time.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import ssl
import threading
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from email.message import EmailMessage
from email.utils import formataddr, formatdate, make_msgid
from typing import Any

from hermes_commons.platform_files import IncomingFile, receive_files
from hermes_plugin_platform_email.mailstate import MailState, Threaded
from hermes_plugin_platform_email.reading import (
    HERMES_HEADER,
    Mail,
    MailFile,
    Skipped,
    read_mail,
)
from hermes_plugin_platform_email.settings import EmailSettings
from hermes_sdk.platform import (
    ChatRef,
    Choice,
    Inbound,
    MessageGone,
    PlatformContext,
    PlatformHost,
    TypedAnswers,
    split_message,
)

__all__ = ["EmailAdapter"]

log = logging.getLogger("hermes.email")

PLATFORM = "email"
MAX_MESSAGE_CHARS = 100_000
IDLE_RENEW_SECONDS = 120.0
"""How long one IDLE lasts before the folder is searched again (RFC 2177 allows up to 29
minutes). The server reports mail that arrives during a command in that command's answer,
which imapclient does not keep; the search after each IDLE finds such mail, so nothing
waits longer than this."""
IDLE_CHECK_SECONDS = 2.0
BACKOFF = (1.0, 2.0, 5.0, 10.0, 30.0, 60.0)
FIRST_START_GRACE_SECONDS = 30.0
"""The first start (no position saved) answers unread mail of the last 30 s only, not a
mailbox's history."""
MAX_REFERENCES = 20


class EmailAdapter:
    max_message_chars = MAX_MESSAGE_CHARS
    can_edit = False
    sends_notes = False  # one mail per turn: no "still working", no "continuing"
    pairs_by_default = False  # a pairing code to any sender would answer spam and forgeries
    untrusted_text = True  # a mail from an allowed address may quote or forward anyone's

    def __init__(self, context: PlatformContext) -> None:
        self.settings = EmailSettings.from_context(context)
        self.home = context.home
        self.state: MailState | None = None
        self._client: Any = None
        self._answers = TypedAnswers()
        self._stop = threading.Event()
        self._reader: threading.Thread | None = None
        self._domain = self.settings.address.rpartition("@")[2]
        self.media = context.media()

    # --- connecting --------------------------------------------------------------------------

    def _tls_context(self) -> ssl.SSLContext:
        return ssl.create_default_context()

    def _imap(self) -> Any:
        from imapclient import IMAPClient

        settings = self.settings
        client = IMAPClient(
            settings.imap_host,
            port=settings.imap_port,
            ssl=settings.tls == "implicit",
            ssl_context=self._tls_context() if settings.tls == "implicit" else None,
            timeout=60,
        )
        try:
            if settings.tls == "starttls":
                client.starttls(self._tls_context())
            client.login(settings.username, settings.password)
        except Exception:
            with contextlib.suppress(Exception):
                client.shutdown()
            raise
        return client

    # --- receiving ---------------------------------------------------------------------------

    async def run(self, host: PlatformHost) -> None:
        """Read the folder in a thread of its own (imapclient blocks); each message is handed
        to the gateway on this loop, and the thread waits until it is stored."""
        loop = asyncio.get_running_loop()
        self.state = await asyncio.to_thread(MailState, self.home)
        self._stop = threading.Event()
        ended: asyncio.Future[None] = loop.create_future()
        self._reader = threading.Thread(
            target=self._read, args=(host, loop, ended), name="email-imap", daemon=True
        )
        self._reader.start()
        try:
            await asyncio.shield(ended)
        finally:
            self._stop.set()
            self._interrupt()

    def _read(
        self, host: PlatformHost, loop: asyncio.AbstractEventLoop, ended: asyncio.Future[None]
    ) -> None:
        def finish(error: BaseException | None) -> None:  # on the loop
            if ended.done():
                return
            if error is None:
                ended.set_result(None)
            else:
                ended.set_exception(error)

        error: BaseException | None = None
        try:
            self._read_until_stopped(host, loop)
        except BaseException as exc:  # noqa: BLE001 - handed to run(), which raises it
            error = None if self._stop.is_set() else exc  # closing ends reads abruptly
        with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits
            loop.call_soon_threadsafe(finish, error)

    def _read_until_stopped(self, host: PlatformHost, loop: asyncio.AbstractEventLoop) -> None:
        from imapclient.exceptions import IMAPClientError, LoginError

        started = time.time()
        failures = 0
        while not self._stop.is_set():
            try:
                self._client = self._imap()
            except LoginError:
                raise RuntimeError(
                    f"the IMAP server refused the login of {self.settings.username}; check "
                    "EMAIL_PASSWORD (an app password, for providers with two-factor sign-in)"
                ) from None
            except (OSError, ssl.SSLError, IMAPClientError) as exc:
                delay = BACKOFF[min(failures, len(BACKOFF) - 1)]
                failures += 1
                log.warning(
                    "email: cannot reach %s (%s); again in %s s",
                    self.settings.imap_host,
                    exc,
                    delay,
                )
                self._stop.wait(delay)
                continue
            failures = 0
            log.info("email: reading %s of %s", self.settings.folder, self.settings.address)
            try:
                self._serve(host, loop, started)
            except (OSError, ssl.SSLError, EOFError, IMAPClientError) as exc:
                if self._stop.is_set():
                    return
                log.warning("email: the IMAP connection dropped (%s); reconnecting", exc)
            finally:
                client, self._client = self._client, None
                with contextlib.suppress(Exception):
                    client.logout()
            self._stop.wait(BACKOFF[0])

    def _serve(self, host: PlatformHost, loop: asyncio.AbstractEventLoop, started: float) -> None:
        assert self.state is not None
        client = self._client
        folder = self.settings.folder
        selected = client.select_folder(folder)
        uidvalidity = int(selected[b"UIDVALIDITY"])
        position = self.state.position(folder)
        if position is None or position[0] != uidvalidity:
            if position is not None:
                log.warning(
                    "email: %s was renumbered (UIDVALIDITY changed); answering only new mail",
                    folder,
                )
            self.state.advance(folder, uidvalidity, _unread_before(client, started))
        idle = client.has_capability("IDLE")
        if not idle:
            log.info(
                "email: the server has no IDLE; polling every %s s", self.settings.poll_seconds
            )
        while not self._stop.is_set():
            while self._take_new(host, loop, uidvalidity):
                pass  # until a search finds nothing new: mail may arrive while we read
            if self._stop.is_set():
                return
            if idle:
                self._idle()
            else:
                self._stop.wait(self.settings.poll_seconds)
                client.noop()

    def _idle(self) -> None:
        client = self._client
        client.idle()
        began = time.monotonic()
        try:
            while not self._stop.is_set() and time.monotonic() - began < IDLE_RENEW_SECONDS:
                pushed = client.idle_check(IDLE_CHECK_SECONDS)
                if any(len(item) > 1 and item[1] in {b"EXISTS", b"RECENT"} for item in pushed):
                    return
        finally:
            if not self._stop.is_set():
                client.idle_done()

    def _take_new(
        self, host: PlatformHost, loop: asyncio.AbstractEventLoop, uidvalidity: int
    ) -> int:
        """Hand over the mail after the saved position; how many there were."""
        assert self.state is not None
        folder = self.settings.folder
        position = self.state.position(folder)
        last = position[1] if position is not None else 0
        client = self._client
        uids = sorted(u for u in client.search(["UID", f"{last + 1}:*"]) if u > last)
        for uid in uids:
            if self._stop.is_set():
                break
            raw = (client.fetch([uid], ["BODY.PEEK[]"]).get(uid) or {}).get(b"BODY[]")
            if isinstance(raw, bytes):
                handed = asyncio.run_coroutine_threadsafe(
                    self._hand_over(host, uid, uidvalidity, raw), loop
                )
                while True:  # stored before the position moves past it
                    try:
                        handed.result(timeout=1.0)
                        break
                    except concurrent.futures.TimeoutError:
                        if self._stop.is_set():
                            handed.cancel()
                            return 0
            client.add_flags([uid], [b"\\Seen"])
            self.state.advance(folder, uidvalidity, uid)
        return len(uids)

    def _interrupt(self) -> None:
        client = self._client
        if client is not None:
            with contextlib.suppress(Exception):
                client.shutdown()  # ends a wait for the server in the reader thread

    async def _hand_over(self, host: PlatformHost, uid: int, uidvalidity: int, raw: bytes) -> None:
        assert self.state is not None
        read = read_mail(raw, self.settings.address)
        if isinstance(read, Skipped):
            log.info(
                "email: not answering message %d%s: %s",
                uid,
                f" from {read.sender}" if read.sender else "",
                read.reason,
            )
            return
        message_id = read.message_id or f"<uid-{uidvalidity}-{uid}@{self._domain}>"
        thread = self.state.thread_of(message_id, _chain(read))
        self.state.remember(Threaded(message_id, thread, read.subject, _chain(read)))
        message = _inbound(read, message_id, thread)
        if read.files:
            message = await self._with_files(host, message, read.files)
        if await self._answers.answer(host, message.chat, message.user_id, message.text):
            return
        await host.receive(message)

    async def _with_files(
        self, host: PlatformHost, message: Inbound, files: tuple[MailFile, ...]
    ) -> Inbound:
        """The mail's attachments checked and kept (see
        :func:`~hermes_commons.platform_files.receive_files`). Email sends one mail per turn, so
        a refused file is named in the text, with why, for the reply to say so."""
        incoming = [
            IncomingFile(
                name=file.name,
                declared=file.declared,
                size=len(file.data),
                download=_already(file.data),
            )
            for file in files
        ]
        read = await receive_files(host, message, incoming, self.media)
        kept = read.message or replace(message, text="")
        text = "\n\n".join([kept.text, *(f"[{line}]" for line in read.refusals)]).strip()
        return replace(kept, text=text or "(an empty message)")

    # --- sending -----------------------------------------------------------------------------

    async def send(self, chat: ChatRef, text: str, *, reply_to: str | None = None) -> list[str]:
        assert self.state is not None
        thread = chat.thread_id or reply_to or ""
        parent = (self.state.message(reply_to) if reply_to else None) or (
            self.state.latest_in(thread) if thread else None
        )
        cap = self.settings.max_replies_per_hour
        if thread and self.state.replies_within(thread, 3600) >= cap:
            log.warning(
                "email: not replying to %s in thread %s: %d replies in the last hour is the "
                "cap (platforms.email.max_replies_per_hour); is an automated sender looping?",
                chat.chat_id,
                thread,
                cap,
            )
            return []
        ids = []
        for chunk in split_message(text, MAX_MESSAGE_CHARS):
            message = self._compose(chat.chat_id, chunk, parent)
            if self.settings.draft_mode:
                await asyncio.to_thread(self._save_draft, message)
            else:
                await self._mail(message)
            message_id = str(message["Message-ID"])
            if thread:
                self.state.remember(
                    Threaded(message_id, thread, str(message["Subject"]), _references(message))
                )
                self.state.replied(thread)
            ids.append(message_id)
        return ids

    def _compose(self, to: str, text: str, parent: Threaded | None) -> EmailMessage:
        settings = self.settings
        message = EmailMessage()
        message["From"] = formataddr((settings.name, settings.address))
        message["To"] = to
        subject = parent.subject if parent is not None else ""
        if not subject.lower().startswith("re:"):
            subject = f"Re: {subject}" if subject else f"Message from {settings.name}"
        message["Subject"] = subject
        message["Date"] = formatdate(localtime=True)
        message["Message-ID"] = make_msgid(domain=self._domain)
        if parent is not None:
            message["In-Reply-To"] = parent.message_id
            chain = [*parent.references, parent.message_id][-MAX_REFERENCES:]
            message["References"] = " ".join(chain)
        # RFC 3834: what a responder sends says so, and other responders leave it alone.
        message["Auto-Submitted"] = "auto-replied"
        message[HERMES_HEADER] = "reply"
        message.set_content(text)
        return message

    async def _mail(self, message: EmailMessage) -> None:
        import aiosmtplib

        settings = self.settings
        await aiosmtplib.send(
            message,
            hostname=settings.smtp_host,
            port=settings.smtp_port,
            username=settings.username,
            password=settings.password,
            use_tls=settings.smtp_tls == "implicit",
            start_tls=settings.smtp_tls == "starttls",
            tls_context=self._tls_context() if settings.smtp_tls != "none" else None,
            timeout=60,
        )

    def _save_draft(self, message: EmailMessage) -> None:
        from imapclient.imapclient import DRAFTS

        client = self._imap()
        try:
            folder = client.find_special_folder(DRAFTS) or "Drafts"
            if not client.folder_exists(folder):
                client.create_folder(folder)
            client.append(folder, message.as_bytes(), flags=[b"\\Draft"])
        finally:
            with contextlib.suppress(Exception):
                client.logout()

    async def edit(self, chat: ChatRef, message_id: str, text: str) -> None:
        raise MessageGone("a sent mail cannot be edited")

    async def typing(self, chat: ChatRef) -> None:
        return None  # mail has no typing indicator

    async def ask(
        self, chat: ChatRef, question: str, choices: Sequence[Choice], request_id: str
    ) -> None:
        await self.send(chat, self._answers.prompt(chat, question, choices, request_id))

    async def aclose(self) -> None:
        self._stop.set()
        self._interrupt()
        reader = self._reader
        if reader is not None:
            await asyncio.to_thread(reader.join, 10)
        if self.state is not None and (reader is None or not reader.is_alive()):
            self.state.close()


def _unread_before(client: Any, started: float) -> int:
    """The UID to read after on a first start: unread mail of the grace period comes after
    it; everything else is history."""
    newest = int(max([0, *client.search(["ALL"])]))
    unread = sorted(client.search(["UNSEEN"]))
    if not unread:
        return newest
    dates = client.fetch(unread, ["INTERNALDATE"])
    oldest = started - FIRST_START_GRACE_SECONDS
    fresh = [uid for uid in unread if dates[uid][b"INTERNALDATE"].timestamp() >= oldest]
    return int(fresh[0]) - 1 if fresh else newest


def _chain(mail: Mail) -> tuple[str, ...]:
    refs = list(mail.references)
    if mail.in_reply_to and mail.in_reply_to not in refs:
        refs.append(mail.in_reply_to)
    return tuple(refs[-MAX_REFERENCES:])


def _references(message: EmailMessage) -> tuple[str, ...]:
    return tuple(str(message.get("References", "")).split())


def _already(data: bytes) -> Callable[[int], Awaitable[bytes]]:
    """A download of what the mail already holds."""

    async def download(_limit: int) -> bytes:
        return data

    return download


def _inbound(mail: Mail, message_id: str, thread: str) -> Inbound:
    return Inbound(
        chat=ChatRef(PLATFORM, mail.sender, "private", thread),
        user_id=mail.sender,
        user_name=mail.sender_name or mail.sender,
        text=mail.text,
        message_id=message_id,
    )
