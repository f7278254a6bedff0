"""What a tool's handler may know about the turn it runs in.

A :class:`~hermes_sdk.specs.ToolSpec` with ``takes_context=True`` gets a :class:`ToolContext`
as the keyword argument ``context``. Through it a tool reaches the session's terminal backend
(built on first use, behind the kernel's safety checks), learns that the user stopped the
turn, asks the user a question when someone is there to answer, searches past sessions and
asks the auxiliary model for a short piece of text, and calls the session's other tools
(:meth:`ToolContext.tool_caller`) the way the model calls them.

Any handler (with or without a context) may call :func:`report_progress` while it runs: the
chat shows the line beside the running call.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import contextvars
import threading
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from hermes_sdk.provided import ProvidedSpecs
from hermes_sdk.terminal import BackendUnavailable, TerminalBackend

if TYPE_CHECKING:
    from hermes_sdk.media import Attachment
    from hermes_sdk.runtime import Runtime
    from hermes_sdk.specs import ToolSpec

__all__ = [
    "HistoryHit",
    "HistoryQuery",
    "NestedDisposition",
    "NestedResult",
    "ToolCaller",
    "ToolContext",
    "ToolFailed",
    "Unsupported",
    "call_tools_with",
    "progress_reporter",
    "report_progress",
    "show_progress_with",
]

_progress: contextvars.ContextVar[Callable[[str], None] | None] = contextvars.ContextVar(
    "hermes_tool_progress", default=None
)


def report_progress(text: str) -> None:
    """One line about the tool call this runs in ("halfway (1/2)"), shown to the user beside
    the running call. From the handler or any thread it started; a no-op where nobody shows
    progress, and it never raises."""
    show = _progress.get()
    if show is not None:
        with contextlib.suppress(Exception):  # progress is a courtesy, never a failure
            show(text)


def progress_reporter() -> Callable[[str], None]:
    """:func:`report_progress` bound to the tool call this runs in, for code that reports
    from elsewhere (a callback a library calls on a task of its own)."""
    show = _progress.get()

    def report(text: str) -> None:
        if show is not None:
            with contextlib.suppress(Exception):
                show(text)

    return report


def show_progress_with(show: Callable[[str], None] | None) -> contextvars.Token[Any]:
    """For the kernel: where :func:`report_progress` sends lines in the current context
    (set in the context a tool call's task runs in)."""
    return _progress.set(show)


class Unsupported(RuntimeError):
    """What this run cannot do (no history store, no model): say so to the model."""


class ToolFailed(Exception):
    """The call failed, and ``str()`` is what the model should read, lines and all (a
    script's traceback): the kernel records an error result with this text, redacted and
    cut at 8,000 characters, instead of the one-line ``Type: message`` of other exceptions."""


# --- calling tools from inside a tool ---------------------------------------------------------

NestedDisposition = Literal["ok", "error", "skipped", "unknown"]
"""What is known about a nested call's effect: it returned (``ok``), returned an error or
was refused (``error``), never started (``skipped``), or may have run (``unknown``: it was
interrupted or passed its deadline)."""


@dataclass(frozen=True, slots=True)
class NestedResult:
    """What one tool call made from inside a running tool returned: the very text the model
    would have seen for the same call (redacted, budgeted)."""

    tool: str
    content: str
    disposition: NestedDisposition
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return self.disposition == "ok"


@dataclass(frozen=True, slots=True)
class ToolCaller:
    """Calls the session's tools from inside the running tool call it was made for.

    Each call passes every check a model's call passes (its schema, the safety checks and
    approvals, its deadline, redaction, the result budget), is recorded before it runs as a
    child of the running call, and stops when the user stops the turn. Calls made through a
    nested call cannot nest again. Get one with :meth:`ToolContext.tool_caller`.
    """

    tools: Mapping[str, ToolSpec]
    """The tools this turn offers, by name (the calling tool itself left out)."""
    run: Callable[[str, Mapping[str, Any]], Awaitable[NestedResult]]
    """For the kernel: runs one nested call on ``loop``."""
    loop: asyncio.AbstractEventLoop

    def start(
        self, tool: str, arguments: Mapping[str, Any]
    ) -> concurrent.futures.Future[NestedResult]:
        """Start ``tool(**arguments)`` from any thread but the event loop's; cancelling the
        future stops the call (its effect is then recorded as unknown)."""
        return asyncio.run_coroutine_threadsafe(_awaited(self.run(tool, arguments)), self.loop)

    def call(self, tool: str, arguments: Mapping[str, Any]) -> NestedResult:
        """``tool(**arguments)``'s result, blocking the calling worker thread. A failing
        call is a result with ``disposition`` "error", never an exception."""
        return self.start(tool, arguments).result()

    async def acall(self, tool: str, arguments: Mapping[str, Any]) -> NestedResult:
        """The same from a coroutine handler."""
        if asyncio.get_running_loop() is self.loop:
            return await self.run(tool, arguments)
        return await asyncio.wrap_future(self.start(tool, arguments))


async def _awaited(work: Awaitable[NestedResult]) -> NestedResult:
    return await work


_caller: contextvars.ContextVar[ToolCaller | None] = contextvars.ContextVar(
    "hermes_tool_caller", default=None
)


def call_tools_with(caller: ToolCaller | None) -> contextvars.Token[Any]:
    """For the kernel: the :class:`ToolCaller` of the tool call whose context this is."""
    return _caller.set(caller)


@dataclass(frozen=True, slots=True, kw_only=True)
class HistoryQuery:
    """A search over stored messages. ``since`` / ``until`` are Unix times."""

    text: str
    session_id: str | None = None
    role: str | None = None
    since: float | None = None
    until: float | None = None
    limit: int = 10
    mode: Literal["auto", "words", "trigrams"] = "auto"
    """``words``: whole words, best match first; ``trigrams``: any substring (code, CJK),
    newest first; ``auto``: trigrams for code or CJK, else words, and the other one when
    that finds nothing."""


@dataclass(frozen=True, slots=True, kw_only=True)
class HistoryHit:
    session_id: str
    message_id: int
    role: str
    created_at: float
    snippet: str
    session_title: str | None = None


def _nobody(question: str, choices: Sequence[str]) -> str | None:
    return None


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolContext:
    session_id: str
    home: str
    cwd: str
    cancel: threading.Event = field(default_factory=threading.Event)
    """Set when the user stops the turn: pass it to ``backend.run(cancel=...)``, and stop
    long loops when it is set."""
    get_backend: Callable[[], TerminalBackend] | None = None
    ask: Callable[[str, Sequence[str]], str | None] = _nobody
    source: str = "cli"
    """Where the session runs: "cli", "telegram", ..., or "review" for the background
    review that proposes memory and skills after a turn."""
    user_scope: str | None = None
    """Whose session it is ("telegram:42"); None for the owner at the terminal. Keep what
    is personal (a memory profile) per scope."""
    config: Mapping[str, Any] = field(default_factory=dict)
    """config.yaml as loaded (secrets live in .env, never here); read your own section."""
    provided: ProvidedSpecs = field(default_factory=ProvidedSpecs)
    """What the loaded plugins provide for others (see :mod:`hermes_sdk.provided`)."""
    skill_dirs: tuple[str, ...] = ()
    """Deprecated, always empty: read ``provided.of(Kind.SKILL_SOURCE)``. Kept because
    fields are removed only in a major version."""
    search: Callable[[HistoryQuery], list[HistoryHit]] | None = None
    complete: Callable[[str, str], str] | None = None
    secrets: Callable[[str], str | None] | None = None
    get_runtime: Callable[[], Runtime] | None = None
    send: Callable[[Attachment], None] | None = None
    look: Callable[[str, Sequence[Attachment]], str] | None = None
    later: Callable[[str], None] | None = None
    """Where reports of work left running go (see :meth:`tell_later`); None: nowhere."""
    transform_output: Callable[[str, str], str] | None = None
    """The plugins' transforms of a shell command's output, ``(command, output) -> output``
    (``hermes_transform_terminal_output``): a tool that runs commands calls it on what a
    command printed, before it shortens the text (the result is redacted after). None when
    no plugin transforms output."""

    def send_file(self, attachment: Attachment) -> None:
        """Send a file to the user with the turn's reply (a spoken answer, a chart): make it
        with a :class:`~hermes_sdk.media.MediaCache` first. A chat platform sends it after
        the reply's text (a voice note for OGG/Opus audio, where the platform has them);
        the terminal names where it is kept. Raises Unsupported where nobody receives files
        (a run with no user)."""
        if self.send is None:
            raise Unsupported("this run cannot send files to the user")
        self.send(attachment)

    def tell_later(self, report: str) -> None:
        """Report work this tool left running once it is done (a background subagent): the
        front-end sends ``report`` (begin it with ``hermes_sdk.runtime.REPORT_PREFIX``) as
        the session's next message, so the model hears it and answers the user. Call it on
        the runtime's event loop. Raises Unsupported where nobody takes reports (a
        scheduled job, a front-end that cannot): wait for the work instead."""
        if self.later is None:
            raise Unsupported("this run takes no reports of work left running")
        self.later(report)

    def runtime(self) -> Runtime:
        """The agent's runtime, for a tool that runs agents of its own (a delegated task):
        open a session with ``parent_session_id=context.session_id`` and run turns on it.
        A dangerous command in such a session is denied (nobody is there to approve it).
        Raises Unsupported where this run offers none. Await its methods from a coroutine
        handler."""
        if self.get_runtime is None:
            raise Unsupported("this run cannot start agents of its own")
        return self.get_runtime()

    def secret(self, name: str) -> str | None:
        """A secret by its variable name (``BRAVE_API_KEY``): the environment, then .env.
        For the tool's own keys; never put one in a result, a log or a subprocess."""
        return self.secrets(name) if self.secrets is not None else None

    def backend(self) -> TerminalBackend:
        """The session's terminal backend. Raises BackendUnavailable when it cannot be
        built (the kernel reports that to the model as a degraded result)."""
        if self.get_backend is None:
            raise BackendUnavailable(
                "this run has no terminal backend", "tell the user; tools that run commands fail"
            )
        return self.get_backend()

    def ask_user(self, question: str, choices: Sequence[str] = ()) -> str | None:
        """The user's answer, or None when nobody can answer here (a one-shot run without
        a terminal, a scheduled job) or the question timed out."""
        return self.ask(question, choices)

    def search_history(self, query: HistoryQuery) -> list[HistoryHit]:
        """Stored messages matching ``query``, best first, limited to this session's user
        scope (a chat user never sees another's history). Raises Unsupported when this run
        has no store."""
        if self.search is None:
            raise Unsupported("this run keeps no session history to search")
        return self.search(query)

    def ask_model(self, instructions: str, text: str) -> str:
        """One short completion from the auxiliary model (``auxiliary:`` in config, else the
        session's model), for summaries and reviews. Blocks the calling worker thread;
        raises Unsupported without a model, RuntimeError when the call fails."""
        if self.complete is None:
            raise Unsupported("this run has no model to ask")
        return self.complete(instructions, text)

    def ask_model_about_images(self, question: str, images: Sequence[Attachment]) -> str:
        """The answer of a model that sees (the auxiliary model, else the session's, if it
        sees) to ``question`` about ``images`` (made with a
        :class:`~hermes_sdk.media.MediaCache`; scaled and stripped of metadata before they
        go). Blocks the calling worker thread; raises Unsupported when no model here sees,
        RuntimeError when the call fails."""
        if self.look is None:
            raise Unsupported("this run has no model to look at images")
        return self.look(question, images)

    def tool_caller(self) -> ToolCaller:
        """Calls the session's other tools from inside this call, as the model calls them
        (a script that loops over files in one call instead of many model rounds). Call it
        in the handler itself (its context says which call it is); the caller it returns
        may then be used from any thread. Raises Unsupported in a call that is itself
        nested, and where the run offers no tools."""
        caller = _caller.get()
        if caller is None:
            raise Unsupported("this run cannot call tools from inside a tool")
        return caller

    def section(self, name: str) -> Mapping[str, Any]:
        """config.yaml's section ``name`` (empty when absent)."""
        value = self.config.get(name)
        return value if isinstance(value, Mapping) else {}
