"""The interface of a chat platform adapter (Telegram, Discord, Slack, ...).

The gateway hosts adapters. An adapter turns the platform's events into :class:`Inbound`
messages and :class:`ButtonPress` events for the gateway, and sends, edits and splits replies
the way its platform wants them. Everything else is the gateway's: who may talk to the agent
(allowlists, pairing), which session a message belongs to, one turn at a time per session,
the delivery ledger, approvals, streaming and restarts. An adapter never decides whether a
user is allowed.

``PlatformSpec.factory(context)`` gets a :class:`PlatformContext` and returns a
:class:`PlatformAdapter`. It raises :class:`PlatformNotConfigured` when something the user
must set is missing (a token), and so may :meth:`PlatformAdapter.run` when the service
refuses what only the user's config can change (a revoked token): the gateway reports it
once and does not retry. Any other failure, at start or later in
:meth:`PlatformAdapter.run`, is reported and the platform is restarted with backoff while
the other platforms carry on.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from hermes_sdk.listener import Handler
    from hermes_sdk.media import Attachment, MediaCache

__all__ = [
    "ButtonPress",
    "ChatOrder",
    "ChatRef",
    "Choice",
    "Inbound",
    "MessageGone",
    "NotSent",
    "PlatformAdapter",
    "PlatformContext",
    "PlatformHost",
    "PlatformNotConfigured",
    "TypedAnswers",
    "choices_prompt",
    "split_message",
    "unread_attachment_note",
    "yes_and_no",
]


class PlatformNotConfigured(Exception):
    """The platform cannot start until the user changes its configuration; the message says
    what to set (one line)."""


class MessageGone(Exception):
    """The message to edit no longer exists (deleted by the user, too old)."""


class NotSent(Exception):
    """The platform answered that it did not take the message (a refusal, such as Telegram's
    ``ok: false``). Raise it, or a subclass, from ``send`` and ``edit`` for those: the reply
    is then retried as it was. Any other exception (a timeout, a dropped connection) means
    the message may have gone out, and its retry carries a "may be a duplicate" note.

    ``permanent=True``: the platform will never take it as it is (WhatsApp's 24-hour
    window has closed on that person): it is given up at once, and the message (one line
    saying why and what would send it) is logged as the reply's failure."""

    permanent: bool = False

    def __init__(self, message: str = "", *, permanent: bool = False) -> None:
        super().__init__(message)
        self.permanent = permanent


@dataclass(frozen=True, slots=True)
class ChatRef:
    """Where a message came from and where its reply goes."""

    platform: str
    chat_id: str
    chat_type: str
    """``private`` (a DM), ``group`` or ``channel``."""
    thread_id: str | None = None
    """A thread or forum topic inside the chat; replies go to the same thread."""

    def as_dict(self) -> dict[str, Any]:
        return {
            "platform": self.platform,
            "chat_id": self.chat_id,
            "chat_type": self.chat_type,
            "thread_id": self.thread_id,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ChatRef:
        thread = data.get("thread_id")
        return cls(
            platform=str(data["platform"]),
            chat_id=str(data["chat_id"]),
            chat_type=str(data["chat_type"]),
            thread_id=None if thread is None else str(thread),
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class Inbound:
    """A message from a user, as the adapter understood it."""

    chat: ChatRef
    user_id: str
    """The platform's stable user id (not a changeable username)."""
    user_name: str = ""
    """A readable name for logs and the pairing list (``@name`` or the display name)."""
    text: str
    message_id: str
    """Unique within the chat; the gateway drops a message it has already seen."""
    addressed: bool = True
    """In a group: the bot was mentioned, replied to or given a command. Adapters forward
    unaddressed group messages only if the chat is configured to answer everything."""
    attachments: tuple[Attachment, ...] = ()
    """Files that came with it (a photo, a voice note, a document), made with
    :meth:`PlatformContext.media`. ``text`` is then the caption, possibly empty. Download
    only what an allowed sender sent (:meth:`PlatformHost.allows`)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ButtonPress:
    """A user pressed a button the gateway asked the adapter to show (:meth:`ask`)."""

    chat: ChatRef
    user_id: str
    request_id: str
    choice: str


@dataclass(frozen=True, slots=True)
class Choice:
    """One button: the value the gateway gets back and the label the user sees."""

    value: str
    label: str


@dataclass(frozen=True, slots=True, kw_only=True)
class PlatformContext:
    """What a platform adapter's factory gets."""

    name: str
    home: str
    config: Mapping[str, Any] = field(default_factory=dict)
    """The platform's section of config.yaml (``platforms.<name>``), as written."""
    secrets: Mapping[str, str] = field(default_factory=dict)
    """Environment variables and HERMES_HOME/.env, for tokens. Never log these values."""
    root_config: Mapping[str, Any] = field(default_factory=dict)
    """config.yaml as loaded, for settings every platform shares (``media:``)."""

    def media(self) -> MediaCache:
        """Where the files users send are kept (``HERMES_HOME/cache/media``), checked with
        ``media:``'s caps: ``ingest`` sniffs a file's type, refuses a disguised or an
        oversized one (:class:`~hermes_sdk.media.MediaRefused`, one line to show the user),
        and ``check_size`` refuses before a download when the size is announced."""
        from hermes_sdk.media import MediaCache

        return MediaCache.of_home(self.home, self.root_config)

    def token(self, variable: str, how_to_get_one: str) -> str:
        """The bot's token: from the variable ``platforms.<name>.token_env`` names, else
        ``variable``, in the environment or HERMES_HOME/.env. Missing or blank, it raises
        :class:`PlatformNotConfigured` saying what to set and ``how_to_get_one``."""
        chosen = str(self.config.get("token_env") or variable)
        value = self.secrets.get(chosen, "").strip()
        if not value:
            raise PlatformNotConfigured(f"set {chosen} in HERMES_HOME/.env to {how_to_get_one}")
        return value


class PlatformHost(Protocol):
    """What the gateway offers an adapter while it runs."""

    async def receive(self, message: Inbound) -> None:
        """Hand over a user's message. It is stored before this returns, so an adapter may
        confirm it to the platform (acknowledge the update) afterwards. Calls for different
        chats may run concurrently (messages arriving together are stored with one disk
        sync); for one chat, await each call before making the next, to keep its order."""
        ...

    async def pressed(self, press: ButtonPress) -> str:
        """Hand over a button press; returns a short text to show the user (a toast)."""
        ...

    def question_open(self, request_id: str) -> bool:
        """Whether question ``request_id`` still waits for its answer. Ask after
        :meth:`pressed`: a press that did not answer it (someone else's, in a group) must
        leave its buttons for the person asked; once answered or expired, take them away."""
        ...

    async def allows(self, user_id: str) -> bool:
        """Whether ``user_id`` may use the agent on this platform (configured or paired).
        For what must be decided before any message (accepting an invitation to a room);
        a message itself goes to :meth:`receive`, which decides on its own."""
        ...

    async def forward(self, platform: str, chat_id: str, text: str) -> None:
        """Send ``text`` to a chat of another platform (``telegram``, ``"12345"``) through
        the gateway's delivery ledger: sent once, and kept while that platform reconnects.
        For a platform whose replies belong elsewhere (a webhook's route delivers to a chat).
        Raises :class:`~hermes_sdk.runtime.DeliveryUnavailable` when no such platform runs."""
        ...

    async def reported(self, message_id: str, status: str, detail: str = "") -> None:
        """What the platform said later of a message the bot sent (its id, as ``send``
        returned it): ``delivered``, ``read``, or ``failed`` with ``detail`` saying why (a
        WhatsApp status webhook). A failed one is recorded in the delivery ledger against
        the reply that sent it, and logged; the others are logged at debug level. An id
        the ledger does not know (sent before a restart, or not a reply) is only logged."""
        ...

    async def http_route(self, prefix: str, handler: Handler) -> str:
        """Serve HTTP requests whose path starts with ``prefix`` (``/webhooks/``) with
        ``handler`` (an aiohttp handler: ``async def handler(request) -> Response``) on the
        gateway's one HTTP listener, until this platform's :meth:`PlatformAdapter.run`
        ends; returns the listener's base URL (``http://127.0.0.1:8644``). The listener
        binds ``gateway.http_host`` and ``gateway.http_port`` when first asked. Raises
        :class:`PlatformNotConfigured` when the port cannot be bound or another platform
        serves ``prefix``. Check every request yourself (a signature): the listener lets
        anyone who reaches the port in."""
        ...


class PlatformAdapter(Protocol):
    """A connection to one chat platform. Every method may raise; the gateway logs the
    failure and, for deliveries, retries through its ledger."""

    max_message_chars: int
    """The longest message the platform accepts; :meth:`send` splits longer ones, and the
    gateway edits a streamed message only while its text fits."""
    can_edit: bool
    """Whether :meth:`edit` works: replies are streamed by editing a message if so."""
    # Optional (read with getattr; True when absent):
    #   sends_notes: bool. False: only replies and questions are sent, never a note of its
    #   own (a restart's "continuing", a question's timeout). Email: one mail per turn.
    #   pairs_by_default: bool. False: strangers get no pairing code unless the user sets
    #   ``platforms.<name>.pairing: true`` (email: an answer to any sender is backscatter).
    #   verifies_senders: bool (False when absent). True: the adapter proved every sender
    #   itself, with a secret only an allowed sender has (a webhook's HMAC signature), and
    #   hands over nothing else; the gateway then admits its messages without
    #   ``allowed_users``. Never set it on a platform where anyone can write to the bot.
    #   send_file(chat, attachment, *, caption=None) -> list[str]: send a file (a reply's
    #   spoken answer, hermes_sdk.media.Attachment); OGG/Opus audio as a voice note where
    #   the platform has them. Absent: the user is told in a line that a file was made.

    async def run(self, host: PlatformHost) -> None:
        """Connect, then hand every event to ``host`` until cancelled. Raise to report a
        failure; the gateway restarts the platform with backoff."""
        ...

    async def send(self, chat: ChatRef, text: str, *, reply_to: str | None = None) -> list[str]:
        """Send ``text`` (Markdown) as one or more messages; returns their ids in order.
        Raises :class:`NotSent` when the platform refused it (see there)."""
        ...

    async def edit(self, chat: ChatRef, message_id: str, text: str) -> None:
        """Replace the text of a message the bot sent; editing to the same text is not an
        error. Raises :class:`MessageGone` if the message no longer exists."""
        ...

    async def typing(self, chat: ChatRef) -> None:
        """Show that the agent is working (lasts a few seconds; called again while busy)."""
        ...

    async def ask(
        self, chat: ChatRef, question: str, choices: Sequence[Choice], request_id: str
    ) -> None:
        """Show ``question`` with a button per choice. A press comes back through
        :meth:`PlatformHost.pressed` with this ``request_id``. A platform without buttons
        lists the choices in the text: the gateway also accepts a choice typed as a reply."""
        ...

    async def aclose(self) -> None:
        """Release connections; called once, after :meth:`run` ended."""
        ...


def yes_and_no(choices: Sequence[Choice]) -> tuple[Choice, Choice] | None:
    """The choices a yes and a no stand for, for a platform whose own control is one (a 👍
    or 👎 reaction): an approval's first choice and its deny (the gateway puts deny last).
    None for any other question, such as a tool's, whose choices are its own."""
    if len(choices) >= 2 and choices[-1].value == "deny":
        return choices[0], choices[-1]
    return None


def choices_prompt(question: str, choices: Sequence[Choice], *, markdown: bool = True) -> str:
    """A question for a platform without buttons: the choices to type, under it (in bold,
    unless the platform shows text as it is: ``markdown=False``)."""
    mark = "**" if markdown else ""
    options = ", ".join(f"{mark}{choice.value}{mark}" for choice in choices)
    return f"{question}\n\nReply with one of: {options}"


class TypedAnswers:
    """Typed replies as button presses, for platforms without buttons.

    Remember each question shown (:meth:`prompt` gives its text, :meth:`asked` only
    remembers); a message in the same chat whose whole
    text is one of its choices (value, label or number, any case) is then the press of
    that choice (:meth:`press_for`). Handing it to :meth:`PlatformHost.pressed` keeps the
    rule that only the person asked may answer, in a group too, where such a reply names
    nobody and would otherwise be dropped as not addressed to the bot.
    """

    def __init__(self, limit: int = 256, ttl_seconds: float = 2 * 86_400.0) -> None:
        self._open: dict[str, tuple[ChatRef, tuple[Choice, ...], float]] = {}
        self._limit = limit
        self._ttl = ttl_seconds
        """A question is forgotten after this, whatever else is known (the gateway waits a
        day at most)."""

    def asked(self, chat: ChatRef, choices: Sequence[Choice], request_id: str) -> None:
        self._open[request_id] = (chat, tuple(choices), time.monotonic())
        while len(self._open) > self._limit:
            del self._open[next(iter(self._open))]

    def prompt(
        self,
        chat: ChatRef,
        question: str,
        choices: Sequence[Choice],
        request_id: str,
        *,
        markdown: bool = True,
    ) -> str:
        """What ``ask`` sends: the question with its choices, remembered as asked."""
        self.asked(chat, choices, request_id)
        return choices_prompt(question, choices, markdown=markdown)

    def press_for(
        self,
        chat: ChatRef,
        user_id: str,
        text: str,
        is_open: Callable[[str], bool] | None = None,
    ) -> ButtonPress | None:
        """The press ``text`` is, or None. Give ``is_open`` (:meth:`PlatformHost.question_open`):
        a question that timed out or was stopped is then forgotten, so it cannot take a later
        message ("1", "deny") for its answer."""
        wanted = text.strip().strip(".!").lower().lstrip("/")
        if not wanted:
            return None
        now = time.monotonic()
        for request_id, (_c, _o, at) in list(self._open.items()):
            if now - at > self._ttl or (is_open is not None and not is_open(request_id)):
                del self._open[request_id]
        for request_id, (asked_in, choices, _at) in reversed(self._open.items()):
            if asked_in.platform != chat.platform or asked_in.chat_id != chat.chat_id:
                continue
            # A choice's own value or label first: "7" is choice "7" before the seventh one.
            named = [c for c in choices if wanted in {c.value.lower(), c.label.lower()}]
            counted = [c for n, c in enumerate(choices, 1) if wanted == str(n)]
            for choice in named or counted:
                return ButtonPress(
                    chat=asked_in, user_id=user_id, request_id=request_id, choice=choice.value
                )
        return None

    def settle(self, request_id: str, still_open: bool) -> None:
        """After a press: forget an answered (or expired) question."""
        if not still_open:
            self._open.pop(request_id, None)

    async def answer(self, host: PlatformHost, chat: ChatRef, user_id: str, text: str) -> bool:
        """Whether ``text`` answered a question asked here: then it is pressed
        (:meth:`PlatformHost.pressed`) and the question forgotten once closed, and the
        message is not to be handed over. :meth:`press_for` and :meth:`settle` in one."""
        press = self.press_for(chat, user_id, text, host.question_open)
        if press is None:
            return False
        await host.pressed(press)
        self.settle(press.request_id, host.question_open(press.request_id))
        return True


class ChatOrder:
    """One chat's hand-overs in the order they began, for libraries that run each incoming
    event's handler as a task of its own (discord.py, slack_sdk): the second message of a
    chat waits for the first to be stored, however the tasks are scheduled. Different
    chats (and threads) still go at once::

        order = ChatOrder()
        async def on_message(message):              # one task per event
            inbound = read(message)
            await order.run(inbound.chat, lambda: host.receive(inbound))

    :meth:`run` must be called in the order the events came (a handler's first step, before
    any await), and returns once this hand-over is done; its exception is raised there.
    """

    def __init__(self) -> None:
        self._last: dict[tuple[str, str, str | None], asyncio.Future[None]] = {}

    async def run(self, chat: ChatRef, hand_over: Callable[[], Awaitable[None]]) -> None:
        key = (chat.platform, chat.chat_id, chat.thread_id)
        before = self._last.get(key)

        async def after() -> None:
            if before is not None:
                await asyncio.wait({before})  # its failure is raised by its own caller
            await hand_over()

        task = asyncio.ensure_future(after())
        self._last[key] = task
        try:
            await task
        finally:
            if self._last.get(key) is task:
                del self._last[key]


def unread_attachment_note(what: str) -> str:
    """The text that stands for an attachment Hermes cannot read yet (``what``: "a photo",
    "a file, notes.pdf (application/pdf, 5120 bytes)"), so the agent can tell the user it
    was not read, instead of answering as if nothing came."""
    return f"[{what}, which Hermes cannot open yet; it only reads text for now]"


_FENCE = "```"


def _cut_point(text: str, limit: int) -> int:
    """Where to end a chunk of at most ``limit`` characters: a paragraph break, else a line
    break, else a space, else exactly at ``limit``."""
    for separator in ("\n\n", "\n", " "):
        at = text.rfind(separator, 0, limit + 1)
        if at > limit // 4:  # a break too near the start would make a tiny chunk
            return at
    return limit


def split_message(text: str, limit: int) -> list[str]:
    """``text`` in chunks of at most ``limit`` characters, cut at paragraph breaks where
    possible. A fenced code block cut in two is closed at the end of one chunk and reopened
    (with its language) at the start of the next, so each chunk renders on its own."""
    if limit < 16:
        raise ValueError("limit must be at least 16 characters")
    chunks: list[str] = []
    rest = text.strip("\n")
    opener = ""  # the fence line to reopen with, if the previous chunk ended inside a block
    while rest:
        room = limit - len(opener) - (len(opener) and 1)
        if len(rest) <= room:
            chunks.append(f"{opener}\n{rest}" if opener else rest)
            break
        # Leave room to close a fence this chunk may end inside.
        at = _cut_point(rest, room - len(_FENCE) - 1)
        piece, rest = rest[:at].rstrip(), rest[at:].lstrip("\n" if at else "")
        if rest.startswith(" "):
            rest = rest[1:]
        body = f"{opener}\n{piece}" if opener else piece
        opener = _open_fence(body)
        chunks.append(f"{body}\n{_FENCE}" if opener else body)
    return [chunk for chunk in chunks if chunk.strip()]


def _open_fence(text: str) -> str:
    """The opening fence line of a code block left open at the end of ``text``, or ''."""
    opener = ""
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith(_FENCE):
            opener = "" if opener else stripped
    return opener
