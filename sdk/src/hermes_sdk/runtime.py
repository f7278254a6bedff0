"""The runtime contract: what a front-end plugin (an HTTP API, an editor's agent, scheduled
jobs, a subagent) gets from the kernel to run the agent.

A front-end never builds an engine, a store or a model client. It opens a session, starts a
turn on it and reads the turn's events as they happen::

    session = await runtime.open_session(SessionOptions(source="api"))
    turn = runtime.start_turn(session.session_id, "What is in this folder?")
    async for event in turn:
        if isinstance(event, TextDelta):
            print(event.text, end="")
        elif isinstance(event, Question):
            event.answer(event.choices[0].value)  # or leave it: unanswered means no
    ended = await turn.result()

The kernel gives a :class:`Runtime` to a service's ``run`` (in the gateway, or on its own
from the plugin's command through :attr:`~hermes_sdk.events.CommandContext.open_runtime`).
Fields may be added in minor SDK versions; none is removed or renamed outside a major one.
"""

from __future__ import annotations

import abc
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from hermes_sdk.budget import Budget
from hermes_sdk.slash import SlashReply
from hermes_sdk.specs import Kind, SlashCommandSpec
from hermes_sdk.tooling import HistoryHit, HistoryQuery

if TYPE_CHECKING:
    from hermes_sdk.administration import (
        ConfigChange,
        ConfigSection,
        LogRead,
        ProfileEntry,
        SecretEntry,
    )
    from hermes_sdk.dashboard import Panel, PanelInfo
    from hermes_sdk.delivery import Deliverer
    from hermes_sdk.health import StatusLine
    from hermes_sdk.media import Attachment
    from hermes_sdk.pending_writes import PendingWrite
    from hermes_sdk.storage import Store, StoreSchema

_LAZY = {"PendingWrite": "hermes_sdk.pending_writes", "StatusLine": "hermes_sdk.health"}
"""Re-exported, imported on first use: a one-shot never reads them (start-up time)."""


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    return getattr(import_module(module), name)


__all__ = [
    "RESERVED_SLASH_NAMES",
    "RUNTIME_ENTRY_POINTS",
    "SAVING_ANSWERS",
    "STEER_PREFIX",
    "Budget",
    "CompactionMark",
    "Delivery",
    "DeliveryUnavailable",
    "InterimReply",
    "ModelChoice",
    "ModelInfo",
    "Notice",
    "PendingWrite",
    "PluginState",
    "ProvidedName",
    "ProviderChoice",
    "Question",
    "QuestionChoice",
    "Runtime",
    "RuntimeAdministration",
    "RuntimeCommands",
    "RuntimeModels",
    "RuntimeOperations",
    "RuntimeOptions",
    "RuntimeTurn",
    "RuntimeTurns",
    "SessionBusy",
    "SessionHistory",
    "SessionMessage",
    "SessionNotFound",
    "SessionOptions",
    "SessionSummary",
    "SlashReply",
    "StatusLine",
    "TextDelta",
    "ToolFinished",
    "ToolProgress",
    "ToolStarted",
    "ToolUsage",
    "TurnEnded",
    "TurnEvent",
    "TurnUsage",
    "UsageByDay",
    "exchanges",
    "is_steer",
    "open_runtime",
]

RESERVED_SLASH_NAMES = frozenset(
    {
        "help",
        "new",
        "reset",
        "resume",
        "sessions",
        "model",
        "usage",
        "tools",
        "compact",
        "image",
        "file",
        "stop",
        "retry",
        "undo",
        "title",
        "verbose",
        "yolo",
        "reasoning",
        "steer",
        "queue",
        "background",
        "bg",
        "goal",
        "branch",
        "fork",
        "personality",
        "clear",
        "history",
        "save",
        "copy",
        "quit",
        "exit",
    }
)
"""Slash commands the runtime serves (``help``, ``new`` ...) or front-ends keep for themselves
(``quit``, ``image`` ...): a plugin's command of one of these names is refused. (``skills`` and
``memory`` are not reserved: a plugin's own replaces the terminal's listing.)"""

STEER_PREFIX = "(said while you were working; take it into account) "
"""How a ``/steer`` note begins in the transcript (a user message in the middle of a turn):
the model, and a front-end numbering the user's messages, can tell it from a new request."""


def is_steer(content: str | None) -> bool:
    """A user message that is a ``/steer`` note said mid-turn, not a request of its own."""
    return (content or "").startswith(STEER_PREFIX)


REPORT_PREFIX = "(a report from work you started earlier, not the user's words) "
"""How a report of work a tool left running begins (a background task that finished): the
front-end sends it as the session's next message (``start_turn(later=)``), so the model,
and a front-end showing the conversation, can tell it from what the user said."""


def is_report(content: str | None) -> bool:
    """A message that is a report of background work (:data:`REPORT_PREFIX`)."""
    return (content or "").startswith(REPORT_PREFIX)


def exchanges(messages: Sequence[SessionMessage]) -> list[tuple[str, str, int]]:
    """The conversation's exchanges, oldest first: (what the user said, the last reply to
    it, the seq of the exchange's last message). A ``/steer`` note belongs to the exchange
    it was said in. ``/history`` numbers these, and ``/branch N`` keeps the first N."""
    found: list[tuple[str, str, int]] = []
    for message in messages:
        text = message.content or ""
        if message.role == "user" and not is_steer(text):
            found.append((text, "", message.seq))
        elif found:
            said, answered, _ = found[-1]
            reply = text if message.role == "assistant" and text else answered
            found[-1] = (said, reply, message.seq)
    return found


RUNTIME_ENTRY_POINTS = "hermes.runtime"
"""The entry point group through which the kernel offers :func:`open_runtime`."""


class SessionNotFound(KeyError):
    """No stored session has that id."""

    def __str__(self) -> str:  # KeyError quotes its message; this one is a sentence
        return str(self.args[0]) if self.args else "no such session"


class SessionBusy(RuntimeError):
    """A turn is already running on that session (one turn at a time per session)."""


class DeliveryUnavailable(RuntimeError):
    """The message cannot be delivered: no such platform, or no gateway to send it."""


# --- sessions -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionOptions:
    """How to open a session. Every field left None takes the configured default."""

    source: str
    """Who opened it: "api", "acp", "cron" ...; listed with the session, filtered on."""
    user_scope: str | None = None
    """Whose session it is ("api:alice"); None for the owner. Memory and history search are
    per scope, so a front-end serving several people gives each their own."""
    cwd: str | None = None
    """The working directory of its tools; None: the runtime's."""
    toolsets: tuple[str, ...] | None = None
    """Only these toolsets' tools; None: ``agent.toolsets`` from config, else all."""
    provider: str | None = None
    """A configured endpoint or provider name; None: the configured model's."""
    model: str | None = None
    """A model of that provider; None: its configured model."""
    parent_session_id: str | None = None
    """The session this one works for (a subagent's parent)."""
    title: str | None = None
    exclude_tools: tuple[str, ...] = ()
    """Tools left out by name, whatever the toolsets (a scheduled job has no ``clarify``)."""
    max_iterations: int | None = None
    """Model calls one turn may make; None: ``agent.max_iterations``."""
    background_review: bool = True
    """False: no background review proposes memory or skills after its turns."""
    budget: Budget | None = None
    """Limits of its own; the ones it leaves None come from config.yaml's ``budget:``."""
    preload: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Things plugins load into the session's system prompt from its start, by kind: the
    skills plugin reads ``"skills"`` (``hermes chat --skills A,B``). A kind no plugin reads
    is ignored."""
    yolo: bool = False
    """Dangerous commands run without asking (as approvals mode ``off``; the hardline list
    and ``approvals.deny`` still refuse). :meth:`Runtime.set_yolo` changes it later."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionSummary:
    """A stored session, as listed."""

    session_id: str
    source: str
    title: str | None
    model: str | None
    provider: str | None
    cwd: str | None
    user_scope: str | None
    parent_session_id: str | None
    started_at: float
    ended_at: float | None
    message_count: int
    input_tokens: int
    output_tokens: int
    estimated_cost_usd: float
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0
    unpriced_calls: int = 0
    """Model calls whose price is unknown: the cost is then a lower bound, never "free"."""
    tool_call_count: int = 0
    end_reason: str | None = None
    """Why it ended (``cli_exit``, ``ended`` ...), when ``ended_at`` is set."""


@dataclass(frozen=True, slots=True, kw_only=True)
class UsageByDay:
    """Model usage of one day (local time), source, provider and model, summed."""

    day: str
    """``YYYY-MM-DD``."""
    source: str
    """Where the sessions ran: ``cli``, ``telegram``, ``cron`` ..."""
    provider: str | None
    model: str | None
    model_calls: int
    """Calls recorded one by one; a session imported with totals only counts none."""
    sessions: int
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cost_usd: float
    unpriced_calls: int
    """Calls (or imported sessions) whose price is unknown: the cost is then a lower bound."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolUsage:
    """Calls of one tool on one day (local time), those a script made included."""

    day: str
    tool: str
    calls: int
    failed: int
    """Calls whose result was an error, or whose effect is unknown."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionMessage:
    """One stored message of a session, oldest first. ``tool_calls`` are the assistant's
    calls as stored (``{"id", "name", "arguments"}``); a tool message names its call."""

    seq: int
    role: str  # user | assistant | tool
    content: str | None
    created_at: float
    tool_calls: tuple[Mapping[str, Any], ...] = ()
    tool_call_id: str | None = None
    tool_name: str | None = None
    finish_reason: str | None = None
    reasoning: str | None = None
    """The model's reasoning beside an assistant message, when it gave one."""
    disposition: Literal["ok", "error", "skipped", "unknown"] | None = None
    """A tool message: what is known of the call's effect (``unknown``: it may have run
    before a crash, and is never run again)."""
    attachments: tuple[Attachment, ...] = ()
    """Files sent with it: the user's (a photo, a voice note with its transcript) or the
    ones a reply carried (a spoken answer)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelInfo:
    """The model a session opened with ``provider`` / ``model`` would use, before any is
    opened (a chat's banner): ``notice`` says why it is that one when nothing was asked for
    (no API key set, so the embedded model answers)."""

    provider: str
    model: str
    notice: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ProviderChoice:
    """A provider a session may name: the key it needs (None: none), the models it lists."""

    name: str
    key_env: str | None
    models: tuple[str, ...]
    default_model: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ProvidedName:
    """Something a plugin provides, as listed: its name and the plugin's."""

    name: str
    plugin: str


@dataclass(frozen=True, slots=True, kw_only=True)
class PluginState:
    """An installed plugin and how it stands, as ``hermes plugins list --json`` has it."""

    name: str
    distribution: str
    version: str
    summary: str
    state: Literal["loaded", "enabled", "disabled", "failed"]
    """``loaded`` (imported in this process, fine), ``enabled`` (allowed, not imported
    here yet), ``disabled`` (by config or the plugin controls), ``failed`` (its load failed
    here, or it cannot load: ``error`` says why)."""
    reason: str
    """Why it is enabled or disabled (``default``, ``plugins.disabled in config.yaml`` ...)."""
    error: str | None
    """Why it failed to load, in one line: here, or the last time it was loaded (state
    ``enabled`` with an error: not imported since); None if it did not fail."""
    load_ms: float | None
    """How long its load took in this process; None if it was not loaded here."""
    isolated: bool
    """Listed in ``plugins.isolated``: it runs in a host process of its own."""
    run_time: str | None
    """What happened after it loaded (its host restarted, its hooks disabled for missing
    their deadline), in this process or the last run that loaded it; None: nothing."""
    provides: tuple[str, ...]
    """Manifest keys (``tool.read_file``, ``hook.hermes_pre_tool_call``): what it
    registered, if loaded here, else what its manifest declares."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelChoice:
    """A model a session can be opened with: ``provider`` and ``model`` as
    :class:`SessionOptions` takes them."""

    provider: str
    model: str
    default: bool = False


# --- a turn's events -----------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class TextDelta:
    """Text of the reply as the model streams it. A reply cut off by a dropped connection
    is asked for again: a delta with ``restarted=True`` says to discard the text so far."""

    text: str
    restarted: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class Notice:
    """One line about the turn for the user, beside the reply: the conversation was
    compacted, a provider is retried, a fallback answers. Show it or leave it out."""

    text: str
    chat: bool = False
    """The user must hear it wherever they are (a goal achieved or paused, a note the turn
    could not take): a chat app that leaves notices out sends this one."""


@dataclass(frozen=True, slots=True, kw_only=True)
class InterimReply:
    """A whole reply the turn goes on from: the runtime asks again on its own (a standing
    goal's next step, a ``/steer`` note that came after the last model call). Show it as
    finished; the text that streams after it is the next reply. :class:`TurnEnded` carries
    the last one. A front-end that ignores this event shows the replies run together."""

    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolStarted:
    call_id: str
    tool: str
    arguments: Mapping[str, Any] = field(default_factory=dict)
    parent_call_id: str | None = None
    """Set for a call a running tool made (a script's): the call it runs inside."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolProgress:
    """A running tool reported how far it got (one line: an MCP server's progress)."""

    call_id: str
    tool: str
    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolFinished:
    call_id: str
    tool: str
    ok: bool
    content: str
    """The result as the model reads it (secrets redacted, large output cut)."""
    duration_s: float = 0.0
    arguments: Mapping[str, Any] = field(default_factory=dict)
    """The call's arguments, as :class:`ToolStarted` had them."""
    parent_call_id: str | None = None
    """As :class:`ToolStarted` had it."""


@dataclass(frozen=True, slots=True, kw_only=True)
class QuestionChoice:
    value: str
    label: str


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class Question:
    """The turn waits for an answer: a dangerous command to approve (``kind="approval"``,
    with ``command``) or a tool's question to the user (``kind="question"``).

    Call :meth:`answer` with one choice's ``value`` (from any thread). No answer within
    ``timeout_s``, or :meth:`decline`, means no: the command does not run, and the model is
    told why. Approval values are ``once``, ``session``, ``command`` (this exact command
    from now on), ``always`` (every command of its rule class from now on) and ``deny``;
    the two in :data:`SAVING_ANSWERS` are saved to ``approvals.allow`` in config.yaml, so
    a front-end whose users are not the owner (a chat platform's) does not offer them."""

    question_id: str
    kind: Literal["approval", "question"]
    text: str
    choices: tuple[QuestionChoice, ...]
    command: str | None = None
    timeout_s: float = 120.0
    free_text: bool = False
    """The user may answer in their own words (:meth:`answer_text`): a tool's question."""
    _reply: Any = field(default=None, repr=False)  # set by the runtime: (value | None) -> bool

    def answer(self, value: str) -> bool:
        """Give the answer; False if ``value`` is not a choice or the question is closed."""
        if value not in {choice.value for choice in self.choices}:
            return False
        return bool(self._reply(value)) if self._reply is not None else False

    def answer_text(self, text: str) -> bool:
        """Answer in the user's words; False unless ``free_text``, or if the question is
        closed. A choice's value given this way picks that choice."""
        if not self.free_text or not text:
            return False
        return bool(self._reply(text)) if self._reply is not None else False

    def decline(self) -> bool:
        """Answer no (deny, or no choice)."""
        return bool(self._reply(None)) if self._reply is not None else False


SAVING_ANSWERS = frozenset({"command", "always"})
"""Approval answers that change the owner's config.yaml (``approvals.allow``)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnUsage:
    """What the turn cost: tokens over all its model calls, and the estimated price (None
    when a model's price is unknown)."""

    input_tokens: int = 0
    output_tokens: int = 0
    estimated_cost_usd: float | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnEnded:
    """The turn is over; always the last event.

    ``status``: ``done`` (``reply`` is the answer), ``stopped`` / ``interrupted`` (``reply``
    is what came before the stop), ``error`` (``error`` says what failed, in one line:
    a model that could not be reached ...), ``busy`` (another Hermes process is running a
    turn on this session: nothing was done or saved; try again in a moment), ``budget`` or
    ``loop`` (the turn was cut short; ``error`` says why)."""

    session_id: str
    status: str
    reply: str
    error: str | None = None
    usage: TurnUsage = field(default_factory=TurnUsage)
    tool_calls: int = 0
    attachments: tuple[Attachment, ...] = ()
    """Files the reply carries (a spoken answer from ``text_to_speech``): a front-end sends
    them after the text, or names where they are kept."""

    @property
    def ok(self) -> bool:
        return self.status == "done"


TurnEvent = (
    TextDelta
    | Notice
    | InterimReply
    | ToolStarted
    | ToolProgress
    | ToolFinished
    | Question
    | TurnEnded
)


class RuntimeTurn(abc.ABC):
    """A running turn. Iterate it for its events (once; the last is :class:`TurnEnded`), or
    just await :meth:`result`. Events are kept until read, so a slow reader loses none."""

    session_id: str

    @abc.abstractmethod
    def __aiter__(self) -> AsyncIterator[TurnEvent]: ...

    @abc.abstractmethod
    async def result(self) -> TurnEnded:
        """Wait for the end of the turn (events not read are dropped)."""

    @abc.abstractmethod
    def interrupt(self) -> None:
        """Finish the current step, then stop (new input arrived)."""

    @abc.abstractmethod
    def stop(self) -> None:
        """Stop now: the model request is cancelled, tools are stopped within about a
        second, and open questions are answered no."""

    def steer(self, text: str) -> bool:
        """Tell the running turn something without stopping it: ``text`` joins the
        conversation as the user's just before the turn's next model call (after the tools
        running now). False if the turn is over (send it as a message instead)."""
        return False

    @property
    @abc.abstractmethod
    def done(self) -> bool: ...


# --- delivery -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class Delivery:
    """A message handed to the gateway's delivery ledger: ``sent`` when the platform took
    it, ``queued`` when it goes out later (a gateway that is starting or reconnecting; a
    gateway in another process sends it within seconds)."""

    delivery_id: int
    state: Literal["sent", "queued"]


# --- front-ends that serve many people (a gateway) ---------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class RuntimeOptions:
    """How to open a runtime (``CommandContext.open_runtime(options)``); every field left
    as it is keeps the default."""

    cwd: str | None = None
    """The working directory of its sessions' tools; None: where the command runs."""
    unattended: bool = False
    """Nobody watches its sessions at a terminal to ``/compact`` (chats on a platform, a
    server): past ``compression.unattended_threshold`` of the model's window a session is
    compacted before the model call, even with automatic compaction off."""
    question_timeout_s: float | None = None
    """How long a :class:`Question` waits for its answer; None: ``approvals.timeout_seconds``."""
    close_timeout_s: float | None = None
    """On closing, how long background work still running (the reviews of the last turns)
    may take to finish; None: two minutes."""
    deliverer: Deliverer | None = None
    """Where ``Runtime.deliver`` goes: a front-end that sends to chats itself (the gateway,
    which runs the platforms) gives its own, so its services' messages go straight out;
    None: the installed delivery plugin's (``hermes_deliveries``)."""


# --- stored sessions, without a model (SDK 0.x: added for `hermes sessions`) -------------
# A command that only reads or tidies the history (list, show, search, export, delete) must
# work before any model is set up and start in milliseconds, so it gets these without an
# agent: ``CommandContext.open_history()``. A Runtime is a SessionHistory too.


@dataclass(frozen=True, slots=True, kw_only=True)
class CompactionMark:
    """A place where a session's view was compacted: since then the model sees a summary
    instead of the messages up to ``boundary_seq`` (the transcript keeps them all)."""

    boundary_seq: int
    """The ``seq`` of the last message the summary stands for: show the mark after it."""
    created_at: float
    reason: str
    """Why: ``threshold`` (the view grew past it), ``overflow`` (the model refused it as too
    long), ``manual`` (``/compact``) ..."""
    engine: str
    """The context engine that wrote the summary."""
    by_model: bool
    """False: the engine summarized without a model (it could not reach one)."""
    messages_replaced: int
    tokens_before: int
    tokens_after: int


class SessionHistory(abc.ABC):
    """The stored sessions of a Hermes home: listed, searched, read and deleted. Opening it
    builds no agent, so it needs no usable model and loads no tool; every method is safe to
    call from the event loop it was opened on, and none blocks it."""

    home: str
    config: Mapping[str, Any]
    """config.yaml as loaded (secrets live in .env, never here); read your own section."""

    @abc.abstractmethod
    async def sessions(
        self,
        *,
        source: str | None = None,
        user_scope: str | None = None,
        limit: int = 50,
        background: bool = False,
    ) -> list[SessionSummary]:
        """Stored sessions, newest first (by start): ``limit`` at most, of ``source`` and of
        ``user_scope`` (that person's) when given. Sessions of background work (the review
        of a finished turn, source ``review``) are left out unless ``background``."""

    @abc.abstractmethod
    async def find_session(self, reference: str) -> SessionSummary:
        """The stored session whose id is ``reference`` or starts with it (unique), else
        whose title is ``reference`` (whatever its case; the latest of that title) or starts
        with it (unique). Raises :class:`SessionNotFound` with one line that says which:
        none, or several."""

    @abc.abstractmethod
    async def latest_session(self, source: str | None = None) -> SessionSummary | None:
        """The session written to last (not the last one started), of ``source`` if given:
        what "continue the last chat" means."""

    @abc.abstractmethod
    async def messages(self, session_id: str) -> list[SessionMessage]:
        """The session's transcript, oldest first; raises :class:`SessionNotFound`."""

    @abc.abstractmethod
    async def openings(self, session_ids: Sequence[str]) -> dict[str, str]:
        """The start (80 characters at most) of each session's first user message, by id:
        what an untitled session is about. A session with no user message is left out."""

    @abc.abstractmethod
    async def children(self, session_id: str) -> list[SessionSummary]:
        """The sessions opened for this one, oldest first: tasks handed to another agent
        (source ``delegate``), reviews of its turns (``review``) ... (``parent_session_id``
        names it). Empty for a session without any; raises :class:`SessionNotFound`."""

    @abc.abstractmethod
    async def compactions(self, session_id: str) -> list[CompactionMark]:
        """Where the session's view was compacted, oldest first (empty: never). Raises
        :class:`SessionNotFound`."""

    @abc.abstractmethod
    async def search(
        self, query: HistoryQuery, *, user_scope: str | None = None, background: bool = False
    ) -> list[HistoryHit]:
        """Full-text search over stored messages, up to ``query.limit`` hits: best first for
        words, newest first for substrings (``query.mode``). ``user_scope``: only that
        person's sessions. Background sessions (reviews repeat the turns they review) are
        left out unless ``background``."""

    @abc.abstractmethod
    async def set_title(self, session_id: str, title: str) -> SessionSummary:
        """Give the session a title (blank: none); raises :class:`SessionNotFound`."""

    @abc.abstractmethod
    async def usage_report(self, session_id: str) -> list[str]:
        """What the session has used, as lines to show as they are: messages and tool calls,
        tokens and cost, the budget spent, work delegated from it, each model's share.
        Raises :class:`SessionNotFound`."""

    @abc.abstractmethod
    async def spending(self, session_id: str) -> str | None:
        """How much of its budget (``budget:`` in config.yaml, or the limits the session was
        opened with) the session has spent, as one line to show as it is
        (``budget: 12,345 of 40,000 tokens (31%); $0.0145 of $0.0200 (72%)``); None when no
        limit is set. Raises :class:`SessionNotFound`."""

    @abc.abstractmethod
    async def usage(self, since: float | None = None) -> list[UsageByDay]:
        """Model usage by day, source, provider and model, from ``since`` (a Unix time; None:
        all), oldest day first. Sessions imported with totals only count on the day they
        started, under their own model."""

    @abc.abstractmethod
    async def tool_usage(self, since: float | None = None) -> list[ToolUsage]:
        """Tool calls by day and tool, from ``since`` (None: all), oldest day first."""

    @abc.abstractmethod
    async def delete_sessions(self, session_ids: Sequence[str]) -> int:
        """Delete these sessions with their messages and usage records (search forgets them
        too; their children stay, without a parent), all or none; returns how many. Raises
        :class:`SessionBusy` if a turn runs on one of them, in this process or another, and
        :class:`SessionNotFound` if one is not stored: either way nothing is deleted."""


# --- the runtime ---------------------------------------------------------------------------


class RuntimeTurns(abc.ABC):
    """Sessions to run turns on: open, resume and end them, start a turn and find the
    running one, and change what a session holds (take back the last exchange, compact
    it, stop asking).
    Every method is safe to call from the event loop it was given on; none blocks it."""

    @abc.abstractmethod
    async def open_session(self, options: SessionOptions) -> SessionSummary:
        """Create a session (its system prompt is built now, then frozen). Raises ValueError
        with one line to act on if ``provider`` / ``model`` cannot be used."""

    @abc.abstractmethod
    async def resume_session(
        self, session_id: str, options: SessionOptions | None = None
    ) -> SessionSummary:
        """A stored session, to run turns on again; raises :class:`SessionNotFound`.
        ``options``' tool choice (``toolsets``, ``exclude_tools``) holds when the session is
        taken up in this process: a front-end that narrows a session's tools passes the
        options it opened it with, so a restart never widens them (an unknown toolset
        raises ValueError)."""

    @abc.abstractmethod
    async def end_session(self, session_id: str, reason: str = "ended") -> None:
        """Mark it ended and free what its tools held (a container, a connection)."""

    @abc.abstractmethod
    def start_turn(
        self,
        session_id: str,
        text: str,
        *,
        answers_questions: bool = False,
        attachments: Sequence[Attachment] = (),
        later: Callable[[str], None] | None = None,
    ) -> RuntimeTurn:
        """Start a turn with ``text`` as the user's message; it runs whether or not its
        events are read. ``later``, called on the runtime's event loop, hears reports of
        work this turn's tools leave running (a background subagent's outcome, beginning
        with :data:`REPORT_PREFIX`), after the turn too: send each as the session's next
        message, at once if no turn runs, else when the running one ends (as
        ``SlashReply.send``). Without it such tools wait for their work instead.
        ``attachments`` are files sent with it, made with a
        :class:`~hermes_sdk.media.MediaCache`: a model that sees gets the images as they
        are, and the rest reach it as text (a transcript, a document's text, a description).
        With ``answers_questions`` False nobody can answer, so questions
        are not shown and are answered no (a dangerous command is denied unless the
        configured approvals mode lets it run). Raises :class:`SessionBusy` if a turn of
        this runtime is running on the session, :class:`SessionNotFound` if it is unknown."""

    @abc.abstractmethod
    def running(self, session_id: str) -> RuntimeTurn | None:
        """The turn running on that session in this runtime, if any."""

    async def branch_session(
        self, session_id: str, through_seq: int | None = None, *, title: str | None = None
    ) -> SessionSummary:
        """A new session that goes on from ``session_id``'s history up to message
        ``through_seq`` (None: all of it; a point inside a round of tool calls takes the
        round's results too, so every call keeps its result). It has the same source, scope,
        working directory and model, ``parent_session_id`` naming the original, and is ready
        for turns. Raises :class:`SessionNotFound`, :class:`SessionBusy` while a turn runs
        on the original, and ValueError (one line) when the original is not open in this
        runtime (its tools are the ones its front-end gave it here)."""
        raise NotImplementedError("this runtime cannot branch a session")

    @abc.abstractmethod
    async def undo(self, session_id: str) -> str | None:
        """Remove the last user message and everything after it; returns that message's
        text (None: nothing to undo). Raises :class:`SessionBusy` if a turn runs on it here
        or in another process."""

    @abc.abstractmethod
    async def compact(
        self,
        session_id: str,
        focus: str | None = None,
        on_notice: Callable[[str], None] | None = None,
    ) -> str | None:
        """Compact the session's view now (older messages become a summary; the transcript
        is kept); None when done, else one line saying why not. ``on_notice`` hears
        progress. Raises :class:`SessionBusy` or :class:`SessionNotFound`."""

    @abc.abstractmethod
    def set_yolo(self, session_id: str, on: bool) -> None:
        """Turn asking before dangerous commands off (``on``) or back on for the session.
        Raises ValueError (one line, for the user) where asking may not be turned off: in a
        Hermes that an agent's tool started."""

    def set_reasoning_effort(self, session_id: str, effort: str | None) -> None:
        """How hard the session's model thinks from its next turn: one of
        :data:`~hermes_sdk.models.REASONING_EFFORTS`, or None for config.yaml's
        ``model.reasoning_effort``. Raises ValueError (one line) for any other value."""
        raise NotImplementedError("this runtime cannot change a session's reasoning effort")

    def reasoning_effort(self, session_id: str | None) -> tuple[str | None, str]:
        """The session's reasoning effort (None: the model's default) and where it comes
        from: ``"this conversation"``, ``"config.yaml"`` or ``"the model's default"``."""
        return None, "the model's default"


class RuntimeModels(abc.ABC):
    """The models a session may use: choices to show, one described before it is used,
    and a session switched to another.
    Every method is safe to call from the event loop it was given on; none blocks it."""

    @abc.abstractmethod
    def models(self) -> Sequence[ModelChoice]:
        """The models sessions can be opened with: the configured one first."""

    @abc.abstractmethod
    def describe_model(self, provider: str | None = None, model: str | None = None) -> ModelInfo:
        """The model a session opened with these options would use. Raises ValueError with
        one line to act on if it cannot be used (a strict choice: no fallback)."""

    @abc.abstractmethod
    def providers(self) -> Sequence[ProviderChoice]:
        """Every provider a session may name, configured or not, by name."""

    async def context_use(self, session_id: str) -> tuple[int, int] | None:
        """How full the session's context is: (tokens the model read and wrote in its last
        call, the model's context window); None before its first model call."""
        return None

    @abc.abstractmethod
    async def use_model(
        self, session_id: str, provider: str | None, model: str | None
    ) -> ModelInfo:
        """Run the session's next turns on another model (strict: no fallback). Raises
        ValueError (one line; the session keeps its model) or :class:`SessionNotFound`."""


class RuntimeCommands(abc.ABC):
    """What a session is given and what a user may run: tools, toolsets, what plugins
    provide, and the ``/NAME`` commands served once for every front-end.
    Every method is safe to call from the event loop it was given on; none blocks it."""

    @abc.abstractmethod
    def tools_report(self, session_id: str | None = None) -> list[str]:
        """The installed tools as lines to show, marking those the session (None: a new
        one with the default options) is not given."""

    @abc.abstractmethod
    def toolsets(self) -> Sequence[str]:
        """The toolsets the installed tools belong to, by name: what ``toolsets=`` may
        name (an unknown one makes :meth:`open_session` raise ValueError)."""

    @abc.abstractmethod
    def provided(self, kind: Kind) -> Sequence[ProvidedName]:
        """What the installed plugins provide of ``kind`` (skill sources, memory ...)."""

    @abc.abstractmethod
    def slash_commands(self) -> Mapping[str, SlashCommandSpec]:
        """Every ``/NAME`` command by name, the runtime's own (``/help``, ``/new``,
        ``/model`` ...) first, then the plugins'; a plugin's that takes a reserved name (see
        :data:`RESERVED_SLASH_NAMES`) is left out and is one of :meth:`warnings`. A
        front-end lists these in its ``/help`` beside its own (``/quit``)."""

    @abc.abstractmethod
    async def run_slash(
        self,
        name: str,
        args: str,
        session_id: str | None,
        *,
        user_scope: str | None = None,
        route: tuple[str | None, str | None] | None = None,
        notify: Callable[[str], None] | None = None,
    ) -> SlashReply:
        """Run a slash command, built-in or a plugin's (a coroutine on the loop, else in a
        worker thread), for ``session_id`` (None: the front-end has no session yet) and
        ``user_scope`` (a person on a chat platform; None: the owner). ``route``: the
        (provider, model) the front-end's next session opens with, when it has none yet and
        chose one (``--model``, an earlier ``/model``). ``notify`` hears, later and from
        any thread, one line of news the command promised (a ``/background`` task that
        finished); None: the :meth:`~RuntimeOperations.watch_background` listeners do for
        the owner, and a person's news (``user_scope`` set) is only logged. A front-end
        shows the reply's text and acts on what it asks (a new session, the model, a
        reload, a message to send, a session to go on in). Raises LookupError
        for an unknown name, PermissionError for a command a person on a platform may not
        run (``on_platforms``), SessionBusy for one that waits for the running turn
        (``during_turn``); other errors propagate: show them as one line."""


class RuntimeOperations(abc.ABC):
    """The agent as a whole, for a front-end that shows or serves it: warnings and
    status, plugins, writes waiting for approval, background work, delivery to chats,
    warming up and plugin storage.
    Every method is safe to call from the event loop it was given on; none blocks it."""

    @abc.abstractmethod
    def warnings(self) -> Sequence[str]:
        """Lines about this runtime's setup the user should see, one problem each: a toolset
        nobody provides, a memory provider that failed, a tool source that did not start."""

    @abc.abstractmethod
    async def status(self) -> list[StatusLine]:
        """What ``hermes status`` shows, line for line: ``Home``, ``Model``, ``Plugins``
        (failed ones as details), each plugin's own lines (``hermes_status_lines``),
        ``Sessions`` and ``Disk``. Computed in a worker thread; a plugin whose status hook
        fails is one line under its own name."""

    @abc.abstractmethod
    def plugins(self) -> list[PluginState]:
        """Every installed plugin and how it stands, by name (``hermes plugins list``)."""

    @abc.abstractmethod
    async def pending_writes(self, *, user_scope: str | None = None) -> list[PendingWrite]:
        """The writes waiting for the user's approval in every queue (``hermes_pending_writes``:
        memory writes, skill edits when ``write_approval`` is on), oldest first; ``user_scope``:
        that person's (None: the owner's). A queue whose plugin raises or misses its deadline
        is left out, logged and named in :meth:`warnings`."""

    @abc.abstractmethod
    async def decide_pending_write(
        self, queue: str, write_id: str, *, approve: bool, user_scope: str | None = None
    ) -> str:
        """Approve (make the change) or reject (drop it) one pending write; returns one line
        to show. Raises :class:`~hermes_commons.proposals.UnknownProposal` (one line) for an
        unknown queue or id, ValueError (one line; the write stays pending) when approving
        cannot be done, and TimeoutError when the plugin does not answer within
        ``plugins.hook_timeout_seconds``."""

    @abc.abstractmethod
    def watch_background(self, callback: Callable[[str], None]) -> None:
        """``callback`` hears, from any thread, one line per piece of background work done
        for this runtime's sessions ("learned in the background: created skill x")."""

    @abc.abstractmethod
    def stop_hooks(self) -> None:
        """End the wait for every plugin hook running now (a process that is leaving): the
        turn waiting for one goes on without it."""

    @abc.abstractmethod
    async def deliver(self, platform: str, chat_id: str, text: str) -> Delivery:
        """Send ``text`` to a chat through the gateway's delivery ledger (retried, never
        sent twice): the installed delivery plugin (``hermes_deliveries``) does it. Raises
        :class:`DeliveryUnavailable` if no platform of that name is installed, no gateway
        serves this home, or no delivery plugin is installed."""

    @abc.abstractmethod
    async def warm_up(self, source: str) -> list[str]:
        """Get ready to serve: start the tool sources (MCP servers) and load the plugins
        that build a ``source`` session's prompt, so the first conversations do not wait
        for them. A long-running front-end awaits it once, before serving. Returns warnings
        (a tool source that failed ...), one line each."""

    @abc.abstractmethod
    def plugin_store(self, schema: StoreSchema) -> Store:
        """``schema``'s tables in this home's state store, on the runtime's own connection
        (see :mod:`hermes_sdk.storage`); migrated on the first call, closed with the
        runtime. Raises :class:`~hermes_sdk.storage.StoreError` if it cannot be migrated."""


class RuntimeAdministration(abc.ABC):
    """What a front-end may change of the whole agent. Every method is safe to call from
    the event loop; blocking work runs in a thread. Errors are ValueError with one line
    saying what to fix; nothing is changed then."""

    @abc.abstractmethod
    async def config_sections(self) -> list[ConfigSection]:
        """Every section of config.yaml, the kernel's and each plugin's, with its fields as
        typed by its owner's model: description, default, value now."""

    @abc.abstractmethod
    async def read_config(self) -> dict[str, Any]:
        """config.yaml as it is now (a page that changed it shows the change before a
        restart applies it); ValueError (one line) when it cannot be read."""

    @abc.abstractmethod
    async def change_config(self, changes: Mapping[str, str | None], *, save: bool) -> ConfigChange:
        """Set each dotted key to its YAML text (None: remove it, so its default applies),
        checked as ``hermes config set`` checks (types, unknown keys with did-you-mean,
        secret-looking keys refused). ``save=False`` only says what would change. Comments
        and layout are kept; the file is replaced atomically."""

    @abc.abstractmethod
    async def secrets(self) -> list[SecretEntry]:
        """The secrets kept in .env, by name, each masked: never a value in full."""

    @abc.abstractmethod
    async def set_secret(self, name: str, value: str) -> str:
        """Write ``name`` to .env (mode 0600); one line saying so."""

    @abc.abstractmethod
    def log_names(self) -> list[str]:
        """The logs in HERMES_HOME/logs (``agent``, ``errors``, a front-end's own), the one
        this process writes first."""

    @abc.abstractmethod
    async def read_log(
        self,
        name: str,
        cursor: str = "",
        *,
        level: str = "",
        component: str = "",
        limit: int = 200,
    ) -> LogRead:
        """The lines of log ``name`` after ``cursor`` (``""``: the last ``limit``), at
        ``level`` or above, whose component starts with ``component``; redacted again as
        they are read."""

    @abc.abstractmethod
    async def profiles(self) -> list[ProfileEntry]:
        """The default home and every profile."""

    @abc.abstractmethod
    async def create_profile(self, name: str, *, clone: bool) -> str:
        """Create profile ``name`` (with this home's config.yaml, .env and SOUL.md when
        ``clone``); one line."""

    @abc.abstractmethod
    async def use_profile(self, name: str) -> str:
        """Make ``name`` the profile later ``hermes`` commands use; one line. The running
        process keeps its home."""

    @abc.abstractmethod
    async def set_plugin_enabled(self, name: str, enabled: bool) -> str:
        """Enable or disable plugin ``name`` in config.yaml, as ``hermes plugins enable``
        does; one line (a restart applies it)."""

    @abc.abstractmethod
    async def panels(self) -> list[PanelInfo]:
        """The dashboard's panels (``hermes_dashboard_panels``), in order."""

    @abc.abstractmethod
    async def panel(self, name: str) -> Panel:
        """Panel ``name``, built once; KeyError (one line) when no plugin provides it."""


class Runtime(
    SessionHistory,
    RuntimeTurns,
    RuntimeModels,
    RuntimeCommands,
    RuntimeOperations,
    RuntimeAdministration,
):
    """The agent, as a front-end drives it: a :class:`SessionHistory` of the home, plus its
    facets (:class:`RuntimeTurns`, :class:`RuntimeModels`, :class:`RuntimeCommands`,
    :class:`RuntimeOperations`, and :class:`RuntimeAdministration`). A function that needs one
    facet takes that facet, so a front-end's part depends on what it uses. Every method is
    safe to call from the event loop it was given on; none blocks it."""


def open_runtime(
    home: str | Path,
    *,
    cwd: str | Path | None = None,
    options: RuntimeOptions | None = None,
) -> AbstractAsyncContextManager[Runtime]:
    """The runtime of the Hermes home at ``home``, outside any command: for a test of a
    front-end, or a program embedding Hermes. ``async with open_runtime(home) as runtime:``
    (closed on exit). A plugin's command uses ``CommandContext.open_runtime`` instead.
    ``cwd`` is a shorthand for ``options.cwd``.

    The kernel provides it (entry point group ``hermes.runtime``), so this needs
    hermes-kernel installed; RuntimeError says so if it is not."""
    from importlib.metadata import entry_points

    found = sorted(entry_points(group=RUNTIME_ENTRY_POINTS), key=lambda point: point.name)
    if not found:
        raise RuntimeError("no Hermes runtime is installed: pip install hermes-kernel")
    factory = found[0].load()
    if cwd is not None:
        options = replace(options or RuntimeOptions(), cwd=str(cwd))
    opened: AbstractAsyncContextManager[Runtime] = factory(str(home), options or RuntimeOptions())
    return opened
